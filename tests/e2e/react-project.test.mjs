// A React project is files (issue 27, item 1): its files get tabs above the editor, a hand edit of
// any file rebuilds the page, the project is kept whole (the saved session, versions, share links),
// and an edit prompt sends every file and applies blocks that name their file, a new file included;
// its review is per file (item 6).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, editorText, openFlint, runPrompt, savedSession, seriousViolations, useFlint, waitForStatus,
} from './harness.mjs';

const flint = useFlint({
  models: ['react-files@2000', 'react-files-edit@2000', 'react-three@2000', 'react-three-edit@2000', 'react-named@2000'],
});

const preview = (page) => page.frameLocator('[data-testid="preview-frame"]');
const tabs = (page) => page.getByTestId('file-tab');

async function tabNames(page) {
  return (await tabs(page).allTextContents()).map((t) => t.trim());
}

async function selectedTab(page) {
  return (await page.locator('[data-testid="file-tab"][aria-selected="true"]').textContent()).trim();
}

test('a project gets a tab per file; a hand edit of any file rebuilds it; a reload keeps every file', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-files@2000', 'a React todo app');
  await waitForStatus(page, 'done');
  await preview(page).getByRole('heading', { name: 'My todos' }).waitFor({ timeout: 10_000 });
  await tabs(page).first().waitFor({ timeout: 5_000 });
  assert.deepEqual(await tabNames(page), [
    'App.tsx', 'Header.tsx · components', 'TodoList.tsx · components', 'TodoItem.tsx · components', 'index.css',
  ]);
  assert.equal(await selectedTab(page), 'App.tsx');
  assert.match(await editorText(page), /^import TodoList from '\.\/components\/TodoList';/, 'the editor shows more than App.tsx');

  // A click and the arrow keys move between files; only the selected tab is a tab stop.
  await tabs(page).nth(1).click();
  await assertEventually(async () => /export function Header/.test(await editorText(page)), 'Header.tsx is not shown');
  assert.equal(await tabs(page).nth(2).getAttribute('tabindex'), '-1');
  await tabs(page).nth(1).press('ArrowRight');
  await assertEventually(async () => (await selectedTab(page)) === 'TodoList.tsx · components', 'ArrowRight did not move');
  assert.match(await editorText(page), /export default function TodoList/);
  await page.keyboard.press('End');
  assert.equal(await selectedTab(page), 'index.css');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'index.css', 'the focus did not follow');

  // A hand edit of a component that is not the main file rebuilds the page with it.
  await tabs(page).nth(1).click();
  await assertEventually(async () => /export function Header/.test(await editorText(page)), 'Header.tsx is not back');
  await page.getByTestId('editor').locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\nexport const Note = 1;');
  const heading = preview(page).getByRole('heading', { name: 'My todos' });
  await assertEventually(async () => (await savedSession(page))?.generation?.code?.includes('export const Note = 1;'),
    'the edit of Header.tsx was not kept in the project');
  await heading.waitFor({ timeout: 10_000 });
  const saved = (await savedSession(page)).generation.code;
  assert.match(saved, /^```tsx App\.tsx\n/, 'the saved code is not the whole project');
  for (const path of ['components/Header.tsx', 'components/TodoList.tsx', 'components/TodoItem.tsx', 'index.css']) {
    assert.ok(saved.includes(` ${path}\n`), `${path} was not saved`);
  }

  // A reload restores every file, held still until Run.
  await page.reload();
  await tabs(page).first().waitFor({ timeout: 15_000 });
  assert.equal(await tabs(page).count(), 5);
  await tabs(page).nth(1).click();
  await assertEventually(async () => /export const Note = 1;/.test(await editorText(page)), 'the edit did not survive');
  await page.getByTestId('run-held-page').click();
  await preview(page).getByRole('heading', { name: 'My todos' }).waitFor({ timeout: 10_000 });
  assert.deepEqual(await seriousViolations(page), []);
  assert.deepEqual(problems, []);
});

test('files named as models name them (a bold line, a heading, a first-line comment, a sentence) keep their paths', async () => {
  // tests/fixtures/react-named.md names no file on its fences: without the names its relative
  // imports would find nothing and the page would not render.
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-named@2000', 'a React counter');
  await waitForStatus(page, 'done');
  const frame = preview(page);
  await frame.getByRole('heading', { name: 'Named files' }).waitFor({ timeout: 10_000 });
  await frame.getByRole('button', { name: 'Clicked 3 times' }).click();
  await frame.getByRole('button', { name: 'Clicked 4 times' }).waitFor({ timeout: 5_000 });
  assert.equal(await frame.getByRole('heading').evaluate((h) => getComputedStyle(h).color), 'rgb(20, 110, 60)',
    'index.css was not imported by its name');
  assert.deepEqual(await tabNames(page), ['App.tsx · src', 'Header.tsx · src/components', 'Counter.tsx · src/components', 'index.css · src']);
  assert.deepEqual(problems, []);
});

test('an edit prompt sends every file and applies blocks that name their file, a new file included', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-files@2000', 'a React todo app');
  await waitForStatus(page, 'done');
  await tabs(page).first().waitFor({ timeout: 5_000 });
  await runPrompt(page, 'scripted/react-files-edit@2000', 'add an exclamation mark and a footer');
  await waitForStatus(page, 'done');
  const messages = (await flint.upstream.requests()).at(-1).body.messages;
  assert.match(messages[0].content, /each under a line with the path of the file it changes/);
  assert.match(messages.at(-1).content, /^The current files:\n```tsx App\.tsx\n[\s\S]*```css index\.css\n[\s\S]*Instruction: add an/);

  const review = page.getByTestId('diff-review');
  await review.waitFor({ timeout: 10_000 });
  assert.equal(await page.getByTestId('failed-edit').count(), 0, 'a block naming its file did not apply');
  await page.getByTestId('apply-review').click();
  await review.waitFor({ state: 'detached', timeout: 5_000 });
  const frame = preview(page);
  await frame.getByRole('heading', { name: 'My todos!' }).waitFor({ timeout: 10_000 });
  await frame.getByTestId('footer').filter({ hasText: 'Made with Flint' }).waitFor({ timeout: 5_000 });
  assert.deepEqual((await tabNames(page)).at(-1), 'Footer.tsx · components', 'the new file has no tab');
  assert.deepEqual(problems, []);
});

/** The text of the file at `path` in a project's text. */
function fileOf(code, path) {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return code.match(new RegExp(`\`\`\`\\w+ ${escaped}\n([\\s\\S]*?)\`\`\`\n`))?.[1];
}

