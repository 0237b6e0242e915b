// Upstream failures, cancel and a dropped gateway: a clear message, and nothing the person had is lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, editorText, openFlint, runPrompt, startGateway, streamStatus, useFlint, waitConnected,
  waitForStatus,
} from './harness.mjs';

const flint = useFlint();

test('an upstream 500 shows an error and keeps the prompt', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/fail-500', 'my carefully written prompt');
  await waitForStatus(page, 'error');
  const message = await page.getByTestId('error-message').textContent();
  assert.ok(message.trim().length > 10, `error message is not helpful: "${message}"`);
  assert.equal(await page.getByTestId('prompt-input').inputValue(), 'my carefully written prompt');
});

test('a rate limit says when to retry', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/fail-429', 'again');
  await waitForStatus(page, 'error');
  assert.match(await page.getByTestId('error-message').textContent(), /7\s*s|rate/i);
});

test('a stream that drops mid-way keeps the text generated so far', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/drop-midway', 'half a page');
  await waitForStatus(page, 'error');
  // The status turns at once; the worker's last update of the text follows.
  await assertEventually(async () => (await editorText(page)).length > 0, 'the partial answer was thrown away', 5_000);
  assert.match(await page.getByTestId('error-message').textContent(), /\S/);
});

test('a worker that fails to load is started again, and the answer still shows', async () => {
  const context = await flint.browser.newContext({ viewport: { width: 1400, height: 900 } });
  // The first load of the worker's wasm fails, as when the gateway restarts while the page loads.
  let refused = 0;
  await context.route('**/flint-worker_bg.wasm', (route) => (refused++ === 0 ? route.abort() : route.continue()));
  const page = await context.newPage();
  await page.goto(flint.gateway.url);
  await waitConnected(page);
  await runPrompt(page, 'scripted/counter@300', 'a counter, even so');
  await waitForStatus(page, 'done', 30_000);
  assert.match(await editorText(page), /<button/);
  assert.ok(refused >= 2, `the worker was not started again (${refused} wasm requests)`);
  await context.close();
});

test('Esc cancels the stream and the upstream request ends', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/counter@60', 'slowly please');
  await page.getByTestId('stream-status').filter({ hasText: 'streaming' }).waitFor();
  await page.getByTestId('prompt-input').press('Escape');
  await waitForStatus(page, 'cancelled', 5_000);
  const kept = await editorText(page);
  let closed = false;
  for (let i = 0; i < 50 && !closed; i++) {
    const log = await flint.upstream.requests();
    closed = log.some((r) => r.model === 'counter@60' && r.closed_early);
    if (!closed) await page.waitForTimeout(100);
  }
  assert.ok(closed, 'the upstream never saw the request end');
  await page.waitForTimeout(300);
  assert.equal(await editorText(page), kept, 'text kept arriving after cancel');
});

test('the socket reconnects after the gateway restarts, and the page keeps its work', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('prompt-input').fill('unsent draft');
  const port = flint.gateway.port;
  await flint.gateway.stop();
  await page.getByTestId('connection-status').filter({ hasText: /reconnecting|offline|connecting/ })
    .waitFor({ timeout: 10_000 });
  flint.gateway = await startGateway({ upstreamUrl: flint.upstream.url, port });
  await page.getByTestId('connection-status').filter({ hasText: /\bconnected\b/ }).waitFor({ timeout: 20_000 });
  assert.equal(await page.getByTestId('prompt-input').inputValue(), 'unsent draft');
  await runPrompt(page, 'scripted/counter@300', 'after the restart');
  try {
    await waitForStatus(page, 'done');
  } catch (err) {
    // This test has failed now and then in full runs only (the stream stays "streaming" with no text):
    // keep what the restarted gateway logged, to find out which side lost the stream.
    const log = flint.gateway.log.slice(-30).join('\n');
    const upstream = JSON.stringify((await flint.upstream.requests()).slice(-3).map((r) => [r.model, r.finished, r.closed_early]));
    throw new Error(`${err.message}\nlast upstream requests: ${upstream}\nrestarted gateway's log:\n${log}`);
  }
  assert.equal(await streamStatus(page), 'done');
});
