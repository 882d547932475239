// node-postgres-js: postgres.js (`postgres`), a pure-JavaScript client with its own pool,
// statement cache and pipelining; pinned here to one connection and no automatic preparation.
//
// Under load every op is built on one postgres.js instance (the session's own by default):
// persistent clients get an instance of one connection each, per-request makes one inside
// every operation, pooled shares one instance whose own pool has pool_size connections.

import postgres from 'postgres';

import { ASYNC_TASKS, Unsupported, bindRows, packageVersion } from '../driver.js';
import { HAND_WRITTEN } from '../loading.js';
import { convertMarkers } from '../protocol.js';
import { OID, PARSERS, PG_TEXT, PgTextDriver, identity, kindOf, startupParameters } from './pgtext.js';
import { PG_TLS, pgSsl, tlsOf } from './tls.js';

const log = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');

// postgres.js custom types: this worker's text parser for every OID it decodes, and parameters
// (already text, or null) sent as they are. Without this the driver parses timestamps and dates
// into JS Dates (milliseconds, local time zone) and serializes parameters the server typed as
// timestamp through new Date(x).toISOString(), and leaves int8 as a string.
const TYPES = {};
for (const [oid, parse] of PARSERS) TYPES[`oid${oid}`] = { to: oid, from: [oid], parse, serialize: identity };
for (const oid of [114, 3802]) TYPES[`oid${oid}`] = { to: oid, from: [oid], parse: identity, serialize: identity };
TYPES.text = { to: OID.TEXT, from: [OID.TEXT], serialize: identity };

// Parameters: postgres.js's typed parameters (sql.typed(value, oid)) put the type in the Parse
// message, for booleans, doubles, decimals, dates and bytes (their NULLs too, so a prepared
// statement's types never change with the values); integers, text and timestamps go as before,
// untyped (OID 0: the server infers them from the statement). Every value is its PostgreSQL
// text, made before the clock (the serializers above send it as it is).
const TYPED = { bool: OID.BOOL, float: OID.FLOAT8, decimal: OID.NUMERIC, date: OID.DATE, bytes: OID.BYTEA };

function bindersOf(sql) {
  const binders = { null: (t) => (t in TYPED ? sql.typed(null, TYPED[t]) : null) };
  for (const [t, text] of Object.entries(PG_TEXT)) {
    binders[t] = t in TYPED ? (v) => sql.typed(text(v), TYPED[t]) : text;
  }
  return binders;
}

// libpq's sslmode → postgres.js's ssl option (tls.js: the keys read once, the object made once):
// disable/allow → false, prefer → 'prefer' (postgres.js's own: SSLRequest, TLS without checks
// when the server says S, no TLS when it says N), require/verify-ca/verify-full → the tls.connect
// options object, which postgres.js assigns to tls.connect's as it is; sslnegotiation=direct →
// postgres.js's own sslnegotiation: 'direct'. postgres.js gives tls.connect a servername only for
// a DNS name and no host, so for an IP address node:tls would check the certificate against
// 'localhost' (its fallback): the object carries tls.connect's own `host` option, the endpoint's
// host, which node:tls checks the certificate against (it connects nothing: the socket is given).
function sslFor(t, host) {
  switch (t.mode) {
    case 'disable': case 'allow': return false;
    case 'prefer':
      if (t.version) {
        throw new Unsupported("postgres.js's ssl: 'prefer' takes no TLS options (an options object makes TLS " +
          'required): a pinned tls_version needs sslmode require, verify-ca or verify-full');
      }
      return 'prefer';
    default: return { ...pgSsl(t), host };
  }
}

let statementCounter = 0;
const EMPTY = { simple: true };

export default class PostgresJsDriver extends PgTextDriver {
  constructor(method) {
    super(method);
    this.driverName = 'postgres (postgres.js)';
    this.sql = null;
    this.ssl = false;
    this.direct = false;
    this.pid = 0;
    this.usedPrepared = false;
    this.startupParams = {}; // startup parameters of connections made under load, beyond options()
    this.concurrency = ASYNC_TASKS;
    this.loadPolicies = ['persistent', 'per-request', 'pooled'];
  }

  version() {
    return packageVersion('postgres');
  }

  batchStyle() {
    return "sql.begin(tx => rows.map(row => tx.unsafe(text, row, {prepare: true}))): one transaction per group; " +
      'BEGIN awaited, the rows written without waiting (postgres.js pipelines them, up to max_pipeline 100), ' +
      'COMMIT after all answered; in the first group the statement is parsed by the first row and the ' +
      "group's other rows follow one per round trip (the driver's queue drains one query per ReadyForQuery)";
  }

