// node-mysql2: mysql2, the pure-JavaScript MySQL/MariaDB client, on MariaDB.
//
// Its core (callback) API, each call wrapped in one Promise here (mysql2/promise is not used):
//   literal  connection.query(text)           COM_QUERY, text protocol, nothing interpolated
//   extended connection.execute(sql, values)  COM_STMT_PREPARE + COM_STMT_EXECUTE, then
//            connection.unprepare(sql)        COM_STMT_CLOSE and out of mysql2's statement cache
//   prepared connection.prepare(sql) once, statement.execute(values) per operation
//   record   HANDLER statements by connection.query (as the Python MariaDB drivers)
//
// mysql2 keeps prepared statements per connection in an LRU keyed by their text
// (maxPreparedStatements), consulted by both execute() and prepare(): the extended mode takes
// its statement out of that cache after every operation, and a step's prepared statements are
// taken out (and closed) when the step ends, so no step ever finds another's statement there.
//
// Under load every op is built on one connection (the session's own by default): persistent
// clients get a connection each, per-request makes one inside every operation, pooled borrows
// one from mysql2's own pool (createPool) for every operation.

import net from 'node:net';

import mysql from 'mysql2';

import { ASYNC_TASKS, Driver, Unsupported, bindRows, lendingOp, packageVersion } from '../driver.js';
import { HAND_WRITTEN } from '../loading.js';
import { K, TEXT_FORMS, convertMarkers, daysFromCivil } from '../protocol.js';
import { tlsOf } from './tls.js';

const { Types } = mysql;
const BINARY_CHARSET = 63;

const log = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');

// HANDLER … READ NEXT returns this many records per round trip in a record-level scan (as the
// Python MariaDB drivers: accessbench/pyworker/drivers/mysql.py).
const HANDLER_ROWS = 1000;
const RECORD_SETTING = 'HANDLER table OPEN before the loop (untimed); per operation HANDLER … READ index = (key), ' +
  `or for a scan READ FIRST then READ NEXT, LIMIT ${HANDLER_ROWS} records per round trip; CLOSE after the step`;

// The serving thread's OS id, so the runner can read its CPU time (one thread per connection).
// With it the version and whether the session starts in autocommit (the server's default).
const SERVER_TID = 'SELECT TID, VERSION(), @@autocommit FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()';

// No client-side interpolation, ever: the literal mode's texts go out as they are, and a
// query given values (which mysql2 would otherwise escape into the text) is refused.
function noInterpolation(sql, values) {
  if (values !== undefined && values !== null && (!Array.isArray(values) || values.length > 0)) {
    throw new TypeError('node-mysql2: client-side interpolation is disabled (queryFormat)');
  }
  return sql;
}

// ---- TLS and compression ----------------------------------------------------------------------
// The endpoint's TLS keys (tls.js reads them, the CA file once, at open) → mysql2's own ssl
// profile object, made once and given to every connection of the session (mysql2 builds its
// secure context from it once and keys its TLS session cache by it): shared by node-mysql2 and
// node-knex+mysql2 (Knex hands its connection settings to mysql2.createConnection).
export function mysqlTls(ep) {
  const t = tlsOf(ep);
  if (t.direct) {
    throw new Unsupported("mysql2 has no sslnegotiation=direct (the MariaDB protocol's TLS starts after the " +
      "server's greeting, by the client's SSL request)");
  }
  const out = { compress: ep.compress === true };
  if (t.mode === 'disable' || t.mode === 'allow' || t.mode === 'prefer') {
    if (t.version && t.mode === 'prefer') {
      throw new Unsupported('mysql2 has no sslmode=prefer (TLS only if offered): a pinned tls_version needs ' +
        'sslmode require, verify-ca or verify-full');
    }
    return out; // no ssl option: mysql2 then never asks for TLS (it has no "preferred" mode)
  }
  if (t.mode === 'verify-full' && !ep.socket && net.isIP(String(ep.host || ''))) {
    // mysql2 gives tls.connect a servername only for a DNS name and no host (nor lets its ssl
    // object pass one), so node:tls checks an IP address host's certificate against 'localhost'
    throw new Unsupported(`mysql2 has no host name check for an IP address host (${ep.host}): its verifyIdentity ` +
      "checks the certificate against 'localhost' instead (node:tls's fallback; mysql2 sets servername only for a " +
      'DNS name); verify-ca or a DNS host name work');
  }
  const ssl = { rejectUnauthorized: t.mode !== 'require', verifyIdentity: t.mode === 'verify-full' };
  if (t.ca) ssl.ca = t.ca;
  if (t.version) ssl.minVersion = ssl.maxVersion = t.version;
  out.ssl = ssl;
  return out;
}

