// Export: the code leaves Flint as text, as one .html file, as a new tab that is still sandboxed, and
// as a zip when the answer has several files; edits made by hand reach the preview and the exports.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  assertEventually, editorText, openFlint, runPrompt, savedSession, useFlint, waitForStatus,
} from './harness.mjs';
import { readZip } from './zip.mjs';

const flint = useFlint({ models: ['files@300'] });

test('copy, download and open in a new tab give the editor\'s page, still sandboxed', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: flint.gateway.url });
  await runPrompt(page, 'scripted/counter@300', 'A button that counts clicks');
  await waitForStatus(page, 'done');
  const code = await editorText(page);
  assert.match(code, /<button/, 'nothing was generated to export');

  await page.getByTestId('export-copy').click();
  await assertEventually(async () => /Code copied/.test(await page.getByTestId('export-note').textContent()),
    'no "Code copied" note');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code, 'the clipboard holds other text');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-download').click()]);
  assert.equal(download.suggestedFilename(), 'a-button-that-counts-clicks.html');
  assert.equal(readFileSync(await download.path(), 'utf8'), code, 'the downloaded page is not the editor\'s code');

  const [tab] = await Promise.all([context.waitForEvent('page'), page.getByTestId('export-open').click()]);
  await tab.waitForLoadState();
  assert.match(tab.url(), /^blob:/, 'the tab is not opened from a blob');
  assert.equal(await tab.locator('script').count(), 0, 'the wrapper page (app origin) carries a script');
  const frame = tab.locator('iframe');
  assert.equal(await frame.getAttribute('sandbox'), 'allow-scripts', 'the page in the tab is not sandboxed as the preview is');
  const inner = tab.frames().find((f) => f !== tab.mainFrame());
  await inner.locator('button').first().waitFor({ timeout: 10_000 });
  assert.equal(await inner.evaluate(() => origin), 'null', 'the generated page runs with a real origin');
  await inner.locator('button').first().click();
  assert.deepEqual(problems, []);
  await context.close();
});

test('an answer with several files downloads as a zip and as one page with them inlined', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/files@300', 'a greeting card');
  await waitForStatus(page, 'done');
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  await assertEventually(async () => (await preview.locator('#greeting').textContent()) === 'Hello from script.js',
    'the preview did not run script.js');

  const [zip] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-zip').click()]);
  assert.equal(zip.suggestedFilename(), 'a-greeting-card.zip');
  const files = readZip(readFileSync(await zip.path()));
  assert.deepEqual(Object.keys(files), ['index.html', 'style.css', 'script.js']);
  assert.match(files['index.html'], /<link rel="stylesheet" href="style.css">/);
  assert.equal(files['style.css'], 'h1 { color: rgb(200, 40, 40); font-family: system-ui, sans-serif; }\n');
  assert.match(files['script.js'], /Hello from script\.js/);

  const [single] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-download').click()]);
  const html = readFileSync(await single.path(), 'utf8');
  assert.match(html, /rgb\(200, 40, 40\)/, 'the .html does not carry style.css');
  assert.match(html, /Hello from script\.js/, 'the .html does not carry script.js');
  assert.deepEqual(problems, []);
  await context.close();
});

test('an edit made by hand shows in the preview and survives a reload', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/counter@300', 'a counter');
  await waitForStatus(page, 'done');
  await page.getByTestId('editor').locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\nEdited by hand');
  await assertEventually(async () => (await editorText(page)).endsWith('Edited by hand'), 'typing did not reach the editor');
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  await assertEventually(async () => /Edited by hand/.test(await preview.locator('body').textContent()),
    'the preview does not show the edit');

  // Saved after a quiet spell: reload once the record holds the edit (a fixed wait races a slow machine).
  await assertEventually(async () => JSON.stringify(await savedSession(page) ?? {}).includes('Edited by hand'),
    'the edit was not saved');
  await page.reload();
  await page.getByTestId('restored-notice').waitFor({ timeout: 10_000 });
  await assertEventually(async () => (await editorText(page)).endsWith('Edited by hand'),
    'the edit was lost on reload', 10_000);
  await assertEventually(async () => /Edited by hand/.test(await preview.locator('body').textContent()),
    'the restored code is not in the preview', 10_000);
  assert.deepEqual(problems, []);
  await context.close();
});
