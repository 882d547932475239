// node-pg: node-postgres (`pg`), the pure-JavaScript client (pg-native is not used).
//
// Setting (part of the method name): batch=sequential|pipeline (default sequential).
//
// Under load every op is built on one pg.Client (the session's own by default): persistent
// clients get a Client each, per-request makes one inside every operation, pooled borrows one
// from a pg.Pool (pg-pool, the pool node-postgres ships) for every operation.

import net from 'node:net';

import pg from 'pg';

import { ASYNC_TASKS, Unsupported, bindRows, lendingOp, packageVersion } from '../driver.js';
import { HAND_WRITTEN } from '../loading.js';
import { convertMarkers } from '../protocol.js';
import { PG_TEXT, PgTextDriver, kindOf, parserFor, startupParameters } from './pgtext.js';
import { PG_TLS, pgSsl, pinned, tlsOf } from './tls.js';

const { Client, Pool } = pg;

const log = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');

// Every value of a text result goes through this worker's parser for its type OID.
export const TYPES = {
  getTypeParser(oid, format) {
    return format === 'binary' ? (x) => x : parserFor(oid);
  },
};

// libpq's sslmode → pg's ssl option (tls.js: the keys read once, the object made once). pg has no
// "prefer": the worker tries TLS at open and, when the server refuses it, uses no TLS for the rest
// of the session. sslnegotiation=direct → pg's own sslnegotiation: 'direct'.
export function sslFor(t) {
  switch (t.mode) {
    case 'disable': case 'allow': return false;
    case 'prefer': return pinned(t, { rejectUnauthorized: false });
    default: return pgSsl(t);
  }
}

// pg before 8.23.1 gives tls.connect a servername only for a DNS name and no host, so node:tls
// checks an IP address host's certificate against 'localhost' (node-postgres #2263, fixed by
// #3756 in 8.23.1): verify-full to an IP host is then no host name check, and is answered so.
const IP_HOST_CHECKED = [8, 23, 1];

function checksIpHosts(version) {
  const v = version.split('.').map(Number);
  for (let i = 0; i < IP_HOST_CHECKED.length; i++) {
    if ((v[i] || 0) !== IP_HOST_CHECKED[i]) return (v[i] || 0) > IP_HOST_CHECKED[i];
  }
  return true;
}

function refuseUncheckedIpHost(t, ep) {
  if (t.mode !== 'verify-full' || ep.socket || !net.isIP(String(ep.host || ''))) return;
  const version = packageVersion('pg');
  if (checksIpHosts(version)) return;
  throw new Unsupported(`pg ${version} has no host name check for an IP address host (${ep.host}): it checks the ` +
    "certificate against 'localhost' instead (node-postgres #2263, fixed in 8.23.1 by #3756); verify-ca or a DNS " +
    'host name work');
}

export const TLS_SETTING = PG_TLS('pg') + '; disable/allow → ssl: false (no SSLRequest); prefer (or absent) → ' +
  "{rejectUnauthorized: false} tried at open and dropped for the session if the server refuses it (pg has no " +
  "prefer); sslnegotiation=direct → pg's sslnegotiation: 'direct' (TLS from the first byte, ALPN postgresql, " +
  'no SSLRequest); the handshake is inside connect()';

export const READ_ONLY_SETTING = 'endpoint read_only: options=-c default_transaction_read_only=on in the ' +
  "startup packet (beside -c search_path), in the configuration of every pg.Client made: the session's, a " +
  "connect step's, each load client's, per-request's and the pool's";

// Parameters: pg has no way to give a parameter's type (its Parse leaves every type unspecified,
// so the server infers each from the statement) and writes every value as text but a Buffer,
// which it sends in binary format. So each value is given as its PostgreSQL text (what pg
// would make of it: String of a number or boolean, before the clock), a date as its
// 'YYYY-MM-DD' text rather than a JavaScript Date (pg would write a Date with the process's
// time zone), and bytes as a Buffer.
const BIND = { ...PG_TEXT, bytes: (v) => v };

let statementCounter = 0;


