// Issue 26, item 1: what each streamed frame costs the page's main thread, counted. The page is
// instrumented before Flint starts: messages its own WebSockets receive, messages it posts to
// workers and receives from them (with their characters, each one a copy across threads), and the
// display frames (requestAnimationFrame) while the answer streams. Run it against two builds
// (FLINT_DIST) to compare; with the socket on the page its frame count is the gateway's.
//   FLINT_DIST=<dist> node tests/bench/relay-counts.mjs [--out FILE]
import { writeFileSync } from 'node:fs';
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
const ROWS = [
  { name: '1 stream × 1k tok/s', rate: 1_000, tiles: 1 },
  { name: '10 tiles × 5k tok/s', rate: 5_000, tiles: 10 },
];

const COUNT = `(() => {
  const c = globalThis.__flintCounts = { socketFrames: 0, toWorker: 0, toWorkerChars: 0, fromWorker: 0,
    fromWorkerChars: 0, frames: 0, on: false };
  const size = (d) => (typeof d === 'string' ? d.length : 0);
  const Ws = globalThis.WebSocket;
  globalThis.WebSocket = class extends Ws {
    constructor(...a) { super(...a); this.addEventListener('message', () => { if (c.on) c.socketFrames++; }); }
  };
  const W = globalThis.Worker;
  globalThis.Worker = class extends W {
    constructor(...a) {
      super(...a);
      this.addEventListener('message', (e) => { if (c.on) { c.fromWorker++; c.fromWorkerChars += size(e.data); } });
    }
    postMessage(d, ...r) { if (c.on) { c.toWorker++; c.toWorkerChars += size(d); } return super.postMessage(d, ...r); }
  };
  const tick = () => { if (c.on) c.frames++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
})();`;

const upstream = await startUpstream();
const gateway = await startGateway({ upstreamUrl: upstream.url, models: ROWS.map((r) => `large@${r.rate}`) });
const browser = await launchBrowser();
const results = [];
for (const row of ROWS) {
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: COUNT });
  if (row.tiles > 1) await page.getByTestId('variations-count').selectOption(String(row.tiles));
  await page.evaluate(() => { globalThis.__flintCounts.on = true; });
  await runPrompt(page, `scripted/large@${row.rate}`, 'a long page');
  await waitForStatus(page, 'done', 180_000);
  const counts = await page.evaluate(() => { globalThis.__flintCounts.on = false; return globalThis.__flintCounts; });
  results.push({ row, counts });
  console.log(row.name, JSON.stringify(counts));
  await context.close();
}
await browser.close();
await gateway.stop();
upstream.stop();

const per = (n, d) => (d ? (n / d).toFixed(2) : '—');
const lines = [
  '| row | display frames | socket frames on the page | posts page → worker | messages worker → page | per display frame: page → worker / worker → page | characters crossing per display frame |',
  '|---|---:|---:|---:|---:|---|---:|',
];
for (const { row, counts: c } of results) {
  lines.push(`| ${row.name} | ${c.frames} | ${c.socketFrames} | ${c.toWorker} | ${c.fromWorker} | ${per(c.toWorker, c.frames)} / ${per(c.fromWorker, c.frames)} | ${per(c.toWorkerChars + c.fromWorkerChars, c.frames)} |`);
}
const text = `${lines.join('\n')}\n`;
if (out) writeFileSync(out, text);
console.log(text);
