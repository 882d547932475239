// node-knex+pg, node-knex+mysql2, node-knex+better-sqlite3: Knex, the query builder, over a
// driver this worker also measures bare (node-pg, node-mysql2, node-better-sqlite3), so that
// the cells side by side give what the layer costs.
//
// Knex is used as its users use it: a query built per operation from the table's name —
// `knex(t).select(cols).where({key}).first()` for a read by key, `knex(t).select(cols)[.where]`
// for any other read, `.insert({…})`, `.where({…}).update({…})`, `.where({…}).del()` — awaited
// through Knex's pool (tarn) of one connection; a batch group is one multi-row
// `trx(t).insert([rows])` inside `knex.transaction`. A richer statement is built from its shape
// with the builder's own methods: where/orWhere with nested callbacks for AND and OR groups,
// whereBetween, whereIn, whereNull/whereNotNull, where(col, 'like', v), join/leftJoin over the
// declared reference, count/sum/min/max/avg with aliases, groupBy, orderBy([{column, order}]),
// limit/offset, update({…}) and increment(col, x), del(). Knex has no relations: a load step
// runs the hand-written strategies (loading.js) with the builder — the parents' query, then
// knex(child).where(col, v) per parent (lazy), knex(child).whereIn(col, values) per level
// (selectin), or the parents' query as a derived table leftJoin-ed to each level (joined). A
// statement of no shape goes through `knex.raw(sql, bindings)` (Knex's own `?` markers, the
// suite's neutral ones), answered "api": "raw". The step's `shape` (worked out by the runner)
// says which; no SQL is parsed here. Knex gives
// records (objects): every value is read from its record by column name. The driver under it
// is configured as the bare method configures it (the same connection settings, pg's type
// parsers, mysql2's number and date strings, better-sqlite3's safe integers and pragmas), so
// values read and written are the bare driver's and the checksums agree.
//
// A layer method runs one client per process and persistent connections only (its pool is
// Knex's own, of one connection): under load the runner starts one worker per client.

import knexFactory from 'knex';

import { PROCESSES, Unsupported, packageVersion } from '../driver.js';
import { IN, JOINED, ONE, PARENTS, runAsync } from '../loading.js';
import { K, TEXT_FORMS } from '../protocol.js';
import {
  LITERAL_BOUND, batchShape, byKey, columnType, itemKinds, itemTypes, kindOfType, mapped, operand, record, rich, rowsOf,
  shapesOf, typesOf,
} from './layer.js';
import Mysql2Driver, {
  COMPRESS_SETTING, READ_ONLY_SETTING as MYSQL_READ_ONLY, TLS_SETTING as MYSQL_TLS, decodeRows, initialize,
  kindOf as mysqlKindOf, parseDate, parseDatetime,
} from './mysql2.js';
import PgDriver, { READ_ONLY_SETTING as PG_READ_ONLY, TLS_SETTING as PG_TLS } from './pg.js';
import { kindOf as pgKindOf } from './pgtext.js';
import SqliteDriver from './sqlite.js';

// Knex's pool: one connection, made at open and kept (never reaped while idle), so that every
// operation borrows the same connection and returns it, as a Knex user's requests do.
const POOL = { min: 1, max: 1, idleTimeoutMillis: 2147483647, reapIntervalMillis: 2147483647 };

const SETTINGS = {
  layer: `Knex ${packageVersion('knex')} (query builder), as its users call it`,
  pool: "Knex's own pool (tarn): min = max = 1 connection, made at open, never reaped; every operation " +
    'acquires it and releases it (acquireConnectionTimeout 60 s)',
  statements: 'built per operation: read by key knex(t).select(cols).where({key}).first(); other reads ' +
    "knex(t).select(cols | '*')[.where({…})]; insert knex(t).insert({…}); update knex(t).where({…}).update({…}); " +
    'delete knex(t).where({…}).del(); richer shapes with the builder: where/orWhere with nested callbacks ' +
    "(AND and OR groups), where(col, op, v) for = <> < <= > >=, whereBetween, whereIn, whereNull/whereNotNull, " +
    "where(col, 'like', v), join/leftJoin(t, a, b) over the declared reference (columns qualified t.c and " +
    'aliased t__c), count/sum/min/max/avg({alias: col}) with groupBy, orderBy([{column, order}]), limit/offset, ' +
    'update({…}) with increment(col, x) (Knex parseFloats the amount) and del(); a literal of the statement is ' +
    'bound as a value; a statement of no shape: knex.raw(sql, bindings), answered "api": "raw"',
  rows: 'records (objects) as Knex returns them; every value read from its record by column name (or alias)',
  load: "Knex has no relations: the hand-written strategies (the worker's loading.js) written with the builder — " +
    "lazy: the parents' query, then knex(child).select('*').where(col, v) per parent and per child (N+1); " +
    "selectin: the parents, then knex(child).select('*').whereIn(col, values) per level over the distinct keys " +
    "read; joined: knex.select({p0__c: 'p0.c', …}).from(parents.as('p0')).leftJoin('child as p1', 'p1.col', " +
    "'p0.key') … (one query), each entity kept once by its key",
  'query log': "no debug; the verification pass counts statements with a knex.on('query') listener, added when its " +
    'op is built and removed after the step (the timed pass runs without it)',
  connect: "the driver's own connect and close, as the bare method (Knex adds nothing to opening a connection)",
  'load clients': "persistent connections only, one client per worker process (Knex's pool of one connection)",
};

