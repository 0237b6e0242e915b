// A dropped connection loses nothing: the page's socket runs through a proxy that cuts every
// connection mid-answer (no close frame, as a dropped network); the page reconnects, resumes, and
// every answer ends with exactly the text the scripted upstream streamed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import {
  assertEventually, editorText, openFlint, runPrompt, startCutProxy, streamStatus, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint({ models: ['variant@40'] });
let proxy;
after(async () => { await proxy?.stop(); });

/** The proxy in front of the gateway (made once the gateway is up). */
async function cutProxy() {
  proxy ??= await startCutProxy(flint.gateway.port);
  return proxy;
}

/** The code the scripted upstream streams for `fixture` (inside its ```html fence). */
function fixtureCode(fixture, seed) {
  const text = readFileSync(new URL(`../fixtures/${fixture}.md`, import.meta.url), 'utf8')
    .replaceAll('{{seed}}', String(seed));
  const start = text.indexOf('```html\n') + '```html\n'.length;
  return text.slice(start, text.indexOf('\n```', start)).trimEnd();
}

test('a run cut mid-answer resumes and ends with exactly the upstream\'s text', async () => {
  const proxy = await cutProxy();
  const { page, problems } = await openFlint(flint.browser, proxy.url);
  // counter@60 streams its whole page (large@1000 stops at server.max_tokens) over about 10 s.
  await runPrompt(page, 'scripted/counter@60', 'a button that counts clicks');
  await assertEventually(async () => (await editorText(page)).length > 300, 'nothing streamed', 20_000);
  assert.equal(await streamStatus(page), 'streaming', 'the answer ended before the cut');
  const cuts = proxy.cuts;
  proxy.cut();
  assert.ok(proxy.cuts > cuts, 'the proxy had no connection to cut');
  await waitForStatus(page, 'done', 60_000);
  assert.ok(flint.gateway.log.some((l) => l.includes('resumed on a new socket')), 'the page did not resume');
  const got = (await editorText(page)).trimEnd();
  const want = fixtureCode('counter');
  let at = 0;
  while (at < want.length && got[at] === want[at]) at++;
  assert.ok(got === want, `text lost or repeated across the cut: ${got.length} chars for ${want.length}, `
    + `first difference at ${at}: ${JSON.stringify(got.slice(at - 40, at + 80))} for ${JSON.stringify(want.slice(at - 40, at + 80))}`);
  assert.deepEqual(problems, []);
});

test('ten variations cut mid-answer all resume and each ends with its own whole text', async () => {
  await flint.upstream.reset();
  const proxy = await cutProxy();
  const { page, problems } = await openFlint(flint.browser, proxy.url);
  await page.getByTestId('variations-count').selectOption('10');
  await runPrompt(page, 'scripted/variant@40', 'ten counters');
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 10, 'there are not ten tiles');
  await assertEventually(async () => {
    const requests = (await flint.upstream.requests()).filter((r) => r.model === 'variant@40');
    return requests.length === 10;
  }, 'the upstream did not get ten requests');
  await new Promise((r) => setTimeout(r, 1_500));
  for (let i = 0; i < 10; i++) {
    assert.equal(await tiles.nth(i).getAttribute('data-status'), 'streaming', `tile ${i + 1} ended before the cut`);
  }
  const resumed = flint.gateway.log.filter((l) => l.includes('resumed on a new socket')).length;
  proxy.cut();
  await waitForStatus(page, 'done', 60_000);
  assert.ok(flint.gateway.log.filter((l) => l.includes('resumed on a new socket')).length > resumed,
    'the page did not resume');
  const seeds = (await flint.upstream.requests()).filter((r) => r.model === 'variant@40').map((r) => r.body.seed);
  const order = [...seeds].sort((a, b) => a - b);
  for (let i = 0; i < 10; i++) {
    assert.equal(await tiles.nth(i).getAttribute('data-status'), 'done', `tile ${i + 1} did not finish`);
    await tiles.nth(i).getByTestId('tile-promote').click();
    const expected = fixtureCode('variant', order[i]);
    await assertEventually(async () => (await editorText(page)).trimEnd() === expected,
      `tile ${i + 1} (seed ${order[i]}) does not hold exactly the upstream's text`);
  }
  assert.deepEqual(problems, []);
});
