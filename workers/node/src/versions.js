// A method at another version of its driver than the pinned one (node-pg@8.11.0;
// src/accessbench/methods/versions.py): that version's npm package, installed with its own
// dependencies in a directory of its own (.cache/versions/node/METHOD@VERSION at the checkout's
// root, its package.json naming the package), is what this worker loads for the method — the
// driver modules' code unchanged. Each package that directory's package.json names is resolved
// from there: an `import` of it (a module resolve hook, registered before the driver module is
// imported) and `packageVersion` (resolvePackage below), which the driver's hello reports; the
// package's own requires find their dependencies beside it.
//
// This module is also the resolve hook itself (initialize, resolve), in the loader's thread.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire, register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

// Where versions are installed: the checkout's .cache/versions/node (methods/versions.py's root).
export const VERSIONS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.cache/versions/node');

let chosen = null; // { dir, packages }: the version's directory and the packages taken from it

// Loads `named` (METHOD@VERSION) from its version's directory: what `import` and
// `resolvePackage` resolve from now on. Throws (with why) when that version is not installed.
export function useVersion(named) {
  const dir = path.join(VERSIONS, named);
  if (!fs.existsSync(path.join(dir, '.installed'))) {
    throw new Error(`${named} is not installed in ${dir} (make setup installs the versions methods/versions.toml declares)`);
  }
  const packages = Object.keys(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies || {});
  chosen = { dir, packages };
  register(import.meta.url, { data: { parent: pathToFileURL(path.join(dir, 'package.json')).href, packages } });
}

// The entry point of an npm package as this worker loads it: from the chosen version's
// directory when it is there, from the worker's own node_modules otherwise.
export function resolvePackage(name) {
  if (chosen) {
    try {
      const found = require.resolve(name, { paths: [chosen.dir] });
      if (found.startsWith(chosen.dir + path.sep)) return found;
    } catch {
      // not in the version's directory: the worker's own
    }
  }
  return require.resolve(name);
}

// ---- the resolve hook (module.register) -----------------------------------------------------

let redirect = null;

export function initialize(data) {
  redirect = data;
}

export async function resolve(specifier, context, nextResolve) {
  if (redirect) {
    const parts = specifier.split('/');
    const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    if (redirect.packages.includes(name)) return nextResolve(specifier, { ...context, parentURL: redirect.parent });
  }
  return nextResolve(specifier, context);
}
