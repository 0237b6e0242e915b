// "Looks like the picture": with a mock in the prompt, every finished page (each variation's and
// the main run's) is drawn at the mock's size and scored against it; the score shows on the tile
// and above the main preview, and ranks the tiles. The `likeness-mock` fixture draws one look per
// seed, only one of them the mock's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, mockPng, openFlint, runPrompt, seriousViolations, useFlint, waitConnected, waitForStatus,
} from './harness.mjs';

const flint = useFlint({ models: [{ id: 'likeness-mock', vision: true }] });

/** A tile's likeness, once scored: its percentage and its text. */
async function scoreOf(tile) {
  const likeness = tile.getByTestId('likeness');
  return { score: Number(await likeness.getAttribute('data-score')), text: await likeness.textContent() };
}

test('with a mock attached, four variations each show how much they look like it, ranked by it, and so does the main run', async (t) => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await waitConnected(page);
  await page.getByTestId('image-input').setInputFiles({ name: 'mock.png', mimeType: 'image/png', buffer: await mockPng(page) });
  await page.getByTestId('picture-chip').waitFor();
  await page.getByTestId('variations-count').selectOption('4');
  // Counts the picture frames alive at once, however briefly.
  await page.evaluate(() => {
    window.__pictureFramesMax = 0;
    new MutationObserver(() => {
      const now = document.querySelectorAll('iframe[data-role="picture"]').length;
      window.__pictureFramesMax = Math.max(window.__pictureFramesMax, now);
    }).observe(document.body, { childList: true, subtree: true });
  });
  await runPrompt(page, 'scripted/likeness-mock', 'Build this page');
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 4, 'there are not four tiles');
  await waitForStatus(page, 'done');
  const scored = page.locator('[data-testid="variation-tile"] [data-testid="likeness"][data-state="done"]');
  await assertEventually(async () => (await scored.count()) === 4, 'not every tile shows a likeness score', 30_000);

  const framesMax = await page.evaluate(() => window.__pictureFramesMax);
  assert.ok(framesMax >= 1 && framesMax <= 2, `no more than two picture frames ran at once: ${framesMax}`);

  const seeds = (await flint.upstream.requests()).filter((r) => r.model === 'likeness-mock').map((r) => r.body.seed);
  const order = [...seeds].sort((a, b) => a - b);
  const seen = [];
  for (let i = 0; i < 4; i++) {
    const tile = tiles.nth(i);
    const { score, text } = await scoreOf(tile);
    assert.match(text, /Looks like the picture: \d+ %/);
    seen.push({ seed: order[i], score, rank: Number(await tile.getAttribute('data-rank')) });
  }
  t.diagnostic(`tiles: ${JSON.stringify(seen)}`);
  const match = seen.find((tile) => tile.seed % 4 === 0);
  for (const other of seen.filter((tile) => tile !== match)) {
    assert.ok(match.score > other.score, `the matching page does not score highest: ${JSON.stringify(seen)}`);
  }
  // Every page passes the same checks: the likeness alone orders them.
  const byRank = [...seen].sort((a, b) => a.rank - b.rank);
  assert.deepEqual(byRank.map((tile) => tile.rank), [1, 2, 3, 4], `the tiles are not all ranked: ${JSON.stringify(seen)}`);
  for (let i = 1; i < 4; i++) {
    assert.ok(byRank[i - 1].score >= byRank[i].score, `a tile that looks less alike ranks higher: ${JSON.stringify(byRank)}`);
  }
  // What differs opens from the keyboard.
  const unlike = tiles.nth(seen.indexOf(byRank[3]));
  await unlike.getByTestId('likeness').locator('summary').focus();
  await page.keyboard.press('Enter');
  await unlike.getByTestId('likeness-findings').waitFor();
  assert.match(await unlike.getByTestId('likeness-findings').textContent(), /picture/);
  assert.deepEqual(await seriousViolations(page), [], 'axe with likeness scores on the tiles');

  // The main run (no seed: the matching look) shows its score above the preview.
  await page.getByTestId('variations-count').selectOption('1');
  await runPrompt(page, 'scripted/likeness-mock', 'Build this page again');
  await waitForStatus(page, 'done');
  const main = page.getByTestId('checks-bar').getByTestId('likeness');
  await assertEventually(async () => (await main.getAttribute('data-state').catch(() => null)) === 'done',
    'the main preview shows no likeness score', 30_000);
  assert.match(await main.textContent(), /Looks like the picture: \d+ %/);
  t.diagnostic(`main: ${await main.getAttribute('data-score')} %`);
  assert.ok(Number(await main.getAttribute('data-score')) >= 85, `the matching page scores ${await main.getAttribute('data-score')}`);
});