export const TLS_SETTING = "mysql2's ssl option (its SslOptions), the object made once at open (the CA file read " +
  'then) and shared by every connection, so mysql2 builds its tls.SecureContext from it once; disable, and ' +
  "prefer/absent (mysql2 has no preferred mode: it asks for TLS only when given ssl) → no ssl option: no TLS, no " +
  'SSL request; require → {rejectUnauthorized: false, verifyIdentity: false} (encrypted, nothing checked); ' +
  'verify-ca → {ca, rejectUnauthorized: true, verifyIdentity: false} (the chain to sslrootcert, no host name); ' +
  'verify-full → {ca, rejectUnauthorized: true, verifyIdentity: true} (the chain and the host name: node:tls ' +
  "checkServerIdentity) for a DNS host name; for an IP address host unsupported (mysql2 sets tls.connect's " +
  "servername only for a DNS name and passes no host, so node:tls would check the certificate against " +
  "'localhost'); tls_version → minVersion = maxVersion; sslnegotiation=direct: " +
  "unsupported (no such handshake in the MariaDB protocol); mysql2's default TLS session resumption kept: it " +
  'keeps the sessions the server issues per ssl object and host:port and offers the last at the next connect ' +
  '(an abbreviated handshake where the server resumes it); the handshake (SSL request, TLS, then the ' +
  'credentials) is inside the connect';

export const READ_ONLY_SETTING = 'endpoint read_only: SET SESSION TRANSACTION READ ONLY as the first statement ' +
  'of every connection (mysql2 has no init command)';

export const COMPRESS_SETTING = "compress: true when the endpoint asks (mysql2's compressed protocol: " +
  'CLIENT_COMPRESS, zlib, every packet after the handshake deflated by node:zlib in the compressed framing); ' +
  'checked after the handshake that the server granted it (else open fails); otherwise off';

// ---- values read ------------------------------------------------------------------------------
// mysql2 reads BIGINT as exact decimal text (supportBigNumbers + bigNumberStrings), DECIMAL as
// its text, DATE/DATETIME/TIMESTAMP as text (dateStrings: its Date objects would keep only
// milliseconds), TIME as text; these columns are turned into native values here, inside the
// operation: BIGINT → BigInt, DATETIME/TIMESTAMP → BigInt µs since 1970, DATE → days since
// 1970, TIME → µs; the zero date 0000-00-00 → null. Everything else is mysql2's own decoding:
// TINYINT/SMALLINT/MEDIUMINT/INT/YEAR → Number (TINYINT(1) too: mysql2 has no boolean mapping),
// DOUBLE → Number, FLOAT → Number (the binary protocol's float32 read back as the shortest
// decimal that round-trips, as the text protocol prints it), strings → string, binary strings
// and BIT → Buffer, JSON → its text (jsonStrings).

const DAY_US = 86400000000;
const SAFE_DAYS = 100000; // |days| * DAY_US stays below 2^53

function num2(s, p) {
  return (s.charCodeAt(p) - 48) * 10 + (s.charCodeAt(p + 1) - 48);
}

// fraction digits at p (after the '.') → µs
function micros(s, p) {
  let frac = 0, nd = 0;
  for (let c = s.charCodeAt(p); c >= 48 && c <= 57 && nd < 6; c = s.charCodeAt(++p)) {
    frac = frac * 10 + (c - 48);
    nd++;
  }
  for (; nd < 6; nd++) frac *= 10;
  return frac;
}

// 'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' → BigInt µs since 1970 (null for a zero date)
export function parseDatetime(s) {
  const y = num2(s, 0) * 100 + num2(s, 2), m = num2(s, 5), d = num2(s, 8);
  if (m === 0 || d === 0) return null;
  let us = 0;
  if (s.length > 10) {
    us = ((num2(s, 11) * 60 + num2(s, 14)) * 60 + num2(s, 17)) * 1e6;
    if (s.charCodeAt(19) === 46) us += micros(s, 20);
  }
  const days = daysFromCivil(y, m, d);
  return days > -SAFE_DAYS && days < SAFE_DAYS ? BigInt(days * DAY_US + us) : BigInt(days) * 86400000000n + BigInt(us);
}

