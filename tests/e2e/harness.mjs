// Starts the scripted upstream, a gateway configured against it (and the embedded model), and a
// headless Chromium, so each end-to-end test acts on Flint as a person would.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '../..');
const bin = (env, name) => process.env[env] ?? join(ROOT, 'target/release', name);

export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

function collect(proc, name) {
  const lines = [];
  for (const stream of [proc.stdout, proc.stderr]) {
    createInterface({ input: stream }).on('line', (l) => {
      lines.push(l);
      if (process.env.FLINT_E2E_VERBOSE) console.error(`[${name}] ${l}`);
    });
  }
  return lines;
}

/** The scripted OpenAI-compatible upstream (a test double, never a product default). */
export async function startUpstream() {
  const proc = spawn(bin('FLINT_UPSTREAM_BIN', 'flint-scripted-upstream'),
    ['--listen', '127.0.0.1:0', '--fixtures', join(ROOT, 'tests/fixtures')],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise((ok, fail) => {
    const rl = createInterface({ input: proc.stdout });
    rl.once('line', (line) => {
      const m = /listening (\S+)/.exec(line);
      m ? ok(m[1]) : fail(new Error(`scripted upstream said: ${line}`));
    });
    proc.once('exit', (code) => fail(new Error(`scripted upstream exited with ${code}`)));
  });
  const origin = new URL(url).origin;
  return {
    url,
    proc,
    async requests() {
      return (await fetch(`${origin}/__requests`)).json();
    },
    async reset() {
      await fetch(`${origin}/__reset`, { method: 'POST' });
    },
    stop() { proc.kill('SIGTERM'); },
  };
}

/** A `models` entry: an id, or `{ id, context_window, reasoning, vision, price: { input, output } }`. */
function modelToml(model) {
  const { id, context_window: window, reasoning, vision, price } = typeof model === 'string' ? { id: model } : model;
  const fields = [`id = ${JSON.stringify(id)}`];
  if (window) fields.push(`context_window = ${window}`);
  if (reasoning !== undefined) fields.push(`reasoning = ${reasoning}`);
  if (vision !== undefined) fields.push(`vision = ${vision}`);
  if (price) fields.push(`price = { input = ${price.input.toFixed(4)}, output = ${price.output.toFixed(4)} }`);
  return `{ ${fields.join(', ')} },`;
}

/** A gateway serving the built app, with the scripted upstream and the embedded model configured. */
/** `gatewayBin` and `dist` default to the build under test; benchmarks pass a baseline's. */
/** `toml` is appended to the file (profiles, say). */
/** `scripted` adds lines to the scripted provider's table (`allow_user_keys = true`, say). */
export async function startGateway({ upstreamUrl, port, models = [], args = [], gatewayBin, dist, toml = '', scripted = '' }) {
  port ??= await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'flint-e2e-'));
  const config = join(dir, 'flint.toml');
  writeFileSync(config, `
default_model = "scripted/counter@300"

[server]
listen = "127.0.0.1:${port}"
dist = ${JSON.stringify(dist ?? process.env.FLINT_DIST ?? join(ROOT, 'dist'))}

[share]
database = ${JSON.stringify(join(dir, 'shares.sqlite3'))}

[[providers]]
kind = "openai"
name = "scripted"
base_url = ${JSON.stringify(upstreamUrl)}
api_key = "sk-e2e-never-shown"
${scripted}
models = [
  { id = "counter@300" }, { id = "counter@60" }, { id = "hostile@2000" },
  { id = "fail-500" }, { id = "fail-429" }, { id = "drop-midway" },
  ${models.map(modelToml).join(' ')}
]

[[providers]]
kind = "local"

${toml}
`);
  const proc = spawn(gatewayBin ?? bin('FLINT_GATEWAY_BIN', 'flint-gateway'), ['--config', config, ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'info' } });
  const log = collect(proc, 'gateway');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`gateway exited (${proc.exitCode}):\n${log.join('\n')}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`gateway did not answer /healthz:\n${log.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url, port, proc, log, config, dir,
    stop() {
      return new Promise((ok) => {
        if (proc.exitCode !== null) return ok();
        proc.once('exit', ok);
        proc.kill('SIGTERM');
      });
    },
  };
}

export async function launchBrowser() {
  // (`FLINT_CHROMIUM_EXTRA`: more switches, space-separated, for a benchmark's comparison.)
  const extra = process.env.FLINT_CHROMIUM_EXTRA?.split(' ').filter(Boolean) ?? [];
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...CHROMIUM_ARGS, ...extra] });
}

/**
 * Opens Flint in a fresh context (its own empty storage) and waits until its socket is connected.
 * `initScript` runs in the page before Flint does, on every load.
 */
export async function openFlint(browser, gatewayUrl, path = '/', { initScript } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  if (initScript) await page.addInitScript(initScript);
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(gatewayUrl + path);
  await waitConnected(page);
  return { page, context, problems };
}

/** Waits until the page's socket to the gateway is connected (after a load or reload). */
export async function waitConnected(page) {
  await page.getByTestId('connection-status').filter({ hasText: /\bconnected\b/ }).waitFor({ timeout: 20_000 });
}

