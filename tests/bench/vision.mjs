// "Looks like the picture" benchmark (issue 28, item 4): for each mock of tests/fixtures/vision/,
// its four candidate pages are drawn by real sandboxed picture frames (public/preview.html, the
// `picture` message, public/preview-pixels.js) at the mock's width in headless Chromium, and each
// drawing is scored against the mock by the worker's likeness check — the same Rust, compiled
// natively as `worker/examples/likeness.rs` (the worker crate built with opt-level 3, as the served
// wasm is, the rest as the debug build has it; no `--release`). Writes how often the matching page ranks first, the margins, and the time per page.
//   node tests/bench/vision.mjs --out bench/vision.md [--save requests.jsonl]
// (`--save`: the likeness requests, to feed the example again while tuning the check.)
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { cpus } from 'node:os';
import { launchBrowser } from '../e2e/harness.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(ROOT, 'tests/fixtures/vision');
const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : null);
const out = arg('--out');
const CANDIDATES = ['match.html', 'wrong-scheme.html', 'wrong-other.html', 'wrong-third.html'];
// How much of a page is drawn: as the app would ask, up to four times the picture's height.
const MAX_HEIGHT_TIMES = 4;

// The app's side of a picture frame, reduced: a frame of the mock's size that loads preview.html,
// is given a port and a page, and answers with its pixels; and the mock decoded to RGBA.
const HOST = `<!doctype html><html><body><script>
const base64 = (bytes) => { let s = ''; for (let i = 0; i < bytes.length; i += 32768) s += String.fromCharCode(...bytes.subarray(i, i + 32768)); return btoa(s); };
window.mockPixels = async (url) => {
  const image = new Image(); image.src = url; await image.decode();
  const canvas = document.createElement('canvas'); canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d'); context.drawImage(image, 0, 0);
  return { width: image.width, height: image.height, rgba: base64(context.getImageData(0, 0, image.width, image.height).data) };
};
window.picture = (doc, width, height, maxHeight) => new Promise((ok) => {
  const el = document.createElement('iframe');
  el.setAttribute('sandbox', 'allow-scripts');
  el.setAttribute('style', 'position:absolute;left:-12000px;top:0;border:0;width:' + width + 'px;height:' + height + 'px');
  const started = performance.now();
  el.addEventListener('load', () => {
    const channel = new MessageChannel();
    channel.port1.onmessage = ({ data }) => {
      if (data.flint === 'ready') channel.port1.postMessage({ flint: 'picture', doc, width, max_height: maxHeight });
      if (data.flint === 'pixels') { el.remove(); ok({ ...data, wall: performance.now() - started }); }
    };
    el.contentWindow.postMessage({ flint: 'connect' }, '*', [channel.port2]);
  }, { once: true });
  el.src = 'preview.html';
  document.body.append(el);
});
</script></body></html>`;

const PUBLIC = ['preview.html', 'preview-runtime.js', 'preview-checks.js', 'preview-pick.js', 'preview-live.js',
  'preview-capture.js', 'preview-messages.js', 'preview-pixels.js', 'preview-swap.js'];
const files = Object.fromEntries(PUBLIC.map((n) => [`/${n}`, join(ROOT, 'public', n)]));
files['/idiomorph.min.js'] = join(ROOT, 'node_modules/idiomorph/dist/idiomorph.min.js');
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path === '/host.html') return res.writeHead(200, { 'content-type': 'text/html' }).end(HOST);
  if (path.startsWith('/fixtures/') && !path.includes('..')) {
    return res.writeHead(200, { 'content-type': 'image/png' }).end(readFileSync(join(FIXTURES, path.slice(10))));
  }
  if (!files[path]) return res.writeHead(404).end();
  // As the gateway serves it: the frame's own document is sandboxed too.
  const headers = { 'content-type': path.endsWith('.js') ? 'text/javascript' : 'text/html' };
  if (path === '/preview.html') headers['content-security-policy'] = 'sandbox allow-scripts';
  return res.writeHead(200, headers).end(readFileSync(files[path]));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const browser = await launchBrowser();
const page = await browser.newPage();
await page.goto(`http://127.0.0.1:${server.address().port}/host.html`);

const fixtures = readdirSync(FIXTURES).filter((d) => /^\d\d-/.test(d)).sort();
const requests = [];
const drawn = [];
for (const fixture of fixtures) {
  const mock = await page.evaluate((url) => mockPixels(url), `/fixtures/${fixture}/mock.png`);
  for (const candidate of CANDIDATES) {
    const doc = readFileSync(join(FIXTURES, fixture, candidate), 'utf8');
    const pixels = await page.evaluate(([d, w, h, m]) => picture(d, w, h, m), [doc, mock.width, mock.height, mock.height * MAX_HEIGHT_TIMES]);
    if (typeof pixels.failed === 'string') throw new Error(`${fixture}/${candidate}: ${pixels.failed}`);
    drawn.push({ fixture, candidate, wall: pixels.wall, draw: pixels.ms, bytes: pixels.rgba.length });
    requests.push(JSON.stringify({ id: `${fixture}/${candidate}`, mock, page: { width: pixels.width, height: pixels.height, rgba: pixels.rgba } }));
  }
}
await browser.close();
server.close();