export default class PgDriver extends PgTextDriver {
  constructor(method) {
    super(method);
    this.driverName = 'pg';
    this.pipeline = false;
    this.client = null;
    this.ssl = false; // pg's ssl option, made at open (sslFor)
    this.direct = false; // sslnegotiation=direct
    this.prepared = []; // statement names made in this step (on the session's own client)
    this.startupOptions = null; // '-c …' of the startup packet of connections made under load
    this.concurrency = ASYNC_TASKS;
    this.loadPolicies = ['persistent', 'per-request', 'pooled'];
  }

  configure(key, value) {
    if (key === 'batch' && (value === 'sequential' || value === 'pipeline')) this.pipeline = value === 'pipeline';
    else throw new Unsupported(`node-pg has no setting ${key}=${value} (batch=sequential|pipeline)`);
  }

  version() {
    return `${packageVersion('pg')} (pg-protocol ${packageVersion('pg-protocol')})`;
  }

  batchStyle() {
    return this.pipeline
      ? 'pipelined (Client option pipeline: true): BEGIN, one named-statement query per row (Parse with the first ' +
        'row of the first group) and COMMIT all issued without waiting, each written at once with its own Sync, ' +
        'then every result awaited; one transaction per group'
      : 'one transaction per group: BEGIN, one named-statement query per row, each awaited, COMMIT ' +
        '(pg has no batch API)';
  }

  settings() {
    return {
      implementation: 'pure JavaScript client (pg-native not used); one pg.Client, no pool',
      connection: 'host (a directory = unix socket dir), port, database, user, password when given; ' +
        'options=-c search_path=<schema> in the startup packet; no application_name; TCP keepAlive off; ' +
        'no statement/query timeouts; DateStyle checked to be ISO at open (SET once if not)',
      tls: TLS_SETTING,
      read_only: READ_ONLY_SETTING,
      literal: 'client.query({text}) without values: simple query protocol (one Query message), text results',
      extended: "client.query({text, values, queryMode: 'extended'}): unnamed statement, " +
        'Parse+Bind+Describe+Execute+Sync written together (corked), parsed every time; parameters: see parameters',
      prepared: 'client.query({name, text, values}): named statement abw_N unique to the step; pg sends Parse ' +
        'with the first execution (inside the first operation), then Bind+Describe+Execute+Sync; DEALLOCATE ' +
        "after the step (untimed) and pg's per-connection record of the name dropped",
      parameters: 'extended, prepared, batch: pg has no parameter types (Parse leaves every one unspecified: the ' +
        'server infers each from the statement), so every type is bound as its text: integers as decimal ' +
        "text, booleans 'true'/'false', doubles as their shortest round-trip text (JavaScript's String, -0 " +
        'kept), decimals as their plain text, text as is, dates as YYYY-MM-DD text (not a JavaScript Date, ' +
        "which pg would write in the process's time zone), timestamps as 'YYYY-MM-DD HH:MM:SS[.ffffff]'; bytes " +
        'as a Buffer, which pg sends in binary format; NULL as null; all converted before the clock',
      'automatic preparation': 'none: pg prepares only queries given a name; unnamed queries are parsed every time',
      scan: 'client.query({text}): simple query protocol, text results (several statements in one text: the ' +
        "last one's rows, as PQexec)",
      results: "rowMode 'array', whole result buffered by pg, text format; each value decoded as it arrives by " +
        "pg's per-column type parser, replaced for every OID by this worker's: int2/int4 → Number, int8 → BigInt, " +
        'float4/float8 → Number, numeric → string (PostgreSQL\'s text), bool, bytea → Buffer, timestamp(tz) → ' +
        'BigInt µs since 1970 (microseconds kept, no time-zone shift), date → days, time → µs, others → string',
      batch: this.pipeline ? 'pipeline' : 'sequential',
      'rows changed': 'result.rowCount (from the command tag)',
      load: `${HAND_WRITTEN}; each statement as the extended mode sends it (unnamed, parsed every time)`,
      'load clients': 'persistent: client 0 uses the session\'s pg.Client, every other client its own pg.Client ' +
        'with the same configuration, connected before the barrier (untimed) and ended after the trial; a prepared ' +
        'step prepares on each (inside that client\'s first operation)',
      'per-request': 'new pg.Client(same configuration), connect(), the operation (a prepared step parses its named ' +
        'statement in every request), end() awaited — all inside the operation\'s time; the session\'s own ' +
        'connection stays open, idle',
      pooled: 'pg.Pool (pg-pool ' + packageVersion('pg-pool') + ') with the Client configuration and max = min = ' +
        'pool_size, idleTimeoutMillis: 0 (idle clients never closed, no timer per release), maxLifetimeSeconds: 0 ' +
        '(no expiry), maxUses: Infinity, connectionTimeoutMillis: 0, allowExitOnIdle: false, no verify/onConnect ' +
        'hook; filled before the barrier (pool_size connect() at once, then all released); each operation: ' +
        'await pool.connect(), the operation on that client, release() — inside its time; idle clients are ' +
        'handed out last-released first (pg-pool\'s LIFO); prepared statements are parsed once per pooled ' +
        'connection; the pool is ended after the trial',
    };
  }

