// History that follows the person (issue 13): signed in, a generation syncs to the gateway, and a
// browser with nothing stored (a cleared one, or another machine) gets it back by signing in. It
// comes back held still, like any code from outside this page; another person never sees it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertEventually, editorText, launchBrowser, runPrompt, startGateway, startUpstream, streamStatus,
  waitConnected, waitForStatus,
} from './harness.mjs';

const flint = { upstream: null, gateway: null, browser: null, tokens: {} };
before(async () => {
  flint.upstream = await startUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'flint-sync-'));
  flint.gateway = await startGateway({
    upstreamUrl: flint.upstream.url,
    toml: `[auth]\nmode = "tokens"\ndatabase = ${JSON.stringify(join(dir, 'auth.sqlite3'))}\n`,
  });
  const bin = process.env.FLINT_GATEWAY_BIN ?? join(import.meta.dirname, '../../target/release/flint-gateway');
  for (const name of ['ada', 'bob']) {
    const printed = execFileSync(bin, ['token', 'create', name, '--config', flint.gateway.config]).toString();
    flint.tokens[name] = /flint_[A-Za-z0-9_-]+/.exec(printed)?.[0];
    assert.ok(flint.tokens[name], `no token printed for ${name}: ${printed}`);
  }
  flint.browser = await launchBrowser();
});
after(async () => {
  await flint.browser?.close();
  await flint.gateway?.stop();
  flint.upstream?.stop();
});

/**
 * A browser context with nothing stored, signed in as `name`: Flint connected. `problems` collects
 * page errors and console errors.
 */
async function signIn(name) {
  const context = await flint.browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  await page.goto(`${flint.gateway.url}/signin`);
  await page.locator('#token').fill(flint.tokens[name]);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await waitConnected(page);
  return { context, page, problems };
}

/** Opens History and waits until its indicator says `words`. */
async function openHistory(page, words) {
  await page.getByTestId('history-button').click();
  const indicator = page.getByTestId('sync-status');
  await assertEventually(async () => (await indicator.count()) === 1 && (await indicator.textContent()) === words,
    `History never said "${words}" (it says ${JSON.stringify(await indicator.allTextContents())})`, 15_000);
}

test('a signed-in person\'s history survives a cleared browser, held still, and no one else sees it', async () => {
  const prompt = 'a counter that follows me to another browser';
  const first = await signIn('ada');
  await runPrompt(first.page, 'scripted/counter@300', prompt);
  await waitForStatus(first.page, 'done');
  const code = await editorText(first.page);
  assert.match(code, /Clicked 0 times/, 'the scripted counter did not stream');
  const entries = first.page.getByTestId('history-entry');
  await openHistory(first.page, 'Synced');
  assert.equal(await entries.count(), 1, 'the generation is not in this browser\'s history');
  await first.context.close();

  // A brand-new context: no IndexedDB, no localStorage, no cookie. Only the sign-in brings it back.
  const second = await signIn('ada');
  const restored = second.page.getByTestId('history-entry');
  await openHistory(second.page, 'Synced');
  await assertEventually(async () => (await restored.count()) === 1,
    'the synced generation is not listed in the new browser', 15_000);
  assert.match(await restored.first().textContent(), new RegExp(`${prompt}.*scripted/counter@300.*done`, 's'));

  // Opened, it shows its code, held still: its script waits for "Run this page".
  await restored.first().getByTestId('history-open').click();
  await second.page.getByTestId('held-page').waitFor({ timeout: 10_000 });
  await assertEventually(async () => (await editorText(second.page)) === code,
    'the editor does not show the synced code');
  assert.equal(await streamStatus(second.page), 'idle', 'opening a synced entry ran a prompt');
  assert.equal(await second.page.getByTestId('prompt-input').inputValue(), prompt);
  const counter = second.page.frameLocator('[data-testid="preview-frame"]').getByTestId('counter');
  await counter.click();
  await second.page.waitForTimeout(300);
  assert.equal(await counter.textContent(), 'Clicked 0 times', 'the synced page ran before the person clicked');
  await second.page.getByTestId('run-held-page').click();
  // The page runs in a fresh frame, laid over the still one until it has painted.
  const running = second.page.getByTestId('preview-frame').last().contentFrame().getByTestId('counter');
  await assertEventually(async () => {
    await running.click({ timeout: 2_000 }).catch(() => {});
    return /Clicked [1-9]/.test(await running.textContent());
  }, 'the synced page did not run after "Run this page"');
  await second.context.close();

  // Another person, signed in elsewhere: their history is theirs alone.
  const other = await signIn('bob');
  await openHistory(other.page, 'Synced');
  assert.equal(await other.page.getByTestId('history-entry').count(), 0, 'bob sees ada\'s history');
  assert.match(await other.page.getByTestId('history-panel').textContent(), /Nothing here yet/);
  await other.context.close();

  assert.deepEqual([...first.problems, ...second.problems, ...other.problems], []);
});
