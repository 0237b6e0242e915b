// Issue 16 end to end: every finished page is run again hidden and checked (whole document, something
// shows, the elements the prompt names, a clock keeps time, it is about what was asked, buttons
// respond, no errors, no failed loads); variations are ranked by their checks and "Pick best" promotes the winner; a failing page offers Fix (button and
// F key), auto-fix stops at its cap and after a cancel; a page that loops is stopped in its check;
// picking the second of three buttons scopes the next edit to it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, editorText, openFlint, runPrompt, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint({
  models: ['judge-best', 'judge-dead', 'judge-error', 'judge-error@40', 'judge-error@10', 'judge-bare', 'judge-fix', 'judge-loop',
    'judge-clock', 'judge-frozen', 'judge-stopwatch', 'judge-offtopic', 'pick-page', 'pick-red'],
});

/** Problems of Flint's own page: the generated pages' errors (which Playwright also reports) are left out. */
function pageOwn(problems) {
  return problems.filter((p) => !/setUpCounter|Flint stopped a loop/.test(p));
}

/** The tile whose label names `model`. */
function tileOf(page, model) {
  return page.getByTestId('variation-tile').filter({ has: page.locator('.tile-label', { hasText: model }) });
}

/** A fresh page running "a button that counts clicks" as best of N over the scripted `models`, compared. */
async function runBestOf(models) {
  await flint.upstream.reset();
  const opened = await openFlint(flint.browser, flint.gateway.url);
  const { page } = opened;
  await page.getByTestId('compare-toggle').check();
  for (const model of models) {
    await page.getByTestId('compare-models').locator(`input[value="scripted/${model}"]`).check();
  }
  await page.getByTestId('best-of').check();
  await page.getByTestId('prompt-input').fill('a button that counts clicks');
  await page.getByTestId('run-button').click();
  return opened;
}

/** The main preview's check summary once its checks are in: `{passed, total, text}`. */
async function mainChecks(page, timeout = 15_000) {
  const summary = page.locator('[data-testid="checks-summary"][data-state="done"]');
  await summary.waitFor({ timeout });
  return {
    passed: Number(await summary.getAttribute('data-passed')),
    total: Number(await summary.getAttribute('data-total')),
    text: (await summary.textContent()).trim(),
  };
}

/** The failed checks listed under the main preview's summary, by id, with their details. */
async function failedChecks(page) {
  return page.locator('.checks-bar [data-testid="check-list"] li[data-passed="false"]').evaluateAll(
    (items) => Object.fromEntries(items.map((li) => [li.dataset.check, li.textContent])),
  );
}

test('four variations of known quality are ranked by their checks, and B picks the best', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('compare-toggle').check();
  for (const model of ['judge-bare', 'judge-error', 'judge-dead', 'judge-best']) {
    await page.getByTestId('compare-models').locator(`input[value="scripted/${model}"]`).check();
  }
  await page.getByTestId('prompt-input').fill('a button that counts clicks');
  await page.getByTestId('run-button').click();
  await assertEventually(async () => (await page.getByTestId('variation-tile').count()) === 4, 'there are not four tiles');
  // The person looks at the main preview while the tiles finish (their grid is display:none): the
  // checks still see the pages laid out.
  await page.getByTestId('tab-preview').click();
  await waitForStatus(page, 'done');
  await page.waitForTimeout(2_000);
  await page.getByTestId('tab-variations').click();
  const badges = page.locator('[data-testid="tile-checks"][data-state="done"]');
  await assertEventually(async () => (await badges.count()) === 4, 'not every tile was checked', 20_000);

  // Six checks and the topic ("clicks" is met by "Clicked 0 times"; the bare page says "Click").
  const expected = { 'judge-best': ['1', '7/7'], 'judge-dead': ['2', '6/7'], 'judge-error': ['3', '5/7'], 'judge-bare': ['4', '4/6'] };
  for (const [model, [rank, score]] of Object.entries(expected)) {
    const tile = tileOf(page, model);
    assert.equal(await tile.getAttribute('data-rank'), rank, `${model} is not ranked ${rank}`);
    assert.match(await tile.getByTestId('tile-checks').textContent(), new RegExp(`✓ ${score}`), `${model} does not score ${score}`);
  }
  // Each failure says what was seen (on hover).
  const why = async (model, check) => tileOf(page, model).locator(`li[data-check="${check}"]`).textContent();
  assert.match(await why('judge-error', 'errors'), /setUpCounter is not defined/);
  assert.match(await why('judge-dead', 'buttons'), /1 of 1 buttons changed nothing when clicked: “Clicked 0 times”/);
  assert.match(await why('judge-bare', 'complete'), /not a whole HTML document/);
  assert.match(await why('judge-bare', 'has:button'), /The page has none/);
  assert.equal(await tileOf(page, 'judge-best').getByTestId('tile-best').count(), 1, 'the best tile is not marked');
  // The shown pages were not clicked by the checks (they ran in frames of their own).
  const shown = tileOf(page, 'judge-best').frameLocator('[data-testid="preview-frame"]');
  assert.equal(await shown.locator('#count').textContent(), 'Clicked 0 times', 'the checks clicked the page the person sees');

  // Best of N shows only the winner, the others one click away; B promotes it.
  await page.getByTestId('best-of').check();
  const visible = () => page.locator('[data-testid="variation-tile"]:visible').count();
  await assertEventually(async () => (await visible()) === 1, 'best of N does not hide the others');
  await page.getByTestId('show-all').click();
  await assertEventually(async () => (await visible()) === 4, 'Show all does not show the others');
  await page.getByTestId('show-all').click();
  await page.getByTestId('race-readout').click();
  await page.keyboard.press('b');
  await assertEventually(async () => (await editorText(page)).includes('<h1 id="which">Best</h1>'),
    'B did not put the best tile\'s code in the editor');
  assert.match(await tileOf(page, 'judge-best').getAttribute('class'), /promoted/);
  assert.deepEqual(pageOwn(problems), []);
});