export function parseDate(s) {
  const y = num2(s, 0) * 100 + num2(s, 2), m = num2(s, 5), d = num2(s, 8);
  return m === 0 || d === 0 ? null : daysFromCivil(y, m, d);
}

// '[-]H…H:MM:SS[.ffffff]' → µs (Number)
function parseTime(s) {
  let p = 0, sign = 1;
  if (s.charCodeAt(0) === 45) {
    sign = -1;
    p = 1;
  }
  let h = 0;
  for (let c = s.charCodeAt(p); c >= 48 && c <= 57; c = s.charCodeAt(++p)) h = h * 10 + (c - 48);
  let us = ((h * 60 + num2(s, p + 1)) * 60 + num2(s, p + 4)) * 1e6;
  if (s.charCodeAt(p + 6) === 46) us += micros(s, p + 7);
  return sign * us;
}

const parseBigInt = (s) => BigInt(s);

// a float32 widened to a double → the shortest decimal that reads back as the same float32
function shortestFloat32(x) {
  if (!Number.isFinite(x)) return x;
  for (let k = 1; k < 10; k++) {
    const y = +x.toPrecision(k);
    if (Math.fround(y) === x) return y;
  }
  return x;
}

// the columns of a result that need turning into native values: [index, parse, …]
function decoders(fields, binary) {
  let out = null;
  for (let i = 0; i < fields.length; i++) {
    let parse = null;
    switch (fields[i].columnType) {
      case Types.LONGLONG: parse = parseBigInt; break;
      case Types.DATETIME: case Types.TIMESTAMP: parse = parseDatetime; break;
      case Types.DATE: case Types.NEWDATE: parse = parseDate; break;
      case Types.TIME: parse = parseTime; break;
      case Types.FLOAT: parse = binary ? shortestFloat32 : null; break;
      default: break;
    }
    if (parse !== null) (out ??= []).push(i, parse);
  }
  return out;
}

export function decodeRows(rows, fields, binary) {
  const dec = decoders(fields, binary);
  if (dec === null) return rows;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    for (let k = 0; k < dec.length; k += 2) {
      const v = row[dec[k]];
      if (v !== null) row[dec[k]] = dec[k + 1](v);
    }
  }
  return rows;
}

export function kindOf(field) {
  switch (field.columnType) {
    case Types.TINY: case Types.SHORT: case Types.LONG: case Types.INT24: case Types.LONGLONG: case Types.YEAR:
      return K.INT;
    case Types.FLOAT: case Types.DOUBLE: return K.FLOAT;
    case Types.DECIMAL: case Types.NEWDECIMAL: return K.DECIMAL;
    case Types.DATE: case Types.NEWDATE: return K.DATE;
    case Types.DATETIME: case Types.TIMESTAMP: return K.TIMESTAMP;
    case Types.TIME: return K.TIME;
    case Types.BIT: return K.BYTES;
    default: return field.characterSet === BINARY_CHARSET ? K.BYTES : K.TEXT;
  }
}

// ---- parameters -------------------------------------------------------------------------------
// Generated values → what execute() binds, each type as a mysql2 typed parameter
// (mysql.TypedParameter: the type goes in COM_STMT_EXECUTE as given, its NULL too): integers as
// BIGINT (MYSQL_TYPE_LONGLONG; out of its range: as text), booleans as TINY 1/0 (BOOLEAN is
// TINYINT(1)), doubles as DOUBLE, decimals as NEWDECIMAL (their plain text), dates as DATE (a
// Date at the day's UTC midnight, written by mysql2 in UTC: the connection's timezone is 'Z'),
// bytes as BLOB; text as a string (mysql2 binds it as VAR_STRING) and timestamps as their ISO
// text 'YYYY-MM-DD HH:MM:SS.ffffff' in one: mysql2 binds a JavaScript Date with milliseconds
// only, so the text keeps the microseconds. NULLs typed as their column (text's as VAR_STRING).
const { LONGLONG, TINY, DOUBLE, NEWDECIMAL, DATE, BLOB, VAR_STRING } = mysql.TypedParameter;
const INT64_MIN = -(1n << 63n), INT64_MAX = (1n << 63n) - 1n;
const MS_PER_DAY = 86400000;