// Knex's builder has a form for every shape feature (load: the hand-written strategies above)
const SHAPES = shapesOf({});

function knexOf(client, connection, extra = {}) {
  return knexFactory({
    client, connection, acquireConnectionTimeout: 60000, debug: false, ...extra,
    pool: { ...POOL, ...(extra.pool || {}) },
  });
}

// What the three share: ops from the shape, each a Knex query built inside the operation.
// `this.knex`, `this.dbms[0]`; per driver: `decoders(types)` (Knex's value → the protocol's
// native value, null where it is already), `rawRows(result)` (knex.raw's result → rows, with
// `this.lastKinds`), `rawChanged(result)`, `named(builder)` (prepared mode) and `inserted(r)`.
const KnexLayer = (Base) => class extends Base {
  constructor(method) {
    super(method);
    this.driverName = 'knex';
    this.sync = false;
    this.concurrency = PROCESSES;
    this.loadPolicies = ['persistent'];
    this.lastKinds = null;
    this.lastWidth = undefined;
    this.shapes = SHAPES;
    this.listening = null; // the verification pass's 'query' listener, while it is on
  }

  version() {
    return `${packageVersion('knex')} (${this.under} ${packageVersion(this.under)})`;
  }

  hasLoad() {
    return true;
  }

  // the verification pass: count every query Knex runs (its 'query' event), from now to the end
  // of the step
  count() {
    if (!this.counter || this.listening) return;
    const counter = this.counter;
    counter.on = true;
    this.listening = () => counter.n++;
    this.knex.on('query', this.listening);
  }

  batchStyle() {
    return 'knex.transaction(trx => trx(t).insert([rows])): one multi-row INSERT per group in its own transaction';
  }

  kinds() {
    return this.lastKinds;
  }

  width() {
    return this.lastWidth;
  }

  serverPid() {
    return this.pid || 0;
  }

  async close() {
    const k = this.knex;
    this.knex = null;
    if (k) await k.destroy();
  }

  txnBegin() {
    return this.knex.raw('BEGIN');
  }

  txnCommit() {
    return this.knex.raw('COMMIT');
  }

  async recover() {
    if (this.knex) await this.knex.raw('ROLLBACK');
  }

  // reading rows of `columns` of the shape's table: the kinds, and each value's decoder
  reading(shape, columns) {
    const types = typesOf(shape, columns);
    const kinds = this.dbms[0] === 'sqlite' ? null : types.map((t) => kindOfType(t, this.dbms[0]));
    const decode = this.decoders(types);
    return (objects) => {
      this.lastKinds = kinds;
      this.lastWidth = columns.length;
      return rowsOf(objects, columns, decode);
    };
  }

  // reading the items of a richer select: their kinds, and each value's decoder, by name
  readingItems(shape) {
    const names = this.itemNames(shape);
    const kinds = itemKinds(shape, this.dbms[0]);
    const decode = this.itemDecoders(shape);
    return (objects) => {
      this.lastKinds = kinds;
      this.lastWidth = names.length;
      return rowsOf(objects, names, decode);
    };
  }

  // the name each item is read by: a column's own, or with joins table__column (aliased so); an
  // aggregate's alias (the statement's, else fn_i)
  itemNames(shape) {
    const joined = shape.joins.length > 0;
    return shape.items.map((it, i) => ('fn' in it ? it.as || `${it.fn}_${i}` : joined ? `${it.table}__${it.column}` : it.column));
  }

  // a value of each item as the bare driver reads it (default: as Knex gives it)
  itemDecoders(shape) {
    return shape.items.map(() => null);
  }

  // knex(t) with the shape's joins, items, condition, grouping, order and page, for one
  // operation's values (`args`, in marker order)
  selectQuery(shape, args) {
    const joined = shape.joins.length > 0;
    let b = this.knex(shape.table);
    const names = this.itemNames(shape);
    for (const j of shape.joins) {
      const [a, c] = j.on;
      b = b[j.type === 'left' ? 'leftJoin' : 'join'](j.table, `${a.table}.${a.column}`, `${c.table}.${c.column}`);
    }
    if (shape.star) {
      b = b.select('*');
    } else {
      shape.items.forEach((it, i) => {
        if (!('fn' in it)) b = b.select(joined ? { [names[i]]: `${it.table}.${it.column}` } : it.column);
        else b = b[it.fn]({ [names[i]]: it.column === null ? '*' : joined ? `${it.table}.${it.column}` : it.column });
      });
    }
    const col = joined ? (c) => `${c.table}.${c.column}` : (c) => c.column;
    if (shape.where !== null) {
      if (shape.where.length) b = b.where(record(shape.where, args));
    } else if (shape.filter) {
      b = KnexLayerFilter(b, shape.filter, args, col);
    }
    if (shape.group.length) b = b.groupBy(shape.group.map(col));
    if (shape.order.length) b = b.orderBy(shape.order.map((o) => ({ column: col(o), order: o.desc ? 'desc' : 'asc' })));
    if (shape.limit) b = b.limit(Number(operand(shape.limit, args)));
    if (shape.offset) b = b.offset(Number(operand(shape.offset, args)));
    return b;
  }

  scanOp(sql) {
    return this.readOp(sql, 'extended');
  }

  readOp(sql, mode) {
    const knex = this.knex, shape = mapped(this.shape);
    this.count();
    if (!shape || shape.kind !== 'select') {
      this.api = 'raw';
      return async (args) => this.rawRows(await this.named(knex.raw(sql, args || []), mode, sql));
    }
    if (rich(shape)) {
      const readItems = this.readingItems(shape);
      return async (args) => readItems(await this.named(this.selectQuery(shape, args || []), mode, sql));
    }
    const { table, columns, where } = shape;
    const read = this.reading(shape, columns);
    if (byKey(shape)) {
      return async (args) => {
        const found = await this.named(knex(table).select(columns).where(record(where, args)).first(), mode, sql);
        return read(found === undefined ? [] : [found]);
      };
    }
    if (where.length === 0) return async () => read(await this.named(knex(table).select(columns), mode, sql));
    return async (args) => read(await this.named(knex(table).select(columns).where(record(where, args)), mode, sql));
  }

  execOp(sql, mode, reads) {
    this.checkMode(mode);
    if (reads) return this.readOp(sql, mode);
    const knex = this.knex, shape = mapped(this.shape);
    this.count();
    if (!shape || shape.kind === 'select') {
      this.api = 'raw';
      return async (args) => this.rawChanged(await this.named(knex.raw(sql, args), mode, sql));
    }
    if (rich(shape)) return this.richWriteOp(shape, mode, sql);
    const { table, columns, where } = shape;
    switch (shape.kind) {
      case 'insert':
        return async (args) => this.inserted(await this.named(knex(table).insert(record(columns, args)), mode, sql));
      case 'update': {
        const n = columns.length;
        return (args) => this.named(knex(table).where(record(where, args, n)).update(record(columns, args)), mode, sql);
      }
      default:
        return (args) => this.named(knex(table).where(record(where, args)).del(), mode, sql);
    }
  }

  // an update or delete of a richer condition; an update's `c = c + ?` through increment()
  richWriteOp(shape, mode, sql) {
    const { table, filter } = shape;
    const where = (args) => {
      const b = this.knex(table);
      return filter ? KnexLayerFilter(b, filter, args, (c) => c.column) : b;
    };
    if (shape.kind === 'delete') return (args) => this.named(where(args).del(), mode, sql);
    const sets = shape.set.filter((s) => s.op === '=');
    const increments = shape.set.filter((s) => s.op === '+');
    return (args) => {
      let b = where(args);
      if (sets.length) {
        const data = {};
        for (const s of sets) data[s.column] = operand(s.arg, args);
        b = b.update(data);
      }
      for (const s of increments) b = b.increment(s.column, operand(s.arg, args));
      return this.named(b, mode, sql);
    };
  }

  // A load (loading.js's strategies) with the builder: the parents' query, then each level's by
  // where(col, v) or whereIn(col, values), or all at once left-joined; records read by name.
  loadOp(plan) {
    const knex = this.knex, dbms = this.dbms[0];
    this.count();
    const kindsOf = (types) => (dbms === 'sqlite' ? null : types.map((t) => kindOfType(t, dbms)));
    const tables = [{ columns: plan.columns, types: plan.types }, ...plan.levels];
    const decode = tables.map((t) => this.decoders(t.types));
    const parents = plan.shape;
    const readParents = (objects) => rowsOf(objects, plan.columns, decode[0]);
    const aliases = {}, names = [];
    tables.forEach((t, k) => t.columns.forEach((c) => {
      names.push(`p${k}__${c}`);
      aliases[`p${k}__${c}`] = `p${k}.${c}`;
    }));
    const allDecode = decode.flat();
    const run = async (request, args) => {
      switch (request[0]) {
        case PARENTS: {
          const b = rich(parents) ? this.selectQuery(parents, args) : knex(plan.table).select('*')
            .where(record(parents.where, args));
          return [readParents(await b), plan.types];
        }
        case ONE: {
          const level = plan.levels[request[1]];
          const found = await knex(level.table).select('*').where(level.column, request[2]);
          return [rowsOf(found, level.columns, decode[request[1] + 1]), level.types];
        }
        case IN: {
          const level = plan.levels[request[1]];
          const found = await knex(level.table).select('*').whereIn(level.column, request[2]);
          return [rowsOf(found, level.columns, decode[request[1] + 1]), level.types];
        }
        default: {
          const sub = rich(parents) ? this.selectQuery(parents, args) : knex(plan.table).select('*')
            .where(record(parents.where, args));
          let b = knex.select(aliases).from(sub.as('p0'));
          plan.levels.forEach((level, k) => {
            b = b.leftJoin(`${level.table} as p${k + 1}`, `p${k + 1}.${level.column}`, `p${k}.${level.parentColumn}`);
          });
          return [rowsOf(await b, names, allDecode), tables.flatMap((t) => t.types)];
        }
      }
    };
    return runAsync(plan, run, kindsOf, null);
  }

  batchOp(sql) {
    const { table, columns } = batchShape(this.shape, this.method, 'trx(t).insert([rows])');
    const knex = this.knex;
    this.count();
    return async (group) => {
      const rows = group.map((values) => record(columns, values));
      await knex.transaction((trx) => trx(table).insert(rows));
      return group.length;
    };
  }

  checkMode(mode) {
    if (!this.modes.includes(mode)) throw new Unsupported(`${this.method}: ${this.settings()[mode]}`);
  }

  // the builder as the mode runs it (default: as it is)
  named(builder) {
    return builder;
  }

  async endStep() {
    this.lastKinds = null;
    this.lastWidth = undefined;
    if (this.listening) {
      if (this.knex) this.knex.removeListener('query', this.listening);
      this.listening = null;
    }
  }
};

