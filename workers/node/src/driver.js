// The driver interface: what a driver module's default export (a subclass of `Driver`,
// registered in drivers/index.js) implements, and all the host (main.js, step.js) uses of it;
// the host never looks at a driver's class.
//
// An op is one operation of a step: a function of one argument prepared before the clock (a
// parameter array, a literal statement text, a batch group, or null) returning the rows it read
// (an array of row arrays, every value decoded) or, for statements that read none, the number of
// rows it changed. Drivers whose API is synchronous set `sync` and return plain values; the
// others return promises.
//
// Steps under load: a driver says how it drives several clients (`concurrency`) and which
// connection policies it has built (`loadPolicies`). Its ops take an optional connection (the
// session's own by default) so each client can have its own; `openClient`/`closeClient` make
// and end a persistent client's connection, `perRequestOp(ep, build)` wraps `build(conn)` in a
// connect/close per operation, and `openPool`/`pooledOp`/`closePool` do the same over the
// driver's usual pool.

import fs from 'node:fs';
import path from 'node:path';

import { runAsync, runSync, statementOf } from './loading.js';
import { ProtocolError } from './protocol.js';
import { resolvePackage } from './versions.js';

// The driver cannot do what was asked, as asked: answered as kind `unsupported`.
export class Unsupported extends Error {
  get name() {
    return 'Unsupported';
  }
}

