// The project kind beyond the picker (issue 27): a profile may set it, the person's pick comes back
// after a reload and travels in a share link, and wherever it comes from, a React kind has a frame
// made ready before the first key of a fresh tab.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEventually, openFlint, savedSession, useFlint, waitForStatus } from './harness.mjs';

const flint = useFlint({
  models: ['react-app@2000', 'counter@300'],
  toml: '[profiles.app]\nmodel = "scripted/react-app@2000"\nkind = "react"\n',
});

const ready = (page) => page.getByTestId('preview-stack').locator('iframe.back[title="Preview (running)"]');
const autoLabel = (page) => page.getByTestId('project-kind').locator('option[value=""]').textContent();

test('a profile that sets React: Auto stands for it, a frame is ready before any key, and the request asks for React', async () => {
  await flint.upstream.reset();
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  // The starter prompt's words say nothing of React: the profile alone makes it a React app.
  await assertEventually(async () => (await autoLabel(page)) === 'Auto: React app', 'Auto does not follow the profile');
  await assertEventually(async () => (await ready(page).count()) === 1, 'no frame was made ready for the profile\'s React');
  await page.getByTestId('prompt-input').press('Control+Enter');
  await waitForStatus(page, 'done');
  const [request] = await flint.upstream.requests();
  assert.match(request.body.messages[0].content, /expert React developer/, 'the request was not asked for React');
  // Another model picked by hand leaves the profile, and with it its kind.
  await page.getByTestId('model-picker').selectOption('scripted/counter@300');
  await assertEventually(async () => (await autoLabel(page)) === 'Auto: HTML page', 'the profile\'s kind outlived it');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the kind picked comes back after a reload, with a frame made ready, and travels in a share link', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('model-picker').selectOption('scripted/counter@300');
  await page.getByTestId('prompt-input').fill('a todo list with filters');
  await assertEventually(async () => (await autoLabel(page)) === 'Auto: HTML page', 'the words alone should give HTML');
  await page.getByTestId('project-kind').selectOption('react');
  await assertEventually(async () => (await savedSession(page))?.kind === 'react', 'the session did not save the kind');
  await page.reload();
  await assertEventually(async () => (await page.getByTestId('project-kind').inputValue()) === 'react',
    'the kind picked did not come back after a reload');
  // A fresh tab that will ask for React gets its ready frame without a key pressed.
  await assertEventually(async () => (await ready(page).count()) === 1, 'no frame was made ready after the reload');

  await page.getByTestId('share-button').click();
  const link = new URL(await page.getByTestId('share-link').inputValue());
  const other = await openFlint(flint.browser, flint.gateway.url, link.pathname + link.hash);
  await assertEventually(async () => (await other.page.getByTestId('project-kind').inputValue()) === 'react',
    'the link did not bring its kind');
  assert.equal(await other.page.getByTestId('prompt-input').inputValue(), 'a todo list with filters');
  assert.deepEqual([...problems, ...other.problems], []);
  await other.context.close();
  await context.close();
});
