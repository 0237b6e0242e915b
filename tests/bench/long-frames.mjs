// Which tasks fill each long frame of a run: a trace (devtools.timeline) of the app page's main
// thread while one stream (or TILES tiles) streams, a key typed every 150 ms as in browser.mjs; every
// frame over 20 ms is listed with the tasks in it and what took their time.
//   node tests/bench/long-frames.mjs [RATE]   (FIXTURE=large, RUNS=2, TILES, INIT: an init script;
//   FLINT_DIST, FLINT_GATEWAY_BIN as for e2e)
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';

const RATE = Number(process.argv[2] ?? 10_000);
const FIXTURE = process.env.FIXTURE ?? 'large';
const RUNS = Number(process.env.RUNS ?? 2);
const upstream = await startUpstream();
const gateway = await startGateway({ upstreamUrl: upstream.url, models: [`${FIXTURE}@${RATE}`] });
const browser = await launchBrowser();
for (let run = 0; run < RUNS; run++) {
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: process.env.INIT ?? '' });
  await page.evaluate(() => window.__flint.editorReady());
  if (process.env.TILES) await page.getByTestId('variations-count').selectOption(process.env.TILES);
  await page.getByTestId('prompt-input').fill('a long page');
  const cdp = await context.newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline,blink.user_timing,v8', transferMode: 'ReportEvents' });
  await page.evaluate(() => {
    let last = performance.now();
    window.__run = true;
    const tick = (now) => {
      const gap = now - last;
      if (gap > 20) performance.mark(`long ${gap.toFixed(1)}`);
      last = now;
      if (window.__run) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await runPrompt(page, `scripted/${FIXTURE}@${RATE}`, 'a long page');
  let done = false;
  const w = waitForStatus(page, 'done', 60_000).finally(() => { done = true; });
  while (!done) { await page.getByTestId('prompt-input').press('x'); await Promise.race([w, new Promise((r) => setTimeout(r, 150))]); }
  await page.waitForTimeout(500);
  await page.evaluate(() => { window.__run = false; });
  const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.end');
  await complete;
  // The app page's main thread: the renderer thread with the marks.
  const marks = events.filter((e) => e.name?.startsWith('long ') && e.cat?.includes('user_timing'));
  if (!marks.length) { console.log(`run ${run}: no long frames`); await context.close(); continue; }
  const { pid, tid } = marks[0];
  const mine = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X' && e.dur);
  const t0 = Math.min(...mine.map((e) => e.ts));
  console.log(`run ${run}: ${marks.length} long frames`);
  for (const m of marks) {
    const gap = Number(m.name.slice(5));
    const end = m.ts; const start = end - gap * 1000;
    const tasks = mine.filter((e) => e.name === 'RunTask' && e.ts + e.dur > start && e.ts < end && e.dur > 2000);
    const desc = tasks.map((t) => {
      const inner = mine.filter((e) => e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur && e !== t && e.dur > 1000 && e.name !== 'RunTask');
      const top = new Map();
      for (const e of inner) {
        let key = e.name;
        if (e.name === 'FunctionCall') key = `JS ${e.args?.data?.functionName || ''}@${(e.args?.data?.url || '').split('/').pop()}:${e.args?.data?.lineNumber}`;
        if (e.name === 'TimerFire' || e.name === 'FireAnimationFrame' || e.name === 'EventDispatch' || e.name.startsWith('V8.') || e.name === 'v8.run' || e.name === 'v8.callFunction' || e.name === 'ProfileCall') continue;
        top.set(key, (top.get(key) ?? 0) + e.dur / 1000);
      }
      const parts = [...top].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
      return `  task @${((t.ts - t0) / 1000).toFixed(0)} ${(t.dur / 1000).toFixed(1)}ms: ${parts}`;
    });
    console.log(`frame ${gap} ms ending @${((end - t0) / 1000).toFixed(0)}\n${desc.join('\n')}`);
  }
  await context.close();
}
await browser.close();
await gateway.stop();
upstream.stop();
process.exit(0);