  config(ep, ssl) {
    const c = {
      host: ep.host,
      port: Number(ep.port),
      database: ep.database,
      user: ep.user,
      ssl,
      keepAlive: false,
      types: TYPES,
    };
    if (ep.password) c.password = ep.password;
    const options = Object.entries(startupParameters(ep)).map(([k, v]) => `-c ${k}=${v}`).join(' ');
    if (options) c.options = options;
    if (ssl && this.direct) c.sslnegotiation = 'direct';
    if (this.pipeline) c.pipeline = true;
    return c;
  }

  // a connected Client (untimed: the session's, a persistent client's); `params` collects the
  // server's parameter statuses
  async connectClient(config, params) {
    const client = new Client(config);
    client.on('error', (e) => log('abworker-node: pg client error:', e && e.message));
    client.on('notice', (m) => log(`abworker-node: ${m.severity}: ${m.message}`));
    if (params) {
      client.connection.on('parameterStatus', (m) => {
        params[m.parameterName] = m.parameterValue;
      });
    }
    try {
      await client.connect();
    } catch (e) {
      client.end().catch(() => {});
      throw e;
    }
    return client;
  }

  async open(ep) {
    const params = {};
    const t = tlsOf(ep);
    refuseUncheckedIpHost(t, ep);
    this.direct = t.direct;
    this.ssl = sslFor(t);
    try {
      this.client = await this.connectClient(this.config(ep, this.ssl), params);
    } catch (e) {
      if (t.mode !== 'prefer' || !/does not support SSL/i.test(String(e && e.message))) throw e;
      this.ssl = false;
      this.client = await this.connectClient(this.config(ep, this.ssl), params);
    }
    this.startupOptions = null;
    if (!String(params.DateStyle || '').startsWith('ISO')) {
      await this.client.query('SET DateStyle = ISO');
      this.startupOptions = '-c DateStyle=ISO'; // connections made under load ask for it at startup
    }
    return { server_pid: this.client.processID, server_version: params.server_version };
  }

  async close() {
    const c = this.client;
    this.client = null;
    if (c) await c.end();
  }

  serverPid() {
    return this.client ? this.client.processID : 0;
  }

  txnBegin(c = this.client) {
    return c.query('BEGIN');
  }

  txnCommit(c = this.client) {
    return c.query('COMMIT');
  }

  adapt(rows, types) {
    return bindRows(rows, types, BIND);
  }

  kinds() {
    return this.last ? this.last.map((f) => kindOf(f.dataTypeID)) : null;
  }

  connectOp(ep) {
    const config = this.config(ep, this.ssl);
    return async () => {
      const c = new Client(config);
      c.on('error', (e) => log('abworker-node: pg client error:', e && e.message));
      await c.connect();
      await c.end();
      return 0;
    };
  }

  scanOp(sql, c = this.client) {
    return async () => {
      let r = await c.query({ text: sql, rowMode: 'array' });
      if (Array.isArray(r)) r = r[r.length - 1]; // several statements: the last one's rows, as PQexec
      this.last = r.fields;
      return r.rows;
    };
  }

  // a statement name unique to the step; those on the session's client are DEALLOCATEd after
  // it, the others go with their connections
  newName(c) {
    const name = `abw_${++statementCounter}`;
    if (c === this.client) this.prepared.push(name);
    return name;
  }

