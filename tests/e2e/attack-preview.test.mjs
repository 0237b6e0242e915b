// Attacks on the preview, one test each: a generated page (or a page still being written) tries to
// take the preview over, flood the app, learn Flint's address, open windows, run links, nest
// documents, burn time on srcset, reach storage or change Flint's URL. Each test checks that the
// attack fails and that the person's work (the editor, the other previews) survives.
//
// The scripted upstream streams tests/fixtures/attack-*.md. A page that got code to run where it
// should not reports it by POSTing a request with model `beacon-<what>` to the scripted upstream,
// whose request log the tests read: a real way out of the browser, which no sandbox flag closes.
//
// Tests marked "regression guard" passed before the preview moved to served frames and ports too;
// the others failed then (the report that came with this file says how).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import {
  assertEventually, editorText, openFlint, runPrompt, savedSession, streamStatus, useFlint, waitConnected,
  waitForStatus, worstFrameGap,
} from './harness.mjs';

const flint = useFlint({
  models: [
    'attack-refresh@300', 'attack-flood@2000', 'attack-address@2000', 'attack-popup@2000', 'attack-links@100',
    'attack-nested@300', 'attack-srcset@1000', 'attack-storage@2000', 'attack-history@2000',
    'attack-reload@2000',
  ],
});

/** What attacker code reported so far (`beacon-<what>` requests), `<what>` only. */
async function beacons(prefix) {
  const log = await flint.upstream.requests();
  return log.map((r) => r.model).filter((m) => m.startsWith(`beacon-${prefix}`)).map((m) => m.slice(7));
}

/** The preview's runtime frame (it morphs snapshots while an answer streams; title "Preview"). */
async function runtimeFrame(page, scope = page) {
  const handle = await scope.locator('iframe[title="Preview"]').first().elementHandle();
  return handle.contentFrame();
}

async function consoleLines(page) {
  return page.getByTestId('console-entry').allTextContents();
}

/** A v1 share link's fragment, made here (as share.test.mjs does). */
function v1Link(payload) {
  return `v1.${deflateSync(Buffer.from(JSON.stringify(payload))).toString('base64url')}`;
}

/** Cancels the answer under way (its page is then never run), once the editor holds `marker`. */
async function cancelAfter(page, marker) {
  await assertEventually(async () => (await editorText(page)).includes(marker), `the answer never reached "${marker}"`,
    20_000);
  // A few more snapshots, so the one holding `marker` is certainly applied.
  await page.waitForTimeout(600);
  assert.equal(await streamStatus(page), 'streaming', 'the answer ended before the attack could be checked');
  await page.getByTestId('cancel-button').click();
  await waitForStatus(page, 'cancelled', 5_000);
}

/** Runs the counter as the next answer and checks it works: the person's next piece of work. */
async function nextAnswerWorks(page) {
  await runPrompt(page, 'scripted/counter@300', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  assert.match(await editorText(page), /Click counter/, 'the next answer is not in the editor');
  const button = page.frameLocator('[data-testid="preview-frame"]').locator('[data-testid="counter"]');
  await button.click();
  await assertEventually(async () => /1/.test(await button.textContent()), 'the next answer\'s page does not run');
}

test('(a) a meta refresh streamed into a page cannot take the preview frame over and read the next answer', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/attack-refresh@300', 'a page');
  await cancelAfter(page, 'Paragraph 8');
  // The person goes on: every snapshot of the next answer goes to the preview's frame.
  await nextAnswerWorks(page);
  await page.waitForTimeout(500);
  assert.deepEqual(await beacons('refresh-stole'), [], 'the taken-over frame received the next answer\'s page');
  assert.deepEqual(await beacons('refresh-loaded'), [], 'the refresh navigated the preview frame to the attacker');
});

test('(b) a page that floods the console cannot freeze Flint, now or after a reload', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  // 20,000 lines posted straight to the app, 20,000 through console.log, and 2,000 × 100 KB more.
  await runPrompt(page, 'scripted/attack-flood@2000', 'a chatty page');
  // Without the limits Flint froze ~30 s. The flooding page itself shares these two cores (and,
  // sandboxed in the same renderer, the main thread), so a loaded machine has seen 1.3 s frames
  // with them: the bound is a freeze, not a smooth frame rate.
  const gap = await worstFrameGap(page, 6_000);
  assert.ok(gap < 3_000, `Flint froze while the page flooded its console: a frame took ${gap} ms`);
  await waitForStatus(page, 'done', 60_000);
  const typed = Date.now();
  await page.getByTestId('prompt-input').fill('still here');
  assert.ok(Date.now() - typed < 2_000, `typing took ${Date.now() - typed} ms`);
  // The count of dropped lines comes when the limiter's one-second window ends (a page restarted
  // after a reload may have opened a new one just before "done").
  await assertEventually(async () => (await consoleLines(page)).some((l) => /dropped/.test(l)),
    'no line says that lines were dropped', 5_000);
  const lines = await consoleLines(page);
  assert.ok(lines.length <= 500, `the console panel holds ${lines.length} lines`);
  assert.ok(!lines.some((l) => l.startsWith('direct ')), 'lines posted straight to the app were shown');
  assert.ok(lines.every((l) => l.length <= 4_100), 'a console line was not cut');

  await page.reload();
  await waitConnected(page);
  const again = await worstFrameGap(page, 4_000);
  assert.ok(again < 3_000, `after a reload Flint froze again: a frame took ${again} ms`);
  await assertEventually(async () => /parent\.postMessage/.test(await editorText(page)),
    'the page\'s code did not survive the reload');
});

