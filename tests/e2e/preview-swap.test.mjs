// A streaming project's next page swapped into the frame running the last (public/preview-swap.js),
// on the runtime alone: only keys the frame has not mapped are added, so a page cannot remap a
// module the frame already loaded (a vendored package, an earlier build's file); a swap that
// cannot be done leaves the page as it was and says so; the old app is unmounted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startFrameHost } from './frame-host.mjs';

let host;
let page;
before(async () => {
  host = await startFrameHost();
  page = host.page;
});
after(async () => {
  await host?.close();
});

const frameOf = async (i) => (await page.$$('iframe'))[i].contentFrame();
const send = (i, message) => page.evaluate(([i, message]) => globalThis.send(i, message), [i, message]);
const post = (i, message) => page.evaluate(([i, message]) => globalThis.post(i, message), [i, message]);
const rootText = async (i) => (await frameOf(i)).evaluate(() => document.getElementById('root')?.textContent ?? null);

const module = (js) => `data:text/javascript;charset=utf-8,${encodeURIComponent(js)}`;
/** A page as the worker writes a streaming build: an import map, a root, a mount module. */
const build = (imports, start, style = '') => `<!DOCTYPE html><html><head>
<script type="importmap">${JSON.stringify({ imports })}</script>
${style ? `<style data-flint-project>${style}</style>` : ''}</head>
<body><div id="root"></div><script type="module">${start}</script></body></html>`;
// The mount: its root is kept where a swap finds it, to unmount it.
const mount = (key) => `import text from "${key}";
const el = document.getElementById("root");
el.textContent = text;
globalThis.__flintRoot = { unmount() { globalThis.unmounted = (globalThis.unmounted ?? 0) + 1; } };`;

async function waitForRoot(i, text) {
  for (let n = 0; n < 100; n++) {
    if ((await rootText(i)) === text) return;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.fail(`frame ${i} never showed ${JSON.stringify(text)} (it shows ${JSON.stringify(await rootText(i))})`);
}

test('the next build swaps in; a key already mapped elsewhere, or a frame with no page, refuses', async () => {
  const i = await page.evaluate(() => globalThis.addFrame());
  const vendored = module('export default "lib";');
  await post(i, { flint: 'run', doc: build({ lib: vendored, '~1/App.js': module('export default "one";') }, mount('~1/App.js'), '#root{color:rgb(1,2,3)}') });
  await waitForRoot(i, 'one');

  // Remapping what the frame has loaded: refused, nothing on screen changes.
  for (const imports of [{ lib: module('export default "evil";'), '~2/App.js': module('export default "two";') },
    { '~1/App.js': module('export default "other";') }]) {
    const answer = await send(i, { flint: 'swap', doc: build(imports, mount(Object.keys(imports).at(-1))) });
    assert.deepEqual(answer, { flint: 'swapped', ok: false });
    assert.equal(await rootText(i), 'one');
  }
  // A module that does not load: refused before the screen changes.
  const broken = await send(i, { flint: 'swap', doc: build({ '~3/App.js': module('export default ;') }, mount('~3/App.js')) });
  assert.deepEqual(broken, { flint: 'swapped', ok: false });
  assert.equal(await rootText(i), 'one');

  // New keys, the same vendored one: swapped, the old app unmounted, the styles replaced.
  const good = await send(i, { flint: 'swap', doc: build({ lib: vendored, '~4/App.js': module('export default "four";') }, mount('~4/App.js'), '#root{color:rgb(4,5,6)}') });
  assert.deepEqual(good, { flint: 'swapped', ok: true });
  await waitForRoot(i, 'four');
  const after = await (await frameOf(i)).evaluate(() => ({
    unmounted: globalThis.unmounted,
    color: getComputedStyle(document.getElementById('root')).color,
    styles: document.querySelectorAll('style[data-flint-project]').length,
  }));
  assert.deepEqual(after, { unmounted: 1, color: 'rgb(4, 5, 6)', styles: 1 });

  // A runtime frame (no page written) takes no swap.
  const j = await page.evaluate(() => globalThis.addFrame());
  const none = await send(j, { flint: 'swap', doc: build({ '~5/App.js': module('export default "x";') }, mount('~5/App.js')) });
  assert.deepEqual(none, { flint: 'swapped', ok: false });
});
