// The preview runtime on its own (public/preview.html in sandboxed frames, served as files): a
// stream's appends are copied from an incremental parse and leave the same page a whole morph of
// the text would, made as inert; and an update that throws keeps the last good render on screen.
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

/** Frame `i`'s realm (Playwright reaches into the sandboxed frame to read what it shows). */
async function frameOf(i) {
  return (await page.$$('iframe'))[i].contentFrame();
}

/** The page frame `i` shows: its root's attributes, head and body as markup. */
async function shown(i) {
  return (await frameOf(i)).evaluate(() => ({
    lang: document.documentElement.getAttribute('lang'),
    head: document.head.innerHTML,
    body: document.body.outerHTML,
  }));
}

const send = (i, message) => page.evaluate(([i, message]) => globalThis.send(i, message), [i, message]);

// A page as a model writes one, with what the HTML parser handles specially (misnested formatting,
// text foster-parented out of a table, implied end tags, a second <body>'s attributes) and what
// the runtime must never show (scripts, handlers, frames, javascript: and data: documents, a refresh).
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tricky &amp; long</title>
<style>body { font: 14px sans-serif } .x { color: red }</style>
<meta http-equiv="refresh" content="0;url=https://example.com">
<script>parent.postMessage('x', '*')</script></head>
<body class="page" onload="alert(1)">
<h1 id="t">Hello &amp; welcome</h1>
<p>Some <b>bold <i>both</b> italic</i> text.</p>
<table><tr><td>1</td>stray text<td>2</td></tr></table>
<ul><li>one<li>two<li><a href="javascript:alert(1)" target="_top">three</a></ul>
<iframe src="https://example.com"></iframe>
<form action="data:text/html,x"><input name="x" value="v" onfocus="y()"><button formaction="javascript:z()">Go</button></form>
<svg width="20" height="20"><circle r="5" onclick="q()"/><animate attributeName="href" to="javascript:alert(1)"/></svg>
<!-- a comment -->
<select><option>a<option selected>b</select>
<pre>
  pre text
</pre>
<script>document.body.append('ran')</script>
<p>after the script <img alt="dot" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" onerror="e()"></p>
<body data-second="1">
<div>${'<p>A paragraph with <em>some</em> text, and more of it. </p>\n'.repeat(40)}</div>
</body></html>`;

/** `text` cut into pieces of 1 to `most` characters (a fixed sequence: the test is repeatable). */
function pieces(text, most) {
  const out = [];
  let seed = 7;
  for (let at = 0; at < text.length;) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const n = 1 + (seed % most);
    out.push(text.slice(at, at + n));
    at += n;
  }
  return out;
}

test('appends show the same page a whole morph of the same text does, just as inert', async () => {
  const appended = await page.evaluate(() => addFrame());
  const whole = await page.evaluate(() => addFrame());
  let text = '';
  let appendsWhole = 0;
  // From the first few characters, before the text has opened <html>, as a stream's first frame.
  const chunks = [PAGE.slice(0, 5), ...pieces(PAGE.slice(5), 60)];
  for (const [n, chunk] of chunks.entries()) {
    const before = text.length;
    text += chunk;
    const a = await send(appended, n === 0 ? { flint: 'snapshot', html: text } : { flint: 'append', at: before, text: chunk });
    await send(whole, { flint: 'snapshot', html: text });
    if (n > 0 && a.whole) appendsWhole++;
    assert.deepEqual(await shown(appended), await shown(whole), `after ${text.length} characters, ending ${JSON.stringify(text.slice(-40))}`);
  }
  const { body, head } = await shown(appended);
  // Without the incremental copy every append would be a whole morph.
  assert.ok(appendsWhole <= chunks.length / 10, `${appendsWhole} of ${chunks.length - 1} appends morphed the whole page`);
  assert.match(body, /A paragraph with <em>some<\/em>/);
  assert.match(body, /data-second="1"/, 'the second <body>\'s attribute was not copied');
  for (const bad of [/<script/i, /<iframe/i, /\son\w+=/i, /javascript:/i, /data:text/i, /target=/i, /<animate/i]) {
    assert.doesNotMatch(body, bad);
  }
  assert.doesNotMatch(head, /http-equiv|<script/i);
});

test('an append that does not follow the frame\'s text is refused and the app told to resync', async () => {
  const i = await page.evaluate(() => addFrame());
  await send(i, { flint: 'snapshot', html: '<p>one</p>' });
  const reply = await send(i, { flint: 'append', at: 3, text: '<p>two</p>' });
  assert.equal(reply.resync, true);
  assert.doesNotMatch((await shown(i)).body, /two/);
});

test('an update that throws keeps the last good render on screen, and the next good one replaces it', async () => {
  const i = await page.evaluate(() => addFrame());
  const good = '<h1>Title</h1><ul><li>one</li><li>two</li></ul><p>end</p>';
  await send(i, { flint: 'snapshot', html: good });
  const before = await shown(i);
  // The morph fails halfway: its second insertion throws (once), after it changed the page.
  await (await frameOf(i)).evaluate(() => {
    const insert = Node.prototype.insertBefore;
    let calls = 0;
    Node.prototype.insertBefore = function (...args) {
      if (++calls === 2) throw new Error('injected failure');
      return Reflect.apply(insert, this, args);
    };
  });
  const failing = '<h2>Other</h2><ol><li>x</li><li>y</li><li>z</li></ol><div>new</div>';
  await send(i, { flint: 'snapshot', html: failing });
  assert.deepEqual(await shown(i), before, 'the page that failed halfway stayed on screen');
  assert.ok((await page.evaluate((i) => consoleOf(i), i)).some((l) => /injected failure/.test(l)),
    'the failure was not reported to the console');
  await send(i, { flint: 'append', at: failing.length, text: '<p>more</p>' });
  assert.match((await shown(i)).body, /<h2>Other<\/h2>.*<div>new<\/div><p>more<\/p>/s, 'the next good update did not show');
});

test('a message a frame is not sent, or a mistyped one, is dropped with a warning', async () => {
  const i = await page.evaluate(() => addFrame());
  await send(i, { flint: 'snapshot', html: '<p>kept</p>' });
  const warnings = [];
  const listen = (m) => { if (m.type() === 'warning') warnings.push(m.text()); };
  page.on('console', listen);
  for (const bad of [{ flint: 'snapshot', html: 5 }, { flint: 'navigate', url: 'https://example.com' }, { flint: 'append', at: '10', text: 'x' }]) {
    await page.evaluate(([i, m]) => globalThis.post(i, m), [i, bad]);
  }
  const reply = await send(i, { flint: 'append', at: 11, text: '<p>more</p>' });
  page.off('console', listen);
  assert.equal(reply.whole, false);
  assert.equal((await shown(i)).body, '<body><p>kept</p><p>more</p></body>');
  assert.equal(warnings.filter((w) => /a message was dropped/.test(w)).length, 3, warnings.join('\n'));
});

