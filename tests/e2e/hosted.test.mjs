// A hosted gateway's person-facing limits: a daily token quota shown as a meter and, once spent, a
// refusal that says when it renews; and a person's own key, kept in the browser, used for their
// streams (outside the quota), never in the saved session or a share link.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import {
  assertEventually, launchBrowser, openFlint, savedSession, startGateway, startUpstream, waitForStatus,
} from './harness.mjs';

const OWN_KEY = 'sk-own-e2e-5f4e3d2c1b0a';
const flint = { upstream: null, gateway: null, browser: null };
before(async () => {
  flint.upstream = await startUpstream();
  flint.gateway = await startGateway({
    upstreamUrl: flint.upstream.url,
    scripted: 'allow_user_keys = true',
    toml: '[limits.signed_in]\ntokens_per_day = 700\n',
  });
  flint.browser = await launchBrowser();
});
after(async () => {
  await flint.browser?.close();
  await flint.gateway?.stop();
  flint.upstream?.stop();
});

async function run(page, prompt) {
  await page.getByTestId('model-picker').selectOption('scripted/counter@300');
  await page.getByTestId('prompt-input').fill(prompt);
  await page.getByTestId('prompt-input').press('Control+Enter');
}

test('the daily quota is shown, spent, and refused with when it renews; an own key is not counted', async () => {
  await flint.upstream.reset();
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  await assertEventually(async () => /700 of 700 tokens left today/.test(await page.getByTestId('quota').textContent()),
    'no quota meter');
  await run(page, 'a counter');
  await waitForStatus(page, 'done');
  await assertEventually(async () => !/700 of 700/.test(await page.getByTestId('quota').textContent()),
    'the meter did not count the answer');
  // The counter fixture is about 560 tokens: the second answer gets the 140 or so left and is cut
  // there, the third is refused.
  await run(page, 'a counter again');
  await waitForStatus(page, 'done');
  await run(page, 'one more');
  await waitForStatus(page, 'error');
  const error = await page.getByTestId('error-message').textContent();
  assert.match(error, /tokens_per_day/, error);
  assert.match(error, /midnight UTC/, error);
  assert.equal((await flint.upstream.requests()).length, 2, 'the refused request reached the provider');

  // Own key: used, and outside the quota.
  await page.getByTestId('own-keys-button').click();
  await page.getByTestId('own-key-scripted').fill(OWN_KEY);
  await page.getByTestId('own-key-save-scripted').click();
  await run(page, 'on my own key');
  await waitForStatus(page, 'done');
  const requests = await flint.upstream.requests();
  assert.equal(requests.at(-1).key_tail, OWN_KEY.slice(-4), 'the stream did not go with my key');
  assert.equal(requests[0].key_tail, 'hown', 'the operator key was not the first one used');

  // Kept in this browser, in no saved session and no share link.
  await page.waitForTimeout(600);
  await page.reload();
  await page.getByTestId('connection-status').filter({ hasText: /\bconnected\b/ }).waitFor();
  const session = JSON.stringify(await savedSession(page));
  assert.ok(!session.includes(OWN_KEY), 'the key is in the saved session');
  await run(page, 'after a reload');
  await waitForStatus(page, 'done');
  assert.equal((await flint.upstream.requests()).at(-1).key_tail, OWN_KEY.slice(-4), 'the key was not sent again');
  await page.getByTestId('share-button').click();
  const link = await page.getByTestId('share-link').inputValue();
  const packed = Buffer.from(new URL(link).hash.replace('#p=v1.', ''), 'base64url');
  const shared = inflateSync(packed).toString();
  assert.match(shared, /after a reload/, 'the link does not decode');
  assert.ok(!shared.includes(OWN_KEY), 'the key is in a share link');
  await context.close();
});

test('with access tokens, a visitor is sent to sign in, and the token signs them in to a working Flint', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'flint-auth-'));
  const gateway = await startGateway({
    upstreamUrl: flint.upstream.url,
    toml: `[auth]\nmode = "tokens"\ndatabase = ${JSON.stringify(join(dir, 'auth.sqlite3'))}\n`,
  });
  try {
    const bin = process.env.FLINT_GATEWAY_BIN ?? join(import.meta.dirname, '../../target/release/flint-gateway');
    const printed = execFileSync(bin, ['token', 'create', 'alice', '--config', gateway.config]).toString();
    const token = /flint_[A-Za-z0-9_-]+/.exec(printed)?.[0];
    assert.ok(token, `no token printed: ${printed}`);

    const context = await flint.browser.newContext();
    const page = await context.newPage();
    await page.goto(gateway.url + '/');
    assert.match(page.url(), /\/signin$/, 'a visitor without a session was not sent to sign in');
    await page.locator('#token').fill('flint_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match(await page.content(), /not|invalid|unknown/i, 'a wrong token was not refused with a sentence');
    await page.goto(gateway.url + '/signin');
    await page.locator('#token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('connection-status').filter({ hasText: /\bconnected\b/ }).waitFor({ timeout: 20_000 });
    await run(page, 'signed in');
    await waitForStatus(page, 'done');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'flint_session');
    assert.ok(session?.httpOnly && session.sameSite === 'Strict', `the session cookie: ${JSON.stringify(session)}`);
    await context.close();
  } finally {
    await gateway.stop();
  }
});
