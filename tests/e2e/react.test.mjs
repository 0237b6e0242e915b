// React projects (issue 27): TSX files as models write them, built in the worker and run in the
// sandboxed preview with the gateway's vendored packages, offline.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEventually, openFlint, runPrompt, useFlint, waitForStatus } from './harness.mjs';

const flint = useFlint({ models: ['react-app@2000', 'react-files@2000', 'react-broken@100', 'react-unknown@2000', 'react-loop@2000', 'react-large@600', 'react-large@300', 'react-mount@200'] });

const preview = (page) => page.frameLocator('[data-testid="preview-frame"]');

test('a one-file App.tsx runs: state, Tailwind classes styled, a Lucide icon drawn', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-app@2000', 'a React click counter');
  await waitForStatus(page, 'done');
  const frame = preview(page);
  await frame.getByTestId('count').filter({ hasText: 'Clicks: 0' }).waitFor({ timeout: 10_000 });
  await frame.locator('#add').click();
  await frame.getByTestId('count').filter({ hasText: 'Clicks: 1' }).waitFor({ timeout: 5_000 });
  const background = await frame.locator('#add').evaluate((b) => getComputedStyle(b).backgroundColor);
  assert.notEqual(background, 'rgba(0, 0, 0, 0)', 'bg-blue-600 was not styled');
  assert.equal(await frame.locator('#add svg.lucide').count(), 1, 'the Plus icon is not drawn');
  assert.deepEqual(problems, []);
  await context.close();
});

// What the run shows, recorded as it happens, so that nothing seen for a moment is raced by a
// locator (the init script runs in every frame, the page's and the previews'):
// - in the page: the frames made to run pages (not the runtime's) before the answer is done, and
//   when the run's status became "done";
// - in a preview frame: each stand-in drawn, with the time it appeared (the same clock), reported
//   through the __flintStandIn binding.
const watchRun = `if (window === top) {
  window.__framesWhileStreaming = 0;
  new MutationObserver((records) => {
    const status = document.querySelector('[data-testid="stream-status"]')?.textContent.trim();
    if (status === 'done' && window.__doneAt === undefined) window.__doneAt = Date.now();
    for (const r of records) for (const n of r.addedNodes) {
      if (n.tagName === 'IFRAME' && n.title === 'Preview (running)' && status !== 'done') window.__framesWhileStreaming++;
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
} else {
  const seen = new WeakSet();
  new MutationObserver(() => {
    for (const el of document.querySelectorAll('[data-flint-pending]')) {
      if (!seen.has(el)) { seen.add(el); window.__flintStandIn?.(el.textContent, Date.now()); }
    }
  }).observe(document, { childList: true, subtree: true });
}`;

test('while a project streams, a component not written yet stands in, and later builds swap into one frame', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url, '/', { initScript: watchRun });
  const standIns = [];
  await page.exposeBinding('__flintStandIn', (_source, text, at) => { standIns.push({ text, at }); });
  // App.tsx streams first (about 70% of the answer); the two components it imports come after it.
  // At 300 tok/s they take about 6 s, the window in which App runs with stand-ins.
  await runPrompt(page, 'scripted/react-large@300', 'a React sprint board');
  await waitForStatus(page, 'done', 60_000);
  const frame = preview(page);
  // The finished app: every component itself, nothing standing in.
  await frame.locator('table').waitFor({ timeout: 10_000 });
  await assertEventually(async () => (await frame.locator('[data-flint-pending]').count()) === 0,
    'a stand-in outlived the stream');
  const doneAt = await page.evaluate(() => window.__doneAt);
  assert.ok(standIns.some(({ at }) => at < doneAt), `no stand-in was drawn while the answer streamed (${standIns.length} in all)`);
  for (const { text } of standIns) {
    assert.match(text, /components\/(Stats|TicketTable)(\.tsx)? is not written yet/);
  }
  // React was loaded once, before the first build (the warm page); each build was swapped into
  // that frame. Started afresh, each would have taken a frame of its own (four or more).
  const frames = await page.evaluate(() => window.__framesWhileStreaming);
  assert.ok(frames >= 1 && frames <= 2, `${frames} frames ran pages while the answer streamed`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a React answer runs in a frame made ready before the Run key, to its end; an HTML answer leaves it, HTML asked for lets it go', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  const stack = page.getByTestId('preview-stack');
  const ready = stack.locator('iframe.back[title="Preview (running)"]');
  await page.getByTestId('model-picker').selectOption('scripted/react-large@600');
  await page.getByTestId('prompt-input').fill('a sprint board in React');
  // A moment after the prompt asks for React, a frame loads React behind the preview.
  await assertEventually(async () => (await ready.count()) === 1, 'no frame was made ready for React');
  await ready.evaluate((el) => el.setAttribute('data-made-ready', ''));
  await page.waitForTimeout(1_000);
  await page.getByTestId('prompt-input').press('Control+Enter');
  // The answer's first pages show in that frame, while it streams.
  await assertEventually(async () => (await stack.locator('[data-testid="preview-frame"][data-made-ready]').count()) === 1
    && (await page.getByTestId('stream-status').textContent()).trim() === 'streaming',
  'the first build did not show in the frame made ready for it', 25_000);
  await preview(page).locator('[data-flint-pending], table').first().waitFor({ timeout: 25_000 });
  await waitForStatus(page, 'done', 30_000);
  await preview(page).locator('table').waitFor({ timeout: 10_000 });
  // The finished app is swapped into that frame too: no fresh frame loads React again at the end.
  assert.equal(await stack.locator('[data-testid="preview-frame"][data-made-ready]').count(), 1,
    'the finished app started in a fresh frame');

  // Asked for React, answered in HTML: the page streams and runs as any HTML answer.
  await assertEventually(async () => (await ready.count()) === 1, 'no frame was made ready after the run');
  await ready.evaluate((el) => el.setAttribute('data-made-ready', 'second'));
  await page.getByTestId('model-picker').selectOption('scripted/counter@300');
  await page.getByTestId('edit-mode').uncheck();
  await page.getByTestId('prompt-input').press('Control+Enter');
  await waitForStatus(page, 'done');
  await preview(page).locator('button').first().waitFor({ timeout: 10_000 });
  assert.equal(await stack.locator('[data-made-ready="second"]').count(), 1, 'the ready frame was used for an HTML page');

  // Asked for an HTML page: the ready frame goes.
  await page.getByTestId('project-kind').selectOption('html');
  await assertEventually(async () => (await ready.count()) === 0, 'the frame made ready for React stayed');
  assert.deepEqual(problems, []);
  await context.close();
});

