// Usable by everyone: axe-core finds no serious or critical violation in the app, idle, after a run,
// and with the variations grid (zoomed too). Each check names the rule and the elements it found.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, openFlint, runPrompt, seriousViolations, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint({ models: ['variant@300'] });

test('the idle page has no serious accessibility violation', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  assert.deepEqual(await seriousViolations(page), [], 'axe-core: the idle page');
  assert.deepEqual(problems, []);
});

test('after a run, the page with its code, preview, metrics and checks has none', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/counter@300', 'a button that counts clicks');
  await waitForStatus(page, 'done', 60_000);
  assert.deepEqual(await seriousViolations(page), [], 'axe-core: after a run');
  assert.deepEqual(problems, []);
});

test('the variations grid, and a zoomed tile, have none', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('variations-count').selectOption('4');
  await runPrompt(page, 'scripted/variant@300', 'a counter, 4 ways');
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 4, 'there are not 4 tiles', 20_000);
  await waitForStatus(page, 'done', 60_000);
  assert.deepEqual(await seriousViolations(page), [], 'axe-core: the grid');
  await tiles.first().focus();
  await page.keyboard.press('Enter');
  assert.deepEqual(await seriousViolations(page), [], 'axe-core: a zoomed tile');
  assert.deepEqual(problems, []);
});

test('the compare list of models, longer than its box, has none', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('compare-toggle').check();
  const list = page.getByRole('group', { name: 'Models to compare' });
  const scrolls = await list.evaluate((el) => el.scrollHeight > el.clientHeight);
  assert.ok(scrolls, 'the list is not long enough here to scroll: this test checks nothing');
  assert.deepEqual(await seriousViolations(page), [], 'axe-core: the compare list');
  // A model scrolled out of sight is still reached: focused, it comes into view and Space checks it.
  await list.getByRole('checkbox').last().focus();
  await page.keyboard.press('Space');
  assert.equal(await list.getByRole('checkbox').last().isChecked(), true);
  assert.deepEqual(problems, []);
});
