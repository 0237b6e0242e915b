// How soon a streamed React app shows: from the main thread receiving the worker's first page that
// builds (its first `live` update) to the first preview frame whose `#root` holds an element, and
// from the Run key to that first render. Clocks: `performance.timeOrigin + now()` in the page and
// in each preview frame (one process, one clock). Prints a report; `--out FILE` also writes it there
// (bench/first-preview.md keeps earlier sections by hand, so it is not overwritten unless named).
//   node tests/bench/first-preview.mjs [RATES] [--out FILE]   (default 1000,10000 tok/s; FLINT_DIST, FLINT_GATEWAY_BIN,
//   FLINT_UPSTREAM_BIN as for e2e; FLINT_BENCH_RUNS runs per rate, default 7; FLINT_BENCH_BASELINE_DIST: another
//   build's dist/, served by a second gateway and measured in the same run, alternating run by run;
//   FLINT_BENCH_PAUSES: how long the prompt stays on screen before the Run key, in ms, one row each,
//   default 0: typed and run at once, as a person who had the prompt ready would)
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { launchBrowser, openFlint, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? args[outAt + 1] : null;
const RATES = (args.find((a, i) => !a.startsWith('--') && (outAt < 0 || i !== outAt + 1)) ?? '1000,10000')
  .split(',').map(Number);
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 7);
const FIXTURE = process.env.FLINT_BENCH_FIXTURE ?? 'react-large';
const PAUSES = (process.env.FLINT_BENCH_PAUSES ?? '0').split(',').map(Number);
const upstream = await startUpstream();
const models = RATES.map((r) => `${FIXTURE}@${r}`);
const builds = [{ name: 'this build', gateway: await startGateway({ upstreamUrl: upstream.url, models }) }];
const BASELINE = process.env.FLINT_BENCH_BASELINE_DIST;
if (BASELINE) builds.push({ name: 'baseline', gateway: await startGateway({ upstreamUrl: upstream.url, models, dist: BASELINE }) });
const browser = await launchBrowser();

// In the page: when the first message from the worker carrying a live page arrived. In a preview
// frame: when its `#root` first held an element (logged, so frames replaced since still count).
const probe = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  if (window === window.top) {
    const Native = window.Worker;
    window.__live = null;
    window.Worker = class extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', (e) => {
          // (Not the warm page, which only loads React before the first build.)
          if (window.__live === null && typeof e.data === 'string' && e.data.includes('"live":true')
            && !e.data.includes('data-flint-warm')) window.__live = now();
        });
      }
    };
    addEventListener('keydown', (e) => {
      if (window.__key === undefined && e.key === 'Enter' && e.ctrlKey) window.__key = performance.timeOrigin + e.timeStamp;
    }, true);
    return;
  }
  const seen = () => {
    const root = document.getElementById('root');
    if (root && root.firstElementChild) { console.log('flint-first-render ' + now() + ' ' + performance.now()); return true; }
    return false;
  };
  const watch = () => {
    if (seen()) return;
    const observer = new MutationObserver(() => { if (seen()) observer.disconnect(); });
    observer.observe(document, { childList: true, subtree: true });
  };
  if (document.documentElement) watch(); else addEventListener('DOMContentLoaded', watch);
})();`;

async function measure(gateway, rate, pause) {
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: probe });
  const renders = [];
  page.on('console', (m) => {
    const [tag, at, since] = m.text().split(' ');
    if (tag === 'flint-first-render') renders.push(Number(at));
    if (tag === 'flint-first-render' && process.env.FLINT_BENCH_VERBOSE) console.log(`frame rendered ${Number(since).toFixed(0)} ms after it began loading`);
  });
  await page.evaluate(() => window.__flint.editorReady());
  await page.getByTestId('model-picker').selectOption(`scripted/${FIXTURE}@${rate}`);
  await page.getByTestId('prompt-input').fill('a sprint board in React');
  if (pause > 0) await page.waitForTimeout(pause);
  await page.getByTestId('prompt-input').press('Control+Enter');
  await waitForStatus(page, 'done', 120_000);
  await page.waitForTimeout(500);
  const { live, key } = await page.evaluate(() => ({ live: window.__live, key: window.__key }));
  await context.close();
  const first = renders.length ? Math.min(...renders) : null;
  return { afterLive: first === null || live === null ? null : first - live, afterKey: first === null ? null : first - key, renders: renders.length };
}

const results = new Map(builds.flatMap((b) => RATES.flatMap((r) => PAUSES.map((p) => [`${b.name}|${r}|${p}`, []]))));
const load = [];
for (let run = 0; run < RUNS; run++) {
  for (const rate of RATES) {
    for (const pause of PAUSES) {
      for (const build of run % 2 ? [...builds].reverse() : builds) {
        results.get(`${build.name}|${rate}|${pause}`).push(await measure(build.gateway, rate, pause));
        load.push(os.loadavg()[0]);
      }
    }
  }
}

const pct = (xs, q) => {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const f = (x) => (Number.isNaN(x) ? '–' : x.toFixed(1));
const cpus = os.cpus();
const rows = [...results].map(([name, rs]) => {
  const [build, rate, pause] = name.split('|');
  const live = rs.map((r) => r.afterLive);
  const key = rs.map((r) => r.afterKey);
  const missing = rs.filter((r) => r.afterLive === null).length;
  return `| ${build} | ${FIXTURE} × ${rate} tok/s | ${pause} | ${rs.length - missing} of ${rs.length} | ${f(pct(live, 0.5))} / ${f(pct(live, 0.95))} / ${f(Math.max(...live.filter((x) => x !== null)))} | ${f(pct(key, 0.5))} / ${f(pct(key, 0.95))} | ${pct(live, 0.95) <= 100 ? 'met' : '**no**'} |`;
});
const md = `# The first preview of a streamed React app

Machine: ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, headless Chromium (software rendering). Load (1-minute average
after each run): ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}.
Date: ${new Date().toISOString()}. Command: \`FLINT_BENCH_PAUSES=${PAUSES.join(',')} node tests/bench/first-preview.mjs ${RATES.join(',')}\` (${RUNS} runs per
rate and pause, the rates, pauses and builds alternating run by run${BASELINE ? `; baseline: \`${BASELINE}\`` : ''}).

The scripted upstream streams \`tests/fixtures/${FIXTURE}.md\` (a 3-file React app, about 8k tokens). "First live
page": the main thread receives the worker's first update whose project built (\`live\`), timed by a listener
added before the app's. "First render": the first preview frame whose \`#root\` holds an element (a
MutationObserver in the frame). Both clocks are \`performance.timeOrigin + now()\`. "Pause": how long the
prompt was on screen before the Run key (a React prompt on screen that long has a frame made ready). Times in ms.
Target (issue 27): the first preview ≤ 100 ms after the first snapshot that renders.

| build | stream | pause | runs rendered | first live page → first render p50 / p95 / max | Run key → first render p50 / p95 | target |
|---|---|---:|---:|---:|---:|---|
${rows.join('\n')}
`;
if (out) writeFileSync(out, md);
console.log(md);
await browser.close();
for (const b of builds) await b.gateway.stop();
upstream.stop();
