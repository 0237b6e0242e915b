// A reasoning model's thinking is shown apart from the code, and every way an answer ends is told:
// a filtered answer and a stalled one each end with their sentence, the text kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEventually, editorText, openFlint, runPrompt, useFlint, waitForStatus } from './harness.mjs';

// What the scripted `reasoning` model thinks (tests/upstream/src/script.rs, REASONING_TEXT).
const REASONING = 'The person wants a counter. Plan: a button, a number, a click handler.';

const flint = useFlint({ models: ['reasoning', 'filtered', 'stall'], scripted: 'stall_timeout_secs = 3' });

test('a reasoning stream shows the thinking line and its text, never in the code or the preview', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/reasoning', 'a counter');
  const line = page.getByTestId('thinking-line');
  await line.waitFor({ timeout: 10_000 });
  assert.match(await line.textContent(), /^(Thinking · |Thought for )\d+ s · [\d,]+ tokens?$/);
  await waitForStatus(page, 'done');
  await assertEventually(async () => (await page.getByTestId('thinking-text').textContent()) === REASONING,
    'the reasoning summary is not shown whole');
  assert.match(await line.textContent(), /^Thought for \d+ s · 321 tokens$/, 'the gateway\'s reasoning count');
  assert.match(await page.getByTestId('metric-reasoning').textContent(), /321/);
  assert.ok(await page.getByTestId('metric-ttfr').isVisible(), 'time to first reasoning is shown');
  const code = await editorText(page);
  assert.match(code, /<h1>Counter<\/h1>/);
  assert.ok(!code.includes('Plan:'), `reasoning reached the code: ${code}`);
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  await assertEventually(async () => (await preview.locator('h1').textContent().catch(() => '')) === 'Counter',
    'the page is not in the preview');
  const shown = await preview.locator('body').innerText();
  assert.ok(!shown.includes('Plan:'), `reasoning reached the preview: ${shown}`);
  // The panel is a disclosure the keyboard reaches.
  await page.getByTestId('thinking-line').focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.getByTestId('thinking-text').isVisible(), false, 'Enter closes the panel');
});

test('a filtered answer ends with its sentence, its text kept', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/filtered', 'something filtered');
  await waitForStatus(page, 'error');
  assert.match(await page.getByTestId('error-message').textContent(), /content filter stopped the answer/);
  await assertEventually(async () => (await editorText(page)).includes('Half a'), 'the text before the filter was lost');
});

test('a stalled stream says so live, then ends naming the setting, its text kept', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/stall', 'wait for it');
  const notice = page.getByTestId('stall-notice');
  await notice.waitFor({ timeout: 10_000 });
  assert.match(await notice.textContent(), /^No data from scripted for \d+ s$/);
  await waitForStatus(page, 'error', 10_000);
  assert.match(await page.getByTestId('error-message').textContent(), /no data from scripted for 3 s.*stall_timeout_secs/);
  assert.equal(await notice.count(), 0, 'the live notice goes when the stream ends');
  await assertEventually(async () => (await editorText(page)).includes('Waiting'), 'the text before the stall was lost');
});