const BIND = {
  int: (v) => (v >= INT64_MIN && v <= INT64_MAX ? LONGLONG(v) : v.toString()),
  bool: (v) => TINY(v ? 1 : 0),
  float: (v) => DOUBLE(v),
  decimal: (v) => NEWDECIMAL(v.text),
  text: (v) => v,
  date: (v) => DATE(new Date(v.days * MS_PER_DAY)),
  timestamp: TEXT_FORMS.timestamp,
  bytes: (v) => BLOB(v),
};
const NULLS = {
  int: LONGLONG(null), bool: TINY(null), float: DOUBLE(null), decimal: NEWDECIMAL(null), text: VAR_STRING(null),
  date: DATE(null), timestamp: VAR_STRING(null), bytes: BLOB(null),
};
BIND.null = (t) => NULLS[t];

// ---- the callback API, one Promise per call -----------------------------------------------------

function query(c, sql) {
  return new Promise((resolve, reject) => {
    c.query(sql, (err, rows, fields) => (err ? reject(err) : resolve({ rows, fields })));
  });
}

function execute(c, sql, values) {
  return new Promise((resolve, reject) => {
    c.execute(sql, values, (err, rows, fields) => (err ? reject(err) : resolve({ rows, fields })));
  });
}

function prepare(c, sql) {
  return new Promise((resolve, reject) => {
    c.prepare(sql, (err, stmt) => (err ? reject(err) : resolve(stmt)));
  });
}

function run(stmt, values) {
  return new Promise((resolve, reject) => {
    stmt.execute(values, (err, rows, fields) => (err ? reject(err) : resolve({ rows, fields })));
  });
}

// compress asked and the server did not grant it (mysql2 then goes on uncompressed): refused
function checkCompressed(c, tls) {
  if (tls.compress && !c.config.compress) {
    throw new Unsupported('the server did not grant CLIENT_COMPRESS: mysql2 connected uncompressed');
  }
}

function connect(config) {
  return new Promise((resolve, reject) => {
    const c = mysql.createConnection(config);
    c.on('error', (e) => log('abworker-node: mysql2 connection error:', e && e.message));
    c.connect((err) => {
      if (!err) {
        resolve(c);
        return;
      }
      try {
        c.destroy();
      } catch (e) {
        // a connection that never opened: nothing to close
      }
      reject(err);
    });
  });
}

// Runs a new connection's first statements (mysql2 has no init command), all queued at once:
// mysql2 runs a connection's commands in order, so they precede anything sent on it later.
export function initialize(c, statements) {
  return Promise.all(statements.map((s) => query(c, s)));
}

// COM_QUIT written; mysql2 calls back when it sends it and does not wait for the server to
// close the socket (as libmariadb's mysql_close)
function end(c) {
  return new Promise((resolve, reject) => {
    c.end((err) => (err ? reject(err) : resolve()));
  });
}

function getConnection(pool) {
  return new Promise((resolve, reject) => {
    pool.getConnection((err, c) => (err ? reject(err) : resolve(c)));
  });
}

let handlerCounter = 0;

// mysql2's statement cache size. Its default (16000) preallocates four arrays of that many slots
// for every connection (about 0.5 MB), which was two thirds of the client CPU of a connect; this
// worker holds at most one prepared statement per connection at a time, so 16 never evicts.
const STATEMENT_CACHE = 16;

export default class Mysql2Driver extends Driver {
  constructor(method) {
    super(method);
    this.driverName = 'mysql2';
    this.dbms = ['mariadb'];
    this.modes = ['literal', 'extended', 'prepared', 'record'];
    this.client = null;
    this.pid = 0;
    this.prepared = []; // texts prepared in this step on the session's own connection
    this.handlers = []; // HANDLERs opened in this step on the session's own connection
    this.setAutocommit = false; // the server starts sessions without autocommit: set it on each
    this.readOnly = false; // the endpoint's read_only: every connection made read-only
    this.tls = { compress: false }; // mysqlTls(endpoint), made at open
    this.concurrency = ASYNC_TASKS;
    this.loadPolicies = ['persistent', 'per-request', 'pooled'];
  }