/** Picks a model, types the prompt and runs it with Ctrl+Enter. */
export async function runPrompt(page, model, prompt) {
  await page.getByTestId('model-picker').selectOption(model);
  await page.getByTestId('prompt-input').fill(prompt);
  await page.getByTestId('prompt-input').press('Control+Enter');
}

export async function editorText(page) {
  return page.evaluate(() => window.__flint?.editorText() ?? '');
}

export async function streamStatus(page) {
  return (await page.getByTestId('stream-status').textContent()).trim();
}

export async function waitForStatus(page, status, timeout = 30_000) {
  try {
    await page.getByTestId('stream-status').filter({ hasText: new RegExp(`^\\s*${status}\\s*$`) })
      .waitFor({ timeout });
  } catch (err) {
    // Say where the page stood, so a failure in CI can be told apart from a slow machine.
    const now = await streamStatus(page).catch(() => '?');
    const error = await page.getByTestId('error-message').allTextContents().catch(() => []);
    const connection = await page.getByTestId('connection-status').textContent().catch(() => '?');
    const code = (await editorText(page).catch(() => '')).length;
    throw new Error(`status never became "${status}" in ${timeout} ms: it is "${now}", connection "${connection.trim()}", `
      + `editor ${code} chars, error ${JSON.stringify(error)}`, { cause: err });
  }
}

/** Polls `check` until it is true; fails with `message` after `timeout` ms. */
export async function assertEventually(check, message, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(message);
}

/**
 * The fixture every end-to-end file shares: a scripted upstream, a gateway on it (with `models` added)
 * and a headless Chromium, started before the file's tests and stopped after them. A test may put a
 * restarted gateway in `flint.gateway`; whichever is there at the end is stopped.
 */
export function useFlint({ models = [], toml = '', scripted = '' } = {}) {
  const flint = { upstream: null, gateway: null, browser: null };
  before(async () => {
    flint.upstream = await startUpstream();
    flint.gateway = await startGateway({ upstreamUrl: flint.upstream.url, models, toml, scripted });
    flint.browser = await launchBrowser();
  });
  after(async () => {
    await flint.browser?.close();
    await flint.gateway?.stop();
    flint.upstream?.stop();
  });
  return flint;
}

/** The session Flint saved in this page's IndexedDB, or null; never creates the database. */
export function savedSession(page) {
  return page.evaluate(() => new Promise((resolve) => {
    const open = indexedDB.open('flint');
    open.onupgradeneeded = () => open.transaction.abort();
    open.onerror = () => resolve(null);
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains('session')) {
        db.close();
        resolve(null);
        return;
      }
      const get = db.transaction('session').objectStore('session').get('current');
      get.onsuccess = () => {
        db.close();
        resolve(typeof get.result === 'string' ? JSON.parse(get.result) : null);
      };
      get.onerror = () => {
        db.close();
        resolve(null);
      };
    };
  }));
}

/**
 * A TCP proxy in front of `targetPort` that can cut every connection through it at once, as a
 * dropped network would (no WebSocket close). Load the page through it (`url`) so its origin is
 * the proxy's and its socket to the gateway runs through it.
 */
export async function startCutProxy(targetPort) {
  const { createServer, connect } = await import('node:net');
  const open = new Set();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const [a, b] of [[client, upstream], [upstream, client]]) {
      open.add(a);
      a.on('close', () => { open.delete(a); b.destroy(); });
      a.on('error', () => b.destroy());
      a.pipe(b);
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    /** Connections cut so far. */
    cuts: 0,
    cut() {
      this.cuts += open.size;
      for (const socket of [...open]) socket.destroy();
    },
    stop() {
      this.cut();
      return new Promise((ok) => server.close(ok));
    },
  };
}

/** The longest gap between the app's animation frames over `ms`, or Infinity when it does not answer. */
export async function worstFrameGap(page, ms) {
  const probe = page.evaluate(async (ms) => {
    let worst = 0;
    let last = performance.now();
    const end = last + ms;
    while (performance.now() < end) {
      await new Promise((r) => requestAnimationFrame(r));
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }
    return worst;
  }, ms);
  const timeout = new Promise((r) => setTimeout(() => r(Infinity), ms + 10_000));
  return Promise.race([probe, timeout]);
}

/**
 * axe-core's serious and critical violations on the page as it is now, one line each (rule, the
 * elements, axe's summary). axe is evaluated through the test driver, which the page's CSP does not
 * govern, so nothing in the app is loosened for the test; frames are the generated pages' own
 * business (opaque origins) and are not audited.
 */
export async function seriousViolations(page) {
  const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(`${source}\n;0`);
  const result = await page.evaluate(() => window.axe.run(document, {
    resultTypes: ['violations'],
    iframes: false,
  }));
  return result.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')} — ${v.help}`);
}

/** A 320 × 200 mock (a blue header band 40 px high on white) as PNG bytes, drawn by the page's canvas. */
export async function mockPng(page) {
  const bytes = await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(320, 200);
    const g = canvas.getContext('2d');
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, 320, 200);
    g.fillStyle = '#1e40af';
    g.fillRect(0, 0, 320, 40);
    const blob = await canvas.convertToBlob({ type: 'image/png' });
    return Array.from(new Uint8Array(await blob.arrayBuffer()));
  });
  return Buffer.from(bytes);
}
