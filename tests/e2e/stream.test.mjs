// A prompt streams into the editor and a live preview; the finished page runs and can be clicked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, editorText, openFlint, runPrompt, streamStatus, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint();

test('text streams into Monaco and the preview shows the button before the stream ends', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/counter@60', 'a button that counts clicks');

  const preview = page.frameLocator('[data-testid="preview-frame"]');
  await preview.locator('[data-testid="counter"]').waitFor({ timeout: 20_000 });
  assert.equal(await streamStatus(page), 'streaming', 'the preview showed the button only after the stream ended');
  const partial = await editorText(page);
  assert.match(partial, /<button/, 'the editor had no streamed code while the preview showed the button');

  await waitForStatus(page, 'done', 60_000);
  const full = await editorText(page);
  assert.ok(full.length > partial.length, 'the editor did not keep growing after the button appeared');
  assert.match(full, /<\/html>/i, 'the editor does not hold the complete document');
  assert.doesNotMatch(full, /```/, 'markdown fences leaked into the editor');

  const ttft = await page.getByTestId('metric-ttft').textContent();
  assert.match(ttft, /\d/, `time to first token is not shown: "${ttft}"`);
  assert.deepEqual(problems, []);
});

test('the finished page runs its script and the button inside the preview works', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/counter@300', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  const button = page.frameLocator('[data-testid="preview-frame"]').locator('[data-testid="counter"]');
  const before = await button.textContent();
  await button.click();
  await assertEventually(async () => (await button.textContent()) !== before,
    `clicking the preview's button did not change its label ("${before}")`);
  assert.match(await button.textContent(), /1/);
});

test('the gateway never sends the provider key to the browser', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  const models = await page.evaluate(() => fetch('/api/models').then((r) => r.text()));
  assert.doesNotMatch(models, /sk-e2e-never-shown/);
  assert.match(models, /scripted\/counter@300/);
});