  version() {
    return packageVersion('mysql2');
  }

  batchStyle() {
    return 'one transaction per group: BEGIN, the statement prepared once (connection.prepare, in the first ' +
      'group) and statement.execute per row, each awaited, COMMIT (mysql2 has no batch API: no executemany, ' +
      'no COM_STMT_BULK_EXECUTE)';
  }

  settings() {
    return {
      implementation: "pure JavaScript client; its core callback API, each call wrapped in one Promise " +
        '(mysql2/promise, which captures a stack per call when trace is on, is not used)',
      connection: 'mysql.createConnection: socketPath when the endpoint has a socket, else host and port; ' +
        'database, user, password; charset UTF8MB4_GENERAL_CI (utf8mb4, as libmariadb asks for it); TLS and ' +
        'compression as below; ' +
        "timezone 'Z' (how mysql2 writes a Date parameter; it sends no time_zone to the server); " +
        'enableKeepAlive: false (no TCP keepalive); connectTimeout 10 s (the default); no connect attributes ' +
        "beyond mysql2's own; open runs " + SERVER_TID + ' (server_pid, server_version, autocommit)',
      tls: TLS_SETTING,
      compress: COMPRESS_SETTING,
      read_only: READ_ONLY_SETTING + ', right after the handshake (open\'s; a connect step\'s and a ' +
        "per-request operation's, inside its time; each load client's; each pooled connection's, queued from the " +
        "pool's connection event before the connection is handed out)",
      client_flag: "FOUND_ROWS (an UPDATE counts the rows it matched), with mysql2's default flags " +
        '(LONG_PASSWORD, LONG_FLAG, CONNECT_WITH_DB, ODBC, LOCAL_FILES, IGNORE_SPACE, PROTOCOL_41, TRANSACTIONS, ' +
        'SECURE_CONNECTION, MULTI_RESULTS, SESSION_TRACK, CONNECT_ATTRS, PLUGIN_AUTH…); no MULTI_STATEMENTS',
      autocommit: "on: the server's default, checked at open (@@autocommit); mysql2 has no init command, so " +
        'were it off, the session and every connection made after it would send SET autocommit = 1 after the ' +
        'handshake (inside the time of a connect or per-request operation); BEGIN/COMMIT explicit',
      interpolation: 'none: queryFormat is set to a function that returns the text as it is and refuses values ' +
        "(mysql2's escaping into the text is never used); namedPlaceholders: false",
      literal: 'connection.query(text): text protocol (COM_QUERY), values inlined by this worker (strings with ' +
        "' and \\ doubled, doubles in exponent form, dates as 'YYYY-MM-DD', bytes as X'…')",
      extended: 'connection.execute(sql, values) then connection.unprepare(sql), every operation: ' +
        'COM_STMT_PREPARE (awaited), COM_STMT_EXECUTE, and COM_STMT_CLOSE (no reply) before the next operation — ' +
        "the binary protocol, prepared and executed every time; unprepare takes the statement out of mysql2's " +
        'cache, so execute never finds it there',
      prepared: 'connection.prepare(sql) inside the first operation (COM_STMT_PREPARE), then statement.execute(' +
        'values) per operation (COM_STMT_EXECUTE with the parameter types every time: mysql2 always sets ' +
        "new-params-bound); after the step (untimed) connection.unprepare(sql): COM_STMT_CLOSE and out of mysql2's " +
        'cache, so no later step reuses it',
      'statement cache': "mysql2's per-connection LRU of prepared statements keyed by text is emptied as above: a " +
        'statement is never reused across steps or operations other than the prepared mode says; ' +
        `maxPreparedStatements: ${STATEMENT_CACHE} (the default 16000 preallocates four 16000-slot arrays per ` +
        'connection, ~0.5 MB, two thirds of the client CPU of a connect; at most one statement per connection is ' +
        'ever held here, so it never evicts)',
      record: RECORD_SETTING,
      scan: 'connection.query(text): text protocol',
      parameters: 'mysql2 typed parameters (mysql.TypedParameter), each NULL with its type: integers as BIGINT ' +
        '(LONGLONG), booleans as TINY 1/0, doubles as DOUBLE, decimals as NEWDECIMAL (their plain text), dates as ' +
        "DATE (a Date at the day's UTC midnight, written in UTC: timezone 'Z'), bytes as BLOB; text as a string " +
        "(mysql2's VAR_STRING, utf8mb4); timestamps as ISO text 'YYYY-MM-DD HH:MM:SS.ffffff' in a VAR_STRING " +
        '(mysql2 binds a Date as DATETIME with milliseconds only)',
      results: 'rowsAsArray: true; the whole result buffered by mysql2, each row decoded by its generated row ' +
        'parser (compiled with new Function once per result shape and kept in its parser cache; disableEval ' +
        'false); supportBigNumbers + bigNumberStrings (BIGINT as exact text), decimalNumbers false (DECIMAL as ' +
        'its text), dateStrings (DATE/DATETIME/TIMESTAMP as text), jsonStrings, typeCast true (no custom ' +
        'function); then, inside the operation, BIGINT → BigInt, DATETIME/TIMESTAMP → BigInt µs since 1970 ' +
        '(microseconds kept, no time-zone shift), DATE → days, TIME → µs, zero dates → null; TINYINT(1) stays an ' +
        'integer (Number), other integers Number, DOUBLE Number, FLOAT (binary protocol) the shortest float32 ' +
        'decimal, DECIMAL string, strings string, binary strings and BIT Buffer',
      'rows changed': 'affectedRows of the OK packet (matched rows, with FOUND_ROWS)',
      load: `${HAND_WRITTEN}; each statement as the extended mode runs it (execute, then unprepare: ` +
        'COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_STMT_CLOSE); a key read binds as a BIGINT typed parameter',
      'load clients': "persistent: client 0 uses the session's connection, every other client its own connection " +
        'with the same configuration, opened before the barrier (untimed; its TID read for server_pids) and ' +
        "ended after the trial; a prepared step prepares on each (inside that client's first operation)",
      'per-request': 'mysql.createConnection(same configuration) and its handshake, the operation (a prepared ' +
        'step prepares in every request, a record step opens its HANDLER in every request), end() (COM_QUIT) — ' +
        "all inside the operation's time; the session's own connection stays open, idle",
      pooled: `mysql.createPool (mysql2 ${packageVersion('mysql2')}'s own pool) with the connection configuration ` +
        'and connectionLimit = maxIdle = pool_size (no idle-connection timer), waitForConnections: true, ' +
        'queueLimit: 0, resetOnRelease: false (no COM_RESET_CONNECTION on release); filled before the barrier ' +
        '(pool_size getConnection at once, then all released); each operation: getConnection (a free connection ' +
        "is handed over on process.nextTick, last released first), the operation, release() — inside its time; " +
        'prepared statements are prepared once per pooled connection (record: its HANDLER opened in the first ' +
        'operation on each); the pool is ended after the trial',
    };
  }