  settings() {
    return {
      implementation: 'pure JavaScript client',
      pool: 'max: 1 (one connection, so raw BEGIN/COMMIT are allowed), idle_timeout: null and max_lifetime: null ' +
        '(no idle close, no periodic reconnect), connect_timeout: 30 s, keep_alive: 60 s (TCP), max_pipeline: 100',
      connection: 'host (a directory = unix socket path <dir>/.s.PGSQL.<port>), port, database, user, password ' +
        "when given; startup packet carries search_path=<schema> and application_name=postgres.js (the driver's " +
        'default) besides client_encoding=UTF8; the connection is opened lazily, so open runs SELECT 1 to make it ' +
        'and learn the backend pid; DateStyle checked to be ISO',
      read_only: "endpoint read_only: connection: {default_transaction_read_only: 'on'} (beside search_path), a " +
        'startup-packet parameter of every connection of every instance made with the options above',
      'connect step': 'postgres(options), one empty simple query, sql.end(): postgres.js connects lazily and has no ' +
        'connect call (sql.reserve() never resolves on a fresh instance with fetch_types: false); it opens the ' +
        'socket from setTimeout(connect, 0), which Node runs no sooner than 1 ms later, inside the step\'s time',
      fetch_types: 'false: no pg_type query for array types at connect (arrays are read as text)',
      prepare: "true for the instance (the driver's default, needed: a query's own {prepare: true} cannot turn " +
        'preparation on when the instance has it off), and set per query: false for literal, extended, scan, ' +
        'BEGIN/COMMIT/ROLLBACK (unsafe without parameters is a simple query); true only in the prepared mode and in ' +
        "batches. sql.begin's own COMMIT/ROLLBACK are tagged templates, so postgres.js prepares them as named " +
        'statements on first use and keeps them for the connection',
      tls: PG_TLS('postgres.js') + "; disable/allow → ssl: false (no SSLRequest); prefer (or absent) → " +
        "postgres.js's own ssl: 'prefer' (TLS without checks when the server accepts the SSLRequest, none when it " +
        "refuses; a pinned version with it: unsupported); sslnegotiation=direct → postgres.js's sslnegotiation: " +
        "'direct' (TLS from the first byte, ALPN postgresql, no SSLRequest); the object also carries tls.connect's host " +
        "option (the endpoint's host: postgres.js sets servername only for a DNS name, so for an IP address " +
        "node:tls would otherwise check the certificate against 'localhost'); the handshake is inside the connect " +
        "step's first query (postgres.js connects lazily)",
      literal: "sql.unsafe(text, [], {simple: true}): simple query protocol (one Query message), text results",
      extended: 'sql.unsafe(text, params, {prepare: false, simple: false}): unnamed statement parsed every time; ' +
        "postgres.js first sends Parse+Describe+Flush to learn the parameter types, then Bind+Execute+Sync: two " +
        'round trips per operation (one when there are no parameters); parameters: see parameters',
      parameters: 'extended, prepared, batch: every value as its PostgreSQL text, made before the clock and sent ' +
        "as it is (the worker's serializers); booleans ('true'/'false') as bool, doubles (shortest round-trip " +
        'text, -0 kept) as float8, decimals (plain text) as numeric, dates (YYYY-MM-DD) as date and bytes ' +
        "(\\x hex) as bytea are postgres.js typed parameters (sql.typed(value, oid): the type in the Parse " +
        'message), their NULLs too; integers (decimal text), text and timestamps (YYYY-MM-DD HH:MM:SS[.ffffff]) ' +
        'as untyped text (OID 0: the server infers them from the statement), NULL as null',
      prepared: 'sql.unsafe(text, params, {prepare: true, simple: false}): named statement; the first operation ' +
        'sends Parse+Describe+Flush, then Bind+Execute+Sync, later ones Bind+Execute+Sync. postgres.js caches ' +
        'prepared statements per connection by text and cannot be told to forget one, so the statement text ' +
        "gets a comment /* abw:N */ unique to the step (a step never reuses another step's statement) and its " +
        'statements are DEALLOCATEd after the step (untimed)',
      scan: "sql.unsafe(text, [], {simple: true}): simple query protocol, text results",
      writes: "postgres.js buffers each query's messages and writes them on the next setImmediate (or at once " +
        'past 1024 bytes): one event-loop turn inside every operation',
      results: ".values() (rows as arrays), whole result buffered, text format; each value decoded as it arrives " +
        "by the driver's per-OID parser, replaced by this worker's: int2/int4 → Number, int8 → BigInt, " +
        "float4/float8 → Number, numeric → string (PostgreSQL's text), bool, bytea → Buffer, timestamp(tz) → " +
        'BigInt µs since 1970 (microseconds kept, no time-zone shift), date → days, time → µs, json → text, ' +
        'others → string; transform: none',
      transactions: "commit_every: sql.unsafe('BEGIN'/'COMMIT') (simple); batches: sql.begin (BEGIN simple, " +
        'COMMIT a named statement prepared once per connection)',
      'rows changed': 'result.count (from the command tag)',
      load: `${HAND_WRITTEN}; each statement as the extended mode runs it (sql.unsafe(text, params, ` +
        '{prepare: false}): described, then bound; two round trips), a key read as its text',
      notices: 'logged to stderr (onnotice)',
      'load clients': "persistent: client 0 uses the session's instance, every other client its own postgres(options) " +
        'instance of one connection (the options above), connected by SELECT 1 before the barrier (untimed) and ' +
        "ended after the trial; a prepared step prepares on each (inside that client's first operation)",
      'per-request': 'postgres(options above), the operation (its query opens the connection: postgres.js connects ' +
        'lazily, from setTimeout(connect, 0), so at least 1 ms of timer inside every request; a prepared step ' +
        "parses its statement in every request), sql.end() awaited — all inside the operation's time; the " +
        "session's own connection stays open, idle",
      pooled: "postgres.js's own pool: one postgres(options above) instance with max = pool_size, idle_timeout: " +
        'null, max_lifetime: null (no idle close, no periodic reconnect), max_pipeline: 0 (a connection carries ' +
        'one query at a time: a query waits in the queue for a free connection instead of being pipelined ' +
        'behind another, so an operation holds its connection alone, borrowed and returned by postgres.js inside ' +
        'the query); filled before the barrier by pool_size simultaneous SELECT pg_backend_pid() (one new ' +
        'connection each); every operation is one query on the instance; prepared statements are parsed once ' +
        'per pooled connection; the instance is ended after the trial',
    };
  }