test('an edit of two files of a project is reviewed file by file, and one file can be kept alone', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-three@2000', 'a React shopping list');
  await waitForStatus(page, 'done');
  await tabs(page).first().waitFor({ timeout: 5_000 });
  await assertEventually(async () => (await savedSession(page))?.generation?.code?.includes('Shopping list'),
    'the project was not saved');
  const before = (await savedSession(page)).generation.code;

  await runPrompt(page, 'scripted/react-three-edit@2000', 'an exclamation mark, and four things');
  await waitForStatus(page, 'done');
  const review = page.getByTestId('diff-review');
  await review.waitFor({ timeout: 10_000 });
  // One group per changed file, in the project's order; index.css, untouched, has none.
  assert.deepEqual((await review.getByTestId('hunk-file-heading').allTextContents()).map((t) => t.trim()),
    ['App.tsx · 1 change', 'components/Header.tsx · 1 change']);
  const group = (path) => review.locator(`[data-testid="hunk-file"][data-path="${path}"]`);
  assert.match(await group('App.tsx').getByTestId('hunk').textContent(), /line 8/, 'not a line of App.tsx');
  assert.match(await group('components/Header.tsx').getByTestId('hunk').textContent(), /line 4/);
  assert.doesNotMatch(await review.locator('.hunk-list').textContent(), /```/, 'a fence line is shown');
  assert.deepEqual(await seriousViolations(page), []);

  // Reject App.tsx's change with its named button, from the keyboard.
  await review.getByRole('button', { name: 'Reject the change in App.tsx', exact: true }).focus();
  await page.keyboard.press('Enter');
  await assertEventually(async () => /1 of 2 changes kept/.test(await review.getByTestId('review-count').textContent()),
    'rejecting App.tsx did not untick its change');
  assert.equal(await group('App.tsx').getByTestId('hunk-keep').isChecked(), false);
  assert.equal(await group('components/Header.tsx').getByTestId('hunk-keep').isChecked(), true);
  await page.getByTestId('apply-review').click();
  await review.waitFor({ state: 'detached', timeout: 5_000 });

  const frame = preview(page);
  // The result runs in a fresh frame swapped in once it has loaded: until then the page the review
  // showed (every change kept) may still be in front.
  await assertEventually(async () => (await frame.getByTestId('intro').textContent().catch(() => '')).trim()
    === 'Three things to buy.', 'App.tsx changed in the preview', 15_000);
  await frame.getByRole('heading', { name: 'Shopping list!', exact: true }).waitFor({ timeout: 10_000 });
  await assertEventually(async () => (await savedSession(page))?.generation?.code?.includes('{title}!</h1>'),
    'the kept change of Header.tsx was not saved');
  const after = (await savedSession(page)).generation.code;
  assert.equal(fileOf(after, 'App.tsx'), fileOf(before, 'App.tsx'), 'App.tsx is not byte-equal');
  assert.equal(fileOf(after, 'index.css'), fileOf(before, 'index.css'));
  assert.ok(fileOf(before, 'App.tsx'), 'App.tsx was not found in the saved project');
  assert.deepEqual(problems, []);
});

test('a shared link with the code carries every file of the project', async () => {
  const maker = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(maker.page, 'scripted/react-files@2000', 'a React todo app');
  await waitForStatus(maker.page, 'done');
  await tabs(maker.page).first().waitFor({ timeout: 5_000 });
  await maker.page.getByTestId('share-include-code').check();
  await maker.page.getByTestId('share-button').click();
  const url = new URL(await maker.page.getByTestId('share-link').inputValue());
  await maker.context.close();

  const { page, problems } = await openFlint(flint.browser, flint.gateway.url, url.pathname + url.hash);
  await tabs(page).first().waitFor({ timeout: 15_000 });
  assert.equal(await tabs(page).count(), 5);
  await page.getByTestId('run-held-page').click();
  await preview(page).getByRole('heading', { name: 'My todos' }).waitFor({ timeout: 10_000 });
  assert.deepEqual(problems, []);
});

test('Pick on a React element selects its JSX in the right file and holds the edit to it', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(page, 'scripted/react-files@2000', 'a React todo app');
  await waitForStatus(page, 'done');
  const frame = preview(page);
  await frame.getByRole('heading', { name: 'My todos' }).waitFor({ timeout: 10_000 });
  await page.getByTestId('pick-element').click();
  await frame.getByRole('heading', { name: 'My todos' }).click();
  await page.getByTestId('picked').waitFor({ timeout: 5_000 });
  assert.match(await page.getByTestId('picked').textContent(), /Editing <h1> · components\/Header\.tsx line 4/);
  assert.equal(await selectedTab(page), 'Header.tsx · components', 'the editor did not open the element\'s file');
  assert.equal(await page.evaluate(() => window.__flint.editorSelection()),
    '<h1 className="text-3xl font-semibold text-emerald-700">{title}</h1>');

  await runPrompt(page, 'scripted/react-files-edit@2000', 'add an exclamation mark');
  await waitForStatus(page, 'done');
  const last = (await flint.upstream.requests()).at(-1).body.messages.at(-1).content;
  assert.match(last, /Change only this <h1> element \(lines 4–4 of components\/Header\.tsx\)/);
  assert.match(last, /```tsx\n<h1 className="text-3xl/);
  // The blocks that change App.tsx fall outside the element: left unticked, and said.
  await page.getByTestId('diff-review').waitFor({ timeout: 10_000 });
  assert.match((await page.getByTestId('error-message').allTextContents()).join(' '), /outside the element you picked/);
  assert.deepEqual(problems, []);
});