  config(ep) {
    const c = {
      user: ep.user,
      database: ep.database,
      charset: 'UTF8MB4_GENERAL_CI',
      flags: ['FOUND_ROWS'],
      enableKeepAlive: false,
      rowsAsArray: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
      decimalNumbers: false,
      dateStrings: true,
      jsonStrings: true,
      typeCast: true,
      multipleStatements: false,
      namedPlaceholders: false,
      queryFormat: noInterpolation,
      maxPreparedStatements: STATEMENT_CACHE,
      timezone: 'Z', // Date parameters (dates) written in UTC; nothing read is a Date (dateStrings)
    };
    if (ep.password) c.password = ep.password;
    if (this.tls.ssl) c.ssl = this.tls.ssl;
    if (this.tls.compress) c.compress = true;
    if (ep.socket) {
      c.socketPath = ep.socket;
    } else {
      c.host = ep.host;
      c.port = Number(ep.port);
    }
    return c;
  }

  // server_pid and server_version of a connection; autocommit turned on when the server
  // starts sessions without it (mysql2 has no init command: then every connection made later
  // sends SET autocommit = 1 after its handshake, inside the time where the connect is timed)
  async tid(c) {
    const { rows, fields } = await query(c, SERVER_TID);
    decodeRows(rows, fields, false);
    if (Number(rows[0][2]) !== 1) {
      this.setAutocommit = true;
      await query(c, 'SET autocommit = 1');
    }
    return { server_pid: Number(rows[0][0]), server_version: rows[0][1] };
  }