// A condition tree with the builder: a top-level AND as chained where(…), an OR as where(…)
// then orWhere(…); a nested group as a where/orWhere callback (Knex's parenthesised group).
function KnexLayerFilter(b, filter, args, col) {
  const term = (q, t, or) => {
    const w = or ? 'orWhere' : 'where';
    if (t.and || t.or) {
      return q[w]((sub) => {
        const terms = t.and || t.or;
        terms.forEach((x, i) => term(sub, x, t.or !== undefined && i > 0));
      });
    }
    const c = col(t.column);
    const v = t.args.map((a) => operand(a, args));
    switch (t.op) {
      case 'between': return q[or ? 'orWhereBetween' : 'whereBetween'](c, v);
      case 'in': return q[or ? 'orWhereIn' : 'whereIn'](c, v);
      case 'is null': return q[or ? 'orWhereNull' : 'whereNull'](c);
      case 'is not null': return q[or ? 'orWhereNotNull' : 'whereNotNull'](c);
      default: return q[w](c, t.op, v[0]); // = <> < <= > >= like
    }
  };
  const terms = filter.and || filter.or;
  if (!terms) return term(b, filter, false);
  terms.forEach((x, i) => {
    b = term(b, x, filter.or !== undefined && i > 0);
  });
  return b;
}

