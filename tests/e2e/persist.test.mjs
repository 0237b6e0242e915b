// Nothing is lost on reload: the prompt, the model and the answer streamed so far come back, a
// shared link still wins, and a browser that will not store anything says so and keeps working.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import {
  assertEventually, editorText, openFlint, runPrompt, savedSession, streamStatus, useFlint, waitConnected,
  waitForStatus,
} from './harness.mjs';

const flint = useFlint({ models: ['files@300'] });

test('a reload mid-stream brings back the prompt, the model and the code streamed so far', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  // Nobody signs in here: the gateway's greeting says so, and the page never asks for history sync
  // (a refused request is a red "Failed to load resource" in the console on every load).
  const syncAsked = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/history')) syncAsked.push(`${r.method()} ${r.url()}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && /api\/history/.test(`${m.text()} ${m.location().url}`)) syncAsked.push(m.text());
  });
  const prompt = 'a button that counts clicks, slowly — ✓';
  await runPrompt(page, 'scripted/counter@60', prompt);
  await assertEventually(async () => /<button/.test(await editorText(page)), 'no <button streamed into the editor', 30_000);
  const streamed = await editorText(page);
  // Flint writes at most every 300 ms while streaming: reload once a write holds what was shown.
  await assertEventually(async () => (await savedSession(page))?.generation?.code?.startsWith(streamed) ?? false,
    'the code streamed so far was not saved while streaming');
  assert.equal(await streamStatus(page), 'streaming', 'the stream ended before the reload: nothing was cut off');

  await page.reload();
  await waitConnected(page);
  const notice = page.getByTestId('restored-notice');
  await notice.waitFor({ timeout: 10_000 });
  assert.match(await notice.textContent(), /Restored your last session — the answer was cut off by the reload/);
  assert.equal(await page.getByTestId('prompt-input').inputValue(), prompt, 'the prompt differs after the reload');
  await assertEventually(async () => (await editorText(page)).startsWith(streamed),
    'the editor does not show the code streamed before the reload');
  await assertEventually(async () => (await page.getByTestId('model-picker').inputValue()) === 'scripted/counter@60',
    'the picked model was not restored');
  assert.equal(await streamStatus(page), 'idle', 'the restored prompt ran again by itself');

  await notice.getByTitle('Dismiss').click();
  assert.equal(await notice.count(), 0, 'the notice cannot be dismissed');
  assert.deepEqual(problems, []);
  assert.deepEqual(syncAsked, [], 'a page nobody signed in to asked for history sync');
});

test('a prompt typed but never run is still there after a reload', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  const draft = 'a weather card for Lisbon, not run yet';
  await page.getByTestId('prompt-input').fill(draft);
  await assertEventually(async () => (await savedSession(page))?.prompt === draft, 'the draft was not saved');

  await page.reload();
  await waitConnected(page);
  await assertEventually(async () => (await page.getByTestId('prompt-input').inputValue()) === draft,
    'the draft was lost on reload');
  const notice = page.getByTestId('restored-notice');
  await notice.waitFor({ timeout: 10_000 });
  assert.doesNotMatch(await notice.textContent(), /cut off/, 'nothing was streaming, yet the notice says cut off');
  assert.equal(await streamStatus(page), 'idle');
  assert.deepEqual(problems, []);
});

test('a shared link in the address wins over the restored session', async () => {
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('prompt-input').fill('my own draft');
  await assertEventually(async () => (await savedSession(page))?.prompt === 'my own draft', 'the draft was not saved');

  // A second tab of the same browser (same storage) opened on a shared link.
  const link = `v1.${deflateSync(Buffer.from(JSON.stringify({ prompt: 'the shared prompt' }))).toString('base64url')}`;
  const tab = await context.newPage();
  await tab.goto(`${flint.gateway.url}/#p=${link}`);
  await waitConnected(tab);
  await tab.getByTestId('shared-link-banner').waitFor({ timeout: 10_000 });
  // Give a restore time to (wrongly) land before checking that none did.
  await tab.waitForTimeout(500);
  assert.equal(await tab.getByTestId('prompt-input').inputValue(), 'the shared prompt');
  assert.equal(await tab.getByTestId('restored-notice').count(), 0, 'a restore notice covers the shared link');
});

