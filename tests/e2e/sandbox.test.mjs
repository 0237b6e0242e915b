// Generated code runs in an opaque origin: it cannot read the app's storage or navigate the app away.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  openFlint, runPrompt, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint({ models: ['cdn-stall@2000'] });

test('a hostile page cannot read localStorage or navigate the top window', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await page.evaluate(() => localStorage.setItem('flint', 'secret-of-the-app'));
  const appUrl = page.url();

  const frame = page.getByTestId('preview-frame');
  const sandbox = await frame.getAttribute('sandbox');
  assert.equal(sandbox?.trim(), 'allow-scripts', `preview sandbox is "${sandbox}"`);

  await runPrompt(page, 'scripted/hostile@2000', 'steal things');
  await waitForStatus(page, 'done');

  const panel = page.getByTestId('console-panel');
  await panel.getByText('hostile ran').waitFor({ timeout: 10_000 });
  await panel.getByText(/blocked: .*top navigation/i).waitFor({ timeout: 5_000 });
  const entries = await page.getByTestId('console-entry').allTextContents();
  assert.ok(entries.some((e) => /blocked:/.test(e) && /localStorage|SecurityError|denied|sandbox/i.test(e)),
    `no blocked localStorage read in the console: ${JSON.stringify(entries)}`);
  assert.ok(!entries.some((e) => e.includes('secret-of-the-app')), 'the preview read the app\'s localStorage');

  await page.waitForTimeout(500);
  assert.equal(page.url(), appUrl, 'the preview navigated the app away');
  assert.equal(await page.evaluate(() => localStorage.getItem('flint')), 'secret-of-the-app');
  assert.equal((await page.getByTestId('preview-frame').getAttribute('sandbox'))?.trim(), 'allow-scripts',
    'the running preview is not sandboxed with allow-scripts alone');
});

test('a page whose CDN never answers is shown and runs anyway', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  // The generated page asks a "CDN" (the scripted upstream's /__stall) for an image and a font;
  // it never answers, so the page's load event never comes.
  await runPrompt(page, 'scripted/cdn-stall@2000', 'a page with a logo');
  await waitForStatus(page, 'done', 15_000);
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  assert.equal(await preview.locator('img').evaluate((img) => img.complete), false,
    'the logo loaded, so this test did not exercise a stalled CDN');
  assert.equal(await preview.locator('[data-testid="ready"]').textContent(), 'script ran',
    'the finished page\'s script did not run');
});