test('an entry that mounts itself (main.tsx) is unmounted when the next build swaps in', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-mount@200', 'a React clock and a list of notes');
  // While it streams, each build of App.tsx runs in the frame shown (it counts itself in
  // `__builds`), and each mounted app counts itself in `__mounted` until it is unmounted.
  let most = { builds: 0, mounted: 0 };
  while ((await page.getByTestId('stream-status').textContent()).trim() !== 'done') {
    const frame = await (await page.$('[data-testid="preview-frame"]'))?.contentFrame();
    const seen = await frame?.evaluate(() => ({ builds: window.__builds ?? 0, mounted: window.__mounted ?? 0 })).catch(() => null);
    if (seen) {
      assert.ok(seen.mounted <= 1, `${seen.mounted} apps mounted after ${seen.builds} builds in one frame`);
      if (seen.builds > most.builds) most = seen;
    }
    await page.waitForTimeout(100);
  }
  assert.ok(most.builds >= 3, `only ${most.builds} builds were swapped into one frame`);
  await preview(page).getByTestId('clock').waitFor({ timeout: 10_000 });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a multi-file app: components/, relative and @/ imports, a CSS import and clsx', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-files@2000', 'a React todo app');
  await waitForStatus(page, 'done');
  const frame = preview(page);
  await frame.getByRole('heading', { name: 'My todos' }).waitFor({ timeout: 10_000 });
  await frame.getByLabel('New todo').fill('Ship it');
  await frame.getByRole('button', { name: 'Add' }).click();
  await assertEventually(async () => (await frame.getByTestId('todos').locator('li').count()) === 3,
    'the new todo was not added');
  const border = await frame.locator('.app').evaluate((d) => getComputedStyle(d).borderTopColor);
  assert.equal(border, 'rgb(200, 40, 40)', 'index.css was not applied');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a finished project that does not build keeps the last good render and says where', async () => {
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-broken@100', 'a React list');
  // The first App.tsx builds while the answer streams, and runs.
  await preview(page).getByTestId('message').filter({ hasText: 'First version works' }).waitFor({ timeout: 15_000 });
  await waitForStatus(page, 'done', 30_000);
  const error = await page.getByTestId('error-message').textContent();
  assert.match(error, /App\.tsx:2:\d+/, `the error does not say where: ${error}`);
  await assertEventually(async () => (await page.getByTestId('console-entry')
    .filter({ hasText: /\[build\] App\.tsx:2:\d+/ }).count()) === 1, 'the console does not carry the build error');
  // The last good render stays.
  assert.equal(await preview(page).getByTestId('message').textContent(), 'First version works');
  // Fix sends the problem, where it is, and the code back to the model.
  await page.getByTestId('fix-page').click();
  await assertEventually(async () => (await flint.upstream.requests()).at(-1)?.body.messages
    .some((m) => /The code builds: App\.tsx:2:\d+/.test(m.content)), 'Fix did not send the build problem');
  const sent = (await flint.upstream.requests()).at(-1).body.messages.map((m) => m.content).join('\n');
  assert.match(sent, /const items = \[1, 2, 3;/, 'the broken code was not sent');
  await waitForStatus(page, 'done', 30_000);
  await context.close();
});

