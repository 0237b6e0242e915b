// Browser benchmark: frame times, long tasks and key → paint times in headless Chromium while
// streams paint into the editor and the previews, against the idle page measured in the same run.
// Rows: the idle page; one stream at 1k, 10k and 50k tok/s; ten tiles at 5k and 10k tok/s each; a
// 3-file React app at 10k tok/s.
// Writes a markdown report.
//   node tests/bench/browser.mjs --out bench/browser.md
//   (`cargo xtask bench` runs it; `cargo xtask bench browser --baseline REV` with REV's build beside)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';
import { frameStats, latency, startProbe, stopProbe } from './probe.mjs';
import { addTimes, startProfile, stopProfile } from './profile.mjs';
import { report } from './browser-report.mjs';

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 3);
// Escape presses per build and row (each on a fresh stream, a few per page).
const ESC_PER_PAGE = 3;
const IDLE_MS = Number(process.env.FLINT_BENCH_IDLE_MS ?? 2_000);
// A key typed into the prompt box this often while a row runs (its key → paint time).
const KEY_EVERY_MS = 150;

// `FLINT_BENCH_BASELINE=DIR` (DIR holding a `flint-gateway` binary and its `dist/`, e.g. built
// from an earlier commit by `cargo xtask bench browser --baseline REV`): the same runs against that
// build too, interleaved run by run (these machines are too noisy to compare separate runs).
const BASELINE = process.env.FLINT_BENCH_BASELINE;

/** The rows, with the targets: p95 frame ÷ idle p95, longest task, Esc → cancelled painted. */
export const ROWS = [
  { name: 'idle page', rate: 0, tiles: 1 },
  { name: '1 stream × 1k tok/s', rate: 1_000, tiles: 1, escMs: 50 },
  { name: '1 stream × 10k tok/s', rate: 10_000, tiles: 1, p95Ratio: 1.25, longestMs: 50, escMs: 50, profile: true },
  { name: '1 stream × 50k tok/s', rate: 50_000, tiles: 1, escMs: 50 },
  { name: '10 tiles × 5k tok/s', rate: 5_000, tiles: 10, p95Ratio: 2, longestMs: 100, escMs: 50 },
  { name: '10 tiles × 10k tok/s', rate: 10_000, tiles: 10, escMs: 50 },
  // A 3-file React app (react-large.md, about 8k tokens): built in the worker and run as it streams.
  { name: 'React app (3 files) × 10k tok/s', rate: 10_000, tiles: 1, fixture: 'react-large', p95Ratio: 1.25, longestMs: 50, escMs: 50, shows: 'Sprint board' },
].filter((r) => !process.env.FLINT_BENCH_ROWS || r.rate === 0 || process.env.FLINT_BENCH_ROWS.split(',').includes(r.name));

const load = [loadavg()[0]];
const upstream = await startUpstream();
/** The scripted model a row streams. */
const modelOf = (row) => `${row.fixture ?? 'large'}@${row.rate}`;
const models = [...new Set(ROWS.filter((r) => r.rate).map(modelOf))];
const builds = [{ name: 'this build', gateway: await startGateway({ upstreamUrl: upstream.url, models }) }];
// This build again, with a new file streaming into Monaco rather than the plain stream view
// (app/js/stream_view.js): what the view saves, in the same run.
// (`FLINT_BENCH_SKIP_MONACO=1` leaves it out, for a shorter run.)
if (!process.env.FLINT_BENCH_SKIP_MONACO) {
  builds.push({ ...builds[0], name: 'this build, streaming into Monaco', init: 'globalThis.__flintMonacoWhileStreaming = true;', shared: true });
}
if (BASELINE) {
  builds.push({
    name: `baseline (\`${BASELINE}\`)`,
    gateway: await startGateway({
      upstreamUrl: upstream.url, models, gatewayBin: join(BASELINE, 'flint-gateway'), dist: join(BASELINE, 'dist'),
    }),
  });
}
const browser = await launchBrowser();

/** A fresh page on `gateway`, editor ready (Monaco's lazy parts loaded), `tiles` variations. */
async function open({ gateway, init }, tiles) {
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: init });
  await page.evaluate(() => window.__flint.editorReady());
  if (tiles > 1) await page.getByTestId('variations-count').selectOption(String(tiles));
  return { page, context };
}

/** Types a key into the prompt box every KEY_EVERY_MS until `done()` resolves. */
async function typeUntil(page, done) {
  let finished = false;
  const result = done.finally(() => { finished = true; });
  while (!finished) {
    await page.getByTestId('prompt-input').press('x');
    await Promise.race([result, new Promise((r) => setTimeout(r, KEY_EVERY_MS))]);
  }
  return result;
}

