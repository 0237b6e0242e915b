// Variations and compare: one prompt fans out into several live tiles on the same socket; a tile is
// promoted with a click or its number key; cancel-all ends every upstream request; a failing model
// leaves the other tiles working.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inflateSync } from 'node:zlib';
import {
  assertEventually, editorText, openFlint, runPrompt, streamStatus, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint({ models: ['variant@300', 'variant@40'] });

async function fanOut(page, model, count, prompt) {
  await page.getByTestId('variations-count').selectOption(String(count));
  await runPrompt(page, model, prompt);
}

test('four variations stream at once, each tile renders its own page, and key 3 promotes the third', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  const before = await editorText(page);
  await fanOut(page, 'scripted/variant@300', 4, 'a counter, four ways');
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 4, 'there are not four tiles');

  // All four requests were in flight together, each with its own seed and temperature.
  const requests = (await flint.upstream.requests()).filter((r) => r.model === 'variant@300');
  assert.equal(requests.length, 4, 'the upstream did not get four requests');
  const seeds = requests.map((r) => r.body.seed);
  assert.equal(new Set(seeds).size, 4, `the seeds repeat: ${seeds}`);
  assert.equal(new Set(requests.map((r) => r.body.temperature)).size, 4, 'the temperatures do not spread');

  await waitForStatus(page, 'done');
  assert.equal(await editorText(page), before, 'a variation wrote into the editor before it was promoted');
  const order = [...seeds].sort((a, b) => a - b);
  for (let i = 0; i < 4; i++) {
    const tile = tiles.nth(i);
    assert.equal(await tile.getAttribute('data-status'), 'done');
    const frame = tile.frameLocator('[data-testid="preview-frame"]');
    await assertEventually(async () => (await frame.locator('#variant').textContent()) === `Variant ${order[i]}`,
      `tile ${i + 1} does not show its own page (seed ${order[i]})`);
  }
  // The finished page runs: zoomed (a page scaled to its tile is for looking at), its button counts.
  const third = tiles.nth(2).frameLocator('[data-testid="preview-frame"]');
  await tiles.nth(2).getByTestId('tile-zoom').click();
  await third.locator('#count').click();
  await assertEventually(async () => (await third.locator('#count').textContent()) === 'Clicked 1 times',
    'the third tile\'s script does not run');
  await page.getByTestId('grid-back').click();

  // Keys typed into a tile's page stay there (it is sandboxed): click outside it first, as a person would.
  await page.getByTestId('race-readout').click();
  await page.keyboard.press('3');
  await assertEventually(async () => (await editorText(page)).includes(`Variant ${order[2]}`),
    'key 3 did not put the third tile\'s code in the editor');
  assert.match(await tiles.nth(2).getAttribute('class'), /promoted/);
  await page.getByTestId('tab-preview').click();
  const main = page.frameLocator('[data-testid="preview-frame"]').first();
  await assertEventually(async () => (await main.locator('#variant').textContent()) === `Variant ${order[2]}`,
    'the main preview does not show the promoted version');
  assert.deepEqual(problems, []);
});

test('cancel all ends every upstream request; a tile can be retried', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await fanOut(page, 'scripted/variant@40', 3, 'slow variations');
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 3, 'there are not three tiles');
  await assertEventually(async () => (await flint.upstream.requests()).length === 3, 'not three upstream requests');
  const first = tiles.nth(0).frameLocator('[data-testid="preview-frame"]');
  await first.locator('#variant').waitFor({ timeout: 10_000 });
  await page.getByTestId('cancel-button').click();
  await waitForStatus(page, 'cancelled', 5_000);
  await assertEventually(async () => {
    const log = await flint.upstream.requests();
    return log.length === 3 && log.every((r) => r.closed_early);
  }, 'the upstream still streams after cancel all');
  for (let i = 0; i < 3; i++) assert.equal(await tiles.nth(i).getAttribute('data-status'), 'cancelled');

  // A cancelled tile keeps what it streamed, and that can be promoted.
  await tiles.nth(0).getByTestId('tile-promote').click();
  await assertEventually(async () => /<h1 id="variant">/.test(await editorText(page)),
    'promoting a cancelled tile did not put its code in the editor');

  await tiles.nth(1).getByTestId('tile-retry').click();
  assert.equal(await streamStatus(page), 'streaming');
  await assertEventually(async () => (await flint.upstream.requests()).length === 4, 'retry sent no request');
  await tiles.nth(1).getByTestId('tile-cancel').click();
  await waitForStatus(page, 'cancelled', 5_000);
});

test('comparing models: a failing one shows its error while the others finish, with a race readout', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('compare-toggle').check();
  for (const model of ['scripted/fail-500', 'scripted/variant@300', 'scripted/counter@300']) {
    await page.getByTestId('compare-models').locator(`input[value="${model}"]`).check();
  }
  await page.getByTestId('prompt-input').fill('a counter');
  await page.getByTestId('run-button').click();
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 3, 'there are not three columns');
  await waitForStatus(page, 'done');
  assert.equal(await tiles.nth(0).getAttribute('data-status'), 'error');
  assert.match(await tiles.nth(0).getByTestId('tile-error').textContent(), /upstream|server|500|error/i);
  assert.equal(await tiles.nth(1).getAttribute('data-status'), 'done');
  assert.equal(await tiles.nth(2).getAttribute('data-status'), 'done');
  const readout = await page.getByTestId('race-readout').textContent();
  assert.match(readout, /first preview: scripted\/(variant|counter)@300 \(\d/, readout);
  assert.match(readout, /first done: scripted\/(variant|counter)@300 \(\d/, readout);

  // A failed tile cannot be promoted; key 1 says why instead.
  await page.getByTestId('race-readout').click();
  await page.keyboard.press('1');
  assert.match(await page.getByTestId('promote-note').textContent(), /no code/);
  await tiles.nth(2).getByTestId('tile-promote').click();
  await assertEventually(async () => /<button/.test(await editorText(page)), 'promote by click did nothing');
  assert.deepEqual(problems, []);
});

test('the versions count is remembered across a reload and travels in share links', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('variations-count').selectOption('7');
  await page.waitForTimeout(500);
  await page.reload();
  await assertEventually(async () => (await page.getByTestId('variations-count').inputValue()) === '7',
    'the count was not restored');

  await page.getByTestId('share-button').click();
  const link = new URL(await page.getByTestId('share-link').inputValue());
  const encoded = link.hash.replace('#p=v1.', '');
  const payload = JSON.parse(inflateSync(Buffer.from(encoded, 'base64url')).toString('utf8'));
  assert.equal(payload.variations, 7, `the link does not carry the count: ${JSON.stringify(payload)}`);

  const other = await openFlint(flint.browser, flint.gateway.url, link.pathname + link.hash);
  await assertEventually(async () => (await other.page.getByTestId('variations-count').inputValue()) === '7',
    'the opened link did not set the count');
  assert.deepEqual(problems, []);
  assert.deepEqual(other.problems, []);
});

test('variations that finish while the grid is hidden are done when it is shown again', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await fanOut(page, 'scripted/variant@300', 3, 'three, unseen');
  await page.getByTestId('tab-preview').click();
  await waitForStatus(page, 'done');
  await page.getByTestId('tab-variations').click();
  const tiles = page.getByTestId('variation-tile');
  for (let i = 0; i < 3; i++) {
    assert.equal(await tiles.nth(i).getAttribute('data-status'), 'done');
    const frame = tiles.nth(i).frameLocator('[data-testid="preview-frame"]');
    await frame.locator('#count').waitFor({ timeout: 10_000 });
  }
  assert.deepEqual(problems, []);
});
