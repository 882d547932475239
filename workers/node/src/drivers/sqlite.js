// node-better-sqlite3: better-sqlite3, a synchronous binding with its own bundled SQLite.
//
// Under load: one client per worker process (every operation blocks the thread, so a second
// client in the same process could only take turns with the first; the runner starts one
// process per client instead). Ops are built on one Database (the session's by default):
// per-request opens one inside every operation.

import Database from 'better-sqlite3';

import { Driver, PROCESSES, bindRows, packageVersion } from '../driver.js';
import { HAND_WRITTEN } from '../loading.js';
import { ProtocolError, TEXT_FORMS } from '../protocol.js';

const OPEN = { timeout: 5000 }; // busy timeout in ms, as c-sqlite and Python's sqlite3

// better-sqlite3's open options for the endpoint: read_only opens the file SQLITE_OPEN_READONLY,
// so SQLite itself refuses every write (SQLITE_READONLY)
function openOptions(ep) {
  return ep.read_only === true ? { ...OPEN, readonly: true } : OPEN;
}

// better-sqlite3 compiles SQLite with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1 (NORMAL on a WAL file),
// SQLITE_DEFAULT_CACHE_SIZE=-16000 and SQLITE_DEFAULT_FOREIGN_KEYS=1; these are set back to the
// stock SQLite defaults that c-sqlite and py-sqlite3 run with.
const PRAGMAS = ['synchronous = FULL', 'cache_size = -2000', 'foreign_keys = OFF'];

// Parameters as SQLite keeps each type (protocol/PROTOCOL.md, Types), as the data loader writes
// them: integers as BigInt (INTEGER), booleans as integer 1/0 (better-sqlite3 refuses
// booleans), doubles as Number (REAL), decimals, dates and timestamps as their text, bytes as a
// Buffer (BLOB).
const BIND = {
  ...TEXT_FORMS,
  int: (v) => v,
  bool: (v) => (v ? 1n : 0n),
  float: (v) => v,
  bytes: (v) => v,
};

export default class SqliteDriver extends Driver {
  constructor(method) {
    super(method);
    this.driverName = 'better-sqlite3';
    this.dbms = ['sqlite'];
    this.sync = true;
    this.db = null;
    this.lastStmt = null; // the statement of the last rows read
    this.closedWidth = undefined; // its columns, when it was read on a connection closed since
    this.concurrency = PROCESSES;
    this.loadPolicies = ['persistent', 'per-request'];
  }

  version() {
    const db = new Database(':memory:');
    try {
      return `${packageVersion('better-sqlite3')} (bundled SQLite ${db.prepare('SELECT sqlite_version()').pluck().get()})`;
    } finally {
      db.close();
    }
  }

  batchStyle() {
    return 'db.transaction(fn) per group: BEGIN, one prepared statement (prepared in the first group) run per row, COMMIT';
  }

  settings() {
    return {
      open: 'new Database(file, {timeout: 5000}): sqlite3_open_v2 READWRITE|CREATE, busy timeout 5000 ms (as ' +
        'c-sqlite and py-sqlite3); better-sqlite3 checks that the directory exists first',
      read_only: 'endpoint read_only: new Database(file, {timeout: 5000, readonly: true}): sqlite3_open_v2 ' +
        "SQLITE_OPEN_READONLY, for every connection (open's, a connect step's, per-request's)",
      pragmas: 'at open: synchronous=FULL, cache_size=-2000, foreign_keys=OFF (the stock SQLite defaults the other ' +
        'SQLite methods run with; better-sqlite3 builds SQLite with WAL synchronous NORMAL, a 16 MB cache and ' +
        "foreign keys on); journal_mode is the file's (WAL); the connect step opens and closes only (no pragmas)",
      sqlite: 'the SQLite amalgamation bundled with better-sqlite3, compiled by npm ci (not the system library): ' +
        'THREADSAFE=2, DQS=0, ENABLE_STAT4, DEFAULT_MEMSTATUS=0, among others',
      autocommit: 'yes (BEGIN/COMMIT explicit, prepared once per connection)',
      literal: 'db.prepare(text with values inlined) and run/all, every operation',
      extended: 'db.prepare(sql) + bind + run/all, every operation',
      prepared: 'db.prepare(sql) once (inside the first operation), then bind + run/all (better-sqlite3 resets it)',
      'statement cache': 'none in better-sqlite3; it has no finalize call: a statement is finalized when V8 ' +
        'garbage-collects it, so literal and extended leave their finalization to the GC',
      scan: 'db.prepare(sql).raw(true).all() every operation',
      results: 'raw(true) (rows as arrays), all() reads the whole result; defaultSafeIntegers(true): INTEGER → ' +
        'BigInt (exact 64-bit), REAL → Number, TEXT → string, BLOB → Buffer, NULL → null, by each value\'s type',
      parameters: 'integers as BigInt (INTEGER), booleans as integers 1/0 (better-sqlite3 refuses booleans), ' +
        'doubles as Number (REAL), text as string, decimals as their plain text, dates as YYYY-MM-DD text, ' +
        "timestamps as 'YYYY-MM-DD HH:MM:SS[.ffffff]' text (SQLite has no decimal, date or timestamp type: as " +
        'the target stores them), bytes as Buffer (BLOB), NULL as null',
      'rows changed': 'run().changes (0 for read-only statements)',
      load: `${HAND_WRITTEN}; each statement as the extended mode runs it (db.prepare(sql).raw(true).all(values)), ` +
        'synchronously (the strategy a generator the worker drives without awaiting)',
      concurrency: 'synchronous API: every operation blocks the event loop thread; under load one client per ' +
        'worker process (the runner starts one process per client)',
      'per-request': 'new Database(file, {timeout: 5000}), defaultSafeIntegers(true), the three pragmas above, the ' +
        "operation (statements prepared on that connection), close() — all inside the operation's time; the " +
        "session's own connection stays open, idle",
      pooled: 'not built: better-sqlite3 has no pool',
    };
  }

