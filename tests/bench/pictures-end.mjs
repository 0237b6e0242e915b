// What a picture in the prompt costs a person at the end of a run: the same page streamed with no
// picture and with one (described by the vision model, then drawn and scored against the mock in a
// picture frame), the two arms alternating run by run in one browser. From the Run key: when
// "done" painted, the frames and long tasks until two seconds after it, and (with the picture)
// when the likeness score showed. Writes bench/pictures-end.md.
//   node tests/bench/pictures-end.mjs [RATE]   (default 10000 tok/s; FLINT_DIST, FLINT_GATEWAY_BIN,
//   FLINT_UPSTREAM_BIN as for e2e; FLINT_BENCH_RUNS runs per arm, default 5)
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import {
  launchBrowser, mockPng, openFlint, runPrompt, startGateway, startUpstream, waitConnected, waitForStatus,
} from '../e2e/harness.mjs';

const RATE = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 5);
const MODEL = `scripted/large@${RATE}`;
const upstream = await startUpstream();
const gateway = await startGateway({
  upstreamUrl: upstream.url,
  models: [`large@${RATE}`, { id: 'see-images', vision: true }],
  toml: '[vision]\nmodel = "scripted/see-images"\n',
});
const browser = await launchBrowser();
const load = [];

/** One run: opens a page, attaches the mock when `picture`, runs, and reads the probe. */
async function measure(picture) {
  const { page, context } = await openFlint(browser, gateway.url);
  await waitConnected(page);
  await page.evaluate(() => window.__flint.editorReady());
  if (picture) {
    await page.getByTestId('model-picker').selectOption(MODEL);
    await page.getByTestId('image-input').setInputFiles({ name: 'mock.png', mimeType: 'image/png', buffer: await mockPng(page) });
    await page.locator('[data-testid="description-status"]', { hasText: 'Described by' }).waitFor({ timeout: 30_000 });
  }
  await page.evaluate(() => {
    const probe = { frames: [], tasks: [], start: null, doneAt: null, donePainted: null, scoredAt: null };
    window.__probe = probe;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.tasks.push({ at: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask' });
    let last = null;
    const tick = (t) => {
      if (last !== null && probe.start !== null) probe.frames.push({ at: t, ms: t - last });
      last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    // The run starts at the key (Ctrl+Enter in the prompt, as the bench presses it).
    document.addEventListener('keydown', (e) => {
      if (probe.start === null && e.key === 'Enter' && e.ctrlKey) probe.start = e.timeStamp;
    }, true);
    const status = document.querySelector('[data-testid="stream-status"]');
    new MutationObserver(() => {
      if (probe.doneAt === null && status.textContent.trim() === 'done') {
        probe.doneAt = performance.now();
        requestAnimationFrame(() => {
          const c = new MessageChannel();
          c.port1.onmessage = () => { probe.donePainted = performance.now(); };
          c.port2.postMessage(0);
        });
      }
      if (probe.scoredAt === null && document.querySelector('[data-testid="checks-bar"] [data-testid="likeness"][data-state="done"]')) {
        probe.scoredAt = performance.now();
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await runPrompt(page, MODEL, 'a long page');
  await waitForStatus(page, 'done', 120_000);
  if (picture) {
    await page.locator('[data-testid="checks-bar"] [data-testid="likeness"][data-state="done"]').waitFor({ timeout: 60_000 });
  }
  await page.waitForTimeout(2_000);
  const p = await page.evaluate(() => window.__probe);
  await context.close();
  load.push(os.loadavg()[0]);
  const end = p.doneAt + 2_000;
  const frames = p.frames.filter((f) => f.at <= end).map((f) => f.ms);
  const tasks = p.tasks.filter((t) => t.at >= p.start && t.at <= end);
  const after = tasks.filter((t) => t.at >= p.doneAt);
  return {
    painted: p.donePainted - p.start,
    endPaint: p.donePainted - p.doneAt,
    scored: p.scoredAt === null ? null : p.scoredAt - p.doneAt,
    frames,
    longAfter: after.filter((t) => t.ms > 50).length,
    longestAfter: Math.max(0, ...after.map((t) => t.ms)),
    longest: Math.max(0, ...tasks.map((t) => t.ms)),
  };
}

const arms = { none: [], picture: [] };
for (let run = 0; run < RUNS; run++) {
  // Alternate which arm goes first, so drift in the machine's load falls on both.
  for (const arm of run % 2 ? ['picture', 'none'] : ['none', 'picture']) arms[arm].push(await measure(arm === 'picture'));
}

const pct = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const med = (xs) => pct(xs, 0.5);
const f = (x) => (x === null || Number.isNaN(x) ? '–' : x.toFixed(1));
const row = (label, runs) => {
  const frames = runs.flatMap((r) => r.frames);
  return {
    label,
    painted: med(runs.map((r) => r.painted)),
    endPaint: med(runs.map((r) => r.endPaint)),
    p95: pct(frames, 0.95),
    longAfter: med(runs.map((r) => r.longAfter)),
    longestAfter: Math.max(...runs.map((r) => r.longestAfter)),
    longest: Math.max(...runs.map((r) => r.longest)),
    scored: runs.every((r) => r.scored === null) ? null : med(runs.map((r) => r.scored ?? NaN)),
  };
};
const rows = [row('no picture', arms.none), row('a described picture, scored for likeness', arms.picture)];
const [base, pic] = rows;
const cpus = os.cpus();
const md = `# A picture in the prompt, at the end of a run

Machine: ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, headless Chromium (software rendering). Load (1-minute average
after each run): ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}.
Date: ${new Date().toISOString()}. Command: \`node tests/bench/pictures-end.mjs ${RATE}\` (${RUNS} runs per arm, the arms
alternating run by run in one browser).

Both arms stream \`tests/fixtures/large.md\` (8,192 tokens) at ${RATE} tok/s from \`${MODEL}\`, a model that does not see.
With the picture, the 320 × 200 mock is attached and described by \`scripted/see-images\` before Run; the code
model gets the description, and when the page is done it is drawn in a hidden picture frame at the mock's
width and scored in the worker. Medians over runs; frames pooled. Times in ms, from the Run key (Ctrl+Enter).

| arm | Run → "done" painted | "done" → painted | p95 frame (Run → done + 2 s) | long tasks > 50 ms after "done" | longest after "done" | longest in the run | "done" → likeness shown |
|---|---:|---:|---:|---:|---:|---:|---:|
${rows.map((r) => `| ${r.label} | ${f(r.painted)} | ${f(r.endPaint)} | ${f(r.p95)} | ${r.longAfter} | ${f(r.longestAfter)} | ${f(r.longest)} | ${f(r.scored)} |`).join('\n')}

Ratios, picture ÷ no picture: Run → "done" painted ${(pic.painted / base.painted).toFixed(2)}×; p95 frame ${(pic.p95 / base.p95).toFixed(2)}×;
longest task after "done" ${(pic.longestAfter / Math.max(1, base.longestAfter)).toFixed(2)}×.
`;
writeFileSync(new URL('../../bench/pictures-end.md', import.meta.url), md);
console.log(md);
await browser.close();
await gateway.stop();
upstream.stop();