// The installed version of an npm package (its package.json, found from its entry point): the
// one this worker loads (a driver version's, versions.js, or its own).
export function packageVersion(name) {
  let dir = path.dirname(resolvePackage(name));
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

// Generated rows → a driver's parameters, before the clock: each value through the binder of
// its column's type (`binders`: type → value → what the driver is given); a NULL as
// `binders.null(type)` where the driver types its NULLs, else null.
export function bindRows(rows, types, binders) {
  const bind = types.map((t) => {
    if (!binders[t]) throw new Unsupported(`no binding for ${t} values`);
    return binders[t];
  });
  const nulls = types.map((t) => (binders.null ? binders.null(t) : null));
  return rows.map((row) => row.map((v, k) => (v === null ? nulls[k] : bind[k](v))));
}

// `concurrency` when a process drives one client (the runner starts one worker per client)
export const PROCESSES = 'processes';
// `concurrency` of the drivers whose API is promises
export const ASYNC_TASKS = 'async tasks (one async loop per client on the one event loop)';

function missing(driver, member) {
  return new Error(`${driver.constructor.name} does not implement ${member}`);
}

export class Driver {
  constructor(method) {
    this.method = method; // the method name, settings included (node-pg/batch=pipeline)
    // declared by every driver (hello's capabilities): the package's name, the DBMSs it reaches
    this.driverName = undefined;
    this.dbms = [];
    this.modes = ['literal', 'extended', 'prepared']; // and 'record' with recordOp
    this.sync = false; // ops return plain values, not promises
    this.concurrency = PROCESSES; // or ASYNC_TASKS: several clients on this process's event loop
    this.loadPolicies = ['persistent']; // and 'per-request', 'pooled' where built
    this.last = null; // the columns of the last rows read, as the driver describes them
    // A layer method (an ORM, a query builder over one of these drivers) reads `shape`, what the
    // step's statement does (protocol: `shape`), set before its parameters are adapted and its op
    // built; null for a statement of no plain shape, and for drivers. `bindsLiterals`: the layer
    // inlines values itself in mode literal, so it is given them (`adaptLiterals`), not texts.
    this.shape = null;
    this.bindsLiterals = false;
    // Set by the host before a step's op is built: `counter` ({n, on}) for the verification pass
    // only (null for the timed one), counting the statements the op sends — a driver's own code
    // counts them, a layer through its own hook, installed only then (on: true when it counts);
    // `api` = 'raw' when the op runs the statement through a layer's raw-SQL API.
    this.counter = null;
    this.api = null;
  }

  // before a verification pass's op is built (untimed): what counting its statements needs
  async beforeVerify() {}

  // whether the method has `load` steps (protocol: Loading associations)
  hasLoad() {
    return typeof this.loadStatements === 'function';
  }

  // ---- who it is: hello ------------------------------------------------------------------------

  // a `key=value` setting of the method name; anything unknown is Unsupported
  configure(key, value) {
    throw new Unsupported(`${this.method.split('/')[0]} has no setting ${key}=${value}`);
  }

  version() {
    throw missing(this, 'version()');
  }

  // every pinned setting, as texts
  settings() {
    throw missing(this, 'settings()');
  }

  batchStyle() {
    throw missing(this, 'batchStyle()');
  }

  // ---- the session's connection -----------------------------------------------------------------

  // connects to an endpoint; returns what `open` answers besides connect_ns (server_pid,
  // server_version)
  async open(ep) {
    throw missing(this, 'open(ep)');
  }

  async close() {
    throw missing(this, 'close()');
  }

  // the backend serving the session's connection (0: none to report)
  serverPid() {
    return 0;
  }

  // ---- steps: parameters before the clock, one op builder per step kind --------------------------

  // generated rows → the driver's own parameter values (batch, extended, prepared), by the
  // columns' value types `types` (protocol.js TYPES; a NULL's type is its column's): see bindRows
  adapt(rows, types) {
    return rows;
  }

  // mode literal, for a layer with `bindsLiterals`: the generated rows in its own form
  adaptLiterals(rows, types) {
    throw missing(this, 'adaptLiterals(rows, types)');
  }

  // connect step: open and close a connection to `ep` per operation
  connectOp(ep) {
    throw missing(this, 'connectOp(ep)');
  }

  scanOp(sql, conn) {
    throw missing(this, 'scanOp(sql, conn)');
  }

  // mode literal, extended or prepared; `reads`: the op returns the rows (else the rows changed)
  execOp(sql, mode, reads, conn) {
    throw missing(this, 'execOp(sql, mode, reads, conn)');
  }

  // one group of rows per operation, in one transaction
  batchOp(sql, conn) {
    throw missing(this, 'batchOp(sql, conn)');
  }

  // load: a driver's hand-written strategies (loading.js), over what `loadStatements(conn)`
  // gives — {query(sql, params) → [rows, meta] (or its promise), bind(value read) → parameter,
  // kinds(meta) → column kinds}: the message's statements, bound in the driver's extended mode.
  // A layer overrides loadOp with its own API.
  loadOp(plan, conn) {
    const { query, bind, kinds } = this.loadStatements(conn);
    const run = (request, args) => {
      const [sql, params] = statementOf(plan, request, args, bind);
      return query(sql, params);
    };
    if (this.counter) this.counter.on = true;
    return (this.sync ? runSync : runAsync)(plan, run, kinds, this.counter);
  }

  // mode record (only where `modes` lists it): may be async, untimed
  recordOp(kind, record, conn) {
    throw new Unsupported(`${this.method} has no record-level access (mode record)`);
  }

  // commit_every: BEGIN and COMMIT on a connection (the session's own when undefined)
  txnBegin(conn) {
    throw missing(this, 'txnBegin(conn)');
  }

  txnCommit(conn) {
    throw missing(this, 'txnCommit(conn)');
  }

  // column kinds of the last rows read (null: by each value's type), and their number
  kinds() {
    return null;
  }

  width() {
    return this.last ? this.last.length : undefined;
  }

  // after every step, untimed: release what the step prepared on the session's connection
  async endStep() {}

  // ---- errors -------------------------------------------------------------------------------

  // answered as kind `db`: by default every error the driver or the network raised
  isDbError(e) {
    return isDriverError(e);
  }

  errorMessage(e) {
    return `${e.name || 'Error'}: ${e.message}`;
  }

  sqlstate(e) {
    return undefined;
  }

  // after a db error: leave the session's connection usable (roll back an open transaction)
  async recover() {}

  // ---- under load: the policies of loadPolicies ---------------------------------------------------

  // persistent, clients after the first: { conn, pid } of a connection of their own (untimed)
  async openClient(ep) {
    throw missing(this, 'openClient(ep)');
  }

  async closeClient(conn) {
    throw missing(this, 'closeClient(conn)');
  }

  // per-request: an op that connects, runs build(conn)'s op and closes, inside its time
  perRequestOp(ep, build) {
    throw missing(this, 'perRequestOp(ep, build)');
  }

  // pooled: the driver's own pool of `size` connections, filled (untimed) …
  async openPool(ep, size) {
    throw missing(this, 'openPool(ep, size)');
  }

  // … an op that borrows a connection, runs build(conn)'s op on it and gives it back …
  pooledOp(pool, build) {
    throw missing(this, 'pooledOp(pool, build)');
  }

  // … and ended after the step
  async closePool(pool) {
    throw missing(this, 'closePool(pool)');
  }
}

// A pooled op over a pool that lends whole connections (`borrow()` resolves to one, its
// `release()` gives it back): borrow, run, release — inside the operation's time. The op for a
// connection is built the first time it is lent (a prepared statement is prepared once per
// pooled connection), and awaited (a record-mode build is async: it opens its HANDLER).
export function lendingOp(borrow, build) {
  const ops = new Map();
  return async (arg) => {
    const c = await borrow();
    try {
      let op = ops.get(c);
      if (op === undefined) {
        op = await build(c);
        ops.set(c, op);
      }
      return await op(arg);
    } finally {
      c.release();
    }
  };
}

// An error the driver (or the network under it) raised, as opposed to a bug in this worker.
export function isDriverError(e) {
  return e instanceof Error && !(e instanceof ProtocolError) && !(e instanceof Unsupported) &&
    !(e instanceof TypeError) && !(e instanceof RangeError) && !(e instanceof ReferenceError) &&
    !(e instanceof SyntaxError);
}