  // what every new connection runs first: read-only before anything else it sends, and
  // autocommit where the server starts sessions without it
  initStatements() {
    const s = [];
    if (this.readOnly) s.push('SET SESSION TRANSACTION READ ONLY');
    if (this.setAutocommit) s.push('SET autocommit = 1');
    return s;
  }

  async connectTo(config) {
    const c = await connect(config);
    const statements = this.initStatements();
    if (statements.length > 0) {
      try {
        await initialize(c, statements);
      } catch (e) {
        end(c).catch(() => {});
        throw e;
      }
    }
    return c;
  }

  async open(ep) {
    this.setAutocommit = false;
    this.readOnly = ep.read_only === true;
    this.tls = mysqlTls(ep);
    this.client = await this.connectTo(this.config(ep));
    try {
      checkCompressed(this.client, this.tls);
      const info = await this.tid(this.client);
      this.pid = info.server_pid;
      return info;
    } catch (e) {
      end(this.client).catch(() => {});
      this.client = null;
      throw e;
    }
  }

  async close() {
    const c = this.client;
    this.client = null;
    this.pid = 0;
    if (c) await end(c);
  }

  serverPid() {
    return this.client ? this.pid : 0;
  }

  txnBegin(c = this.client) {
    return query(c, 'BEGIN');
  }

  txnCommit(c = this.client) {
    return query(c, 'COMMIT');
  }

  adapt(rows, types) {
    return bindRows(rows, types, BIND);
  }

  kinds() {
    return this.last ? this.last.map(kindOf) : null;
  }

  connectOp(ep) {
    const config = this.config(ep);
    return async () => {
      await end(await this.connectTo(config));
      return 0;
    };
  }

  // the rows a result read (decoded), or for a statement that reads none the rows it changed
  reader(binary) {
    return ({ rows, fields }) => {
      if (!Array.isArray(rows)) return [];
      this.last = fields;
      return decodeRows(rows, fields, binary);
    };
  }

  scanOp(sql, c = this.client) {
    const read = this.reader(false);
    return async () => read(await query(c, sql));
  }

  execOp(sql, mode, reads, c = this.client) {
    const binary = mode !== 'literal';
    const done = reads ? this.reader(binary) : ({ rows }) => (Array.isArray(rows) ? rows.length : rows.affectedRows);
    if (mode === 'literal') return async (text) => done(await query(c, text));
    const text = convertMarkers(sql, 'qmark');
    if (mode === 'extended') {
      return async (values) => {
        try {
          return done(await execute(c, text, values));
        } finally {
          c.unprepare(text); // COM_STMT_CLOSE, and out of mysql2's cache: the next operation prepares again
        }
      };
    }
    if (mode !== 'prepared') throw new Unsupported(`node-mysql2 has no ${mode} mode`);
    let stmt = null;
    return async (values) => {
      if (stmt === null) stmt = await this.prepareOn(c, text); // inside the first operation's time
      return done(await run(stmt, values));
    };
  }

  // load (loading.js): each statement as the extended mode runs it (execute, then unprepare); a
  // value read binds as its type does (an integer as BIGINT: mysql2 would bind a Number as DOUBLE)
  loadStatements(c = this.client) {
    return {
      query: async (sql, values) => {
        const text = convertMarkers(sql, 'qmark');
        try {
          const { rows, fields } = await execute(c, text, values);
          return [decodeRows(rows, fields, true), fields];
        } finally {
          c.unprepare(text);
        }
      },
      bind: (v) => (typeof v === 'bigint' || Number.isInteger(v) ? LONGLONG(BigInt(v)) : v),
      kinds: (fields) => fields.map(kindOf),
    };
  }

  // connection.prepare (a miss in mysql2's cache: every step takes its statements out of it);
  // those on the session's connection are unprepared after the step, the others go with their
  // connections
  async prepareOn(c, text) {
    const stmt = await prepare(c, text);
    if (c === this.client) this.prepared.push(text);
    return stmt;
  }

