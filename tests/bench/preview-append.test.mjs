// What a runtime frame's updates cost while a page streams (its `applied` ms: update + layout),
// appended (this build) against morphed whole, the page cut into updates of CH characters (600: about
// one animation frame at 10k tok/s). Not a test: it prints.
//   node --test tests/bench/preview-append.test.mjs        (FIX=fixture, CH=chars, PUB=other public/)
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { startFrameHost } from '../e2e/frame-host.mjs';

const ROOT = resolve(import.meta.dirname, '../..');

let host;
let page;
before(async () => {
  host = await startFrameHost(process.env.PUB);
  page = host.page;
});
after(async () => {
  await host?.close();
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