// ---- over node-pg ----------------------------------------------------------------------------

let statementCounter = 0;

export class KnexPg extends KnexLayer(PgDriver) {
  constructor(method) {
    super(method);
    this.under = 'pg';
    this.modes = ['extended', 'prepared'];
    this.names = new Map(); // the step's statement texts → their pg statement names (prepared)
  }

  configure(key, value) {
    throw new Unsupported(`node-knex+pg has no setting ${key}=${value}`);
  }

  settings() {
    return {
      ...SETTINGS,
      driver: "pg as node-pg connects it: Knex's pg dialect makes each pg.Client from the same connection " +
        "settings (host or socket directory, port, database, user, options=-c search_path, TLS (below), " +
        "keepAlive off) and the same type parsers (every OID decoded by this worker's, as node-pg)",
      tls: "node-pg's, passed in Knex's connection settings (which Knex copies once, keeping the secure context " +
        'and checkServerIdentity as they are, and gives to every pg.Client it makes): ' + PG_TLS,
      read_only: "node-pg's, in Knex's connection settings (so in every pg.Client Knex makes): " + PG_READ_ONLY,
      literal: LITERAL_BOUND('Knex'),
      extended: "Knex's default: pg's client.query({text, values}): an unnamed statement parsed every time",
      prepared: "the query's .options({name}) (Knex passes a query's options to pg's client.query): a named " +
        'statement abw_kN per statement of the step, parsed at its first execution; DEALLOCATE after the step',
      parameters: "node-pg's: each value its PostgreSQL text, bytes a Buffer (the values Knex is given)",
      batch: 'one multi-row INSERT per group (unnamed: its text changes with the group size) in a transaction',
    };
  }

