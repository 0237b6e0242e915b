// Browser benchmark: frame times and long tasks in headless Chromium while one stream paints into the
// editor and the preview, with the scripted upstream at several token rates. Writes a markdown table.
//   node tests/bench/browser.mjs --out bench/browser.md   (cargo xtask bench runs it)
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';
import { FRAME_ALIGN, FRAME_HEADER, frameCells, frameStats, startProbe, stopProbe } from './probe.mjs';

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
const RATES = process.env.FLINT_BENCH_RATES?.split(',').map(Number) ?? [1_000, 10_000, 50_000];
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 3);

const upstream = await startUpstream();
const gateway = await startGateway({ upstreamUrl: upstream.url, models: RATES.map((r) => `large@${r}`) });
const browser = await launchBrowser();


async function measure(rate) {
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

const rows = [];
for (const rate of RATES) {
  const frames = [], longTasks = [];
  let streamMs = 0, tokens = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = await measure(rate);
    frames.push(...r.frames);
    longTasks.push(...r.longTasks);
    streamMs += r.streamMs / RUNS;
    tokens = r.tokens;
  }
  const row = { rate, tokens, streamMs: Math.round(streamMs), ...frameStats(frames, longTasks) };
  rows.push(row);
  console.log(JSON.stringify(row));
}

await browser.close();
await gateway.stop();
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
`;
if (out) writeFileSync(out, report);
console.log(report);