  options(ep) {
    const host = String(ep.host || 'localhost');
    const port = Number(ep.port || 5432);
    const o = {
      host,
      port,
      database: ep.database,
      user: ep.user,
      ssl: this.ssl,
      max: 1,
      idle_timeout: null,
      max_lifetime: null,
      connect_timeout: 30,
      keep_alive: 60,
      max_pipeline: 100,
      prepare: true, // the driver's default; every query below says per query whether it is prepared
      fetch_types: false,
      debug: false,
      target_session_attrs: null,
      types: TYPES,
      onnotice: (n) => log(`abworker-node: ${n.severity}: ${n.message}`),
      connection: { application_name: 'postgres.js' },
    };
    if (this.ssl && this.direct) o.sslnegotiation = 'direct';
    if (host.startsWith('/')) o.path = `${host}/.s.PGSQL.${port}`;
    if (ep.password) o.password = ep.password;
    Object.assign(o.connection, startupParameters(ep));
    return o;
  }

  async open(ep) {
    const t = tlsOf(ep);
    this.ssl = sslFor(t, String(ep.host || 'localhost')); // postgres.js's ssl option, made once: every instance made later shares it
    this.direct = t.direct;
    this.sql = postgres(this.options(ep));
    try {
      const r = await this.sql.unsafe('SELECT 1', [], { simple: true });
      this.pid = r.state ? r.state.pid : 0;
      this.startupParams = {};
      if (!String(this.sql.parameters.DateStyle || '').startsWith('ISO')) {
        await this.sql.unsafe('SET DateStyle = ISO', [], { simple: true });
        this.startupParams = { DateStyle: 'ISO' }; // connections made under load ask for it at startup
      }
    } catch (e) {
      const s = this.sql;
      this.sql = null;
      s.end({ timeout: 0 }).catch(() => {});
      throw e;
    }
    return { server_pid: this.pid, server_version: this.sql.parameters.server_version };
  }

  async close() {
    const s = this.sql;
    this.sql = null;
    if (s) await s.end();
  }

  serverPid() {
    return this.pid;
  }

  txnBegin(s = this.sql) {
    return s.unsafe('BEGIN', [], { simple: true });
  }

  txnCommit(s = this.sql) {
    return s.unsafe('COMMIT', [], { simple: true });
  }

  adapt(rows, types) {
    return bindRows(rows, types, bindersOf(this.sql));
  }

  kinds() {
    return this.last ? this.last.map((c) => kindOf(c.type)) : null;
  }

  connectOp(ep) {
    const options = this.options(ep);
    return async () => {
      // postgres.js connects lazily and has no connect call (sql.reserve() never resolves on a
      // fresh instance with fetch_types: false): an empty simple query makes the connection.
      const s = postgres(options);
      await s.unsafe('', [], EMPTY);
      await s.end();
      return 0;
    };
  }

