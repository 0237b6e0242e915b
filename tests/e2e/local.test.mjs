// The embedded model, no key and no network: a prompt streams code from SmolLM2 into the editor.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  editorText, openFlint, runPrompt, useFlint,
} from './harness.mjs';

const flint = useFlint();

test('the embedded model streams an answer into the editor', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  const option = page.getByTestId('model-picker').locator('option', { hasText: /smollm2/i });
  const id = await option.first().getAttribute('value');
  assert.ok(id?.startsWith('local/'), `no local model in the picker (got ${id})`);
  assert.equal(await option.first().isDisabled(), false, 'the local model is listed as unavailable');
  await runPrompt(page, id, 'a button that counts clicks');
  // A 135M model sometimes writes one piece over and over: the gateway stops it and says so (its
  // loop stop), which is an answer's ending as much as a finished page. Any other ending fails.
  await page.getByTestId('stream-status').filter({ hasText: /^\s*(done|error)\s*$/ }).waitFor({ timeout: 120_000 });
  if ((await page.getByTestId('stream-status').textContent()).trim() === 'error') {
    assert.match(await page.getByTestId('error-message').textContent(), /writing the same text over and over/);
  }
  assert.ok((await editorText(page)).trim().length > 0, 'the local model produced nothing');
  assert.match(await page.getByTestId('metric-tps').textContent(), /\d/);
});
