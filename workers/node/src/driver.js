// What a driver module implements. An op is one operation of a step: a function of one
// argument prepared before the clock (a parameter array, a literal statement text, a batch
// group, or null) returning the rows it read (an array of row arrays, every value decoded) or,
// for statements that read none, the number of rows it changed. Drivers whose API is
// synchronous set `sync` and return plain values; the others return promises.
//
// Steps under load: a driver says how it drives several clients (`concurrency`) and which
// connection policies it has built (`loadPolicies`). Its ops take an optional connection (the
// session's own by default) so each client can have its own; `openClient`/`closeClient` make
// and end a persistent client's connection, `perRequestOp(ep, build)` wraps `build(conn)` in a
// connect/close per operation, and `openPool`/`pooledOp`/`closePool` do the same over the
// driver's usual pool.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

import { ProtocolError } from './protocol.js';

// The driver cannot do what was asked, as asked: answered as kind `unsupported`.
export class Unsupported extends Error {
  get name() {
    return 'Unsupported';
  }
}

const require = createRequire(import.meta.url);

// The installed version of an npm package (its package.json, found from its entry point).
export function packageVersion(name) {
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pkg.name === name) return pkg.version;
    }
    const up = path.dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

export class Driver {
  constructor(method) {
    this.method = method;
    this.sync = false;
    this.modes = ['literal', 'extended', 'prepared'];
  }

  configure(key, value) {
    throw new Unsupported(`${this.method.split('/')[0]} has no setting ${key}=${value}`);
  }

  // column kinds of the last rows read (null: by each value's type), and their number
  kinds() {
    return null;
  }

  width() {
    return undefined;
  }

  serverPid() {
    return 0;
  }

  adapt(rows) {
    return rows;
  }

  async endStep() {}
}

// An error the driver (or the network under it) raised, as opposed to a bug in this worker.
export function isDriverError(e) {
  return e instanceof Error && !(e instanceof ProtocolError) && !(e instanceof Unsupported) &&
    !(e instanceof TypeError) && !(e instanceof RangeError) && !(e instanceof ReferenceError) &&
    !(e instanceof SyntaxError);
}
