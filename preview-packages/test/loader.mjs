// A Node module hook that resolves bare specifiers the way a preview's import map does: only
// through the manifest's `imports`, to the built files. A module importing anything else fails
// here as it would in the page (the built files live outside any node_modules).

import path from 'node:path';
import { pathToFileURL } from 'node:url';

let files = new Map();

export function initialize({ dir, imports }) {
  files = new Map(Object.entries(imports).map(([spec, url]) => [spec, path.join(dir, url.slice('/vendor/'.length))]));
}

export function resolve(specifier, context, next) {
  const file = files.get(specifier);
  if (file) return { url: pathToFileURL(file).href, format: 'module', shortCircuit: true };
  return next(specifier, context);
}
