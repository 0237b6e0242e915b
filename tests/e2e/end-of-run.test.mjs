// The end of a run (issue 26, item 4): the finished file reaches Monaco as a new model built off
// the screen and swapped in once the status has painted, rather than as edits of the shown model
// (which made Monaco lay out and render behind the stream view), and the view makes way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEventually, editorText, openFlint, runPrompt, useFlint, waitForStatus } from './harness.mjs';

const flint = useFlint({ models: ['large@20000'] });

test('a finished file reaches Monaco whole, as a new model after the status painted, and the view makes way', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.evaluate(() => window.__flint.editorReady());
  // Every model made and every change to a model's text from here on, with the status shown then.
  await page.evaluate(() => {
    const status = () => document.querySelector('[data-testid="stream-status"]')?.textContent.trim();
    window.__made = [];
    window.__changes = [];
    const watch = (model) => model.onDidChangeContent((e) => window.__changes.push({
      chars: e.changes.reduce((n, c) => n + c.text.length, 0), status: status(),
    }));
    globalThis.monaco.editor.getModels().forEach(watch);
    globalThis.monaco.editor.onDidCreateModel((model) => {
      window.__made.push({ chars: model.getValueLength(), status: status() });
      watch(model);
    });
  });
  for (const round of [1, 2]) {
    await page.evaluate(() => { window.__made.length = 0; window.__changes.length = 0; });
    await runPrompt(page, 'scripted/large@20000', `a long page ${round}`);
    await waitForStatus(page, 'done', 60_000);
    await assertEventually(() => page.locator('.stream-view').evaluate((v) => v.hidden),
      'the stream view never made way for Monaco');
    const text = await editorText(page);
    // (The scripted answer is cut at the gateway's max_tokens: the page ends part-way.)
    assert.match(text, /^<!DOCTYPE html>/i, 'Monaco does not hold the document');
    assert.ok(text.length > 20_000, `the page is ${text.length} characters: too short to tell`);
    const { made, changes, models } = await page.evaluate(() => ({
      made: window.__made, changes: window.__changes.filter((c) => c.chars > 0),
      models: globalThis.monaco.editor.getModels().length,
    }));
    const whole = made.filter((m) => m.chars === text.length);
    assert.equal(whole.length, 1, `round ${round}: models made ${JSON.stringify(made)}, the file is ${text.length}`);
    assert.equal(whole[0].status, 'done', 'Monaco got the file before "done" was shown');
    assert.deepEqual(changes, [], 'the shown model was edited rather than replaced');
    // The replaced models are disposed: the editor's, plus the diff view's pair at most.
    assert.ok(models <= 3, `${models} models are alive after round ${round}`);
  }
  assert.deepEqual(problems, []);
});
