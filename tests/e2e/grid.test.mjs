// The variations grid to judge by (issue 26 item 5): while variations are shown the grid takes the
// whole workspace (Alt+C or a button brings the code pane back); each tile lays its page out at a
// device's width (Desktop 1280 unless switched) and scales it to the tile; Enter or a click zooms a
// tile with the same frame, Esc comes back; arrows move between tiles; at 10 tiles in 1400×900 every
// title, status and number is whole.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, openFlint, runPrompt, seriousViolations, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint({ models: ['variant@300', 'variant@40'] });

async function fanOut(page, count, model = 'scripted/variant@300') {
  await page.getByTestId('variations-count').selectOption(String(count));
  await runPrompt(page, model, `a counter, ${count} ways`);
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === count, `there are not ${count} tiles`);
  return tiles;
}

/** A tile's frame: its layout width (untransformed), its width on screen, and the page's own width. */
async function frameGeometry(tile) {
  const frame = tile.getByTestId('preview-frame');
  await frame.waitFor({ state: 'attached', timeout: 10_000 });
  const [layout, shown] = await frame.evaluate((el) => [el.offsetWidth, el.getBoundingClientRect().width]);
  const box = await tile.getByTestId('tile-preview').evaluate((el) => el.getBoundingClientRect().width);
  const inner = await (await (await frame.elementHandle()).contentFrame()).evaluate(() => window.innerWidth);
  return { layout, shown, box, inner };
}

async function focusedTileIndex(page) {
  return page.evaluate(() => [...document.querySelectorAll('[data-testid="variation-tile"]')]
    .indexOf(document.activeElement));
}

/** Where each tile sits on screen (rounded), to tell rows and columns apart. */
async function tileBoxes(tiles) {
  return tiles.evaluateAll((els) => els.map((el) => {
    const r = el.getBoundingClientRect();
    return { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) };
  }));
}

