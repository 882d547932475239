// node-drizzle+pg: Drizzle ORM over node-pg's own pg.Client (drizzle({client})), so that the
// cells beside node-pg's give what the layer costs.
//
// Drizzle is used as its users use it: a table object per table of the suite — pgTable(name,
// {columns}, primaryKey) — built at run time from the step's shape (`table_columns`,
// `table_types`, `key`) when a step first needs it, and its query builders:
// db.select({cols}).from(t).where(and(eq(t.k, v), …)) for reads (by key and any other),
// db.insert(t).values({…}), db.update(t).set({…}).where(…), db.delete(t).where(…); prepared
// mode is the same query's .prepare(name) with sql.placeholder() values, executed per
// operation; a batch group is db.insert(t).values([rows]) inside db.transaction; a statement of
// no plain shape goes through db.execute(sql`…`), Drizzle's raw-SQL API.
//
// Reading: Drizzle gives each query pg type parsers of its own (timestamps and dates as their
// text, everything else pg's defaults), then maps each value by its column builder. The
// builders are picked so each value reads back as node-pg reads it: integer/smallint → Number,
// bigint({mode: 'bigint'}) → BigInt, char/varchar/text → the text as sent (char padded),
// numeric → its text, doublePrecision/real → Number, boolean, bytea (a custom type) → Buffer,
// timestamp({mode: 'string'}) and date({mode: 'string'}) → their text, turned inside the
// operation into µs since 1970 and days by this worker's parsers (as node-pg's type parsers
// do): Drizzle's Date mode would keep only milliseconds.

