// Issue 15, item 3: is the page's relay of the stream worth taking off its main thread? A CPU
// profile of the page (a build that keeps wasm names, `cargo xtask bench relay`) charged to stages:
// the socket's frames relayed through the lanes to the worker, the worker's updates applied to the
// editor and the previews, the previews' posting, the editor's paint, the browser's own work.
// Moving the socket into the worker could save at most the relay stage; sending the worker's
// snapshots straight to the previews at most the previews' posting and the apply stage's part of it.
//   FLINT_DIST=<name-kept dist> node tests/bench/relay.mjs --out bench/relay.md
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';
import { addTimes, profileTable, selfTimes, stageTimes, startProfile, stopRawProfile } from './profile.mjs';
import { rendererName, startTrace, stopTrace } from './trace.mjs';

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 3);
// The same streams into Monaco rather than the plain stream view (app/js/stream_view.js): the view's
// saving, measured beside it.
const INTO_MONACO = 'globalThis.__flintMonacoWhileStreaming = true;';
const ROWS = [
  { name: '1 stream × 1k tok/s', rate: 1_000, tiles: 1 },
  { name: '1 stream × 1k tok/s, into Monaco', rate: 1_000, tiles: 1, init: INTO_MONACO },
  { name: '1 stream × 10k tok/s', rate: 10_000, tiles: 1 },
  { name: '1 stream × 10k tok/s, into Monaco', rate: 10_000, tiles: 1, init: INTO_MONACO },
  { name: '10 tiles × 5k tok/s', rate: 5_000, tiles: 10 },
];

const load = [loadavg()[0]];
const upstream = await startUpstream();
const gateway = await startGateway({ upstreamUrl: upstream.url, models: ROWS.map((r) => `large@${r.rate}`) });
const browser = await launchBrowser();

/** One stream of `row`, sampled (`profile`) or traced (every renderer: the previews' too). */
async function stream(row, { trace = false } = {}) {
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: row.init });
  await page.evaluate(() => window.__flint.editorReady());
  if (row.tiles > 1) await page.getByTestId('variations-count').selectOption(String(row.tiles));
  await page.getByTestId('prompt-input').fill('a long page');
  const session = trace ? await startTrace(context, page) : await startProfile(context, page);
  await runPrompt(page, `scripted/large@${row.rate}`, 'a long page');
  await waitForStatus(page, 'done', 180_000);
  await page.waitForTimeout(300);
  const result = trace ? await stopTrace(session) : await stopRawProfile(session);
  await context.close();
  return result;
}

const results = ROWS.map((row) => ({ row, stages: new Map(), functions: new Map(), renderers: new Map() }));
// Runs outermost, so every row sees the same moments of a noisy machine.
for (let i = 0; i < RUNS; i++) {
  for (const { row, stages, functions, renderers } of results) {
    const profile = await stream(row);
    addTimes(stages, stageTimes(profile));
    addTimes(functions, selfTimes(profile));
    load.push(loadavg()[0]);
    for (const thread of await stream(row, { trace: true })) {
      const into = renderers.get(rendererName(thread)) ?? { busy: 0, over50: 0, longest: 0, scripts: new Map(), phases: new Map() };
      into.busy += thread.busy;
      into.over50 += thread.over50;
      into.longest = Math.max(into.longest, thread.longest);
      addTimes(into.scripts, thread.scripts);
      addTimes(into.phases, thread.phases);
      renderers.set(rendererName(thread), into);
    }
    console.log(i, row.name, JSON.stringify(Object.fromEntries(stages)));
  }
}
await browser.close();
await gateway.stop();
upstream.stop();

const busyOf = (m) => [...m].filter(([k]) => k !== '(idle)').reduce((s, [, v]) => s + v, 0);
const share = (m, key) => (100 * (m.get(key) ?? 0)) / (busyOf(m) || 1);
const RELAY = 'relay: socket → lanes → worker';
const PREVIEWS = 'previews (preview.js: scheduling, posting snapshots)';
const lines = [
  '# Relay: what the page pays to carry a stream it does not read',
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, headless Chromium. Load while it ran: ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}.`,
  `Date: ${new Date().toISOString()}. Command: \`cargo xtask bench relay\` (builds the app keeping wasm names, then \`node tests/bench/relay.mjs --out bench/relay.md\`).`,
  `${RUNS} profiled streams of tests/fixtures/large.md per row (CDP \`Profiler\`, a sample every 250 µs). Each sample is charged`,
  'to the outermost stage on its stack, so a stage includes what it called. Figures are ms per stream (per run for the tiles).',
  '',
  '## Stages',
  '',
  `| stage | ${ROWS.map((r) => r.name).join(' | ')} |`,
  `|---|${ROWS.map(() => '---:').join('|')}|`,
];
const keys = [...new Set(results.flatMap((r) => [...r.stages.keys()]))].filter((k) => k !== '(idle)')
  .sort((a, b) => (results[0]?.stages.get(b) ?? 0) - (results[0]?.stages.get(a) ?? 0));
for (const key of keys) {
  lines.push(`| ${key} | ${results.map((r) => `${((r.stages.get(key) ?? 0) / RUNS).toFixed(1)} (${share(r.stages, key).toFixed(1)} %)`).join(' | ')} |`);
}
lines.push(`| busy (not idle) | ${results.map((r) => (busyOf(r.stages) / RUNS).toFixed(0)).join(' | ')} |`);
lines.push(`| idle | ${results.map((r) => ((r.stages.get('(idle)') ?? 0) / RUNS).toFixed(0)).join(' | ')} |`);
lines.push('', '## The two ways off the relay path, bounded by this profile', '');
for (const r of results) {
  lines.push(`- ${r.row.name}: the socket in the worker would take at most ${share(r.stages, RELAY).toFixed(1)} % of the busy time off the page's main thread; worker → preview ports at most ${share(r.stages, PREVIEWS).toFixed(1)} % plus the snapshots' share of the apply stage.`);
}
lines.push('', '## Every renderer, traced', '',
  `${RUNS} further streams per row, traced (CDP \`Tracing\`, devtools.timeline): the app's page and the preview frames`,
  'run in renderers of their own (Chromium isolates sandboxed frames) on the same two cores. Per stream: busy time of',
  'the renderer\'s main thread, its tasks over 50 ms, the longest, and the phases that took the time (nested: the frame',
  'lifecycle holds paint, pre-paint, commit and its layout; script is every function call).', '',
  '| row | renderer | busy ms | tasks > 50 ms | longest ms | phases (ms) | script by file (ms) |', '|---|---|---:|---:|---:|---|---|');
for (const r of results) {
  for (const [name, t] of r.renderers) {
    const top = (m, n) => [...m].filter(([, v]) => v / RUNS >= 1).sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${k} ${(v / RUNS).toFixed(0)}`).join(', ');
    lines.push(`| ${r.row.name} | ${name} | ${(t.busy / RUNS).toFixed(0)} | ${(t.over50 / RUNS).toFixed(1)} | ${t.longest.toFixed(0)} | ${top(t.phases, 9)} | ${top(t.scripts, 5)} |`);
  }
}
for (const r of results) lines.push('', `## Functions by self time: ${r.row.name}`, '', profileTable(r.functions, RUNS, 15));
const text = `${lines.join('\n')}\n`;
if (out) writeFileSync(out, text);
console.log(text);
