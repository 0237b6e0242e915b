// Load benchmark: what a first visit and a reload of Flint cost in headless Chromium, against the
// built gateway on loopback. Writes a markdown table.
//   node tests/bench/load.mjs --out bench/load.md   (cargo xtask bench [load] runs it)
//
// For each build, in alternating rounds:
// - cold: a fresh browser context (empty cache) opens the page; bytes and requests are counted
//   until the editor is shown and the network has been quiet for 500 ms (everything the first
//   visit loads, Monaco included);
// - usable: ms from navigation start until the prompt box is usable, i.e. `prompt-input` is in the
//   page and enabled and the connection status says "connected" (the socket is open), so a typed
//   prompt runs; measured in the page by a MutationObserver;
// - editor: ms from navigation start until Monaco's editor is in the page;
// - warm: the same context reloads the page; bytes and requests that went over the network
//   (a response from the browser's cache counts 0; a 304 counts its headers).
// Bytes are what Chromium's network stack reports per response (headers + encoded body), page and
// workers together; requests from the sandboxed preview frame are included (its opaque origin
// never shares the cache).
//
// Builds compared in the same run: "this build" (dist/ and target/release/flint-gateway), the same
// served plain (`FLINT_STATIC_PLAIN=1`: no precompressed copies, no Cache-Control, no ETag), and,
// with `FLINT_BENCH_BASELINE=DIR` (a `flint-gateway` binary and its `dist/`, e.g. built from an
// earlier commit), that build too (named in the table by \`FLINT_BENCH_BASELINE_NAME\`).
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, startGateway, startUpstream } from '../e2e/harness.mjs';

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 5);
const BASELINE = process.env.FLINT_BENCH_BASELINE;
const QUIET_MS = 500;

const upstream = await startUpstream();
const builds = [];
if (BASELINE) {
  builds.push({
    name: process.env.FLINT_BENCH_BASELINE_NAME ?? `baseline (\`${BASELINE}\`)`,
    gateway: await startGateway({
      upstreamUrl: upstream.url, gatewayBin: join(BASELINE, 'flint-gateway'), dist: join(BASELINE, 'dist'),
    }),
  });
}
// The harness passes its own environment to the gateway it starts.
process.env.FLINT_STATIC_PLAIN = '1';
builds.push({ name: 'this build, served plain', gateway: await startGateway({ upstreamUrl: upstream.url }) });
delete process.env.FLINT_STATIC_PLAIN;
builds.push({ name: 'this build', gateway: await startGateway({ upstreamUrl: upstream.url }) });
const browser = await launchBrowser();

/** Records, in the page, when the prompt becomes usable and when the editor appears. */
const PROBE = `(() => {
  const marks = (window.__flintLoad = {});
  const check = () => {
    const prompt = document.querySelector('[data-testid="prompt-input"]');
    const status = document.querySelector('[data-testid="connection-status"]');
    if (marks.usable === undefined && prompt && !prompt.disabled && /\\bconnected\\b/.test(status?.textContent ?? '')) {
      marks.usable = performance.now();
    }
    if (marks.editor === undefined && document.querySelector('[data-testid="editor"] .monaco-editor')) {
      marks.editor = performance.now();
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})();`;

/** Counts what goes over the network in `context`, from now on. */
function traffic(context) {
  const t = { bytes: 0, requests: 0, inFlight: 0, last: Date.now(), files: [] };
  const onRequest = () => {
    t.inFlight++;
    t.last = Date.now();
  };
  const onDone = async (request) => {
    t.inFlight--;
    t.last = Date.now();
    if (!request.url().startsWith('http')) return;
    const sizes = await request.sizes().catch(() => null);
    // From the cache, Chromium reports an encoded length of 0 (body = −headers).
    const bytes = sizes ? Math.max(0, sizes.responseBodySize + sizes.responseHeadersSize) : 0;
    if (bytes > 0) {
      t.bytes += bytes;
      t.requests++;
      t.files.push([new URL(request.url()).pathname, bytes]);
    }
  };
  context.on('request', onRequest);
  context.on('requestfinished', onDone);
  context.on('requestfailed', onDone);
  t.stop = () => {
    context.off('request', onRequest);
    context.off('requestfinished', onDone);
    context.off('requestfailed', onDone);
  };
  return t;
}