test('a clock must keep time and a page must be about what was asked: frozen and off-topic pages rank last', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('compare-toggle').check();
  const models = ['judge-offtopic', 'judge-frozen', 'judge-stopwatch', 'judge-clock'];
  for (const model of models) {
    await page.getByTestId('compare-models').locator(`input[value="scripted/${model}"]`).check();
  }
  await page.getByTestId('prompt-input').fill('a digital clock that shows the current time');
  await page.getByTestId('run-button').click();
  const badges = page.locator('[data-testid="tile-checks"][data-state="done"]');
  await assertEventually(async () => (await badges.count()) === 4, 'not every tile was checked', 30_000);
  // complete, visible, keeps time, about what was asked, (buttons,) errors, loads.
  const scores = { 'judge-clock': '6/6', 'judge-stopwatch': '7/7', 'judge-frozen': '5/6', 'judge-offtopic': '4/6' };
  for (const [model, score] of Object.entries(scores)) {
    assert.match(await tileOf(page, model).getByTestId('tile-checks').textContent(), new RegExp(`✓ ${score}`), `${model} does not score ${score}`);
  }
  const why = async (model, check) => tileOf(page, model).locator(`li[data-check="${check}"]`).textContent();
  assert.match(await why('judge-clock', 'ticks'), /changed by itself/);
  assert.match(await why('judge-stopwatch', 'ticks'), /after “Start” was clicked/);
  assert.match(await why('judge-frozen', 'ticks'), /Nothing changed in 1.2 s, and no Start button was found/);
  assert.match(await why('judge-offtopic', 'topic'), /Nothing on the page mentions what was asked for/);
  assert.equal(await tileOf(page, 'judge-frozen').getAttribute('data-rank'), '3');
  assert.equal(await tileOf(page, 'judge-offtopic').getAttribute('data-rank'), '4');
  assert.deepEqual(pageOwn(problems), []);
});

test('best of N stops the variations still streaming once one passes every check', async () => {
  const { page, problems } = await runBestOf(['judge-best', 'judge-error@40']);
  await tileOf(page, 'judge-best').locator('[data-testid="tile-checks"][data-state="done"]').waitFor({ timeout: 15_000 });
  // The slow one (about 5 s at 40 tok/s) is stopped, not left to finish.
  await assertEventually(async () => (await tileOf(page, 'judge-error@40').getAttribute('data-status')) === 'cancelled',
    'the slower variation was not stopped once the best passed every check', 3_000);
  assert.equal(await page.locator('[data-testid="variation-tile"]:visible').count(), 1, 'the loser is still shown');
  assert.deepEqual(pageOwn(problems), []);
});