test('a package the preview lacks is one line naming it and the setting that adds it', async () => {
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-unknown@2000', 'a React confetti button');
  await waitForStatus(page, 'done');
  const line = page.getByTestId('console-entry').filter({ hasText: 'canvas-confetti' });
  await line.first().waitFor({ timeout: 5_000 });
  assert.equal(await line.count(), 1);
  assert.match(await line.textContent(), /\[preview\] packages/);
  await context.close();
});

test('a React app edited by hand is built again and runs in the preview', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-app@2000', 'a React click counter');
  await waitForStatus(page, 'done');
  await preview(page).getByTestId('count').waitFor({ timeout: 10_000 });
  // An edit as the person makes it: Monaco's text changes (not Flint's own append).
  await page.evaluate(() => {
    const model = globalThis.monaco.editor.getEditors().map((e) => e.getModel())
      .find((m) => m?.getValue().includes('Click counter'));
    model.setValue(model.getValue().replace('Click counter', 'Tap counter'));
  });
  await preview(page).getByRole('heading', { name: 'Tap counter' }).waitFor({ timeout: 10_000 });
  // A mistake typed next: the preview says where, in the page, rather than showing the code.
  await page.evaluate(() => {
    const model = globalThis.monaco.editor.getEditors().map((e) => e.getModel())
      .find((m) => m?.getValue().includes('Tap counter'));
    model.setValue(model.getValue().replace('useState<number>(start);', 'useState<number>(start;'));
  });
  await preview(page).getByText(/does not build yet/).waitFor({ timeout: 10_000 });
  assert.match(await preview(page).locator('pre').textContent(), /App\.tsx:\d+:\d+/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a React app from a shared link is held still until "Run this page", then runs', async () => {
  const maker = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(maker.page, 'scripted/react-app@2000', 'a React click counter');
  await waitForStatus(maker.page, 'done');
  await maker.page.getByTestId('share-include-code').check();
  await maker.page.getByTestId('share-button').click();
  const url = new URL(await maker.page.getByTestId('share-link').inputValue());
  await maker.context.close();

  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url, url.pathname + url.hash);
  await page.getByTestId('held-page').waitFor({ timeout: 10_000 });
  await page.waitForTimeout(500);
  assert.equal(await preview(page).getByTestId('count').count(), 0, 'the shared app ran before anyone asked');
  await page.getByTestId('run-held-page').click();
  await preview(page).getByTestId('count').filter({ hasText: 'Clicks: 0' }).waitFor({ timeout: 10_000 });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a component that re-renders without end is stopped: the frame says so, the console and the checks have it', async () => {
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-loop@2000', 'a React counter that starts at one');
  await waitForStatus(page, 'done', 30_000);
  const stopped = preview(page).locator('[data-flint-stopped]');
  await stopped.waitFor({ timeout: 10_000 });
  assert.match(await stopped.textContent(), /The app stopped with an error: Too many re-renders/);
  await assertEventually(async () => (await page.getByTestId('console-entry')
    .filter({ hasText: /\[react\] The app stopped: Too many re-renders/ }).count()) >= 1, 'the console does not have the error');
  await page.getByTestId('fix-page').waitFor({ timeout: 10_000 });
  // The app itself stays usable: the next prompt runs.
  await runPrompt(page, 'scripted/react-app@2000', 'a React click counter');
  await waitForStatus(page, 'done');
  await preview(page).getByTestId('count').filter({ hasText: 'Clicks: 0' }).waitFor({ timeout: 10_000 });
  await context.close();
});

test('React variations: each tile runs its own app, and the one promoted runs in the main preview', async () => {
  const { page, context, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('variations-count').selectOption('3');
  await runPrompt(page, 'scripted/react-files@2000', 'a React todo app');
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 3, 'there are not three tiles');
  await waitForStatus(page, 'done', 30_000);
  for (let i = 0; i < 3; i++) {
    await tiles.nth(i).frameLocator('[data-testid="preview-frame"]').getByRole('heading', { name: 'My todos' })
      .waitFor({ timeout: 15_000 });
  }
  // Keys typed into a tile's page stay there: click outside the tiles first, as a person would.
  await page.getByTestId('race-readout').click();
  await page.keyboard.press('2');
  await assertEventually(async () => (await tiles.nth(1).getAttribute('class')).includes('promoted'),
    'key 2 did not promote the second tile');
  await page.getByTestId('tab-preview').click();
  await page.frameLocator('[data-testid="preview-frame"]').first().getByRole('heading', { name: 'My todos' })
    .waitFor({ timeout: 15_000 });
  assert.deepEqual(problems, []);
  await context.close();
});