/** One row's stream (or the idle page) on `gateway`: frames, long tasks, key → paint. */
async function measure(row, build, { profile = false } = {}) {
  const { page, context } = await open(build, row.tiles);
  // The prompt box has focus from here on, so the keys typed land in it.
  await page.getByTestId('prompt-input').fill('a long page');
  const cdp = profile ? await startProfile(context, page) : null;
  await startProbe(page);
  const started = Date.now();
  if (row.rate === 0) {
    await typeUntil(page, new Promise((r) => setTimeout(r, IDLE_MS)));
  } else {
    await runPrompt(page, `scripted/${modelOf(row)}`, 'a long page');
    await typeUntil(page, waitForStatus(page, 'done', 180_000));
  }
  if (row.shows) {
    // A page that did not render is no measurement of one that did.
    await page.frameLocator('[data-testid="preview-frame"]').getByText(row.shows).first().waitFor({ timeout: 10_000 });
  }
  const streamMs = Date.now() - started;
  await page.waitForTimeout(300); // the finished page swaps in: part of what the person sees
  const probe = await stopProbe(page);
  const times = cdp ? await stopProfile(cdp) : null;
  if (row.tiles > 1) {
    const done = await page.locator('[data-testid="variation-tile"][data-status="done"]').count();
    if (done !== row.tiles) throw new Error(`${row.name}: ${done} of ${row.tiles} tiles finished`);
  }
  await context.close();
  return { ...probe, streamMs, times };
}

/** Escape pressed part-way through `ESC_PER_PAGE` streams: ms until "cancelled" was painted. */
async function escapes(row, build) {
  const { page, context } = await open(build, row.tiles);
  await startProbe(page);
  for (let i = 0; i < ESC_PER_PAGE; i++) {
    await runPrompt(page, `scripted/${modelOf(row)}`, `a long page ${i}`);
    // Some way in: a quarter of large.md's 8,192 tokens counted.
    await page.waitForFunction(() => {
      const tokens = Number(document.querySelector('[data-testid="metric-tokens"]')?.textContent.replace(/[^\d]/g, ''));
      const status = document.querySelector('[data-testid="stream-status"]')?.textContent.trim();
      return tokens >= 2_000 || status === 'done';
    }, null, { timeout: 60_000, polling: 'raf' });
    await page.keyboard.press('Escape');
    // A stream that ended first (at 50k tok/s it may) cancels nothing: no sample.
    await page.getByTestId('stream-status').filter({ hasText: /^\s*(cancelled|done)\s*$/ }).waitFor({ timeout: 10_000 });
    // Each press on a stream of its own, after the last one's frame.
    await page.waitForTimeout(100);
  }
  const { keys } = await stopProbe(page);
  await context.close();
  return keys.filter((k) => k.key === 'Escape').map((k) => k.ms);
}

const results = builds.map(() => ROWS.map(() => ({ frames: [], longTasks: [], keys: [], esc: [], streamMs: 0 })));
const profiles = builds.map(() => new Map());
let profileRuns = 0;
for (const [r, row] of ROWS.entries()) {
  for (let i = 0; i < RUNS; i++) {
    // Alternating, so every build sees the same moments of a noisy machine.
    for (const [b, build] of builds.entries()) {
      const m = await measure(row, build);
      const pool = results[b][r];
      pool.frames.push(...m.frames);
      pool.longTasks.push(...m.longTasks);
      pool.keys.push(...m.keys.filter((k) => k.key === 'x').map((k) => k.ms));
      pool.streamMs += m.streamMs / RUNS;
      if (row.rate) pool.esc.push(...await escapes(row, build));
      load.push(loadavg()[0]);
    }
  }
  if (row.profile) {
    // Separate runs: sampling slows the page, so they are not part of the frame figures.
    for (let i = 0; i < RUNS; i++) {
      for (const [b, build] of builds.entries()) addTimes(profiles[b], (await measure(row, build, { profile: true })).times);
    }
    profileRuns = RUNS;
  }
  for (const [b, build] of builds.entries()) console.log(build.name, row.name, JSON.stringify(summary(results[b][r])));
}

await browser.close();
for (const build of builds) if (!build.shared) await build.gateway.stop();
upstream.stop();

/** A pooled row's figures. */
function summary(pool) {
  return {
    streamMs: Math.round(pool.streamMs), ...frameStats(pool.frames, pool.longTasks),
    key: latency(pool.keys), esc: latency(pool.esc),
  };
}

const text = report({
  rows: ROWS,
  builds: builds.map((build, b) => ({ name: build.name, rows: results[b].map(summary), profile: profiles[b] })),
  profileRuns,
  machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
  load,
  runs: RUNS,
  escPerRow: RUNS * ESC_PER_PAGE,
  idleMs: IDLE_MS,
  keyEveryMs: KEY_EVERY_MS,
  baseline: BASELINE,
});
if (out) writeFileSync(out, text);
console.log(text);