test('best of N stops the variations still writing a bounded time after the first page, and the best checked wins', async () => {
  const { page, problems } = await runBestOf(['judge-dead', 'judge-error@10']);
  // The quick page fails a check (a dead button), so nothing stops the slow one (about 20 s at 10 tok/s)
  // but the deadline: 5 s after the first page at the least.
  await tileOf(page, 'judge-dead').locator('[data-testid="tile-checks"][data-state="done"]').waitFor({ timeout: 15_000 });
  const firstChecked = Date.now();
  await assertEventually(async () => (await tileOf(page, 'judge-error@10').getAttribute('data-status')) === 'cancelled',
    'the slow variation was not stopped at the deadline', 10_000);
  const waited = Date.now() - firstChecked;
  assert.ok(waited > 3_000, `the slow variation was stopped ${waited} ms after the first page: before its deadline`);
  assert.match(await page.getByTestId('deadline-note').textContent(), /Stopped 1 variation still writing 5 s after the first page/);
  await tileOf(page, 'judge-dead').getByTestId('tile-best').waitFor({ timeout: 5_000 });
  assert.equal(await page.locator('[data-testid="variation-tile"]:visible').count(), 1, 'the stopped one is still shown');
  assert.deepEqual(pageOwn(problems), []);
});

test('a page with an error offers Fix; F sends what failed with the code, and the fixed page passes', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/judge-error', 'a button that counts clicks');
  await waitForStatus(page, 'done');
  const broken = await mainChecks(page);
  assert.equal(broken.passed, 5, `the broken page scored ${broken.text}`);
  const failed = await failedChecks(page);
  assert.deepEqual(Object.keys(failed).sort(), ['buttons', 'errors']);

  // The fix goes to the model now picked; F is the Fix key (not while typing).
  await page.getByTestId('model-picker').selectOption('scripted/judge-fix');
  await page.getByTestId('fix-page').waitFor();
  await page.getByTestId('checks-bar').click({ position: { x: 300, y: 5 } });
  await page.keyboard.press('f');
  await waitForStatus(page, 'done');
  const request = (await flint.upstream.requests()).at(-1);
  assert.equal(request.model, 'judge-fix');
  const sent = request.body.messages.map((m) => m.content).join('\n');
  assert.match(sent, /these checks failed/);
  assert.match(sent, /setUpCounter is not defined/, 'the error was not sent');
  assert.match(sent, /Buttons respond/);
  assert.match(sent, /setUpCounter\(\);/, 'the current code was not sent');

  // The proposal is reviewed as any edit; its page is checked and passes.
  await page.getByTestId('apply-review').click();
  await assertEventually(async () => !(await editorText(page)).includes('setUpCounter();'), 'the fix was not applied');
  await assertEventually(async () => (await mainChecks(page)).passed === 7, 'the fixed page does not pass every check', 15_000);
  assert.equal(await page.getByTestId('fix-page').count(), 0, 'Fix is still offered for a passing page');
  assert.deepEqual(pageOwn(problems), []);
});

test('auto-fix, when on, stops at its cap; it never follows a cancel', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('auto-fix').selectOption('2');
  await runPrompt(page, 'scripted/judge-error', 'a button that counts clicks');
  const asked = async () => (await flint.upstream.requests()).filter((r) => r.model.startsWith('judge-error')).length;
  await assertEventually(async () => (await asked()) === 3, 'auto-fix did not make its two attempts', 30_000);
  await waitForStatus(page, 'done');
  await mainChecks(page);
  await page.waitForTimeout(2_000);
  assert.equal(await asked(), 3, 'auto-fix went past its cap of 2');
  assert.match(await page.getByTestId('fix-page').textContent(), /Fix/, 'Fix is not offered once the cap is reached');

  // Slowly, with three allowed: the first attempt is cancelled with Esc, and no other follows.
  await flint.upstream.reset();
  await page.getByTestId('auto-fix').selectOption('3');
  await runPrompt(page, 'scripted/judge-error@40', 'a button that counts clicks again');
  await page.getByTestId('fix-attempt').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('fix-attempt').textContent(), /Fix attempt 1 of 3/);
  await page.keyboard.press('Escape');
  await waitForStatus(page, 'cancelled', 5_000);
  await page.waitForTimeout(3_000);
  assert.equal(await asked(), 2, 'an automatic fix followed a cancel');
  assert.deepEqual(pageOwn(problems), []);
});