  async open(ep) {
    // The bare driver's open learns TLS (prefer) and DateStyle; Knex then makes its own connection
    // with the same configuration.
    const info = await super.open(ep);
    await PgDriver.prototype.close.call(this);
    this.knex = knexOf('pg', this.loadConfig(ep));
    const r = await this.knex.raw('SELECT pg_backend_pid() AS pid');
    this.pid = r.rows[0].pid;
    return { server_pid: this.pid, server_version: info.server_version };
  }

  connectOp(ep) {
    return PgDriver.prototype.connectOp.call(this, ep);
  }

  decoders(types) {
    return types.map(() => null); // pg's type parsers are this worker's: values are native already
  }

  named(builder, mode, sql) {
    if (mode !== 'prepared') return builder;
    let name = this.names.get(sql);
    if (name === undefined) this.names.set(sql, (name = `abw_k${++statementCounter}`));
    return builder.options({ name });
  }

  rawRows(r) {
    this.lastKinds = r.fields.map((f) => pgKindOf(f.dataTypeID));
    this.lastWidth = r.fields.length;
    const names = r.fields.map((f) => f.name);
    return r.rows.map((o) => names.map((n) => o[n]));
  }

  rawChanged(r) {
    return r.rowCount || 0;
  }

  inserted(r) {
    return r && typeof r.rowCount === 'number' ? r.rowCount : 1;
  }

  async recover() {
    await this.knex.raw('ROLLBACK');
  }

  async endStep() {
    await super.endStep();
    const names = [...this.names.values()];
    this.names.clear();
    if (!this.knex || names.length === 0) return;
    const c = await this.knex.client.acquireConnection();
    try {
      for (const name of names) {
        if (name in c.connection.parsedStatements) await c.query(`DEALLOCATE ${name}`);
        delete c.connection.parsedStatements[name];
      }
    } finally {
      await this.knex.client.releaseConnection(c);
    }
  }
}

// ---- over node-mysql2 ------------------------------------------------------------------------

// Values as Knex is given them on MariaDB: plain JavaScript values, which mysql2 escapes into
// the text (integers as numbers, or their text past 2^53; booleans true/false; doubles as
// numbers; decimals, dates and timestamps as their text; bytes as a Buffer: X'…').
const MYSQL_PLAIN = {
  int: (v) => (v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v.toString()),
  bool: (v) => v,
  float: (v) => v,
  decimal: TEXT_FORMS.decimal,
  text: (v) => v,
  date: TEXT_FORMS.date,
  timestamp: TEXT_FORMS.timestamp,
  bytes: (v) => v,
};

