// Builds the modules generated previews import (`import { useState } from 'react'`) into browser ES
// modules at versioned paths, plus the manifest the preview's import map is made from. Run by
// `cargo xtask setup preview-packages` after `npm ci` here; nothing is fetched from a CDN.
//
//   node build.mjs --out DIR [--extra-dir DIR --extra name@version …]
//
// - One file per entry (`react`, `react/jsx-dev-runtime`, `react-dom/client`, …). Every other
//   vendored entry stays an import (resolved by the preview's import map), so there is one React
//   for react-dom, recharts and the page alike: a second copy breaks hooks.
// - react and react-dom ship CommonJS only. Each such entry gets an ES wrapper exporting the names
//   its `module.exports` really has (read by requiring it here, in development mode), since
//   `import { useState } from 'react'` needs named exports a bundle of CommonJS does not have.
// - Development builds of React (`process.env.NODE_ENV` = "development"): the worker's JSX
//   transform calls `jsxDEV`, which React's production runtime does not define, and a page's
//   errors then say what went wrong rather than "Minified React error #…". Whitespace and syntax
//   are minified; names are kept, so stacks stay readable.
// - The output is written beside DIR and moved into place whole, so the gateway never serves half
//   of one build.

import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { entryFile, isBare, isPlainPath, namedExports, packageOf, parsePackage, vendorPath, wrapperSource } from './exports.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The entries of each package in package.json, beyond its own (`.`), that models import. */
const ENTRIES = {
  react: ['react', 'react/jsx-runtime', 'react/jsx-dev-runtime'],
  // `react-dom/server` (its browser build): `renderToString` in pages, and the bundle test.
  'react-dom': ['react-dom', 'react-dom/client', 'react-dom/server'],
  zustand: ['zustand', 'zustand/middleware', 'zustand/shallow', 'zustand/react/shallow', 'zustand/vanilla'],
  // `motion/react` is how the renamed framer-motion is imported.
  motion: ['motion', 'motion/react'],
};

/**
 * Dependencies of several vendored entries that keep state of their own (motion's frame loop is in
 * motion-dom, used by both `motion` and `motion/react`): vendored as modules of their own, at the
 * version npm installed for their dependents, so a page holds one copy.
 */
const SHARED = ['motion-dom', 'motion-utils'];

/** Packages used as classic scripts rather than modules, and their file. */
const SCRIPTS = { '@tailwindcss/browser': 'dist/index.global.js' };

/** Packages installed here for the build itself, never served. */
const TOOLS = new Set(['esbuild']);

function parseArgs(argv) {
  const args = { out: null, extraDir: null, extras: [] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--out') args.out = path.resolve(value);
    else if (flag === '--extra-dir') args.extraDir = path.resolve(value);
    else if (flag === '--extra') args.extras.push(value);
    else throw new Error(`unknown argument ${flag}`);
    i++;
  }
  if (!args.out) throw new Error('usage: node build.mjs --out DIR [--extra-dir DIR --extra name@version …]');
  return args;
}

/** The packages to vendor: package.json's (at their installed versions) and the extras. */
function packages(args) {
  const own = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
  const list = [];
  for (const name of Object.keys(own.dependencies)) {
    if (!TOOLS.has(name)) list.push({ name, dir: HERE });
  }
  for (const name of SHARED) list.push({ name, dir: HERE, shared: true });
  for (const text of args.extras) {
    const parsed = parsePackage(text);
    if (parsed.error) throw new Error(`[preview] packages: ${parsed.error}`);
    if (list.some((p) => p.name === parsed.name)) {
      console.warn(`preview packages: ${parsed.name} is already vendored; ${text} is ignored`);
      continue;
    }
    list.push({ name: parsed.name, dir: args.extraDir, wanted: parsed.version });
  }
  for (const pkg of list) {
    const manifest = path.join(pkg.dir, 'node_modules', pkg.name, 'package.json');
    pkg.version = JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
    if (pkg.wanted && pkg.wanted !== pkg.version) {
      throw new Error(`${pkg.name}: ${pkg.wanted} was asked for but ${pkg.version} is installed`);
    }
  }
  return list;
}

const sha = (bytes, algorithm) => createHash(algorithm).update(bytes).digest('base64');

/**
 * Marks imports of other vendored entries external (a `require` of one becomes an import of its
 * namespace), and records those that are not entries yet so they are built too.
 */
function externals(byName, self, found) {
  return {
    name: 'vendored-externals',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind === 'entry-point' || !isBare(args.path) || args.path === self) return undefined;
        if (!byName.has(packageOf(args.path))) return undefined;
        found.add(args.path);
        if (args.kind === 'require-call') return { path: args.path, namespace: 'vendored-require' };
        return { path: args.path, external: true };
      });
      // CommonJS `require('react')` in an ES module bundle would be a runtime error ("Dynamic require
      // of react is not supported"); the bundler turns a require of this ES module into its namespace.
      build.onLoad({ filter: /.*/, namespace: 'vendored-require' }, (args) => ({
        contents: `export * from ${JSON.stringify(args.path)};\nexport { default } from ${JSON.stringify(args.path)};\n`,
        loader: 'js',
      }));
    },
  };
}