  execOp(sql, mode, reads, c = this.client) {
    const done = reads
      ? (r) => {
        this.last = r.fields;
        return r.rows;
      }
      : (r) => r.rowCount || 0;
    if (mode === 'literal') {
      return async (text) => {
        const r = await c.query({ text, rowMode: 'array' });
        return done(Array.isArray(r) ? r[r.length - 1] : r);
      };
    }
    const text = convertMarkers(sql, 'numeric');
    if (mode === 'extended') {
      return async (values) => done(await c.query({ text, values, rowMode: 'array', queryMode: 'extended' }));
    }
    const name = this.newName(c);
    return async (values) => done(await c.query({ name, text, values, rowMode: 'array' }));
  }

  // load (loading.js): each statement as the extended mode runs it (unnamed, parsed every time);
  // a value read binds as pg binds it (its text: String of a Number or BigInt)
  loadStatements(c = this.client) {
    return {
      query: async (sql, values) => {
        const r = await c.query({ text: convertMarkers(sql, 'numeric'), values, rowMode: 'array', queryMode: 'extended' });
        return [r.rows, r.fields];
      },
      bind: (v) => v,
      kinds: (fields) => fields.map((f) => kindOf(f.dataTypeID)),
    };
  }

  batchOp(sql, c = this.client) {
    const text = convertMarkers(sql, 'numeric');
    const name = this.newName(c);
    if (this.pipeline) {
      return async (group) => {
        const sent = [c.query('BEGIN')];
        for (const values of group) sent.push(c.query({ name, text, values }));
        sent.push(c.query('COMMIT'));
        const results = await Promise.allSettled(sent);
        for (const r of results) if (r.status === 'rejected') throw r.reason;
        return group.length;
      };
    }
    return async (group) => {
      await c.query('BEGIN');
      for (const values of group) await c.query({ name, text, values });
      await c.query('COMMIT');
      return group.length;
    };
  }

  async recover(c = this.client) {
    if (c && c.getTransactionStatus() !== 'I') await c.query('ROLLBACK');
  }

  // ---- under load ----------------------------------------------------------------------------

  // the session's configuration, for the connections a loaded step makes
  loadConfig(ep) {
    const config = this.config(ep, this.ssl);
    if (this.startupOptions) config.options = [config.options, this.startupOptions].filter(Boolean).join(' ');
    return config;
  }

  // a persistent client's own connection (untimed)
  async openClient(ep) {
    const c = await this.connectClient(this.loadConfig(ep));
    return { conn: c, pid: c.processID };
  }

  async closeClient(c) {
    await c.end();
  }

  // connect, build the op on the new client, run it, end — all inside the operation's time
  perRequestOp(ep, build) {
    const config = this.loadConfig(ep);
    const onError = (e) => log('abworker-node: pg client error:', e && e.message);
    return async (arg) => {
      const c = new Client(config);
      c.on('error', onError);
      try {
        await c.connect();
      } catch (e) {
        c.end().catch(() => {}); // a connection that never opened: nothing to wait for
        throw e;
      }
      try {
        return await build(c)(arg);
      } finally {
        await c.end();
      }
    };
  }

  async openPool(ep, size) {
    const pool = new Pool({
      ...this.loadConfig(ep),
      max: size,
      min: size,
      idleTimeoutMillis: 0,
      maxLifetimeSeconds: 0,
      maxUses: Infinity,
      connectionTimeoutMillis: 0,
      allowExitOnIdle: false,
    });
    pool.on('error', (e) => log('abworker-node: pg pool client error:', e && e.message));
    let clients;
    try {
      clients = await Promise.all(Array.from({ length: size }, () => pool.connect()));
    } catch (e) {
      pool.end().catch(() => {});
      throw e;
    }
    for (const c of clients) c.release();
    return pool;
  }

  // borrow (pool.connect()), run, release — inside the operation's time
  pooledOp(pool, build) {
    return lendingOp(() => pool.connect(), build);
  }

  async closePool(pool) {
    await pool.end();
  }

  async endStep() {
    const c = this.client;
    const names = this.prepared;
    this.prepared = [];
    this.last = null;
    if (!c) return;
    for (const name of names) {
      const parsed = c.connection.parsedStatements;
      if (name in parsed) await c.query(`DEALLOCATE ${name}`);
      delete parsed[name];
      delete c.connection.submittedNamedStatements[name];
    }
  }
}
