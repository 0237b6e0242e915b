// The pure parts of the vendored build (build.mjs), kept apart so that `node --test` checks them
// without esbuild or the packages: which names a CommonJS entry's ES module must export, the
// wrapper that exports them, and the names and paths the manifest gives each entry.

/** Words a module cannot `export const`: reserved in strict mode code (ES modules are strict). */
const RESERVED = new Set(
  (
    'await break case catch class const continue debugger default delete do else enum export extends ' +
    'false finally for function if implements import in instanceof interface let new null package ' +
    'private protected public return static super switch this throw true try typeof var void while ' +
    'with yield arguments eval'
  ).split(' '),
);

/** Whether `name` can be written as `export const name = …` (ASCII identifiers only: npm code's). */
export function isExportable(name) {
  return /^[A-Za-z_$][\w$]*$/.test(name) && !RESERVED.has(name);
}

/**
 * The named exports an ES module must give for a CommonJS module whose `module.exports` has `keys`
 * (as Node's `Object.keys(require(…))` lists them): every key usable as a name, sorted, without
 * `default` (the wrapper's own default is the whole object) and `__esModule` (Babel's marker, which
 * would tell a bundler the object is already a namespace). Keys that are not identifiers are left
 * out; they stay reachable through the default export.
 */
export function namedExports(keys) {
  const names = new Set();
  for (const key of keys) {
    if (key !== 'default' && key !== '__esModule' && isExportable(key)) names.add(key);
  }
  return [...names].sort();
}

/**
 * The ES module that stands for the CommonJS file `file`: its `module.exports` as the default, and
 * each of `names` as a named export, so `import { useState } from 'react'` works in a browser.
 * The bundler inlines `file` below it.
 */
export function wrapperSource(file, names) {
  const lines = [`import cjs from ${JSON.stringify(file)};`, 'export default cjs;'];
  for (const name of names) lines.push(`export const ${name} = cjs.${name};`);
  return lines.join('\n') + '\n';
}

/** The package a bare specifier names: `react` of `react/jsx-runtime`, `@scope/x` of `@scope/x/y`. */
export function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Whether `specifier` is bare (a package, not a path or a URL). */
export function isBare(specifier) {
  return !/^(\.{1,2}\/|\/|[A-Za-z][A-Za-z0-9+.-]*:)/.test(specifier) && specifier !== '.' && specifier !== '..';
}

/**
 * The file an entry is written to inside its `name@version/` folder: `index.js` for the package
 * itself, else the subpath with `.js` (`react/jsx-runtime` → `jsx-runtime.js`, `zustand/react/shallow`
 * → `react/shallow.js`).
 */
export function entryFile(specifier) {
  const sub = specifier.slice(packageOf(specifier).length).replace(/^\//, '');
  return sub === '' ? 'index.js' : `${sub.replace(/\.(m?js|cjs)$/, '')}.js`;
}

/** The URL path of a file of package `name` at `version`: `/vendor/react@19.3.1/index.js`. */
export function vendorPath(name, version, file) {
  return `/vendor/${name}@${version}/${file}`;
}

/** Only these characters appear in served paths: the gateway compares them byte for byte. */
export function isPlainPath(path) {
  return /^\/vendor\/[A-Za-z0-9@._\-/]+$/.test(path) && !path.split('/').some((s) => s === '..' || s === '.');
}

/**
 * `name@version` of `[preview] packages`, or an error sentence: the version must be exact (a range
 * would make one path stand for different files over time).
 */
export function parsePackage(text) {
  const at = text.lastIndexOf('@');
  const name = at > 0 ? text.slice(0, at) : '';
  const version = at > 0 ? text.slice(at + 1) : '';
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/.test(name)) {
    return { error: `"${text}" is not name@version (e.g. "canvas-confetti@1.9.3")` };
  }
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    return { error: `"${text}": give an exact version (1.2.3), not a range or tag, so its path never changes meaning` };
  }
  return { name, version };
}
