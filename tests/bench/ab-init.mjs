// A/B of page settings: init scripts alternating run by run, one stream of large.md (or TILES tiles)
// each, a key typed every 150 ms; per script, frames over 20 ms, p95 frame and long tasks (those after
// "done" apart). For trying a setting before building it in.
//   CONFIGS='["", "globalThis.__flintPreviewBudgetMs=4;"]' node tests/bench/ab-init.mjs [RATE]
//   (RUNS=6, TILES, TAIL_MS=300: how long after "done" counts, SPLIT_MS=1500: frames from then on
//   also counted apart; PAUSE_MS: a wait between choosing TILES and the prompt; FLINT_DIST, FLINT_GATEWAY_BIN as for e2e).
//   With TILES, the frames while every tile streams (from STREAM_FROM_MS=500 after the prompt to the
//   first tile's end) are counted apart too: the start (tiles made) and the end (pages run) left out;
//   and the end (from the first tile's end on) apart again.
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';

const RATE = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.env.RUNS ?? 6);
const CONFIGS = JSON.parse(process.env.CONFIGS);
const upstream = await startUpstream();
const gateway = await startGateway({ upstreamUrl: upstream.url, models: [`large@${RATE}`] });
const browser = await launchBrowser();
const stats = CONFIGS.map(() => ({ frames: [], late: [], streaming: [], ending: [], long: [], endLong: [] }));
const STREAM_FROM_MS = Number(process.env.STREAM_FROM_MS ?? 500);
// The frames from SPLIT_MS after the prompt is filled on are also counted apart (the start left out).
const SPLIT_MS = Number(process.env.SPLIT_MS ?? 1500);
for (let run = 0; run < RUNS; run++) {
  for (const [i, cfg] of CONFIGS.entries()) {
    const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: cfg });
    await page.evaluate(() => window.__flint.editorReady());
    if (process.env.TILES) await page.getByTestId('variations-count').selectOption(process.env.TILES);
    // As a person writes the prompt after choosing the count.
    await page.waitForTimeout(Number(process.env.PAUSE_MS ?? 0));
    await page.getByTestId('prompt-input').fill('a long page');
    await page.evaluate(() => {
      const p = { frames: [], long: [], doneAt: null, firstEnd: null, run: true, t0: performance.now() };
      window.__p = p;
      new PerformanceObserver((l) => { for (const e of l.getEntries()) p.long.push([e.startTime, e.duration]); }).observe({ type: 'longtask' });
      let last = performance.now();
      const tick = (now) => { p.frames.push([now - p.t0, now - last]); last = now; if (p.run) requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
      const status = document.querySelector('[data-testid="stream-status"]');
      new MutationObserver(() => { if (p.doneAt === null && status.textContent.trim() === 'done') p.doneAt = performance.now(); })
        .observe(status, { subtree: true, childList: true, characterData: true });
      // The first tile to leave "streaming" (done, cancelled, error) after tiles were seen streaming.
      let streamed = false;
      new MutationObserver(() => {
        const tiles = [...document.querySelectorAll('[data-testid="variation-tile"]')];
        streamed ||= tiles.some((t) => t.dataset.status === 'streaming');
        if (streamed && p.firstEnd === null && tiles.some((t) => ['done', 'cancelled', 'error'].includes(t.dataset.status))) {
          p.firstEnd = performance.now() - p.t0;
        }
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-status'] });
    });
    await runPrompt(page, `scripted/large@${RATE}`, 'a long page');
    let done = false;
    const w = waitForStatus(page, 'done', 60_000).finally(() => { done = true; });
    while (!done) { await page.getByTestId('prompt-input').press('x'); await Promise.race([w, new Promise((r) => setTimeout(r, 150))]); }
    await page.waitForTimeout(Number(process.env.TAIL_MS ?? 300));
    const p = await page.evaluate(() => { window.__p.run = false; return window.__p; });
    stats[i].frames.push(...p.frames.slice(1).map(([at, gap]) => gap));
    stats[i].late.push(...p.frames.slice(1).filter(([at]) => at >= SPLIT_MS).map(([at, gap]) => gap));
    if (p.firstEnd !== null) {
      stats[i].streaming.push(...p.frames.slice(1).filter(([at]) => at >= STREAM_FROM_MS && at < p.firstEnd).map(([at, gap]) => gap));
      stats[i].ending.push(...p.frames.slice(1).filter(([at]) => at >= p.firstEnd).map(([at, gap]) => gap));
    }
    stats[i].long.push(...p.long.map((l) => l[1]));
    stats[i].endLong.push(...p.long.filter((l) => l[0] >= p.doneAt - 50).map((l) => l[1]));
    await context.close();
  }
}
for (const [i, cfg] of CONFIGS.entries()) {
  const s = stats[i];
  const f = [...s.frames].sort((a, b) => a - b);
  const p95 = f[Math.floor(0.95 * f.length)];
  const late = [...s.late].sort((a, b) => a - b);
  const lateP95 = late.length ? late[Math.floor(0.95 * late.length)].toFixed(1) : '–';
  console.log(`${cfg}\n  from ${SPLIT_MS} ms on: frames ${late.length}, >20ms ${late.filter((x) => x > 20).length}, p95 ${lateP95}`);
  if (s.streaming.length) {
    const st = [...s.streaming].sort((a, b) => a - b);
    console.log(`  while every tile streams: frames ${st.length}, >20ms ${st.filter((x) => x > 20).length}, p95 ${st[Math.floor(0.95 * st.length)].toFixed(1)}`);
    const en = [...s.ending].sort((a, b) => a - b);
    if (en.length) console.log(`  from the first tile's end on: frames ${en.length}, >20ms ${en.filter((x) => x > 20).length}, p95 ${en[Math.floor(0.95 * en.length)].toFixed(1)}, longest ${en[en.length - 1].toFixed(1)}`);
  }
  console.log(`  frames ${f.length}, >20ms ${f.filter((x) => x > 20).length}, p95 ${p95.toFixed(1)}; long tasks ${s.long.length} (max ${Math.max(0, ...s.long).toFixed(0)}), after done ${s.endLong.length} sum ${s.endLong.reduce((a, b) => a + b, 0).toFixed(0)} max ${Math.max(0, ...s.endLong).toFixed(0)}`);
}
await browser.close();
await gateway.stop();
upstream.stop();
process.exit(0);
