// The history survives a cleared browser: exported as one file in one browser, imported in another
// (a fresh context: nothing in its storage), reopened there; wrong files are refused with a sentence
// and change nothing; every format version's fixture keeps importing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertEventually, editorText, openFlint, runPrompt, streamStatus, useFlint, waitForStatus } from './harness.mjs';

const flint = useFlint();
const FIXTURE_V1 = fileURLToPath(new URL('../fixtures/history-v1.json', import.meta.url));

async function openHistory(page) {
  await page.getByTestId('history-button').click();
  await page.getByTestId('history-panel').waitFor();
}

async function importFile(page, files) {
  await page.getByTestId('history-import-file').setInputFiles(files);
  const result = page.getByTestId('history-backup-result');
  await result.waitFor();
  return result;
}

test('a history exported in one browser imports whole in another and reopens there', async () => {
  const first = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(first.page, 'scripted/counter@300', 'a button that counts clicks');
  await waitForStatus(first.page, 'done');
  const code = await editorText(first.page);
  await openHistory(first.page);
  await assertEventually(async () => (await first.page.getByTestId('history-entry').count()) === 1, 'no history entry');
  const [download] = await Promise.all([
    first.page.waitForEvent('download'),
    first.page.getByTestId('history-export').click(),
  ]);
  assert.match(download.suggestedFilename(), /^flint-history-\d{4}-\d{2}-\d{2}\.json$/);
  const file = readFileSync(await download.path(), 'utf8');
  const parsed = JSON.parse(file);
  assert.equal(parsed.format, 'flint-history');
  assert.equal(parsed.version, 1);
  assert.equal(parsed.generations.length, 1);
  assert.equal(parsed.generations[0].code, code, 'the exported code is not what the editor showed');
  assert.match(await first.page.getByTestId('history-backup-result').textContent(), /Exported 1 generation\./);
  await first.context.close();

  // Another browser: its storage holds nothing of the first.
  const second = await openFlint(flint.browser, flint.gateway.url);
  await openHistory(second.page);
  assert.match(await second.page.getByTestId('history-panel').textContent(), /Nothing here yet/);
  const result = await importFile(second.page, { name: 'backup.json', mimeType: 'application/json', buffer: Buffer.from(file) });
  assert.equal(await result.textContent(), 'Imported 1 generation.');
  const entries = second.page.getByTestId('history-entry');
  await assertEventually(async () => (await entries.count()) === 1, 'the imported generation is not listed');
  assert.match(await entries.nth(0).textContent(), /a button that counts clicks/);
  await entries.nth(0).getByTestId('history-open').click();
  await assertEventually(async () => (await editorText(second.page)) === code, 'the reopened code differs');
  assert.equal(await streamStatus(second.page), 'idle', 'reopening an imported generation ran something');

  // The same file again adds nothing twice.
  await openHistory(second.page);
  const again = await importFile(second.page, { name: 'backup.json', mimeType: 'application/json', buffer: Buffer.from(file) });
  await assertEventually(async () => (await again.textContent()) === 'Imported 0 generations; 1 already here.',
    'a second import of the same file was not recognised');
  assert.equal(await entries.count(), 1);
  assert.deepEqual([...first.problems, ...second.problems], []);
  await second.context.close();
});

test('a wrong file is refused with a sentence and the version 1 fixture still imports', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await openHistory(page);
  const wrong = await importFile(page, { name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('{"todo": 1}') });
  assert.equal(await wrong.textContent(), 'This is not a Flint history file: choose the file that History\'s "Export" saved.');
  assert.equal(await wrong.getAttribute('role'), 'alert');
  assert.match(await page.getByTestId('history-panel').textContent(), /Nothing here yet/, 'a wrong file changed the history');

  const fixture = await importFile(page, FIXTURE_V1);
  await assertEventually(
    async () => (await fixture.textContent()) === 'Imported 2 generations; 1 could not be read and were left out.',
    'the version 1 fixture did not import as it always has');
  const entries = page.getByTestId('history-entry');
  await assertEventually(async () => (await entries.count()) === 2, 'the fixture\'s generations are not listed');
  assert.match(await entries.nth(0).textContent(), /a button that counts clicks.*cancelled/s);

  // A history file is code from outside the person's hands: an imported page is held still until
  // they click, like a shared link's. The fixture's clock would write the time at once if it ran.
  await entries.nth(1).getByTestId('history-open').click();
  await page.getByTestId('held-page').waitFor({ timeout: 10_000 });
  const clock = page.frameLocator('[data-testid="preview-frame"]').locator('#t');
  await clock.waitFor({ state: 'attached', timeout: 10_000 });
  await page.waitForTimeout(1_500);
  assert.equal(await clock.textContent(), '', 'an imported page ran before the person clicked');
  await page.getByTestId('run-held-page').click();
  await assertEventually(async () => (await clock.textContent()) !== '', 'the held page did not run after the click');
  assert.deepEqual(problems, []);
  await context.close();
});

test('Flint asks the browser to keep its storage and says so in History when it is refused', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await openHistory(page);
  // The page asked at start; whatever this browser decided, the panel must agree with it.
  await page.waitForTimeout(300);
  const persisted = await page.evaluate(() => navigator.storage.persisted());
  const refused = page.getByTestId('history-persist-refused');
  assert.equal(await refused.count(), persisted ? 0 : 1, `persisted=${persisted} but the panel says otherwise`);
  if (!persisted) assert.match(await refused.textContent(), /export it to keep a copy/);
  assert.deepEqual(problems, []);
  await context.close();
});