test('four tiles: the grid takes the workspace, pages are laid out at 1280 and scaled, zoom keeps the frame, arrows move', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  const tiles = await fanOut(page, 4);
  await waitForStatus(page, 'done');

  // The code pane is closed: the grid spans the window; Alt+C and the button bring it back and close it.
  const codePane = page.locator('.code-pane');
  const grid = page.getByTestId('tiles');
  assert.equal(await codePane.isVisible(), false, 'the code pane is still beside the grid');
  assert.ok((await grid.evaluate((el) => el.getBoundingClientRect().width)) > 1300, 'the grid is not the whole width');
  const toggle = page.getByTestId('code-toggle');
  assert.match(await toggle.textContent(), /Show code\s*Alt\+C/);
  await page.keyboard.press('Alt+KeyC');
  await assertEventually(() => codePane.isVisible(), 'Alt+C did not bring the code pane back');
  assert.match(await toggle.textContent(), /Hide code/);
  await toggle.click();
  await assertEventually(async () => !(await codePane.isVisible()), 'the button did not close the code pane');

  // 2 × 2, and each page laid out at the desktop's 1280 px, scaled down to its tile.
  const boxes = await tileBoxes(tiles);
  assert.equal(boxes[0].y, boxes[1].y, `tiles 1 and 2 are not side by side: ${JSON.stringify(boxes)}`);
  assert.ok(boxes[2].y > boxes[0].y && boxes[2].x === boxes[0].x, `tile 3 is not under tile 1: ${JSON.stringify(boxes)}`);
  for (let i = 0; i < 4; i++) {
    const g = await frameGeometry(tiles.nth(i));
    assert.equal(g.layout, 1280, `tile ${i + 1}'s frame is laid out at ${g.layout} px`);
    assert.equal(g.inner, 1280, `tile ${i + 1}'s page sees a ${g.inner} px window`);
    assert.ok(g.shown < 1280 && Math.abs(g.shown - g.box) <= 1, `tile ${i + 1} is not scaled to its tile: ${JSON.stringify(g)}`);
  }
  // One switch sets the width of every tile.
  await page.getByTestId('variations').getByTestId('device-phone').click();
  await assertEventually(async () => {
    const widths = await tiles.evaluateAll((els) => els.map((el) => el.querySelector('[data-testid="preview-frame"]').offsetWidth));
    return widths.every((w) => w === 390);
  }, 'the phone width did not reach every tile');
  await page.getByTestId('variations').getByTestId('device-desktop').click();

  // Arrows move the focus between tiles (2 columns).
  await tiles.nth(0).focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await focusedTileIndex(page), 1);
  await page.keyboard.press('ArrowDown');
  assert.equal(await focusedTileIndex(page), 3);
  await page.keyboard.press('ArrowLeft');
  assert.equal(await focusedTileIndex(page), 2);
  await page.keyboard.press('ArrowUp');
  assert.equal(await focusedTileIndex(page), 0);
  await page.keyboard.press('ArrowRight');

  // Enter zooms the focused tile to the whole grid, with the same frame (marked here), at full size.
  const second = tiles.nth(1);
  await second.getByTestId('preview-frame').evaluate((el) => { el.dataset.mark = 'before-zoom'; });
  await page.keyboard.press('Enter');
  await assertEventually(async () => /\bzoomed\b/.test(await second.getAttribute('class')), 'Enter did not zoom');
  assert.equal(await page.locator('[data-testid="variation-tile"]:visible').count(), 1, 'other tiles show beside the zoomed one');
  await assertEventually(async () => (await frameGeometry(second)).shown === 1280, 'the zoomed page is not at full size');
  assert.equal(await second.getByTestId('preview-frame').getAttribute('data-mark'), 'before-zoom', 'zoom replaced the frame');
  // Zoomed, the page takes clicks.
  const page2 = second.frameLocator('[data-testid="preview-frame"]');
  await page2.locator('#count').click();
  await assertEventually(async () => (await page2.locator('#count').textContent()) === 'Clicked 1 times', 'the zoomed page does not take clicks');
  // Esc, with the tile focused, brings the grid back (and cancels nothing).
  await second.locator('.tile-head').click();
  await page.keyboard.press('Escape');
  await assertEventually(async () => (await page.locator('[data-testid="variation-tile"]:visible').count()) === 4, 'Esc did not bring the grid back');
  assert.equal(await focusedTileIndex(page), 1, 'the focus did not stay on the tile that was zoomed');
  assert.ok((await frameGeometry(second)).shown < 1280, 'back in the grid, the page is not scaled down again');
  assert.equal(await page2.locator('#count').textContent(), 'Clicked 1 times', 'the page was reloaded');

  // A click on a tile's page zooms it; the Back button returns.
  await tiles.nth(3).getByTestId('tile-zoom-hit').click();
  await assertEventually(async () => /\bzoomed\b/.test(await tiles.nth(3).getAttribute('class')), 'a click did not zoom');
  // Zoomed, right and left show the neighbour.
  await page.keyboard.press('ArrowLeft');
  await assertEventually(async () => /\bzoomed\b/.test(await tiles.nth(2).getAttribute('class')), 'left did not zoom the tile before');
  await page.getByTestId('grid-back').click();
  await assertEventually(async () => (await page.locator('[data-testid="variation-tile"]:visible').count()) === 4, 'Back did not bring the grid back');
  assert.equal(await focusedTileIndex(page), 2);

  // Keys typed elsewhere are not the grid's: arrows in the prompt move its caret, not the focus.
  await page.getByTestId('prompt-input').focus();
  await page.keyboard.press('ArrowLeft');
  assert.equal(await focusedTileIndex(page), -1);

  const serious = await seriousViolations(page);
  assert.deepEqual(serious, [], 'axe-core finds serious violations in the grid');
  assert.deepEqual(problems, []);
});

