// The pure parts of build.mjs: named exports of CommonJS entries, the wrapper, names and paths.
//
//   node --test preview-packages/test/exports.test.mjs

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  entryFile,
  isBare,
  isPlainPath,
  namedExports,
  packageOf,
  parsePackage,
  vendorPath,
  wrapperSource,
} from '../exports.mjs';

test("a CommonJS module's keys become the names it exports, usable ones only", () => {
  const keys = ['useState', 'default', '__esModule', 'Children', 'with-dash', 'class', '$x', '_y', 'useState', '1up'];
  assert.deepEqual(namedExports(keys), ['$x', 'Children', '_y', 'useState']);
  assert.deepEqual(namedExports([]), []);
  // React's internals are a name react-dom's bundle reads through the import map: kept.
  const internals = '__CLIENT_INTERNALS_DO_NOT_USE_OR_WARN_USERS_THEY_CANNOT_UPGRADE';
  assert.deepEqual(namedExports([internals]), [internals]);
});

test('the wrapper exports the default and each name from the CommonJS file', () => {
  const source = wrapperSource('/p/node_modules/react/index.js', ['useState', 'version']);
  assert.equal(
    source,
    'import cjs from "/p/node_modules/react/index.js";\nexport default cjs;\n' +
      'export const useState = cjs.useState;\nexport const version = cjs.version;\n',
  );
  // A path with a quote cannot break out of the string.
  assert.ok(wrapperSource('/a"b.js', []).startsWith('import cjs from "/a\\"b.js";'));
});

test('packages, entry files and paths', () => {
  assert.equal(packageOf('react/jsx-runtime'), 'react');
  assert.equal(packageOf('@tailwindcss/browser'), '@tailwindcss/browser');
  assert.equal(packageOf('@scope/x/y/z'), '@scope/x');
  assert.equal(entryFile('react'), 'index.js');
  assert.equal(entryFile('react/jsx-dev-runtime'), 'jsx-dev-runtime.js');
  assert.equal(entryFile('zustand/react/shallow'), 'react/shallow.js');
  assert.equal(entryFile('@scope/x/sub.mjs'), 'sub.js');
  assert.equal(vendorPath('react', '19.3.1', 'index.js'), '/vendor/react@19.3.1/index.js');
  for (const bare of ['react', '@scope/x', 'd3']) assert.ok(isBare(bare), bare);
  for (const notBare of ['./a', '../a', '/a', 'https://esm.sh/react', 'data:text/javascript,', '.', '..']) {
    assert.ok(!isBare(notBare), notBare);
  }
});

test('served paths are plain: no dot segments, no escapes', () => {
  assert.ok(isPlainPath('/vendor/@tailwindcss/browser@4.3.4/index.global.js'));
  assert.ok(isPlainPath('/vendor/zustand@5.1.0/react/shallow.js'));
  for (const bad of ['/vendor/a@1/../x.js', '/vendor/./a.js', '/vendor/a%2e%2e/x.js', '/vendor/a b.js', '/other/a.js']) {
    assert.ok(!isPlainPath(bad), bad);
  }
});

test('[preview] packages need an exact version', () => {
  assert.deepEqual(parsePackage('canvas-confetti@1.9.3'), { name: 'canvas-confetti', version: '1.9.3' });
  assert.deepEqual(parsePackage('@scope/pkg@2.0.0-beta.1'), { name: '@scope/pkg', version: '2.0.0-beta.1' });
  for (const bad of ['canvas-confetti', 'canvas-confetti@^1.9.3', 'x@latest', '@scope/pkg', '../x@1.0.0', 'X@1.0.0']) {
    assert.ok(parsePackage(bad).error, bad);
  }
});