if (arg('--save')) writeFileSync(arg('--save'), `${requests.join('\n')}\n`);
const binary = process.env.LIKENESS_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'debug/examples/likeness');
// The worker crate (and base64) optimised, as they are in the served wasm; its dependencies stay
// as the debug build has them (none of them is on the check's path).
const OPTIMISED = ['--config', 'profile.dev.package.flint-worker.opt-level=3', '--config', 'profile.dev.package.base64.opt-level=3'];
execFileSync('cargo', ['build', '-q', '-p', 'flint-worker', '--example', 'likeness', ...OPTIMISED], { stdio: 'inherit' });
const answers = execFileSync(binary, { input: `${requests.join('\n')}\n`, maxBuffer: 64 << 20 }).toString().trim().split('\n').map((l) => JSON.parse(l));
const byId = new Map(answers.map((a) => [a.id, a]));

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const max = (xs) => Math.max(...xs);
const rows = [];
let first = 0;
const margins = [];
for (const fixture of fixtures) {
  const scores = CANDIDATES.map((c) => byId.get(`${fixture}/${c}`).score ?? 0);
  const best = Math.max(...scores.slice(1));
  const margin = scores[0] - best;
  if (margin > 0) first++;
  margins.push(margin);
  const worst = byId.get(`${fixture}/${CANDIDATES[1 + scores.slice(1).indexOf(best)]}`);
  rows.push(`| ${fixture} | ${scores.map((s) => s.toFixed(3)).join(' | ')} | ${margin > 0 ? 'yes' : '**no**'} | ${margin.toFixed(3)} | ${(worst.findings[0] ?? '').replace(/\|/g, '/')} |`);
}
// Which view ranks best alone: the score's parts (the example reports them) each used as the score.
const VIEWS = [['structure (SSIM, 3 scales, best of 15 offsets)', 0], ['block colours (16-wide grid)', 1], ['palette (histogram)', 2]];
const viewRows = VIEWS.map(([name, i]) => {
  const ms = fixtures.map((f) => {
    const v = CANDIDATES.map((c) => byId.get(`${f}/${c}`).views?.[i] ?? 0);
    return v[0] - Math.max(...v.slice(1));
  });
  return `| ${name} | ${ms.filter((m) => m > 0).length} of ${fixtures.length} | ${mean(ms).toFixed(3)} | ${Math.min(...ms).toFixed(3)} |`;
});
viewRows.push(`| **the score**: 0.4 structure + 0.4 blocks + 0.2 palette | ${first} of ${fixtures.length} | ${mean(margins).toFixed(3)} | ${Math.min(...margins).toFixed(3)} |`);
const walls = drawn.map((d) => d.wall);
const draws = drawn.map((d) => d.draw);
const compares = answers.map((a) => a.ms);
const report = `# "Looks like the picture": does the check rank the matching page first?

Command: \`node tests/bench/vision.mjs --out bench/vision.md\` (fixtures: \`node tests/bench/vision-fixtures.mjs\`).
Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), headless Chromium (Debian), ${new Date().toISOString().slice(0, 10)}.

Ten mocks (tests/fixtures/vision/, 800 px wide screenshots of ten layouts, 256 colours), four candidate
pages each: \`match\` (the mock's layout in a serif font, other words, shifted 6 px) and three wrong ones
(\`scheme\`: the same layout's other colours or arrangement; \`other\`, \`third\`: two other layouts). Each
candidate is drawn by a real sandboxed picture frame (preview.html served with \`sandbox allow-scripts\`,
the \`picture\` message, public/preview-pixels.js: SVG foreignObject → canvas → RGBA, at most 320 px
wide) at the mock's width, and scored by the worker's likeness check (worker/src/likeness.rs) compiled
natively as worker/examples/likeness.rs, fed exactly what the worker is sent.

**The matching page ranks first for ${first} of ${fixtures.length} mocks** (target ≥ 8). Margin (match − best wrong):
mean ${mean(margins).toFixed(3)}, smallest ${Math.min(...margins).toFixed(3)}.

| mock | match | scheme | other | third | first? | margin | what the best wrong page hears first |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}

## Which view ranks best

Each part of the score used alone, on the same drawings:

| view | match first | mean margin | smallest margin |
|---|---|---|---|
${viewRows.join('\n')}

## Time per page

| step | mean | max |
|---|---|---|
| picture frame, wall: frame load, page written and loaded, 60 ms settle, drawn, pixels back | ${mean(walls).toFixed(1)} ms | ${max(walls).toFixed(1)} ms |
| of which drawing (serialise, SVG decode, canvas, read back, base64) | ${mean(draws).toFixed(1)} ms | ${max(draws).toFixed(1)} ms |
| compare: decode base64, grids, SSIM + blocks + palette at 15 offsets, findings (native, worker crate at opt-level 3) | ${mean(compares).toFixed(2)} ms | ${max(compares).toFixed(2)} ms |

Pixels sent back per page: mean ${(mean(drawn.map((d) => d.bytes)) / 1024).toFixed(0)} KB of base64. The 60 ms settle
is idle waiting, not work; the canvas was never tainted (no drawing failed).
`;
if (out) writeFileSync(join(ROOT, out), report);
console.log(report);