test('a page that loops forever when clicked is stopped in its check, and the previews stay usable', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/judge-loop', 'a button');
  await waitForStatus(page, 'done');
  const checks = await mainChecks(page, 10_000);
  assert.ok(checks.passed < checks.total, `a hanging page passed: ${checks.text}`);
  // The checked copy's loops are guarded: the click's loop is stopped after a second, and said so.
  const failed = await failedChecks(page);
  assert.match(failed.errors ?? '', /Flint stopped a loop that ran for over 1 s/, JSON.stringify(failed));
  assert.match(failed.buttons ?? '', /changed nothing when clicked: “Go”/);
  // The page the person sees is not hung by its check frame's loop, and the app still answers: the
  // prompt takes typing and the widths switch.
  const shown = page.frameLocator('[data-testid="preview-frame"]');
  assert.equal(await shown.locator('#which').textContent({ timeout: 5_000 }), 'Loop');
  await page.getByTestId('prompt-input').fill('still here');
  assert.equal(await page.getByTestId('prompt-input').inputValue(), 'still here');
  await page.getByTestId('device-phone').click();
  await assertEventually(async () => (await page.getByTestId('preview-stack').evaluate((el) => el.getBoundingClientRect().width)) === 390,
    'the phone width did not apply');
  assert.equal(await page.locator('iframe[data-role="check"]').count(), 0, 'the hung check frame was not removed');
  assert.deepEqual(pageOwn(problems), []);
});

test('picking the second of three buttons and asking "make it red" changes only that button', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/pick-page', 'three buttons');
  await waitForStatus(page, 'done');
  await mainChecks(page);
  const before = await editorText(page);

  await page.getByTestId('pick-element').click();
  const shown = page.frameLocator('[data-testid="preview-frame"]');
  await shown.locator('#b2').click();
  await page.getByTestId('picked').waitFor({ timeout: 5_000 });
  assert.match(await page.getByTestId('picked').textContent(), /Editing <button> · line 10/);
  assert.equal(await page.evaluate(() => window.__flint.editorSelection()), '<button id="b2" type="button">Two</button>',
    'the editor does not select the picked element\'s source');
  // The page heard no click while picking, and carries no annotations.
  assert.equal(await shown.locator('[data-flint-src]').count(), 0);

  await runPrompt(page, 'scripted/pick-red', 'make it red');
  // Run may wait a moment for the count of the new prompt: the status is still "done" until then.
  await assertEventually(async () => (await flint.upstream.requests()).length === 2, 'the edit was not sent');
  await waitForStatus(page, 'done');
  const sent = (await flint.upstream.requests()).at(-1).body.messages.map((m) => m.content).join('\n');
  assert.match(sent, /Change only this <button> element \(lines 10–10 of the file\)/);
  assert.match(sent, /<button id="b2" type="button">Two<\/button>\n```\nmake it red/);
  assert.equal(await page.getByTestId('picked').count(), 0, 'the pick is kept after the request that used it');
  // The edit outside the element (the title) is reported and left unticked; the button's is kept.
  assert.match(await page.getByTestId('error-message').textContent(), /1 edit falls outside the element you picked \(lines 10–10\)/);
  await page.getByTestId('apply-review').click();
  await assertEventually(async () => (await editorText(page)).includes('style="background: red'), 'the button was not changed');
  const after = await editorText(page);
  assert.ok(after.includes('<title>Three buttons</title>'), 'the edit outside the picked element was applied');
  assert.deepEqual(after.split('\n').filter((line, i) => line !== before.split('\n')[i]),
    ['  <button id="b2" type="button" style="background: red; color: white">Two</button>'], 'more than the button changed');
  assert.deepEqual(pageOwn(problems), []);
});

test('Pick on a tile promotes it and picks in its page', async () => {
  await flint.upstream.reset();
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await page.getByTestId('compare-toggle').check();
  for (const model of ['pick-page', 'judge-best']) {
    await page.getByTestId('compare-models').locator(`input[value="scripted/${model}"]`).check();
  }
  // The long list of models scrolls in its box: the workspace keeps most of the window.
  const workspace = await page.locator('.workspace').boundingBox();
  assert.ok(workspace.height >= 450, `the compare list left the workspace ${workspace.height} px of 900`);
  await page.getByTestId('prompt-input').fill('three buttons');
  await page.getByTestId('run-button').click();
  await waitForStatus(page, 'done');
  await tileOf(page, 'pick-page').getByTestId('tile-pick').click();
  // The main preview shows the promoted page, already in pick mode.
  await assertEventually(async () => /Picking/.test(await page.getByTestId('pick-element').textContent()),
    'pick mode did not start once the promoted page showed');
  await page.getByTestId('preview-stack').frameLocator('[data-testid="preview-frame"]').locator('#b3').click();
  await page.getByTestId('picked').waitFor({ timeout: 5_000 });
  assert.equal(await page.evaluate(() => window.__flint.editorSelection()), '<button id="b3" type="button">Three</button>');
  assert.deepEqual(pageOwn(problems), []);
});
