// The preview runtime on its own, for the tests and benchmarks of it: the files of public/ served
// from a folder (another build's with `PUB=DIR`), a host page that plays the app's side (frames
// that load preview.html, each given a port, `send` waiting for `applied`), and Chromium on it.
// app/js's modules are served under /app-js/ for tests that drive the app's side itself.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { launchBrowser } from './harness.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const NAMES = ['preview.html', 'preview-runtime.js', 'preview-checks.js', 'preview-pick.js', 'preview-live.js',
  'preview-capture.js', 'preview-messages.js', 'preview-pixels.js', 'preview-swap.js'];

// The app's side, reduced: frames that load preview.html, each given a port, and a way to send a
// message to frame `i` and wait for its `applied` (or `swapped`).
const HOST = `<!doctype html><html><body><script>
window.frames_ = [];
window.addFrame = () => new Promise((ok) => {
  const el = document.createElement('iframe');
  el.setAttribute('sandbox', 'allow-scripts');
  el.style = 'width:800px;height:600px';
  el.addEventListener('load', () => {
    const channel = new MessageChannel();
    const f = { port: channel.port1, waiting: null, console: [] };
    f.port.onmessage = (e) => {
      if (e.data.flint === 'ready') ok(frames_.push(f) - 1);
      if (e.data.flint === 'console') f.console.push(e.data.text);
      if ((e.data.flint === 'applied' || e.data.flint === 'swapped') && f.waiting) { const w = f.waiting; f.waiting = null; w(e.data); }
    };
    el.contentWindow.postMessage({ flint: 'connect' }, '*', [channel.port2]);
  }, { once: true });
  el.src = 'preview.html';
  document.body.append(el);
});
window.send = (i, message) => new Promise((ok) => { frames_[i].waiting = ok; frames_[i].port.postMessage(message); });
window.consoleOf = (i) => frames_[i].console;
window.post = (i, message) => frames_[i].port.postMessage(message);
</script></body></html>`;

/** Serves `publicDir`'s preview files and the host page; resolves to the host page, its browser and
 * a `close()`. */
export async function startFrameHost(publicDir = join(ROOT, 'public')) {
  const files = Object.fromEntries(NAMES.map((n) => [`/${n}`, join(publicDir, n)]));
  files['/idiomorph.min.js'] = join(ROOT, 'node_modules/idiomorph/dist/idiomorph.min.js');
  // The app's own modules, for tests that drive its side (preview.js) rather than play it.
  for (const name of readdirSync(join(ROOT, 'app/js')).filter((n) => n.endsWith('.js'))) {
    files[`/app-js/${name}`] = join(ROOT, 'app/js', name);
  }
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/host.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(HOST);
    } else if (files[path]) {
      res.writeHead(200, { 'content-type': path.endsWith('.js') ? 'text/javascript' : 'text/html' })
        .end(readFileSync(files[path]));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/host.html`);
  return {
    page,
    browser,
    close: async () => {
      await browser.close();
      server.close();
    },
  };
}