function plainRows(rows, types) {
  const conv = types.map((t) => MYSQL_PLAIN[t]);
  return rows.map((row) => row.map((v, k) => (v === null ? null : conv[k](v))));
}

export class KnexMysql2 extends KnexLayer(Mysql2Driver) {
  constructor(method) {
    super(method);
    this.under = 'mysql2';
    this.modes = ['literal'];
    this.bindsLiterals = true;
  }

  configure(key, value) {
    throw new Unsupported(`node-knex+mysql2 has no setting ${key}=${value}`);
  }

  settings() {
    const binary = "unsupported: Knex's mysql2 dialect runs every statement as connection.query(sql, bindings), " +
      "which mysql2 interpolates into the text on the client (COM_QUERY); it never prepares (no binary protocol)";
    return {
      ...SETTINGS,
      driver: "mysql2 as node-mysql2 connects it (socket or host and port, utf8mb4, FOUND_ROWS, no keepalive, " +
        'BIGINT and DECIMAL as exact text, dates as text, TLS and compression below), but with its default ' +
        "queryFormat: Knex needs mysql2's client-side interpolation",
      tls: "node-mysql2's, passed in Knex's connection settings (Knex deep-copies them once when it is made, so " +
        "mysql2 builds its secure context from Knex's copy of the ssl object, once): " + MYSQL_TLS,
      compress: "node-mysql2's, in Knex's connection settings: " + COMPRESS_SETTING,
      read_only: MYSQL_READ_ONLY + ": run by Knex's pool afterCreate hook on every connection it makes (the " +
        "connect step: node-mysql2's, after its handshake, inside its time)",
      literal: "Knex's only mode on mysql2: the query's bindings interpolated into the text by mysql2's escaping " +
        '(numbers as digits, strings quoted with \\ escapes, Buffers as X\'…\') and sent by COM_QUERY',
      extended: binary,
      prepared: binary,
      parameters: 'plain JavaScript values: integers Number (text past 2^53), booleans, doubles Number, decimals, ' +
        'dates and timestamps as their text, text, bytes Buffer',
      results: "records from mysql2's text protocol; then, inside the operation, as node-mysql2: BIGINT → BigInt, " +
        'DATETIME/TIMESTAMP → µs since 1970, DATE → days; the rest as mysql2 reads it',
      batch: 'one multi-row INSERT per group, values interpolated by mysql2, in a transaction',
    };
  }

  connectionConfig(ep) {
    const c = this.config(ep);
    delete c.queryFormat; // Knex binds through mysql2's own interpolation
    delete c.rowsAsArray; // Knex reads records
    return c;
  }

  async open(ep) {
    const info = await super.open(ep); // server_pid, version; what every connection runs first (initStatements)
    await Mysql2Driver.prototype.close.call(this);
    const statements = this.initStatements();
    this.knex = knexOf('mysql2', this.connectionConfig(ep), {
      pool: statements.length > 0
        ? { afterCreate: (c, done) => initialize(c, statements).then(() => done(null, c), (e) => done(e, c)) }
        : {},
    });
    const [rows] = await this.knex.raw('SELECT TID AS tid, VERSION() AS v FROM information_schema.PROCESSLIST ' +
      'WHERE ID = CONNECTION_ID()');
    this.pid = Number(rows[0].tid);
    return { server_pid: this.pid, server_version: info.server_version };
  }

  connectOp(ep) {
    return Mysql2Driver.prototype.connectOp.call(this, ep);
  }

  adapt(rows, types) {
    return plainRows(rows, types);
  }

  adaptLiterals(rows, types) {
    return plainRows(rows, types);
  }

  decoders(types) {
    return types.map((t) => {
      const k = kindOfType(t, 'mariadb');
      if (/^bigint/i.test(t)) return (v) => BigInt(v);
      if (k === K.TIMESTAMP) return parseDatetime;
      if (k === K.DATE) return parseDate;
      return null;
    });
  }

  // an aggregate as MariaDB types it and mysql2's text protocol gives it: count a BIGINT (its
  // text: BigInt), sum and avg a DECIMAL (its text, kept) or a DOUBLE, min and max their column's
  itemDecoders(shape) {
    const types = itemTypes(shape);
    return shape.items.map((it, i) => {
      if (it.fn === 'count') return (v) => BigInt(v);
      if (it.fn === 'sum' || it.fn === 'avg') return null;
      return this.decoders([types[i]])[0];
    });
  }

