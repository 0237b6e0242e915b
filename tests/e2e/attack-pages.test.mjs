// Attacks on Flint by the pages it runs (issue 25, item 12): a page checked in its hidden check
// frame listens for the prompt's words; a page takes its frame's MessagePort; a page holding its
// port floods the app with large messages, few enough to pass the message-count cut-off. Each test
// failed before the defence it names (the report that came with this file says how).
//
// As in attack-preview.test.mjs, a page that learns something reports it by POSTing a request with
// model `beacon-<what>` to the scripted upstream, whose request log the tests read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEventually, openFlint, runPrompt, useFlint, waitForStatus, worstFrameGap } from './harness.mjs';

const flint = useFlint({ models: ['attack-topic@2000', 'attack-port@2000', 'attack-bytes@2000'] });

/** What pages reported so far: `{what, text}` of each `beacon-<prefix>…` request. */
async function beacons(prefix) {
  const log = await flint.upstream.requests();
  return log.filter((r) => r.model.startsWith(`beacon-${prefix}`))
    .map((r) => ({ what: r.model.slice(7 + prefix.length), text: String(r.body?.messages?.[0]?.content ?? '') }));
}

test('a page in its check frame cannot learn the prompt\'s words, and the topic is still checked', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  // Stems "zebra", "xylop", "quokk": the page patches Array and String methods to hear them.
  await runPrompt(page, 'scripted/attack-topic@2000', 'a zebra xylophone for quokkas');
  await waitForStatus(page, 'done');
  await page.locator('[data-testid="checks-summary"][data-state="done"]').waitFor({ timeout: 15_000 });
  await page.waitForTimeout(500);
  const heard = await beacons('topic-');
  assert.ok(heard.filter((b) => b.what === 'ran').length >= 2, 'the page did not run in both its frames');
  const text = heard.map((b) => b.text).join('\n');
  for (const stem of ['zebra', 'xylop', 'quokk']) {
    assert.ok(!text.includes(stem), `the page heard "${stem}" of the prompt: ${text.slice(0, 300)}`);
  }
  // The topic is matched in the app: the page names none of the prompt's words.
  const topic = page.locator('.checks-bar [data-testid="check-list"] li[data-check="topic"]');
  assert.equal(await topic.getAttribute('data-passed'), 'false', 'the off-topic page passed "About what was asked"');
});

test('a page that defines a MessageEvent.prototype.data getter cannot take its frame\'s port', async (t) => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/attack-port@2000', 'take the port');
  await waitForStatus(page, 'done');
  const shown = page.frameLocator('[data-testid="preview-frame"]');
  await shown.locator('#which').waitFor({ timeout: 10_000 });
  // The app pings a final frame once its page is written: a taken port floods for 13 s.
  const gap = await worstFrameGap(page, 4_000);
  t.diagnostic(`the app's longest frame: ${Math.round(gap)} ms`);
  assert.deepEqual((await beacons('port-')).map((b) => b.what).filter((w) => w !== 'ran'), [],
    'the page took its frame\'s port');
  assert.ok((await beacons('port-')).some((b) => b.what === 'ran'), 'the page did not run');
  assert.ok(gap < 3_000, `the app stalled ${Math.round(gap)} ms`);
});

test('a page holding its port that floods 100 KB messages under the message-count cut-off is cut by bytes', async (t) => {
  // Before the port was handed over safely a page could take it; here the test hands it to the
  // page (an init script in the preview frames, which runs before the runtime): the app's own
  // limit is what is tested.
  const initScript = () => {
    if (window === top || !location.pathname.endsWith('/preview.html')) return;
    const ports = Object.getOwnPropertyDescriptor(MessageEvent.prototype, 'ports').get;
    Object.defineProperty(MessageEvent.prototype, 'ports', {
      configurable: true,
      get() {
        const list = Reflect.apply(ports, this, []);
        if (list.length === 1) self.__heldPort = list[0];
        return list;
      },
    });
  };
  const { page } = await openFlint(flint.browser, flint.gateway.url, '/', { initScript });
  await runPrompt(page, 'scripted/attack-bytes@2000', 'flood by bytes');
  await waitForStatus(page, 'done');
  const console = page.getByTestId('console-panel');
  await console.getByText('byte flood: holding the port').waitFor({ timeout: 10_000 });
  const gap = await worstFrameGap(page, 4_000);
  t.diagnostic(`the app's longest frame: ${Math.round(gap)} ms`);
  await assertEventually(async () => (await console.getByText(/more than 4 MB .*in a second/).count()) > 0,
    'the flood was not cut by bytes', 5_000);
  assert.ok(gap < 3_000, `the app stalled ${Math.round(gap)} ms`);
});

test('the port limits: 2,000 messages and 4 MB a second; the runtime\'s own traffic is never cut', async () => {
  const { PortLimit, messageBytes } = await import('../../app/js/preview_frame.js');
  assert.equal(typeof PortLimit, 'function', 'preview_frame.js has no port limit');
  // The most the runtime sends in a second: 200 console lines of 4,000 characters, 60 `applied`.
  const own = new PortLimit();
  const line = { flint: 'console', level: 'log', text: 'x'.repeat(4_000) };
  for (let i = 0; i < 200; i++) assert.equal(own.over(i, line), null, `console line ${i} was cut`);
  for (let i = 0; i < 60; i++) assert.equal(own.over(500 + i, { flint: 'applied', ms: 3.5 }), null);
  // 100 KB messages: the 20th passes 4 MB (two bytes a character).
  const flood = new PortLimit();
  const big = { flint: 'console', level: 'log', text: 'x'.repeat(100_000) };
  const cut = Array.from({ length: 1_500 }, (_, i) => flood.over(i * 0.6, big)).findIndex((o) => o !== null);
  assert.equal(cut, 19, 'the flood was not cut at 4 MB');
  assert.equal(flood.over(1_000, big), null, 'a new second starts afresh');
  const many = new PortLimit();
  const counted = Array.from({ length: 2_001 }, (_, i) => many.over(i * 0.1, { flint: 'pong', id: i }));
  assert.equal(counted.at(-1), 'messages');
  // What the runtime never sends counts as over.
  for (const odd of [new ArrayBuffer(8), new Map(), [new Uint8Array(4)]]) {
    assert.equal(messageBytes(odd), Infinity, `${odd} was counted`);
  }
  // The object, its keys and values: 8 + ('a' 2, 'xy' 4) + ('b' 2, the array 8 + ('0' 2, 8) + ('1' 2, 8)).
  assert.equal(messageBytes({ a: 'xy', b: [1, true] }), 44);
});