test('ten tiles in 1400×900: 5 × 2, every title and number whole, pages scaled, arrows across rows, Esc cancels nothing', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  const tiles = await fanOut(page, 10, 'scripted/variant@40');
  // Zoom while they stream: Esc returns without stopping them (the page's Esc cancels all).
  await tiles.nth(4).focus();
  await page.keyboard.press('Enter');
  await assertEventually(async () => /\bzoomed\b/.test(await tiles.nth(4).getAttribute('class')), 'Enter did not zoom');
  await page.keyboard.press('Escape');
  await assertEventually(async () => (await page.locator('[data-testid="variation-tile"]:visible').count()) === 10, 'Esc did not bring the grid back');
  assert.equal(await page.locator('[data-testid="variation-tile"][data-status="cancelled"]').count(), 0, "the grid's Esc cancelled tiles");
  await waitForStatus(page, 'done', 60_000);

  const boxes = await tileBoxes(tiles);
  const rows = [...new Set(boxes.map((b) => b.y))];
  assert.equal(rows.length, 2, `not two rows: ${JSON.stringify(boxes)}`);
  assert.equal(boxes.filter((b) => b.y === rows[0]).length, 5, 'not five columns');
  const grid = page.getByTestId('tiles');
  const [scroll, client] = await grid.evaluate((el) => [el.scrollHeight, el.clientHeight]);
  assert.ok(scroll <= client + 1, `the ten tiles do not fit in the window (${scroll} > ${client})`);

  for (let i = 0; i < 10; i++) {
    const tile = tiles.nth(i);
    const label = tile.locator('.tile-label');
    const text = (await label.textContent()).trim();
    assert.match(text, new RegExp(`^#${i + 1}( · t \\d\\.\\d\\d)?$`), `tile ${i + 1}'s title is "${text}"`);
    // Whole: no part of the title, model, status, numbers or score is clipped or cut by its tile.
    const cut = await tile.evaluate((el) => {
      const edge = el.getBoundingClientRect();
      const parts = el.querySelectorAll('.tile-label, .tile-model, [data-testid="tile-status"], .tile-metrics > span, [data-testid="tile-checks"]');
      return [...parts].filter((p) => {
        const r = p.getBoundingClientRect();
        return p.scrollWidth > p.clientWidth + 1 || r.right > edge.right + 0.5 || r.left < edge.left - 0.5 || r.width === 0;
      }).map((p) => `${p.className || p.dataset.testid}: "${p.textContent}"`);
    });
    assert.deepEqual(cut, [], `tile ${i + 1} cuts its text`);
    assert.match(await tile.locator('.tile-model').textContent(), /variant@40/);
    assert.match(await tile.locator('.tile-metrics').textContent(), /tok\/s/);
    assert.equal((await tile.getByTestId('tile-status').textContent()).trim(), 'done');
    const g = await frameGeometry(tile);
    assert.equal(g.layout, 1280, `tile ${i + 1}'s frame is laid out at ${g.layout} px`);
    assert.ok(g.shown < 400 && Math.abs(g.shown - g.box) <= 1, `tile ${i + 1} is not scaled to its tile: ${JSON.stringify(g)}`);
  }

  // Arrows across the two rows of five.
  await tiles.nth(2).focus();
  await page.keyboard.press('ArrowDown');
  assert.equal(await focusedTileIndex(page), 7);
  await page.keyboard.press('ArrowUp');
  assert.equal(await focusedTileIndex(page), 2);
  await page.keyboard.press('End');
  assert.equal(await focusedTileIndex(page), 9);
  await page.keyboard.press('Home');
  assert.equal(await focusedTileIndex(page), 0);
  // Each tile is named by its title and numbers.
  const name = await tiles.nth(0).evaluate((el) => el.getAttribute('aria-labelledby').split(' ')
    .map((id) => document.getElementById(id)?.textContent ?? '').join(' '));
  assert.match(name, /#1[\s\S]*done[\s\S]*tok\/s/, `tile 1 is named "${name}"`);

  const serious = await seriousViolations(page);
  assert.deepEqual(serious, [], 'axe-core finds serious violations in the grid');
  assert.deepEqual(problems, []);
});

