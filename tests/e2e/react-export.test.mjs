// A React project leaves Flint as a Vite project (a zip to `npm install && npm run dev`) and as one
// .html file that runs from disk with no network (issue 27 item 6).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { launchBrowser, openFlint, runPrompt, seriousViolations, useFlint, waitForStatus } from './harness.mjs';
import { readZip } from './zip.mjs';

const flint = useFlint({ models: ['react-files@2000'] });

async function todoApp() {
  const opened = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(opened.page, 'scripted/react-files@2000', 'a React todo app');
  await waitForStatus(opened.page, 'done');
  await opened.page.frameLocator('[data-testid="preview-frame"]').getByRole('heading', { name: 'My todos' })
    .waitFor({ timeout: 10_000 });
  return opened;
}

test('a React project downloads as a Vite project, from the keyboard', async () => {
  const { page, context, problems } = await todoApp();
  // The export menu's own controls (the rest of the page after a run is a11y.test.mjs's).
  const menu = (await seriousViolations(page)).filter((v) => /export/.test(v));
  assert.deepEqual(menu, [], 'axe-core: the export menu of a React project');
  const button = page.getByTestId('export-vite');
  assert.equal(await button.textContent(), 'Vite .zip');
  await button.focus();
  const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  assert.equal(download.suggestedFilename(), 'a-react-todo-app-vite.zip');
  const files = readZip(readFileSync(await download.path()));
  assert.deepEqual(Object.keys(files), [
    'package.json', 'README.md', 'index.html', 'vite.config.ts', 'tsconfig.json', '.gitignore',
    'src/main.tsx', 'src/tailwind.css',
    'src/App.tsx', 'src/components/Header.tsx', 'src/components/TodoList.tsx', 'src/components/TodoItem.tsx',
    'src/index.css',
  ]);
  const pkg = JSON.parse(files['package.json']);
  assert.deepEqual(Object.keys(pkg.dependencies), ['clsx', 'react', 'react-dom']);
  assert.equal(pkg.devDependencies.vite, '8.3.8');
  assert.match(files['src/main.tsx'], /import App from "\.\/App\.tsx";/);
  assert.match(files['src/App.tsx'], /<Header title="My todos" \/>/);
  assert.match(await page.getByTestId('export-note').textContent(), /Saved a-react-todo-app-vite\.zip/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a React project downloads as one .html that runs from disk with the network cut off', async () => {
  const { page, context, problems } = await todoApp();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-offline').click()]);
  assert.equal(download.suggestedFilename(), 'a-react-todo-app-offline.html');
  const path = join(mkdtempSync(join(tmpdir(), 'flint-offline-')), download.suggestedFilename());
  await download.saveAs(path);
  const html = readFileSync(path, 'utf8');
  assert.ok(!html.includes('/vendor/'), 'the page still loads something from the gateway');
  console.log(`offline page: ${statSync(path).size} bytes`);
  await context.close();

  // A browser of its own, every request but the file itself refused.
  const browser = await launchBrowser();
  const offline = await browser.newContext();
  const asked = [];
  await offline.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    asked.push(url);
    return route.abort();
  });
  const tab = await offline.newPage();
  const errors = [];
  tab.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  tab.on('pageerror', (e) => errors.push(e.message));
  await tab.goto(`file://${path}`);
  await tab.getByRole('heading', { name: 'My todos' }).waitFor({ timeout: 15_000 });
  await tab.getByLabel('New todo').fill('Ship it');
  await tab.getByRole('button', { name: 'Add' }).click();
  await tab.getByText('Ship it').waitFor({ timeout: 5_000 });
  const size = await tab.getByRole('heading', { name: 'My todos' }).evaluate((h) => getComputedStyle(h).fontSize);
  assert.equal(size, '30px', 'Tailwind (text-3xl) did not style the page');
  const border = await tab.locator('.app').evaluate((d) => getComputedStyle(d).borderTopColor);
  assert.equal(border, 'rgb(200, 40, 40)', 'index.css was not applied');
  assert.deepEqual(asked, [], 'the page asked the network for something');
  assert.deepEqual(errors, [], 'console errors');
  assert.deepEqual(problems, []);
  await browser.close();
});