  // a connection as every statement of this worker expects it
  connectDb(file, options) {
    const db = new Database(file, options);
    try {
      db.defaultSafeIntegers(true);
      for (const p of PRAGMAS) db.pragma(p);
    } catch (e) {
      db.close();
      throw e;
    }
    return db;
  }

  open(ep) {
    if (typeof ep.file !== 'string') throw new ProtocolError('the sqlite endpoint needs a file');
    this.file = ep.file;
    const db = this.connectDb(this.file, openOptions(ep));
    try {
      this.begin = db.prepare('BEGIN');
      this.commit = db.prepare('COMMIT');
      this.db = db;
      return { server_version: db.prepare('SELECT sqlite_version()').pluck().get() };
    } catch (e) {
      db.close();
      throw e;
    }
  }

  close() {
    const db = this.db;
    this.db = null;
    if (db) db.close();
  }

  txnBegin() {
    this.begin.run();
  }

  txnCommit() {
    this.commit.run();
  }

  adapt(rows, types) {
    return bindRows(rows, types, BIND);
  }

  kinds() {
    return null; // SQLite types values, not columns: each value's JS type decides
  }

  width() {
    if (this.closedWidth !== undefined) return this.closedWidth;
    return this.lastStmt ? this.lastStmt.columns().length : undefined;
  }

  connectOp(ep) {
    const file = ep.file, options = openOptions(ep);
    return () => {
      new Database(file, options).close();
      return 0;
    };
  }

  // run one prepared statement to the end: its rows (reads) or the rows it changed
  run(s, args, reads) {
    if (reads) {
      if (!s.reader) {
        s.run(args);
        return [];
      }
      this.lastStmt = s;
      return s.raw(true).all(args);
    }
    const info = s.run(args);
    return s.readonly ? 0 : info.changes;
  }

  scanOp(sql, db = this.db) {
    const none = [];
    return () => this.run(db.prepare(sql), none, true);
  }

  execOp(sql, mode, reads, db = this.db) {
    const none = [];
    if (mode === 'literal') return (text) => this.run(db.prepare(text), none, reads);
    if (mode === 'extended') return (args) => this.run(db.prepare(sql), args, reads);
    let s = null;
    return (args) => {
      if (s === null) s = db.prepare(sql); // parsed once, inside the first operation's time
      return this.run(s, args, reads);
    };
  }

  // load (loading.js): each statement as the extended mode runs it (prepared, run, left to the
  // GC), synchronously; a value read binds as it is (integers are BigInt already)
  loadStatements(db = this.db) {
    return {
      query: (sql, values) => [db.prepare(sql).raw(true).all(values), null],
      bind: (v) => v,
      kinds: () => null,
    };
  }

  batchOp(sql, db = this.db) {
    let write = null;
    return (group) => {
      if (write === null) {
        const s = db.prepare(sql);
        write = db.transaction((rows) => {
          for (const args of rows) s.run(args);
        });
      }
      write(group);
      return group.length;
    };
  }

  recover() {
    if (this.db && this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  // open, build the op on the new connection, run it, close — all inside the operation's time
  perRequestOp(ep, build) {
    const file = ep.file, options = openOptions(ep);
    return (arg) => {
      const db = this.connectDb(file, options);
      try {
        return build(db)(arg);
      } finally {
        // a statement of a closed connection cannot say its columns: learnt once, before closing
        if (this.closedWidth === undefined && this.lastStmt !== null && this.lastStmt.database === db) {
          this.closedWidth = this.lastStmt.columns().length;
        }
        db.close();
      }
    };
  }

  endStep() {
    this.lastStmt = null;
    this.closedWidth = undefined;
  }

  isDbError(e) {
    return e instanceof Database.SqliteError;
  }

  errorMessage(e) {
    return `SqliteError: ${e.message}`;
  }

  sqlstate(e) {
    return typeof e.code === 'string' ? e.code : undefined;
  }
}
