// A finished page that shows nothing (an answer cut off inside a tag, as the embedded model has
// written) is never a silently blank frame: the frame, the console and the checks say so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openFlint, runPrompt, useFlint, waitForStatus } from './harness.mjs';

const flint = useFlint({ models: ['cut-tag', 'judge-best'] });

test('a page cut off inside a tag shows nothing, and its frame, its console and its checks say so', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/cut-tag', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  const note = page.frameLocator('[data-testid="preview-frame"]').locator('[data-flint-blank]');
  await note.waitFor({ timeout: 10_000 });
  assert.match(await note.innerText(), /Nothing shows on this page.*cut off inside a tag.*Fix/s);
  await page.getByTestId('console-entry').filter({ hasText: '[preview] Nothing shows on this page' }).waitFor({ timeout: 5_000 });
  const visible = page.locator('.checks-bar [data-testid="check-list"] li[data-check="visible"][data-passed="false"]');
  await visible.waitFor({ state: 'attached', timeout: 15_000 });
  assert.match(await visible.textContent(), /Nothing on the page has a size on screen/);
  await page.getByTestId('fix-page').waitFor({ timeout: 5_000 });

  // A page that shows something gets no note.
  await runPrompt(page, 'scripted/judge-best', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  await page.locator('[data-testid="checks-summary"][data-state="done"]').waitFor({ timeout: 15_000 });
  await page.waitForTimeout(2_500);
  assert.equal(await page.frameLocator('[data-testid="preview-frame"]').locator('[data-flint-blank]').count(), 0);
});
