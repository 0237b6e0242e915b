// What a runtime frame's updates cost while a page streams (its `applied` ms: update + layout),
// appended (this build) against morphed whole, the page cut into updates of CH characters (600: about
// one animation frame at 10k tok/s). Not a test: it prints.
//   node --test tests/bench/preview-append.test.mjs        (FIX=fixture, CH=chars, PUB=other public/)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser } from '../e2e/harness.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
// PUB=DIR: the preview files of another build (e.g. an older commit's public/, which only morphs).
const FILES = {
  '/preview.html': join(process.env.PUB ?? join(ROOT, 'public'), 'preview.html'),
  '/preview-runtime.js': join(process.env.PUB ?? join(ROOT, 'public'), 'preview-runtime.js'),
  '/preview-checks.js': join(process.env.PUB ?? join(ROOT, 'public'), 'preview-checks.js'),
  '/preview-pick.js': join(process.env.PUB ?? join(ROOT, 'public'), 'preview-pick.js'),
  '/preview-live.js': join(process.env.PUB ?? join(ROOT, 'public'), 'preview-live.js'),
  '/preview-capture.js': join(process.env.PUB ?? join(ROOT, 'public'), 'preview-capture.js'),
  '/preview-messages.js': join(process.env.PUB ?? join(ROOT, 'public'), 'preview-messages.js'),
  '/idiomorph.min.js': join(ROOT, 'node_modules/idiomorph/dist/idiomorph.min.js'),
};

// The app's side, reduced: frames that load preview.html, each given a port, and a way to send a
// message to frame `i` and wait for its `applied`.
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
      if (e.data.flint === 'applied' && f.waiting) { const w = f.waiting; f.waiting = null; w(e.data); }
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

let server;
let browser;
let page;
before(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/host.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(HOST);
    } else if (FILES[path]) {
      res.writeHead(200, { 'content-type': path.endsWith('.js') ? 'text/javascript' : 'text/html' })
        .end(readFileSync(FILES[path]));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/host.html`);
});
after(async () => {
  await browser?.close();
  server?.close();
});


const send = (i, message) => page.evaluate(([i, message]) => globalThis.send(i, message), [i, message]);
test('measure', async () => {
  const md = readFileSync(join(ROOT, process.env.FIX ?? 'tests/fixtures/large.md'), 'utf8');
  let html = md.slice(md.indexOf('<!DOCTYPE'));
  html = html.slice(0, html.lastIndexOf('```') > 0 ? html.lastIndexOf('```') : html.length);
  const CH = Number(process.env.CH ?? 600);
  const a = await page.evaluate(() => addFrame());
  const w = await page.evaluate(() => addFrame());
  const ms = { a: [], w: [] };
  let text = '';
  for (let at = 0; at < html.length; at += CH) {
    const chunk = html.slice(at, at + CH);
    const before = text.length;
    text += chunk;
    const ra = process.env.PUB ? { ms: 0 } : await send(a, at === 0 ? { flint: 'snapshot', html: text } : { flint: 'append', at: before, text: chunk });
    const rw = await send(w, { flint: 'snapshot', html: text });
    ms.a.push(ra.ms); ms.w.push(rw.ms);
  }
  const q = (xs, p) => [...xs].sort((x, y) => x - y)[Math.floor(p * (xs.length - 1))];
  const sum = (xs) => xs.reduce((s, x) => s + x, 0);
  console.log(`page ${html.length} chars, ${ms.a.length} updates of ${CH} chars`);
  console.log(`append: p50 ${q(ms.a, 0.5).toFixed(1)} p95 ${q(ms.a, 0.95).toFixed(1)} max ${Math.max(...ms.a).toFixed(1)} total ${sum(ms.a).toFixed(0)} ms`);
  console.log(`whole:  p50 ${q(ms.w, 0.5).toFixed(1)} p95 ${q(ms.w, 0.95).toFixed(1)} max ${Math.max(...ms.w).toFixed(1)} total ${sum(ms.w).toFixed(0)} ms`);
});
