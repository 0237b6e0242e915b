// Share links: a link opens the same prompt, model and code in a fresh browser without running it; a
// broken link says so and Flint still works.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import {
  assertEventually, editorText, openFlint, runPrompt, streamStatus, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint();

/** A v1 link made here rather than by Flint, so the format is checked against a second implementation. */
function v1Link(payload) {
  return `v1.${deflateSync(Buffer.from(JSON.stringify(payload))).toString('base64url')}`;
}

test('a shared link opens the same prompt, model and code in a fresh browser, waiting to be run', async () => {
  const maker = await openFlint(flint.browser, flint.gateway.url);
  const prompt = 'a button that counts clicks — für alle ✓';
  await runPrompt(maker.page, 'scripted/counter@300', prompt);
  await waitForStatus(maker.page, 'done');
  const code = await editorText(maker.page);
  assert.match(code, /<button/, 'nothing was generated to share');

  await maker.page.getByTestId('share-include-code').check();
  await maker.page.getByTestId('share-button').click();
  const link = await maker.page.getByTestId('share-link').inputValue();
  const url = new URL(link);
  assert.equal(url.origin, flint.gateway.url, `the link does not point at this Flint: ${link}`);
  assert.match(url.hash, /^#p=v1\.[A-Za-z0-9_-]+$/, `the link has no v1 fragment: ${link}`);
  assert.match(await maker.page.getByTestId('share-note').textContent(), /Link copied|Copy this link/);
  assert.deepEqual(maker.problems, []);
  await maker.context.close();

  const { page, problems } = await openFlint(flint.browser, flint.gateway.url, url.pathname + url.hash);
  const banner = page.getByTestId('shared-link-banner');
  await banner.waitFor({ timeout: 10_000 });
  assert.match(await banner.textContent(), /Opened a shared prompt/);
  assert.equal(await page.getByTestId('prompt-input').inputValue(), prompt, 'the prompt differs');
  await assertEventually(async () => (await page.getByTestId('model-picker').inputValue()) === 'scripted/counter@300',
    'the shared model is not selected');
  await assertEventually(async () => (await editorText(page)) === code, 'the editor does not hold the shared code');
  assert.equal(await streamStatus(page), 'idle', 'the shared prompt ran before anyone asked');
  assert.deepEqual(problems, []);

  await page.getByTestId('shared-run').click();
  await waitForStatus(page, 'done');
  assert.equal(await banner.count(), 0, 'the banner stayed after Run');
});

test('a link selects its model when this Flint has it, and says so when it does not', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url,
    `/#p=${v1Link({ prompt: 'slow counter', model: 'scripted/counter@60' })}`);
  await assertEventually(async () => (await page.getByTestId('model-picker').inputValue()) === 'scripted/counter@60',
    'a non-default shared model was not selected');
  assert.equal(await page.getByTestId('shared-model-problem').textContent(), '');

  // A second link pasted into the same tab changes only the fragment: no reload.
  await page.goto(`${flint.gateway.url}/#p=${v1Link({ prompt: 'elsewhere', model: 'elsewhere/gpt-9' })}`);
  await assertEventually(async () => (await page.getByTestId('prompt-input').inputValue()) === 'elsewhere',
    'the second link was not opened');
  await assertEventually(async () => (await page.getByTestId('model-picker').inputValue()) === 'scripted/counter@300',
    'the default model was not kept for a model this Flint lacks');
  assert.match(await page.getByTestId('shared-model-problem').textContent(), /elsewhere\/gpt-9.*not available here/);
});

test('a garbled link shows why and Flint still works', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url, '/#p=v1.!!!');
  const error = page.getByTestId('shared-link-error');
  await error.waitFor({ timeout: 10_000 });
  assert.match(await error.textContent(), /garbled/i);
  assert.equal(await page.getByTestId('shared-link-banner').count(), 0);
  assert.ok((await page.getByTestId('prompt-input').inputValue()).length > 0, 'the starter prompt is gone');

  await runPrompt(page, 'scripted/counter@300', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  assert.match(await editorText(page), /<button/);
  assert.deepEqual(problems, []);
});

test('a link from a newer Flint asks for an update', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url, '/#p=v9.abc');
  const error = page.getByTestId('shared-link-error');
  await error.waitFor({ timeout: 10_000 });
  assert.match(await error.textContent(), /newer version of Flint/);
});

test('a prompt too long for a link is stored by the gateway as a short link that opens it', async () => {
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  // Random text barely compresses, so its link outgrows what chat apps keep.
  const noise = Array.from({ length: 20_000 }, () => String.fromCharCode(33 + Math.floor(Math.random() * 94))).join('');
  await page.getByTestId('prompt-input').fill(noise);
  await page.getByTestId('share-button').click();
  await page.getByTestId('share-too-long').waitFor();
  assert.equal(await page.getByTestId('share-link').count(), 0, 'a too-long link was offered anyway');

  await page.getByTestId('share-store').click();
  const short = await page.getByTestId('share-link').inputValue();
  assert.match(short, /\/s\/[0-9a-f]{32}$/, `not a stored short link: ${short}`);
  assert.ok(short.length < 200, 'the stored link is not short');
  await context.close();

  const opened = await openFlint(flint.browser, flint.gateway.url, new URL(short).pathname);
  await opened.page.getByTestId('shared-link-banner').waitFor({ timeout: 10_000 });
  assert.equal(await opened.page.getByTestId('prompt-input').inputValue(), noise, 'the stored prompt differs');
  await opened.context.close();
});