/** Waits for the page's marks and then for `QUIET_MS` without network activity. */
async function settle(page, t) {
  await page.waitForFunction(() => window.__flintLoad?.usable !== undefined && window.__flintLoad?.editor !== undefined,
    null, { timeout: 30_000, polling: 50 });
  while (t.inFlight > 0 || Date.now() - t.last < QUIET_MS) await page.waitForTimeout(50);
  return page.evaluate(() => ({
    ...window.__flintLoad,
    // When Monaco's loader was asked for (console only: whether it came before or after usable).
    monaco: performance.getEntriesByType('resource').find((e) => /\/loader\.js$/.test(e.name))?.startTime,
  }));
}

async function measure(build) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(PROBE);
  const page = await context.newPage();
  const cold = traffic(context);
  await page.goto(build.gateway.url);
  const coldMarks = await settle(page, cold);
  cold.stop();
  const warm = traffic(context);
  await page.reload();
  const warmMarks = await settle(page, warm);
  warm.stop();
  await context.close();
  return {
    coldBytes: cold.bytes, coldRequests: cold.requests, usable: coldMarks.usable, editor: coldMarks.editor,
    monaco: coldMarks.monaco,
    warmBytes: warm.bytes, warmRequests: warm.requests, warmUsable: warmMarks.usable,
    warmFiles: warm.files,
  };
}

for (const build of builds) build.runs = [];
for (let i = 0; i < RUNS; i++) {
  // Alternating, so every build sees the same moments of a noisy machine.
  for (const build of builds) {
    const r = await measure(build);
    build.runs.push(r);
    const { warmFiles, ...shown } = r;
    console.log(build.name, i, JSON.stringify(shown));
  }
}
await browser.close();
for (const build of builds) await build.gateway.stop();
upstream.stop();

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const med = (build, key) => median(build.runs.map((r) => r[key]));
const mb = (b) => (b / 1e6).toFixed(2);
const kb = (b) => (b / 1e3).toFixed(1);
const ms = (x) => Math.round(x);

const chromium = browser.version();
const table = [
  '| build | cold MB | cold requests | usable ms | editor ms | warm KB | warm requests | warm usable ms |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...builds.map((b) => `| ${b.name} | ${mb(med(b, 'coldBytes'))} | ${med(b, 'coldRequests')} | ${ms(med(b, 'usable'))} | `
    + `${ms(med(b, 'editor'))} | ${kb(med(b, 'warmBytes'))} | ${med(b, 'warmRequests')} | ${ms(med(b, 'warmUsable'))} |`),
].join('\n');
const ours = builds.at(-1);
const warmList = ours.runs.at(-1).warmFiles.sort((a, b) => b[1] - a[1])
  .map(([path, bytes]) => `${path} ${bytes}`).join(', ');
const report = `# Load: a first visit and a reload

Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, headless Chromium ${chromium}, gateway on loopback.
Date: ${new Date().toISOString()}. Command: \`${BASELINE ? `FLINT_BENCH_BASELINE=${BASELINE} ` : ''}node tests/bench/load.mjs --out bench/load.md\` (\`cargo xtask bench load\` builds the app and the gateway, then runs it).
Medians of ${RUNS} rounds, builds alternating. Targets: cold ≤ 3 MB, usable ≤ 1,500 ms, warm ≤ 100 KB.

- cold: a fresh context (empty cache) until the editor is shown and the network is quiet for ${QUIET_MS} ms: every byte (headers + encoded body) and request, page and workers.
- usable: ms from navigation start until \`prompt-input\` is enabled and the connection status says "connected".
- editor: ms from navigation start until Monaco's editor is in the page.
- warm: the same context reloads; what went over the network (a cache hit counts 0, a 304 its headers).
- "served plain": the same dist/ and gateway with \`FLINT_STATIC_PLAIN=1\` (no precompressed copies, no Cache-Control, no ETag).

${table}

What this build's warm reload still fetched (last round, bytes): ${warmList}.
`;
if (out) writeFileSync(out, report);
console.log(report);