const COMMON = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  write: false,
  metafile: true,
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'eof',
  define: { 'process.env.NODE_ENV': '"development"' },
  logLevel: 'silent',
};

/** Builds one entry; returns its code and the bare imports it left to the import map. */
async function buildEntry(specifier, pkg, byName) {
  const found = new Set();
  const plugins = [externals(byName, specifier, found)];
  const first = await esbuild.build({ ...COMMON, absWorkingDir: pkg.dir, entryPoints: [specifier], outfile: 'out.js', plugins });
  const [output] = Object.values(first.metafile.outputs);
  const input = first.metafile.inputs[output.entryPoint];
  if (input.format !== 'cjs') return { code: first.outputFiles[0].contents, imports: found };
  // CommonJS: only a default export came out. Require it as the browser will run it, and export
  // what it has.
  const file = path.join(pkg.dir, output.entryPoint);
  const names = namedExports(Object.keys(createRequire(file)(file)));
  found.clear();
  const wrapped = await esbuild.build({
    ...COMMON,
    absWorkingDir: pkg.dir,
    stdin: { contents: wrapperSource(file, names), resolveDir: pkg.dir, sourcefile: `${specifier} (wrapper)` },
    outfile: 'out.js',
    plugins,
  });
  return { code: wrapped.outputFiles[0].contents, imports: found };
}

/** What a built module must not contain: it would fail in the browser, not here. */
function check(specifier, code) {
  const text = Buffer.from(code).toString('utf8');
  if (text.includes('Dynamic require of')) throw new Error(`${specifier}: a require() was left in the bundle`);
  const env = text.match(/process\.env\.\w+/g)?.filter((m) => m !== 'process.env.NODE_ENV');
  if (env?.length) console.warn(`preview packages: ${specifier} reads ${[...new Set(env)].join(', ')} (undefined in a page)`);
}

async function main() {
  process.env.NODE_ENV = 'development';
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const list = packages(args);
  const byName = new Map(list.map((p) => [p.name, p]));
  const staging = `${args.out}.building-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  const manifest = { format: 1, imports: {}, packages: {}, tailwind: null, files: {} };
  const write = (name, version, file, bytes) => {
    const url = vendorPath(name, version, file);
    if (!isPlainPath(url)) throw new Error(`${url} is not a plain path`);
    const target = path.join(staging, url.slice('/vendor/'.length));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, bytes);
    manifest.files[url] = { bytes: bytes.length, integrity: `sha384-${sha(bytes, 'sha384')}` };
    return url;
  };

  const queue = [];
  for (const pkg of list) {
    manifest.packages[pkg.name] = pkg.version;
    if (SCRIPTS[pkg.name]) {
      const bytes = fs.readFileSync(path.join(pkg.dir, 'node_modules', pkg.name, SCRIPTS[pkg.name]));
      const url = write(pkg.name, pkg.version, path.basename(SCRIPTS[pkg.name]), bytes);
      if (pkg.name === '@tailwindcss/browser') manifest.tailwind = url;
    } else {
      // A shared dependency is built when an entry imports it.
      if (!pkg.shared) queue.push(...(ENTRIES[pkg.name] ?? [pkg.name]));
    }
  }
  // Entries import others (`motion` imports `framer-motion/dom`): those are built too, until none is new.
  const done = new Set();
  while (queue.length) {
    const specifier = queue.shift();
    if (done.has(specifier)) continue;
    done.add(specifier);
    const pkg = byName.get(packageOf(specifier));
    if (SCRIPTS[pkg.name]) throw new Error(`${specifier}: ${pkg.name} is vendored as a script, not a module`);
    const { code, imports } = await buildEntry(specifier, pkg, byName);
    check(specifier, code);
    manifest.imports[specifier] = write(pkg.name, pkg.version, entryFile(specifier), code);
    queue.push(...[...imports].filter((s) => !done.has(s)));
  }
  manifest.imports = Object.fromEntries(Object.entries(manifest.imports).sort(([a], [b]) => a.localeCompare(b)));
  fs.writeFileSync(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  fs.rmSync(args.out, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(args.out), { recursive: true });
  fs.renameSync(staging, args.out);
  const total = Object.values(manifest.files).reduce((sum, f) => sum + f.bytes, 0);
  console.log(
    `preview packages: ${Object.keys(manifest.imports).length} modules of ${list.length} packages, ` +
      `${(total / 1e6).toFixed(1)} MB, in ${((Date.now() - started) / 1000).toFixed(1)} s → ${args.out}`,
  );
}

// Exits explicitly: requiring react-dom's scheduler above leaves a MessageChannel open, which would
// keep Node waiting for ever.
main().then(
  () => process.exit(0),
  (err) => {
    console.error(`preview packages: ${err.message}`);
    process.exit(1);
  },
);