  rawRows([rows, fields]) {
    if (!Array.isArray(rows)) return [];
    this.lastKinds = fields.map(mysqlKindOf);
    this.lastWidth = fields.length;
    const names = fields.map((f) => f.name);
    return decodeRows(rows.map((o) => names.map((n) => o[n])), fields, false);
  }

  rawChanged([r]) {
    return Array.isArray(r) ? r.length : r.affectedRows;
  }

  inserted(r) {
    return 1; // Knex answers an insert on MySQL with the new row's id
  }
}

// ---- over node-better-sqlite3 ------------------------------------------------------------------

export class KnexBetterSqlite3 extends KnexLayer(SqliteDriver) {
  constructor(method) {
    super(method);
    this.under = 'better-sqlite3';
    this.modes = ['extended'];
  }

  configure(key, value) {
    throw new Unsupported(`node-knex+better-sqlite3 has no setting ${key}=${value}`);
  }

  settings() {
    return {
      ...SETTINGS,
      driver: "better-sqlite3 as node-better-sqlite3 opens it: Knex's better-sqlite3 dialect makes the Database " +
        '(busy timeout 5000 ms, its default); the pool\'s afterCreate hook sets defaultSafeIntegers(true) and the ' +
        'pragmas synchronous=FULL, cache_size=-2000, foreign_keys=OFF; useNullAsDefault: true',
      read_only: "endpoint read_only: Knex's connection options {readonly: true}, which its dialect passes to " +
        'new Database (SQLITE_OPEN_READONLY) for every connection it makes; the connect step as node-better-sqlite3',
      errors: "compileSqlOnError: false: a failed query's message is prefixed with its text with the ? markers " +
        "(Knex's default inlines the bindings, and its escaper throws on a BigInt)",
      literal: LITERAL_BOUND('Knex'),
      extended: "Knex's only way: db.prepare(sql) and all()/run() with the bindings, every operation",
      prepared: "unsupported: Knex's better-sqlite3 dialect prepares every statement at every execution and " +
        'keeps none (no statement reuse)',
      parameters: "node-better-sqlite3's: integers BigInt, booleans 1/0, doubles Number, decimals, dates and " +
        'timestamps as text, bytes Buffer',
      results: 'records; INTEGER → BigInt (safe integers), REAL → Number, TEXT → string, BLOB → Buffer, by value',
    };
  }

  async open(ep) {
    const info = SqliteDriver.prototype.open.call(this, ep);
    SqliteDriver.prototype.close.call(this);
    const connection = { filename: ep.file };
    if (ep.read_only === true) connection.options = { readonly: true }; // Knex's dialect opens it SQLITE_OPEN_READONLY
    this.knex = knexOf('better-sqlite3', connection, {
      useNullAsDefault: true,
      // Knex's default inlines the bindings into a failed query's message, and its escaper throws
      // on a BigInt (the integers bound here): the database's error would become a TypeError
      compileSqlOnError: false,
      pool: {
        afterCreate: (db, done) => {
          try {
            db.defaultSafeIntegers(true);
            for (const p of ['synchronous = FULL', 'cache_size = -2000', 'foreign_keys = OFF']) db.pragma(p);
            done(null, db);
          } catch (e) {
            done(e, db);
          }
        },
      },
    });
    await this.knex.raw('SELECT 1');
    return info;
  }

  connectOp(ep) {
    return SqliteDriver.prototype.connectOp.call(this, ep);
  }

  decoders(types) {
    return types.map(() => null);
  }

  rawRows(rows) {
    if (!Array.isArray(rows)) return [];
    this.lastKinds = null;
    const names = rows.length ? Object.keys(rows[0]) : [];
    this.lastWidth = rows.length ? names.length : this.lastWidth;
    return rows.map((o) => names.map((n) => o[n]));
  }

  rawChanged(r) {
    return r && typeof r.changes === 'number' ? r.changes : 0;
  }

  inserted(r) {
    return 1; // Knex answers an insert on SQLite with the new row's id
  }

  async recover() {
    const c = await this.knex.client.acquireConnection();
    try {
      if (c.inTransaction) c.exec('ROLLBACK');
    } finally {
      await this.knex.client.releaseConnection(c);
    }
  }

  isDbError(e) {
    return SqliteDriver.prototype.isDbError.call(this, e) || (e instanceof Error && /SQLITE_/.test(String(e.code)));
  }
}
