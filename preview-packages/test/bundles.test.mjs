// The built modules work as a preview uses them: each imports only what the manifest maps, React
// is one instance across react, react-dom and the JSX runtimes, and the manifest says the truth.
//
//   FLINT_PREVIEW_VENDOR=target/preview-vendor node --test preview-packages/test/
//
// (`cargo xtask setup preview-packages` builds the folder and runs this.)

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

const dir = path.resolve(process.env.FLINT_PREVIEW_VENDOR ?? 'target/preview-vendor');
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
register('./loader.mjs', import.meta.url, { data: { dir, imports: manifest.imports } });

// React's browser builds schedule work over a MessageChannel; in Node an open port keeps the
// process (and so `node --test`) alive for ever. The page has no such problem: unref the ports.
const { MessageChannel: Channel } = globalThis;
globalThis.MessageChannel = class extends Channel {
  constructor() {
    super();
    for (const port of [this.port1, this.port2]) {
      let handler = null;
      port.on('message', (data) => handler?.({ data }));
      port.unref();
      Object.defineProperty(port, 'onmessage', { get: () => handler, set: (fn) => (handler = fn) });
    }
  }
};

const fileOf = (url) => path.join(dir, url.slice('/vendor/'.length));

test('the manifest lists every file with its size and hash, at versioned paths', () => {
  assert.equal(manifest.format, 1);
  for (const url of [...Object.values(manifest.imports), manifest.tailwind]) {
    assert.ok(manifest.files[url], `${url} is not in files`);
  }
  for (const [url, { bytes, integrity }] of Object.entries(manifest.files)) {
    const [, name, version] = url.match(/^\/vendor\/((?:@[^/]+\/)?[^/@]+)@([^/]+)\//) ?? [];
    assert.equal(manifest.packages[name], version, `${url} is not at its package's version`);
    const body = fs.readFileSync(fileOf(url));
    assert.equal(body.length, bytes, url);
    assert.equal(integrity, `sha384-${createHash('sha384').update(body).digest('base64')}`, url);
  }
  for (const spec of ['react', 'react/jsx-runtime', 'react/jsx-dev-runtime', 'react-dom', 'react-dom/client']) {
    assert.ok(manifest.imports[spec], `${spec} is missing`);
  }
  assert.match(manifest.tailwind, /^\/vendor\/@tailwindcss\/browser@[\d.]+\/index\.global\.js$/);
});

test('react-dom renders hooks of the one React the page imports', async () => {
  const React = await import('react');
  const { renderToString } = await import('react-dom/server');
  const { jsxDEV } = await import('react/jsx-dev-runtime');
  const { jsx } = await import('react/jsx-runtime');
  const Label = React.createContext('hi');
  // Hooks read the dispatcher react-dom sets on React's internals: with a second copy of React in
  // react-dom's bundle this throws "Invalid hook call".
  function App() {
    const [text] = React.useState(React.useContext(Label));
    return jsxDEV('div', { children: text }, undefined, false, { fileName: 'App.tsx', lineNumber: 1, columnNumber: 1 }, this);
  }
  assert.equal(renderToString(jsx(App, {})), '<div>hi</div>');
  assert.equal(renderToString(React.createElement(App)), '<div>hi</div>');
  assert.equal(typeof React.default.useState, 'function', 'the default export is the whole module');
});

test('the development builds are served', async () => {
  const { jsxDEV } = await import('react/jsx-dev-runtime');
  assert.equal(typeof jsxDEV, 'function', "React's production jsx-dev-runtime has no jsxDEV");
  const text = fs.readFileSync(fileOf(manifest.imports['react-dom/client']), 'utf8');
  assert.ok(!text.includes('Minified React error'), 'react-dom/client is a production build');
});

test('every module loads with only the mapped imports, and libraries share React', async () => {
  // Browser-only code may still need a DOM at import time; none of the set does today.
  for (const spec of Object.keys(manifest.imports)) {
    await import(spec);
  }
  const { create } = await import('zustand');
  const { renderToString } = await import('react-dom/server');
  const React = await import('react');
  const { Heart } = await import('lucide-react');
  const useCount = create(() => ({ count: 3 }));
  function Counter() {
    const count = useCount((s) => s.count);
    return React.createElement('p', null, count, React.createElement(Heart, { size: 8 }));
  }
  const html = renderToString(React.createElement(Counter));
  assert.match(html, /^<p>3<svg[^>]*lucide-heart/);
});
