// The end of a run (issue 26, item 4): the finished file reaches Monaco in slices behind the stream
// view rather than in one long edit, and the view goes once Monaco has it all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEventually, editorText, openFlint, runPrompt, useFlint, waitForStatus } from './harness.mjs';

const flint = useFlint({ models: ['large@20000'] });

test('a finished file reaches Monaco in slices, whole and in order, and the stream view makes way', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.evaluate(() => window.__flint.editorReady());
  // Every change to Monaco's text from here on: how much it added, and the status shown then.
  await page.evaluate(() => {
    const status = () => document.querySelector('[data-testid="stream-status"]')?.textContent.trim();
    window.__changes = [];
    for (const model of globalThis.monaco.editor.getModels()) {
      model.onDidChangeContent((e) => window.__changes.push({
        chars: e.changes.reduce((n, c) => n + c.text.length, 0), status: status(),
      }));
    }
  });
  await runPrompt(page, 'scripted/large@20000', 'a long page');
  await waitForStatus(page, 'done', 60_000);
  await assertEventually(() => page.locator('.stream-view').evaluate((v) => v.hidden),
    'the stream view never made way for Monaco');
  const changes = await page.evaluate(() => window.__changes.filter((c) => c.chars > 0));
  const text = await editorText(page);
  // (The scripted answer is cut at the gateway's max_tokens: the page ends part-way.)
  assert.match(text, /^<!DOCTYPE html>/i, 'Monaco does not hold the document');
  assert.ok(text.length > 20_000, `the page is ${text.length} characters: too short to need slices`);
  assert.ok(changes.length >= 2, `Monaco got the file in ${changes.length} edit(s): ${JSON.stringify(changes)}`);
  assert.ok(changes.every((c) => c.chars <= 16_384), `an edit was over a slice: ${JSON.stringify(changes)}`);
  assert.equal(changes.reduce((n, c) => n + c.chars, 0), text.length, 'the slices do not add up to the file');
  assert.deepEqual(problems, []);
});