import { and, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import {
  bigint, boolean, char, customType, date, doublePrecision, integer, numeric, pgTable, primaryKey, real, smallint, text,
  timestamp, varchar,
} from 'drizzle-orm/pg-core';

import { PROCESSES, Unsupported, packageVersion } from '../driver.js';
import { segments } from '../protocol.js';
import { LITERAL_BOUND, batchShape, kindOfType, mapped, record, rowsOf, typesOf } from './layer.js';
import PgDriver from './pg.js';
import { OID, kindOf, parseDate, parseTime, parseTimestamp, parseTimestamptz, parseInt8 } from './pgtext.js';

const bytea = customType({ dataType: () => 'bytea' });

// a column builder for a suite's SQL type, and how its value becomes the protocol's (null: as is)
function column(name, type) {
  const t = type.toLowerCase();
  let m;
  if (/^(integer|int|int4)$/.test(t)) return [integer(name), null];
  if (/^(smallint|int2)$/.test(t)) return [smallint(name), null];
  if (/^(bigint|int8)$/.test(t)) return [bigint(name, { mode: 'bigint' }), null];
  if ((m = /^char(?:acter)?\((\d+)\)$/.exec(t))) return [char(name, { length: Number(m[1]) }), null];
  if ((m = /^varchar\((\d+)\)$/.exec(t))) return [varchar(name, { length: Number(m[1]) }), null];
  if (t === 'text') return [text(name), null];
  if (t === 'timestamp') return [timestamp(name, { mode: 'string' }), parseTimestamp];
  if (t === 'date') return [date(name, { mode: 'string' }), parseDate];
  if ((m = /^(?:numeric|decimal)(?:\((\d+),\s*(\d+)\))?$/.exec(t))) {
    return [m[1] ? numeric(name, { precision: Number(m[1]), scale: Number(m[2]) }) : numeric(name), null];
  }
  if (/^(double|double precision|float8|float)$/.test(t)) return [doublePrecision(name), null];
  if (/^(real|float4)$/.test(t)) return [real(name), null];
  if (/^bool(ean)?$/.test(t)) return [boolean(name), null];
  if (/^(bytes|bytea)$/.test(t)) return [bytea(name), null];
  throw new Unsupported(`node-drizzle+pg: no column builder for SQL type ${type}`);
}

// db.execute's rows: pg's default parsers with Drizzle's (timestamps, dates as text): the
// values still text turned into the protocol's as node-pg's parsers do
const RAW = new Map([
  [OID.INT8, parseInt8], [OID.TIMESTAMP, parseTimestamp], [OID.TIMESTAMPTZ, parseTimestamptz], [OID.DATE, parseDate],
  [OID.TIME, parseTime],
]);

let statementCounter = 0;

export default class DrizzlePg extends PgDriver {
  constructor(method) {
    super(method);
    this.driverName = 'drizzle-orm';
    this.modes = ['extended', 'prepared'];
    this.concurrency = PROCESSES;
    this.loadPolicies = ['persistent'];
    this.tables = new Map(); // table name → { table, decode: {column: parser} }
    this.lastKinds = null;
    this.lastWidth = undefined;
  }

  configure(key, value) {
    throw new Unsupported(`node-drizzle+pg has no setting ${key}=${value}`);
  }

  version() {
    return `${packageVersion('drizzle-orm')} (pg ${packageVersion('pg')})`;
  }

  batchStyle() {
    return 'db.transaction(tx => tx.insert(t).values([rows])): one multi-row INSERT per group in its own transaction';
  }

  settings() {
    const pg = super.settings();
    return {
      layer: `Drizzle ORM ${packageVersion('drizzle-orm')} (node-postgres driver), as its users call it`,
      driver: "node-pg's own pg.Client, connected as node-pg connects it (drizzle({client}): no pool)",
      connection: pg.connection,
      tls: pg.tls,
      read_only: pg.read_only,
      tables: 'pgTable objects built at run time from the step\'s shape (all the table\'s columns, their SQL ' +
        'types, primary key) when a step first needs them, kept for the worker\'s life: integer, smallint, ' +
        "bigint({mode: 'bigint'}), char/varchar(length), text, numeric (its text), doublePrecision, real, boolean, " +
        "bytea (customType), timestamp({mode: 'string'}), date({mode: 'string'})",
      statements: 'built per operation: db.select({cols}).from(t).where(and(eq(t.c, v), …)) for reads (by key ' +
        'and any other), db.insert(t).values({…}), db.update(t).set({…}).where(…), db.delete(t).where(…); a ' +
        'statement of no plain shape: db.execute(sql`…`) with its values as parameters',
      literal: LITERAL_BOUND('Drizzle'),
      extended: "Drizzle's default: pg's client.query with the text and values, unnamed (parsed every time)",
      prepared: 'the query built once with sql.placeholder() values and .prepare(name) (a named statement ' +
        'abw_dN, parsed at its first execution inside the first operation), .execute({values}) per operation; ' +
        "DEALLOCATE after the step; a statement of no plain shape: what db.execute does (dialect.sqlToQuery, " +
        'session.prepareQuery) with a statement name, since db.execute has none to give',
      results: "Drizzle's own per-query pg type parsers (timestamps, dates, intervals as text; the rest pg's " +
        "defaults), then its column mapping; records (objects), every value read by column name; timestamps and " +
        "dates turned into µs since 1970 and days by this worker's parsers, inside the operation (Drizzle's Date " +
        'mode keeps milliseconds only)',
      parameters: "node-pg's: each value its PostgreSQL text, bytes a Buffer (the values Drizzle is given; " +
        'its column builders pass them on as they are)',
      'query log': 'off (no logger)',
      cache: "none (Drizzle's NoopCache, the default)",
      connect: "node-pg's connect and end (Drizzle adds nothing to opening a connection)",
      load: 'persistent connections only, one client per worker process',
    };
  }

  async open(ep) {
    const info = await super.open(ep);
    this.db = drizzle({ client: this.client, logger: false });
    return info;
  }

  // the table object of the shape's table (built once per worker)
  tableOf(shape) {
    let t = this.tables.get(shape.table);
    if (t === undefined) {
      const cols = {}, decode = {};
      shape.table_columns.forEach((c, i) => {
        const [builder, parse] = column(c, shape.table_types[i]);
        cols[c] = builder;
        decode[c] = parse;
      });
      const key = shape.key || [];
      const table = key.length > 1
        ? pgTable(shape.table, cols, (x) => [primaryKey({ columns: key.map((k) => x[k]) })])
        : pgTable(shape.table, key.length === 1
          ? { ...cols, [key[0]]: cols[key[0]].primaryKey() } : cols);
      t = { table, decode };
      this.tables.set(shape.table, t);
    }
    return t;
  }

  // and(eq(t.c, value) …) over `where`, values from args at offset (or placeholders)
  static where(table, where, args, offset = 0) {
    if (where.length === 0) return undefined;
    const conds = where.map((c, i) => eq(table[c], args === null ? sql.placeholder(`w${i}`) : args[offset + i]));
    return conds.length === 1 ? conds[0] : and(...conds);
  }

  scanOp(sql_) {
    return this.readOp(sql_, 'extended');
  }

  reading(shape, columns, decodeOf) {
    const kinds = typesOf(shape, columns).map((t) => kindOfType(t, 'postgresql'));
    const decode = columns.map((c) => decodeOf[c]);
    return (objects) => {
      this.lastKinds = kinds;
      this.lastWidth = columns.length;
      return rowsOf(objects, columns, decode);
    };
  }

  // the op of a query: built per operation (extended), or once with placeholders and prepared
  // under a name in the first operation (prepared); `values(args)`: the placeholders' values
  queryOp(mode, build, values, done) {
    if (mode !== 'prepared') return async (args) => done(await build(args));
    let prepared = null;
    return async (args) => {
      if (prepared === null) prepared = build(null).prepare(this.newName(this.client));
      return done(await prepared.execute(values(args)));
    };
  }

  newName(c) {
    const name = `abw_d${++statementCounter}`;
    if (c === this.client) this.prepared.push(name);
    return name;
  }

  readOp(text, mode) {
    const db = this.db, shape = mapped(this.shape);
    if (!shape || shape.kind !== 'select') return this.rawOp(text, mode, true);
    const { table, decode } = this.tableOf(shape);
    const { columns, where } = shape;
    const fields = {};
    for (const c of columns) fields[c] = table[c];
    const read = this.reading(shape, columns, decode);
    const build = (args) => {
      const q = db.select(fields).from(table);
      return where.length ? q.where(DrizzlePg.where(table, where, args)) : q;
    };
    const keys = where.map((_, i) => `w${i}`);
    return this.queryOp(mode, build, (args) => record(keys, args || []), read);
  }

  execOp(text, mode, reads) {
    if (mode === 'literal') throw new Unsupported(`${this.method}: ${LITERAL_BOUND('Drizzle')}`);
    if (reads) return this.readOp(text, mode);
    const db = this.db, shape = mapped(this.shape);
    if (!shape || shape.kind === 'select') return this.rawOp(text, mode, false);
    const { table } = this.tableOf(shape);
    const { columns, where } = shape;
    const changed = (r) => r.rowCount || 0;
    const sets = columns.map((_, i) => `s${i}`), keys = where.map((_, i) => `w${i}`);
    const placeholders = (names) => record(columns, names.map((n) => sql.placeholder(n)));
    switch (shape.kind) {
      case 'insert':
        return this.queryOp(mode, (args) => db.insert(table).values(args === null ? placeholders(sets) : record(columns, args)),
          (args) => record(sets, args), changed);
      case 'update': {
        const n = columns.length;
        const build = (args) => db.update(table).set(args === null ? placeholders(sets) : record(columns, args))
          .where(args === null ? DrizzlePg.where(table, where, null) : DrizzlePg.where(table, where, args, n));
        return this.queryOp(mode, build, (args) => ({ ...record(sets, args), ...record(keys, args, n) }), changed);
      }
      default:
        return this.queryOp(mode, (args) => db.delete(table).where(DrizzlePg.where(table, where, args)),
          (args) => record(keys, args), changed);
    }
  }

  // db.execute(sql`…`): the statement's text with its values as parameters. Prepared: what
  // db.execute does (the dialect's sqlToQuery, the session's prepareQuery), with a statement
  // name, built once with placeholders — db.execute itself has no name to give.
  rawOp(text, mode, reads) {
    const segs = segments(text);
    const db = this.db;
    const build = (args) => {
      const q = sql.raw(segs[0]);
      for (let i = 1; i < segs.length; i++) {
        q.append(sql`${args === null ? sql.placeholder(`p${i - 1}`) : args[i - 1]}`);
        q.append(sql.raw(segs[i]));
      }
      return q;
    };
    const done = (r) => {
      if (!reads) return r.rowCount || 0;
      const names = r.fields.map((f) => f.name);
      const parse = r.fields.map((f) => RAW.get(f.dataTypeID) || null);
      this.lastKinds = r.fields.map((f) => kindOf(f.dataTypeID));
      this.lastWidth = names.length;
      return r.rows.map((o) => names.map((n, i) => {
        const v = o[n];
        return v === null || parse[i] === null || typeof v !== 'string' ? v : parse[i](v);
      }));
    };
    if (mode !== 'prepared') return async (args) => done(await db.execute(build(args || [])));
    const keys = segs.slice(1).map((_, i) => `p${i}`);
    let prepared = null;
    return async (args) => {
      if (prepared === null) {
        prepared = db.session.prepareQuery(db.dialect.sqlToQuery(build(null)), undefined, this.newName(this.client), false);
      }
      return done(await prepared.execute(record(keys, args || [])));
    };
  }

  batchOp() {
    const shape = batchShape(this.shape, this.method, 'db.insert(t).values([rows])');
    const { table } = this.tableOf(shape);
    const { columns } = shape;
    const db = this.db;
    return async (group) => {
      const rows = group.map((values) => record(columns, values));
      await db.transaction(async (tx) => {
        await tx.insert(table).values(rows);
      });
      return group.length;
    };
  }

  kinds() {
    return this.lastKinds;
  }

  // Drizzle wraps the driver's error (DrizzleQueryError): the server's is its cause
  errorMessage(e) {
    return super.errorMessage(e && e.cause ? e.cause : e);
  }

  sqlstate(e) {
    return super.sqlstate(e && e.cause ? e.cause : e);
  }

  width() {
    return this.lastWidth;
  }

  async endStep() {
    this.lastKinds = null;
    this.lastWidth = undefined;
    await super.endStep();
  }
}