test('the console limits: 200 lines a second, each cut to 4,000 characters, the rest counted', async () => {
  const { ConsoleLimiter } = await import('../../app/js/preview.js');
  assert.equal(typeof ConsoleLimiter, 'function', 'preview.js has no console limiter');
  const limiter = new ConsoleLimiter();
  const shown = [];
  const big = 'x'.repeat(100_000);
  for (let i = 0; i < 20_000; i++) shown.push(...limiter.add('log', i % 2 ? big : `line ${i}`, i * 0.01));
  assert.equal(shown.length, 200, 'more than 200 lines in one second');
  assert.ok(shown.every(([, text]) => text.length <= 4_010), 'a line was not cut');
  assert.deepEqual(shown[0], ['log', 'line 0']);
  const next = limiter.add('bogus', 'a second later', 1_000.5);
  assert.match(next[0][1], /^19800 console lines dropped/);
  assert.deepEqual(next[1], ['log', 'a second later'], 'unknown levels are not shown as log');
});

test('(c) a running page opened from a #p= link never sees the link: base URL, URL, referrer', async () => {
  const fragment = v1Link({ prompt: 'where am I', model: 'scripted/attack-address@2000' });
  const { page } = await openFlint(flint.browser, flint.gateway.url, `/#p=${fragment}`);
  await page.getByTestId('shared-link-banner').waitFor({ timeout: 10_000 });
  await page.getByTestId('shared-run').click();
  await waitForStatus(page, 'done');
  await page.getByTestId('console-panel').getByText('probe done').waitFor({ timeout: 10_000 });
  const probes = (await consoleLines(page)).filter((l) => l.startsWith('probe ') && l !== 'probe done');
  assert.equal(probes.length, 5, `the page did not report: ${probes}`);
  for (const line of probes) {
    assert.ok(!line.includes('#p=') && !line.includes(fragment.slice(3, 30)), `the page sees the link: ${line}`);
  }
});

test('(d) regression guard: a page in a tile or in an opened tab opens no window and has no opener', async () => {
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  const appUrl = page.url();
  await page.getByTestId('variations-count').selectOption('2');
  await runPrompt(page, 'scripted/attack-popup@2000', 'open windows');
  await waitForStatus(page, 'done');
  const expected = 'popup=blocked popup=blocked opener=none top.opener=none top=blocked';
  await assertEventually(async () => (await consoleLines(page)).filter((l) => l.includes('popup-probe')).length === 2,
    'the tiles did not both report');
  for (const line of (await consoleLines(page)).filter((l) => l.includes('popup-probe'))) {
    assert.ok(line.endsWith(expected), `a tile's page got out: ${line}`);
  }
  await page.waitForTimeout(500);
  assert.equal(context.pages().length, 1, 'a tile opened a window');
  assert.equal(page.url(), appUrl, 'a tile navigated Flint');

  // The same page in a tab of its own (Open ↗).
  await page.getByTestId('variation-tile').nth(0).getByTestId('tile-promote').click();
  await assertEventually(async () => (await editorText(page)).includes('popup-probe'), 'the tile was not promoted');
  const [tab] = await Promise.all([context.waitForEvent('page'), page.getByTestId('export-open').click()]);
  await tab.waitForLoadState();
  await assertEventually(async () => tab.frames().length > 1, 'the tab has no frame');
  const inner = tab.frames().find((f) => f !== tab.mainFrame());
  await inner.locator('#out').filter({ hasText: /top=/ }).waitFor({ timeout: 10_000 });
  assert.equal(await inner.locator('#out').textContent(), expected, 'the page in the tab got out');
  await page.waitForTimeout(500);
  assert.equal(context.pages().length, 2, 'the page in the tab opened a window');
  assert.match(tab.url(), /^blob:/, 'the page navigated its tab');
  assert.equal(page.url(), appUrl, 'the page in the tab navigated Flint');
});

test('(e) javascript: and data: links in a page being written run nothing when clicked', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/attack-links@100', 'links');
  const frame = page.frameLocator('[data-testid="preview-frame"]');
  await frame.locator('#l7').waitFor({ timeout: 20_000 });
  assert.equal(await streamStatus(page), 'streaming', 'the links arrived only after the answer ended');
  for (const target of ['#l1', '#l2', '#l3', '#l4 text', '#l5 text', '#l6', '#l7']) {
    await frame.locator(target).click({ timeout: 1_000 }).catch(() => {});
  }
  await page.waitForTimeout(1_000);
  assert.deepEqual(await beacons('jsurl'), [], 'a link in the streaming page ran code');
  assert.equal(await streamStatus(page), 'streaming');
  const runtime = await runtimeFrame(page);
  assert.equal(await runtime.locator('[data-testid="title"]').textContent(), 'Links',
    'the preview frame navigated away');
  await page.getByTestId('cancel-button').click();
  await waitForStatus(page, 'cancelled', 5_000);
  await nextAnswerWorks(page);
});

