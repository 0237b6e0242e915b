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

test('the embedded model asked for a React app ends in a rendered page or a clear error, never a blank frame', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  const id = await page.getByTestId('model-picker').locator('option', { hasText: /smollm2/i }).first().getAttribute('value');
  await page.getByTestId('project-kind').selectOption('react');
  await runPrompt(page, id, 'a React app with a button that counts clicks');
  await page.getByTestId('stream-status').filter({ hasText: /^\s*(done|error)\s*$/ }).waitFor({ timeout: 120_000 });
  const sent = (await page.evaluate(() => document.querySelector('[data-testid="error-message"]')?.textContent ?? '')).trim();
  // Whatever a 135M model writes: the preview shows a page with something on it (the app, "does not
  // build yet" with where, "the app stopped", "rendered nothing", an HTML page's "Nothing shows on this
  // page"), the error line says why, or the checks say the page shows nothing.
  let shown = '';
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !shown) {
    // The whole document: a page that shows nothing gets Flint's note after its body.
    shown = (await page.frameLocator('[data-testid="preview-frame"]').locator('html').innerText({ timeout: 2_000 })
      .catch(() => '')).trim();
    if (!shown) await page.waitForTimeout(500);
  }
  // A finished page that shows nothing is told by its checks: "Nothing on the page has a size on
  // screen…" (an HTML answer cut off inside a tag, for one, is a blank page to the browser).
  const toldBlank = !shown && !sent && await page.getByTestId('checks-bar')
    .locator('[data-check="visible"][data-passed="false"] .check-detail')
    .waitFor({ state: 'attached', timeout: 20_000 }).then(() => true, () => false);
  if (!shown && !sent && !toldBlank) {
    const html = await page.frameLocator('[data-testid="preview-frame"]').locator('html').innerHTML({ timeout: 2_000 })
      .catch((err) => `(no frame: ${err.message.split('\n')[0]})`);
    assert.fail(`a blank frame and no error: the person is told nothing. Code: ${JSON.stringify((await editorText(page)).slice(0, 600))}; `
      + `frame: ${JSON.stringify(html.slice(0, 600))}`);
  }
});
