// The vendored modules in Chromium, loaded as a preview loads them: from a document with an opaque
// origin (`preview.html`, which the gateway serves as `sandbox allow-scripts`), through an import
// map made from the gateway's `/vendor/manifest.json`. React renders and re-renders with hooks
// through react-dom/client (one React), Tailwind's script styles a class, a lucide icon and
// motion render, and the same document can neither fetch nor import `/api/models`.
//
//   FLINT_GATEWAY_BIN=target/release/flint-gateway FLINT_PREVIEW_VENDOR=target/preview-vendor \
//     node --test preview-packages/test/browser.test.mjs
//
// (`cargo xtask test` runs it after building the gateway.) The gateway is given a `dist/` of its
// own holding only that `preview.html`: the app itself is not needed.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

const vendorDir = path.resolve(process.env.FLINT_PREVIEW_VENDOR ?? 'target/preview-vendor');
const bin = process.env.FLINT_GATEWAY_BIN ?? 'target/release/flint-gateway';

const PAGE = `
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { jsxDEV } from 'react/jsx-dev-runtime';
import { Heart } from 'lucide-react';
import { motion } from 'motion/react';
import { create } from 'zustand';
import { format } from 'date-fns';
import clsx from 'clsx';

const useStore = create(() => ({ label: 'n' }));
const at = { fileName: 'App.tsx', lineNumber: 1, columnNumber: 1 };
function App() {
  const [n, setN] = useState(1);
  const label = useStore((s) => s.label);
  useEffect(() => setN(2), []);
  return jsxDEV('p', { id: 'out', className: clsx('text-red-500', n > 1 && 'font-bold'), children: [
    label + '=' + n + ' ' + format(new Date(2024, 0, 2), 'yyyy-MM-dd'),
    jsxDEV(Heart, { size: 12 }, undefined, false, at, this),
    jsxDEV(motion.span, { id: 'moving', animate: { opacity: 1 } }, undefined, false, at, this),
  ] }, undefined, true, at, this);
}
createRoot(document.getElementById('root')).render(jsxDEV(App, {}, undefined, false, at, this));
try {
  const answer = await fetch('/api/models');
  window.apiAnswer = 'read: ' + answer.status;
} catch {
  window.apiAnswer = 'blocked';
}
// A project file importing a gateway route as a module.
import('/api/models').then(() => (window.importAnswer = 'loaded'), () => (window.importAnswer = 'blocked'));
`;

let gateway;
let url;
let browser;
let dist;

async function freePort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((ok) => server.once('listening', ok));
  const { port } = server.address();
  await new Promise((ok) => server.close(ok));
  return port;
}

before(async () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(vendorDir, 'manifest.json'), 'utf8'));
  dist = fs.mkdtempSync(path.join(os.tmpdir(), 'flint-vendor-browser-'));
  const map = JSON.stringify({ imports: manifest.imports });
  fs.writeFileSync(
    path.join(dist, 'preview.html'),
    `<!DOCTYPE html><html><head><script type="importmap">${map}</script>` +
      `<script src="${manifest.tailwind}"></script></head>` +
      `<body><div id="root"></div><script type="module">${PAGE}</script></body></html>`,
  );
  const port = await freePort();
  const config = path.join(dist, 'flint.toml');
  fs.writeFileSync(
    config,
    `[server]\nlisten = "127.0.0.1:${port}"\ndist = ${JSON.stringify(dist)}\n` +
      `[share]\ndatabase = ${JSON.stringify(path.join(dist, 'shares.sqlite3'))}\n` +
      `[auth]\ndatabase = ${JSON.stringify(path.join(dist, 'auth.sqlite3'))}\n` +
      `[discovery]\nenabled = false\n[preview]\nvendor_dir = ${JSON.stringify(vendorDir)}\n` +
      `[[providers]]\nkind = "openai"\nname = "none"\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "x"\nmodels = [{ id = "m" }]\n`,
  );
  gateway = spawn(bin, ['--config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (tries > 300 || gateway.exitCode !== null) throw new Error(`the gateway (${bin}) did not start`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  gateway?.kill('SIGTERM');
  if (dist) fs.rmSync(dist, { recursive: true, force: true });
});

test('a sandboxed preview renders React with the vendored modules and cannot read the API', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const failed = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  await page.goto(`${url}/preview.html`);
  assert.equal(await page.evaluate(() => self.origin), 'null', 'the preview has an opaque origin');
  await page.waitForFunction(() => document.getElementById('out')?.textContent.startsWith('n=2'), null, { timeout: 15_000 });
  assert.equal(await page.textContent('#out'), 'n=2 2024-01-02');
  assert.ok(await page.$('#out svg.lucide-heart'), 'the lucide icon rendered');
  assert.ok(await page.$('#moving'), 'motion rendered');
  // Tailwind's red-500 and bold, computed by its browser script with nothing fetched.
  const style = await page.$eval('#out', (e) => [getComputedStyle(e).color, getComputedStyle(e).fontWeight]);
  assert.notEqual(style[0], 'rgb(0, 0, 0)', `text-red-500 is not applied: ${style[0]}`);
  assert.equal(style[1], '700');
  await page.waitForFunction(() => window.apiAnswer, null, { timeout: 5_000 });
  assert.equal(await page.evaluate(() => window.apiAnswer), 'blocked');
  await page.waitForFunction(() => window.importAnswer, null, { timeout: 5_000 });
  assert.equal(await page.evaluate(() => window.importAnswer), 'blocked', "import '/api/models' loaded");
  assert.ok(requests.every((r) => r.startsWith(url)), `only the gateway was asked: ${requests}`);
  // The refused API call is the only request that failed, and the only error the page logs.
  assert.deepEqual(failed, [`${url}/api/models`, `${url}/api/models`]);
  assert.deepEqual(problems.filter((p) => !p.includes('net::ERR_FAILED') && !p.includes('/api/models')), []);
  await page.close();
});