test('(f) nested documents, SVG scripts, handlers and <base> in a page being written run nothing', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/attack-nested@300', 'nested');
  // The code pane shows the answer as it streams (app/js/stream_view.js) as text, in the app's own
  // page: its tags must stay characters, never elements.
  const view = page.locator('.stream-view');
  await assertEventually(async () => /<iframe|<script|<svg/i.test(await view.textContent().catch(() => '')),
    'the stream view never showed the hostile tags as text', 20_000);
  assert.equal(await view.evaluate((v) => v.querySelectorAll(':scope *:not(div)').length), 0,
    'the stream view turned streamed text into elements');
  await cancelAfter(page, 'Paragraph 10');
  const runtime = await runtimeFrame(page);
  assert.equal(await runtime.locator('[data-testid="title"]').textContent(), 'Nested', 'the snapshot is not shown');
  const nested = await runtime.evaluate(() => document.querySelectorAll('iframe, frame, object, embed, base, script').length);
  assert.equal(nested, 0, 'the preview frame holds nested documents, scripts or a <base>');
  await runtime.locator('#n6').click({ timeout: 2_000 }).catch(() => {});
  await nextAnswerWorks(page);
  await page.waitForTimeout(500);
  assert.deepEqual(await beacons('nested'), [], 'code in the streaming page ran');
});

test('(g) a huge srcset in a page being written is dropped from the preview, the rest shown', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/attack-srcset@1000', 'srcset');
  await waitForStatus(page, 'done');
  const runtime = await runtimeFrame(page);
  await runtime.locator('#after').waitFor({ timeout: 5_000 });
  const srcset = await runtime.locator('#big').evaluate((img) => (img.getAttribute('srcset') ?? '').length);
  assert.equal(srcset, 0, `the preview kept a ${srcset}-character srcset`);
  assert.match(await editorText(page), /candidate-599\.png/, 'the editor lost part of the page');
});

test('(h) regression guard: a running page cannot reach any storage, and Flint\'s is intact', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await page.evaluate(() => localStorage.setItem('flint', 'secret-of-the-app'));
  await runPrompt(page, 'scripted/attack-storage@2000', 'reach for storage');
  await waitForStatus(page, 'done');
  const names = ['localStorage', 'sessionStorage', 'cookie', 'indexedDB', 'caches', 'serviceWorker'];
  await assertEventually(async () => (await consoleLines(page)).filter((l) => l.startsWith('storage ')).length === names.length,
    'the page did not report every store');
  const lines = (await consoleLines(page)).filter((l) => l.startsWith('storage '));
  for (const name of names) assert.ok(lines.includes(`storage ${name}=blocked`), `${name} was open: ${lines}`);
  assert.equal(await page.evaluate(() => localStorage.getItem('flint')), 'secret-of-the-app');
  await assertEventually(async () => (await savedSession(page))?.prompt === 'reach for storage',
    'the saved session was lost');
});

test('(i) regression guard: history and fragment games in a running page leave Flint\'s URL alone', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  const appUrl = page.url();
  await runPrompt(page, 'scripted/attack-history@2000', 'history');
  await waitForStatus(page, 'done');
  await assertEventually(async () => (await consoleLines(page)).filter((l) => l.startsWith('history ')).length === 5,
    'the page did not try everything');
  await page.waitForTimeout(1_000);
  assert.equal(page.url(), appUrl, 'the page changed Flint\'s URL');
  assert.equal(await page.getByTestId('shared-link-banner').count(), 0, 'Flint opened a link the page made');
  assert.equal(await page.getByTestId('prompt-input').inputValue(), 'history');
  const lines = await consoleLines(page);
  for (const name of ['topHash', 'parentReplace']) {
    assert.ok(lines.includes(`history ${name}=blocked`), `${name} was not refused: ${lines}`);
  }
});

test('a running page that reloads itself runs again; one that navigates away is brought back', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/attack-reload@2000', 'a game');
  await waitForStatus(page, 'done');
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  assert.equal(await preview.locator('#started').textContent(), 'started');
  await preview.locator('#again').click();
  await page.getByTestId('console-panel').getByText(/started again/).waitFor({ timeout: 10_000 });
  await assertEventually(async () => (await preview.locator('#started').textContent({ timeout: 500 }).catch(() => '')) === 'started',
    'the reloaded page does not run again');
  await preview.locator('#away').click();
  await assertEventually(async () => (await page.getByTestId('console-panel').getByText(/started again/).count()) === 2,
    'navigating away was not noticed');
  await assertEventually(async () => (await preview.locator('#started').textContent({ timeout: 500 }).catch(() => '')) === 'started',
    'the page that navigated away was not brought back');
  assert.equal(await preview.locator('#elsewhere').count(), 0);
});