test('comparing models gets the same grid: the whole workspace, pages at 1280 scaled, each model named in full', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('compare-toggle').check();
  const models = ['scripted/variant@300', 'scripted/variant@40', 'scripted/counter@300'];
  for (const model of models) {
    await page.getByTestId('compare-models').locator(`input[value="${model}"]`).check();
  }
  await page.getByTestId('prompt-input').fill('a counter');
  await page.getByTestId('run-button').click();
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 3, 'there are not three compared models');
  await waitForStatus(page, 'done', 60_000);
  assert.equal(await page.locator('.code-pane').isVisible(), false, 'the code pane is still beside the compared models');
  const boxes = await tileBoxes(tiles);
  assert.ok(boxes.every((b) => b.y === boxes[0].y) && boxes[2].x + boxes[2].w > 1300, `not three across the window: ${JSON.stringify(boxes)}`);
  for (let i = 0; i < 3; i++) {
    const label = tiles.nth(i).locator('.tile-label');
    assert.equal((await label.textContent()).trim(), models[i]);
    assert.ok(await label.evaluate((el) => el.scrollWidth <= el.clientWidth), `model ${i + 1}'s name is cut`);
    const g = await frameGeometry(tiles.nth(i));
    assert.equal(g.layout, 1280);
    assert.ok(g.shown < 1280 && Math.abs(g.shown - g.box) <= 1, `model ${i + 1}'s page is not scaled: ${JSON.stringify(g)}`);
  }
  assert.equal(await tiles.locator('.tile-model').count(), 0, 'a compared tile repeats its model under its name');
  assert.deepEqual(problems, []);
});

test('the tiles\' frames load while the prompt is written, and the next run\'s tiles take them back', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('variations-count').selectOption('4');
  // Four streaming frames and four for the finished pages, loaded out of sight before the Run key.
  const parked = page.locator('.preview-parking iframe');
  await assertEventually(async () => (await parked.count()) === 8, 'the tiles\' frames were not loaded ahead');
  await parked.evaluateAll((els) => els.forEach((el) => el.setAttribute('data-ahead', '')));
  const streaming = (tiles) => tiles.evaluateAll((els) => els.map((t) => t.querySelector('iframe[title="Preview"]')?.hasAttribute('data-ahead')));

  let tiles = await fanOut(page, 4);
  assert.deepEqual(await streaming(tiles), [true, true, true, true], 'a tile made its frame at the Run key');
  await waitForStatus(page, 'done');
  // Each finished page ran in a frame of its own, loaded ahead too; it is never kept after.
  await assertEventually(async () => (await tiles.evaluateAll((els) => els.filter((t) =>
    t.querySelector('iframe[data-testid="preview-frame"][title="Preview (running)"][data-ahead]')).length)) === 4,
  'a finished page did not run in a frame loaded ahead');
  assert.equal(await parked.count(), 0, 'frames were left over');

  // The next run: its tiles stream into the same four frames, each showing its own new page.
  tiles = await fanOut(page, 4, 'scripted/variant@40');
  assert.deepEqual(await streaming(tiles), [true, true, true, true], 'the next run made new streaming frames');
  await waitForStatus(page, 'done', 30_000);
  for (const tile of await tiles.all()) {
    await tile.frameLocator('[data-testid="preview-frame"]').locator('body').filter({ hasText: /\S/ }).waitFor({ timeout: 10_000 });
  }
  assert.equal(await page.locator('iframe[title="Preview (running)"][data-ahead]').count(), 0,
    'a frame that ran a page was kept for another');
  assert.deepEqual(problems, []);
});
