// Picture frames (app/js/picture.js): a real page drawn by the real runtime comes back as exactly
// the size asked for; a frame that floods its port, sends oversized or mis-sized pixels, or sends
// pixels unasked is given up on with a sentence, and nothing it sent is passed on.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser } from './harness.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const PUBLIC = ['preview.html', 'preview-runtime.js', 'preview-checks.js', 'preview-pick.js', 'preview-live.js',
  'preview-capture.js', 'preview-messages.js', 'preview-pixels.js', 'preview-swap.js'];

// A frame that plays the runtime badly, chosen by its fragment.
const HOSTILE = `<!doctype html><script>
const b64 = (n) => Math.ceil(n / 3) * 4;
const mode = location.hash.slice(1);
addEventListener('message', (event) => {
  const port = event.ports[0];
  if (mode === 'unasked') port.postMessage({ flint: 'pixels', width: 320, height: 1, rgba: 'A'.repeat(b64(1280)) });
  port.onmessage = () => {
    if (mode === 'flood') for (let i = 0; i < 100; i++) port.postMessage({ flint: 'loaded' });
    // Fifty megabytes of "pixels" for a drawing of an allowed size.
    if (mode === 'huge') port.postMessage({ flint: 'pixels', width: 320, height: 200, rgba: 'A'.repeat(25_000_000) });
    if (mode === 'wide') port.postMessage({ flint: 'pixels', width: 640, height: 10, rgba: 'A'.repeat(b64(640 * 40)) });
    if (mode === 'short') port.postMessage({ flint: 'pixels', width: 320, height: 10, rgba: 'AAAA' });
  };
  port.postMessage({ flint: 'ready' });
}, { once: true });
</script>`;

const HOST = `<!doctype html><body><script type="module">
import { createPicture } from '/app/js/picture.js';
window.draw = (url, doc, width, maxHeight, viewHeight) =>
  new Promise((ok) => createPicture(url, doc, width, maxHeight, viewHeight, ok));
window.ready = true;
</script></body>`;

let browser;
let server;
let page;

before(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const send = (type, body) => res.writeHead(200, { 'content-type': type }).end(body);
    if (path === '/host.html') return send('text/html', HOST);
    if (path === '/hostile.html') return send('text/html', HOSTILE);
    if (path === '/idiomorph.min.js') return send('text/javascript', readFileSync(join(ROOT, 'node_modules/idiomorph/dist/idiomorph.min.js')));
    if (PUBLIC.includes(path.slice(1))) {
      return send(path.endsWith('.js') ? 'text/javascript' : 'text/html', readFileSync(join(ROOT, 'public', path.slice(1))));
    }
    if (/^\/app\/js\/[a-z_]+\.js$/.test(path)) return send('text/javascript', readFileSync(join(ROOT, path.slice(1))));
    return res.writeHead(404).end();
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/host.html`);
  await page.waitForFunction(() => window.ready === true);
});

after(async () => {
  await browser?.close();
  server?.close();
});

const draw = (url, doc = '<p>hi', width = 800, maxHeight = 2400, viewHeight = 600) =>
  page.evaluate(([u, d, w, m, v]) => window.draw(u, d, w, m, v), [url, doc, width, maxHeight, viewHeight]);

test('a page drawn by the runtime comes back at the size asked for', async () => {
  const doc = '<!doctype html><body style="margin:0;background:#123"><div style="height:900px;background:#fa0"></div></body>';
  const outcome = await draw('preview.html', doc);
  assert.equal(outcome.failed, undefined, outcome.failed);
  // 800 CSS px wide drawn at 320: 0.4 a pixel; 900 px of page is 360 rows.
  assert.equal(outcome.width, 320);
  assert.equal(outcome.height, 360);
  assert.equal(outcome.page_height, 900);
  assert.equal(outcome.rgba.length, Math.ceil((320 * 360 * 4) / 3) * 4);
  // The first pixel is the page's orange block, not a tainted or blank canvas.
  const first = Buffer.from(outcome.rgba.slice(0, 8), 'base64');
  assert.deepEqual([...first.subarray(0, 4)], [255, 170, 0, 255]);
});

test('what a page drew on a canvas and typed into a field is in its drawing', async () => {
  const doc = `<!doctype html><body style="margin:0"><canvas id="c" width="800" height="100" style="display:block"></canvas>
    <input id="i" style="display:block;width:800px;height:100px;border:0;padding:0;font-size:90px;background:#fff;color:#000">
    <script>const x = document.getElementById('c').getContext('2d'); x.fillStyle = '#0a0'; x.fillRect(0, 0, 800, 100);
    document.getElementById('i').value = '█████████████';</script></body>`;
  const outcome = await draw('preview.html', doc, 800, 600, 600);
  assert.equal(outcome.failed, undefined, outcome.failed);
  const bytes = Buffer.from(outcome.rgba, 'base64');
  const at = (x, y) => [...bytes.subarray((y * outcome.width + x) * 4, (y * outcome.width + x) * 4 + 3)];
  // The canvas's green, drawn by script: kept as an image of the canvas.
  assert.deepEqual(at(160, 20), [0, 170, 0]);
  // The typed blocks, dark, where an empty field would be white.
  const row = Array.from({ length: 100 }, (_, x) => at(x + 2, 60)[0]);
  assert.ok(Math.min(...row) < 100, `the field's row: ${row.slice(0, 20)}`);
});

test('a frame that floods its port is given up on', async () => {
  const outcome = await draw('hostile.html#flood');
  assert.match(outcome.failed, /more than Flint's runtime ever does/);
});

test('a frame that sends megabytes of pixels is given up on before they are read', async () => {
  const outcome = await draw('hostile.html#huge');
  assert.match(outcome.failed, /more than Flint's runtime ever does/);
  assert.equal(outcome.rgba, undefined);
});

test('pixels of another size than asked, or that do not fill it, are refused', async () => {
  assert.match((await draw('hostile.html#wide')).failed, /is 640×10 px; 320 px wide and at most 960 tall was asked for/);
  assert.match((await draw('hostile.html#short')).failed, /has 4 characters of pixels, not the 17068/);
});

test('pixels sent before the frame was asked to draw are refused', async () => {
  assert.match((await draw('hostile.html#unasked')).failed, /before it was asked to draw/);
});