  batchOp(sql, c = this.client) {
    const text = convertMarkers(sql, 'qmark');
    let stmt = null;
    return async (group) => {
      await query(c, 'BEGIN');
      if (stmt === null) stmt = await this.prepareOn(c, text);
      for (const values of group) await run(stmt, values);
      await query(c, 'COMMIT');
      return group.length;
    };
  }

  // MariaDB's HANDLER statements as record-level access (as accessbench/pyworker/drivers/mysql.py):
  // the table opened when the op is built (untimed) and closed at the end of the step; keyed
  // reads are HANDLER … READ index = (key), scans READ FIRST then READ NEXT, HANDLER_ROWS at a time.
  async recordOp(kind, record, c = this.client) {
    const name = `ab_h${++handlerCounter}`;
    await query(c, `HANDLER ${record.table} OPEN AS ${name}`);
    if (c === this.client) this.handlers.push(name);
    const read = this.reader(false);
    if (kind === 'scan') {
      const first = `HANDLER ${name} READ FIRST LIMIT ${HANDLER_ROWS}`;
      const next = `HANDLER ${name} READ NEXT LIMIT ${HANDLER_ROWS}`;
      return async () => {
        let rows = read(await query(c, first));
        let got = rows.length;
        while (got === HANDLER_ROWS) {
          const more = read(await query(c, next));
          got = more.length;
          for (let i = 0; i < got; i++) rows.push(more[i]);
        }
        return rows;
      };
    }
    if (kind !== 'exec' || !record.index) {
      throw new Unsupported('record-level access reads: a scan, or an exec step keyed on an index');
    }
    const prefix = `HANDLER ${name} READ \`${record.index}\` = (`;
    return async (key) => read(await query(c, prefix + key + ')'));
  }

  async recover(c = this.client) {
    if (c) await query(c, 'ROLLBACK'); // nothing to undo in autocommit: a no-op then
  }

  // ---- under load ----------------------------------------------------------------------------

  // a persistent client's own connection (untimed)
  async openClient(ep) {
    const c = await this.connectTo(this.config(ep));
    try {
      return { conn: c, pid: (await this.tid(c)).server_pid };
    } catch (e) {
      end(c).catch(() => {});
      throw e;
    }
  }

  async closeClient(c) {
    await end(c);
  }

  // connect, build the op on the new connection, run it, end — all inside the operation's time
  perRequestOp(ep, build) {
    const config = this.config(ep);
    return async (arg) => {
      const c = await this.connectTo(config);
      try {
        return await (await build(c))(arg);
      } finally {
        await end(c);
      }
    };
  }

  async openPool(ep, size) {
    const pool = mysql.createPool({
      ...this.config(ep),
      connectionLimit: size,
      maxIdle: size,
      waitForConnections: true,
      queueLimit: 0,
      resetOnRelease: false,
    });
    pool.on('error', (e) => log('abworker-node: mysql2 pool error:', e && e.message));
    const statements = this.initStatements();
    // a connection whose first statements failed is destroyed, never lent without them (read-write)
    if (statements.length > 0) pool.on('connection', (c) => initialize(c, statements).catch(() => c.destroy()));
    let conns;
    try {
      conns = await Promise.all(Array.from({ length: size }, () => getConnection(pool)));
    } catch (e) {
      pool.end(() => {});
      throw e;
    }
    for (const c of conns) c.release();
    return pool;
  }

  // borrow (getConnection), run, release — inside the operation's time
  pooledOp(pool, build) {
    return lendingOp(() => getConnection(pool), build);
  }

  closePool(pool) {
    return new Promise((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve())));
  }

  async endStep() {
    const c = this.client;
    const texts = this.prepared, names = this.handlers;
    this.prepared = [];
    this.handlers = [];
    this.last = null;
    if (!c) return;
    for (const text of texts) c.unprepare(text); // COM_STMT_CLOSE (no reply), out of mysql2's cache
    for (const name of names) await query(c, `HANDLER ${name} CLOSE`);
  }

  errorMessage(e) {
    return e && e.code ? `${e.code}: ${e.message}` : `${e && e.name ? e.name : 'Error'}: ${e && e.message}`;
  }

  sqlstate(e) {
    return e && typeof e.sqlState === 'string' && /^[0-9A-Z]{5}$/.test(e.sqlState) ? e.sqlState : undefined;
  }
}
