// The page's worker holds the socket and parses every answer. One that fails after it started (a
// panic leaves its wasm unusable) is replaced: the running answer ends with a sentence, what it
// wrote stays on screen, and the next run works on the new worker's socket.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEventually, editorText, openFlint, runPrompt, useFlint, waitConnected, waitForStatus } from './harness.mjs';

const flint = useFlint({ models: ['large@300'] });

const flintWorkers = (page) => page.workers().filter((w) => w.url().includes('flint-worker'));

test('a worker that fails mid-answer is replaced; the answer ends with a sentence and keeps its text', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/large@300', 'a long page');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="metric-tokens"]')
    ?.textContent.replace(/[^\d]/g, '')) >= 60, null, { timeout: 20_000 });
  const [worker] = flintWorkers(page);
  assert.ok(worker, 'no Flint worker found');
  // An uncaught error in the worker, as a panic in its wasm raises.
  await worker.evaluate(() => { setTimeout(() => { throw new Error('a simulated fault'); }); });

  await waitForStatus(page, 'error', 10_000);
  assert.match(await page.getByTestId('error-message').textContent(), /worker stopped.*press Run/is);
  const kept = await editorText(page);
  assert.match(kept, /<!DOCTYPE html>/i, 'the text written so far was lost');
  await assertEventually(() => flintWorkers(page).length === 1 && flintWorkers(page)[0] !== worker,
    'no new worker took the old one\'s place');

  // The new worker connects and runs the next answer.
  await waitConnected(page);
  await runPrompt(page, 'scripted/large@300', 'again');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="metric-tokens"]')
    ?.textContent.replace(/[^\d]/g, '')) >= 30, null, { timeout: 20_000 });
  assert.deepEqual(problems, []);
  await context.close();
});
