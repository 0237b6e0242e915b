// Browser benchmark: frame times and long tasks in headless Chromium while one stream paints into the
// editor and the preview, with the scripted upstream at several token rates. Writes a markdown table.
//   node tests/bench/browser.mjs --out bench/browser.md   (cargo xtask bench runs it)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';
import { FRAME_ALIGN, FRAME_HEADER, frameCells, frameStats, startProbe, stopProbe } from './probe.mjs';

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
const RATES = process.env.FLINT_BENCH_RATES?.split(',').map(Number) ?? [1_000, 10_000, 50_000];
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 3);

// `FLINT_BENCH_BASELINE=DIR` (DIR holding a `flint-gateway` binary and its `dist/`, e.g. built
// from an earlier commit): the same runs against that build too, interleaved run by run, with the
// ratios of the two in the same run (these machines are too noisy to compare separate runs).
const BASELINE = process.env.FLINT_BENCH_BASELINE;

const upstream = await startUpstream();
const models = RATES.map((r) => `large@${r}`);
const gateway = await startGateway({ upstreamUrl: upstream.url, models });
const baseline = BASELINE && await startGateway({
  upstreamUrl: upstream.url, models, gatewayBin: join(BASELINE, 'flint-gateway'), dist: join(BASELINE, 'dist'),
});
const browser = await launchBrowser();


async function measure(rate, gateway) {
  const { page, context } = await openFlint(browser, gateway.url);
  // Measure streaming, not start-up: Monaco's lazily loaded parts are in once the editor is ready.
  await page.evaluate(() => window.__flint.editorReady());
  await startProbe(page);
  const started = Date.now();
  await runPrompt(page, `scripted/large@${rate}`, 'a long page');
  await waitForStatus(page, 'done', 120_000);
  const streamMs = Date.now() - started;
  await page.waitForTimeout(300); // the finished page swaps in: part of what the person sees
  const probe = await stopProbe(page);
  const tokens = Number((await page.getByTestId('metric-tokens').textContent()).replace(/[^\d]/g, ''));
  await context.close();
  return { frames: probe.frames, longTasks: probe.longTasks, streamMs, tokens };
}

/** Pools `RUNS` measurements of one build at one rate. */
function pooled() {
  const runs = [];
  return {
    add: (r) => runs.push(r),
    row: (rate) => ({
      rate,
      tokens: runs.at(-1).tokens,
      streamMs: Math.round(runs.reduce((sum, r) => sum + r.streamMs, 0) / runs.length),
      ...frameStats(runs.flatMap((r) => r.frames), runs.flatMap((r) => r.longTasks)),
    }),
  };
}

const rows = [], baseRows = [];
for (const rate of RATES) {
  const ours = pooled(), theirs = pooled();
  for (let i = 0; i < RUNS; i++) {
    // Alternating, so both builds see the same moments of a noisy machine.
    ours.add(await measure(rate, gateway));
    if (baseline) theirs.add(await measure(rate, baseline));
  }
  rows.push(ours.row(rate));
  console.log(JSON.stringify(rows.at(-1)));
  if (baseline) {
    baseRows.push(theirs.row(rate));
    console.log('baseline', JSON.stringify(baseRows.at(-1)));
  }
}

await browser.close();
await gateway.stop();
if (baseline) await baseline.stop();
upstream.stop();

const table = [
  `| upstream tok/s | tokens | stream ms ${FRAME_HEADER}`,
  `|---:|---:|---:${FRAME_ALIGN}`,
  ...rows.map((r) => `| ${r.rate} | ${r.tokens} | ${r.streamMs} ${frameCells(r)}`),
].join('\n');
const report = `# Browser: one stream painting into editor and preview

Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, headless Chromium (software rendering).
Date: ${new Date().toISOString()}. Command: \`cargo xtask bench\` (runs \`node tests/bench/browser.mjs --out bench/browser.md\`).
${RUNS} runs per rate, frames pooled; the scripted upstream streams tests/fixtures/large.md.
Target: p95 frame ≤ 20 ms at 10k tok/s.

${table}
${baseRows.length ? comparison() : ''}`;
if (out) writeFileSync(out, report);
console.log(report);

/** The baseline's rows and the ratios (this build ÷ baseline), measured in the same run. */
function comparison() {
  const ratio = (a, b) => (b > 0 ? (a / b).toFixed(2) : '–');
  return `
## Against the baseline (\`FLINT_BENCH_BASELINE=${BASELINE}\`), runs interleaved

| upstream tok/s | stream ms ${FRAME_HEADER}
|---:|---:${FRAME_ALIGN}
${baseRows.map((r) => `| ${r.rate} | ${r.streamMs} ${frameCells(r)}`).join('\n')}

| upstream tok/s | stream ms ratio | p50 frame ratio | p95 frame ratio | long tasks: this / baseline |
|---:|---:|---:|---:|---:|
${rows.map((r, i) => {
    const b = baseRows[i];
    return `| ${r.rate} | ${ratio(r.streamMs, b.streamMs)} | ${ratio(r.p50, b.p50)} | ${ratio(r.p95, b.p95)} | ${r.longTasks} / ${b.longTasks} |`;
  }).join('\n')}
`;
}
