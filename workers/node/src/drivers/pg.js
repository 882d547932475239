// node-pg: node-postgres (`pg`), the pure-JavaScript client (pg-native is not used).
//
// Setting (part of the method name): batch=sequential|pipeline (default sequential).

import pg from 'pg';

import { Driver, Unsupported, isDriverError, packageVersion } from '../driver.js';
import { ProtocolError, convertMarkers } from '../protocol.js';
import { adaptParam, kindOf, messageOf, parserFor, sqlstateOf } from './pgtext.js';

const { Client, DatabaseError } = pg;

const log = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');

// Every value of a text result goes through this worker's parser for its type OID.
const TYPES = {
  getTypeParser(oid, format) {
    return format === 'binary' ? (x) => x : parserFor(oid);
  },
};

// libpq's sslmode → pg's ssl option. pg has no "prefer": the worker tries TLS at open and, when
// the server refuses it, uses no TLS for the rest of the session.
function sslFor(mode) {
  switch (mode || 'prefer') {
    case 'disable': case 'allow': return false;
    case 'prefer': case 'require': return { rejectUnauthorized: false };
    case 'verify-ca': return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full': return { rejectUnauthorized: true };
    default: throw new ProtocolError(`unknown sslmode '${mode}'`);
  }
}

let statementCounter = 0;

export default class PgDriver extends Driver {
  constructor(method) {
    super(method);
    this.driverName = 'pg';
    this.dbms = ['postgresql'];
    this.pipeline = false;
    this.client = null;
    this.last = null; // fields of the last result read
    this.prepared = []; // statement names made in this step
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
      sslmode: "the target's (disable on managed servers): disable/allow → no TLS, require → TLS without " +
        'certificate checks, prefer → TLS tried at open and dropped for the session if the server refuses it',
      literal: 'client.query({text}) without values: simple query protocol (one Query message), text results',
      extended: "client.query({text, values, queryMode: 'extended'}): unnamed statement, " +
        'Parse+Bind+Describe+Execute+Sync written together (corked), parsed every time; parameters as text ' +
        'of unspecified type (the server infers them)',
      prepared: 'client.query({name, text, values}): named statement abw_N unique to the step; pg sends Parse ' +
        'with the first execution (inside the first operation), then Bind+Describe+Execute+Sync; DEALLOCATE ' +
        "after the step (untimed) and pg's per-connection record of the name dropped",
      'automatic preparation': 'none: pg prepares only queries given a name; unnamed queries are parsed every time',
      scan: 'client.query({text}): simple query protocol, text results (several statements in one text: the ' +
        "last one's rows, as PQexec)",
      results: "rowMode 'array', whole result buffered by pg, text format; each value decoded as it arrives by " +
        "pg's per-column type parser, replaced for every OID by this worker's: int2/int4 → Number, int8 → BigInt, " +
        'float4/float8 → Number, numeric → string (PostgreSQL\'s text), bool, bytea → Buffer, timestamp(tz) → ' +
        'BigInt µs since 1970 (microseconds kept, no time-zone shift), date → days, time → µs, others → string',
      batch: this.pipeline ? 'pipeline' : 'sequential',
      'rows changed': 'result.rowCount (from the command tag)',
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
    if (ep.schema) c.options = `-c search_path=${ep.schema}`;
    if (this.pipeline) c.pipeline = true;
    return c;
  }

  async connectClient(ep, ssl, params) {
    const client = new Client(this.config(ep, ssl));
    client.on('error', (e) => log('abworker-node: pg client error:', e && e.message));
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
    this.ssl = sslFor(ep.sslmode);
    try {
      this.client = await this.connectClient(ep, this.ssl, params);
    } catch (e) {
      if ((ep.sslmode || 'prefer') !== 'prefer' || !/does not support SSL/i.test(String(e && e.message))) throw e;
      this.ssl = false;
      this.client = await this.connectClient(ep, this.ssl, params);
    }
    this.client.on('notice', (m) => log(`abworker-node: ${m.severity}: ${m.message}`));
    if (!String(params.DateStyle || '').startsWith('ISO')) await this.client.query('SET DateStyle = ISO');
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

  txnBegin() {
    return this.client.query('BEGIN');
  }

  txnCommit() {
    return this.client.query('COMMIT');
  }

  adapt(rows) {
    return rows.map((row) => row.map(adaptParam));
  }

  kinds() {
    return this.last ? this.last.map((f) => kindOf(f.dataTypeID)) : null;
  }

  width() {
    return this.last ? this.last.length : undefined;
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

  scanOp(sql) {
    const c = this.client;
    return async () => {
      let r = await c.query({ text: sql, rowMode: 'array' });
      if (Array.isArray(r)) r = r[r.length - 1]; // several statements: the last one's rows, as PQexec
      this.last = r.fields;
      return r.rows;
    };
  }

  newName() {
    const name = `abw_${++statementCounter}`;
    this.prepared.push(name);
    return name;
  }

  execOp(sql, mode, reads) {
    const c = this.client;
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
    const name = this.newName();
    return async (values) => done(await c.query({ name, text, values, rowMode: 'array' }));
  }

  batchOp(sql) {
    const c = this.client;
    const text = convertMarkers(sql, 'numeric');
    const name = this.newName();
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

  async recover() {
    const c = this.client;
    if (c && c.getTransactionStatus() !== 'I') await c.query('ROLLBACK');
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

  isDbError(e) {
    return e instanceof DatabaseError || isDriverError(e);
  }

  errorMessage(e) {
    return messageOf(e);
  }

  sqlstate(e) {
    return sqlstateOf(e);
  }
}
