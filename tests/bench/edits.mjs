// Edit benchmark: frame times and long tasks in headless Chromium while an edit answer (50
// search/replace blocks, tests/fixtures/large-edit.md) is applied live to a 51 KB page
// (tests/fixtures/large.md), from Run until the review is open. Writes a markdown table.
//   node tests/bench/edits.mjs --out bench/edits.md   (cargo xtask bench runs it)
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';
import { FRAME_ALIGN, FRAME_HEADER, frameCells, frameStats, startProbe, stopProbe } from './probe.mjs';

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
const RATES = process.env.FLINT_BENCH_RATES?.split(',').map(Number) ?? [1_000, 10_000];
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 3);

const upstream = await startUpstream();
const gateway = await startGateway({
  upstreamUrl: upstream.url,
  models: ['large@50000', ...RATES.map((r) => `large-edit@${r}`)],
});
const browser = await launchBrowser();

// Shipped: each block's lines are edited in Monaco. Compared: the whole file set again per block
// (`__flintWholeTextEdits`), which is what the editor got before line edits.
const MODES = [['line edits', false], ['whole text per block', true]];

async function measure(rate, whole) {
  const initScript = whole ? () => { globalThis.__flintWholeTextEdits = true; } : undefined;
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript });
  await page.evaluate(() => window.__flint.editorReady());
  await runPrompt(page, 'scripted/large@50000', 'a long page');
  await waitForStatus(page, 'done', 120_000);
  await page.waitForTimeout(500);
  await startProbe(page);
  const started = Date.now();
  await runPrompt(page, `scripted/large-edit@${rate}`, 'fifty small changes');
  await page.getByTestId('diff-review').waitFor({ timeout: 120_000 });
  const streamMs = Date.now() - started;
  await page.waitForTimeout(300); // the review's diff view opens: part of what the person sees
  const probe = await stopProbe(page);
  const hunks = await page.getByTestId('hunk').count();
  await context.close();
  return { frames: probe.frames, longTasks: probe.longTasks, streamMs, hunks };
}

const rows = [];
for (const rate of RATES) {
  // Modes alternate run by run, so both see the same machine.
  const acc = MODES.map(() => ({ frames: [], longTasks: [], streamMs: 0, hunks: 0 }));
  for (let i = 0; i < RUNS; i++) {
    for (const [m, [, whole]] of MODES.entries()) {
      const r = await measure(rate, whole);
      acc[m].frames.push(...r.frames);
      acc[m].longTasks.push(...r.longTasks);
      acc[m].streamMs += r.streamMs / RUNS;
      acc[m].hunks = r.hunks;
    }
  }
  for (const [m, [mode]] of MODES.entries()) {
    const { frames, longTasks, streamMs, hunks } = acc[m];
    const row = { rate, mode, hunks, streamMs: Math.round(streamMs), ...frameStats(frames, longTasks) };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}

await browser.close();
await gateway.stop();
upstream.stop();

const table = [
  `| upstream tok/s | editor gets | hunks | Run → review ms ${FRAME_HEADER}`,
  `|---:|---|---:|---:${FRAME_ALIGN}`,
  ...rows.map((r) => `| ${r.rate} | ${r.mode} | ${r.hunks} | ${r.streamMs} ${frameCells(r)}`),
].join('\n');
const report = `# Browser: an edit applied live

Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, headless Chromium (software rendering).
Date: ${new Date().toISOString()}. Command: \`cargo xtask bench\` (runs \`node tests/bench/edits.mjs --out bench/edits.md\`).
${RUNS} runs per rate and mode (modes alternating), frames pooled, from Run until the review is open; the scripted upstream streams
tests/fixtures/large-edit.md (50 search/replace blocks) against the 51 KB page of tests/fixtures/large.md.

${table}
`;
if (out) writeFileSync(out, report);
console.log(report);