  scanOp(text, sql = this.sql) {
    const simple = { simple: true };
    return async () => {
      let r = await sql.unsafe(text, [], simple).values();
      if (!('count' in r)) r = r[r.length - 1]; // several statements: the last one's rows, as PQexec
      this.last = r.columns;
      return r;
    };
  }

  uniqueText(sql) {
    this.usedPrepared = true;
    return `/* abw:${++statementCounter} */ ${convertMarkers(sql, 'numeric')}`;
  }

  execOp(sql, mode, reads, s = this.sql) {
    const done = reads
      ? (r) => {
        this.last = r.columns;
        return r;
      }
      : (r) => r.count || 0;
    if (mode === 'literal') {
      const simple = { simple: true };
      return async (text) => {
        const r = await s.unsafe(text, [], simple).values();
        return done('count' in r ? r : r[r.length - 1]);
      };
    }
    if (mode === 'extended') {
      const text = convertMarkers(sql, 'numeric');
      const opts = { prepare: false, simple: false };
      return async (params) => done(await s.unsafe(text, params, opts).values());
    }
    const text = this.uniqueText(sql);
    const opts = { prepare: true, simple: false };
    return async (params) => done(await s.unsafe(text, params, opts).values());
  }

  // load (loading.js): each statement as the extended mode runs it (unnamed, described then
  // bound); a value read binds as its PostgreSQL text, untyped (the server infers it)
  loadStatements(s = this.sql) {
    const opts = { prepare: false, simple: false };
    return {
      query: async (sql, params) => {
        const r = await s.unsafe(convertMarkers(sql, 'numeric'), params, opts).values();
        return [r, r.columns];
      },
      bind: (v) => (typeof v === 'object' ? v : String(v)),
      kinds: (columns) => columns.map((c) => kindOf(c.type)),
    };
  }

  batchOp(sql, s = this.sql) {
    const text = this.uniqueText(sql);
    const opts = { prepare: true, simple: false };
    return async (group) => {
      await s.begin((tx) => group.map((params) => tx.unsafe(text, params, opts)));
      return group.length;
    };
  }

  async recover(s = this.sql) {
    // postgres.js does not expose the transaction status: ROLLBACK (a warning when none is open)
    if (s) await s.unsafe('ROLLBACK', [], { simple: true });
  }

  // ---- under load ----------------------------------------------------------------------------

  loadOptions(ep, extra) {
    const o = { ...this.options(ep), ...extra };
    o.connection = { ...o.connection, ...this.startupParams };
    return o;
  }

  // a persistent client's own instance of one connection, connected (untimed)
  async openClient(ep) {
    const s = postgres(this.loadOptions(ep));
    try {
      const r = await s.unsafe('SELECT 1', [], { simple: true });
      return { conn: s, pid: r.state ? r.state.pid : 0 };
    } catch (e) {
      s.end({ timeout: 0 }).catch(() => {});
      throw e;
    }
  }

  async closeClient(s) {
    await s.end();
  }

  // a new instance, the op built on it (its first query connects), end — all inside the time
  perRequestOp(ep, build) {
    const options = this.loadOptions(ep);
    return async (arg) => {
      const s = postgres(options);
      try {
        return await build(s)(arg);
      } finally {
        await s.end();
      }
    };
  }

  async openPool(ep, size) {
    const pool = postgres(this.loadOptions(ep, { max: size, max_pipeline: 0 }));
    try {
      // every connection is closed at first: each of these queries opens one of its own
      const fill = await Promise.all(Array.from({ length: size }, () =>
        pool.unsafe('SELECT pg_backend_pid()', [], { simple: true }).values()));
      const pids = new Set(fill.map((r) => r[0][0]));
      if (pids.size !== size) log(`abworker-node: the pool was filled with ${pids.size} connections, not ${size}`);
    } catch (e) {
      pool.end({ timeout: 0 }).catch(() => {});
      throw e;
    }
    return pool;
  }

  // postgres.js lends a free connection to each query and takes it back at its ReadyForQuery
  pooledOp(pool, build) {
    return build(pool);
  }

  async closePool(pool) {
    await pool.end();
  }

  async endStep() {
    this.last = null;
    if (this.usedPrepared && this.sql) {
      this.usedPrepared = false;
      const made = await this.sql.unsafe(
        "SELECT name FROM pg_prepared_statements WHERE statement LIKE '/* abw:%'", [], { simple: true });
      for (const { name } of made) await this.sql.unsafe(`DEALLOCATE "${name.replaceAll('"', '""')}"`, [], { simple: true });
    }
  }
}