test('without IndexedDB Flint says the work will not be kept, and still runs prompts', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url, '/', {
    initScript: () => {
      Object.defineProperty(window, 'indexedDB', { get() { throw new Error('blocked'); } });
    },
  });
  const warning = page.getByTestId('storage-error');
  await warning.waitFor({ timeout: 10_000 });
  assert.match(await warning.textContent(), /can't save your work in this browser \(.*blocked.*\): it will be lost on reload/);

  await runPrompt(page, 'scripted/counter@300', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  assert.match(await editorText(page), /<button/, 'the prompt ran but the editor is empty');
  assert.deepEqual(problems, []);
});

test('a write the browser refuses (quota) is reported once and Flint keeps working', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url, '/', {
    initScript: () => {
      IDBObjectStore.prototype.put = function put() {
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      };
    },
  });
  assert.equal(await page.getByTestId('storage-error').count(), 0, 'a warning before anything was written');
  await page.getByTestId('prompt-input').fill('a clock');
  const warning = page.getByTestId('storage-error');
  await warning.waitFor({ timeout: 10_000 });
  assert.match(await warning.textContent(), /QuotaExceededError/);

  await warning.getByTitle('Dismiss').click();
  await runPrompt(page, 'scripted/counter@300', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  assert.equal(await warning.count(), 0, 'the warning came back on every write');
  assert.deepEqual(problems, []);
});

test('the history keeps every generation until the person deletes it', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/counter@300', 'the first counter');
  await waitForStatus(page, 'done');
  const first = await editorText(page);
  await runPrompt(page, 'scripted/files@300', 'a greeting card');
  await waitForStatus(page, 'done');

  const entries = page.getByTestId('history-entry');
  await page.getByTestId('history-button').click();
  await assertEventually(async () => (await entries.count()) === 2, 'the history does not list both generations');
  assert.match(await entries.nth(0).textContent(), /a greeting card/, 'the newest is not first');
  assert.match(await entries.nth(1).textContent(), /the first counter.*scripted\/counter@300.*done/s);

  // Reopen the older one: its prompt, code and page come back; nothing runs.
  await entries.nth(1).getByTestId('history-open').click();
  assert.equal(await page.getByTestId('prompt-input').inputValue(), 'the first counter');
  await assertEventually(async () => (await editorText(page)) === first, 'the editor does not show the reopened code');
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  await preview.locator('button').first().waitFor({ timeout: 10_000 });
  assert.equal(await streamStatus(page), 'done', 'reopening ran something');

  // Deleting is explicit and sticks across a reload.
  await page.getByTestId('history-button').click();
  await assertEventually(async () => (await entries.count()) === 2, 'the history lost an entry by reopening it');
  await entries.nth(0).getByTestId('history-delete').click();
  await assertEventually(async () => (await entries.count()) === 1, 'the deleted entry is still listed');
  await page.waitForTimeout(400);
  await page.reload();
  await waitConnected(page);
  await page.getByTestId('history-button').click();
  await assertEventually(async () => (await entries.count()) === 1, 'after a reload the history is not as left');
  assert.match(await entries.nth(0).textContent(), /the first counter/);

  await page.getByTestId('history-clear').click();
  assert.equal(await entries.count(), 1, 'deleted without confirmation');
  await page.getByTestId('history-clear-confirm').click();
  await assertEventually(async () => (await entries.count()) === 0, 'delete all left entries');
  assert.match(await page.getByTestId('history-panel').textContent(), /Nothing here yet/);
  assert.equal(await editorText(page), first, 'deleting the history changed the editor');
  assert.deepEqual(problems, []);
});
