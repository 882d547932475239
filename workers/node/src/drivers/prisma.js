// node-prisma+pg: Prisma ORM 7 over node-postgres through its driver adapter
// (@prisma/adapter-pg), so that the cells beside node-pg's give what the layer costs.
//
// Prisma 7's client is Rust-free: a query compiler (wasm, shipped in the npm package) turns each
// call into SQL, run by the adapter on a pg.Pool. Its models must be known at build time: the
// worker's npm postinstall (scripts/prisma-generate.mjs) writes a schema with a model per table
// of the built-in suites and the conformance script and runs `prisma generate`
// (node_modules/.abw-prisma/). A step on a table the client has no model for (a user's suite)
// answers unsupported: Prisma has no API for tables it was not generated with.
//
// Prisma is used as its users use it: findUnique({where: key, select}) for a read by key,
// findMany({where, select}) for any other read, create({data}), update({where: key, data}) for
// an update by key and updateMany({where, data}) for any other, deleteMany({where}); a batch
// group is $transaction([createMany({data: rows})]). A richer statement is built from its
// shape: where {AND: […], OR: […]} with equals/not/lt/lte/gt/gte, {gte, lte} for BETWEEN, in, null
// and {not: null}, a LIKE pattern as startsWith/contains/endsWith (decided before the clock;
// any other pattern unsupported); orderBy, take, skip, select; groupBy({by, _count, _sum, _min,
// _max, _avg, orderBy}) and aggregate({…}) without a GROUP BY; updateMany({data: {c: {increment:
// x}}}). Prisma has no join of two tables' columns into rows: join shapes are unsupported (its
// relation queries return nested objects). A load goes through the relations the generated
// schema has (from the suites' `references`): include {child: {include: {grandchild: true}}}
// with relationLoadStrategy "join" (the relationJoins preview feature: one statement, LATERAL
// joins with JSON aggregation) or "query" (a statement per level with the keys read: select-in),
// and lazy as Prisma's users write the N+1: findMany of the parents, then each parent's
// children by findMany({where: {fk: parent.key}}) (Prisma has no lazy loading: results are
// plain objects). A statement of no shape goes through $queryRawUnsafe / $executeRawUnsafe (or
// the adapter's queryRaw), answered "api": "raw". Values read come from the records Prisma
// returns, every one by its field name; timestamps, dates and numerics are String fields (see
// the generator) whose text the worker's parsers turn into µs, days and the numeric's text, as
// node-pg reads them.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';

import { PROCESSES, Unsupported, packageVersion } from '../driver.js';
import { K, TEXT_FORMS, convertMarkers } from '../protocol.js';
import {
  LITERAL_BOUND, batchShape, byKey, columnType, itemKinds, kindOfType, likeParts, mapped, operand, paramTargets, record,
  rich, rowsOf, shapesOf, typesOf,
} from './layer.js';
import PgDriver from './pg.js';
import { PG_TEXT, parseDate, parseTime, parseTimestamptz } from './pgtext.js';

const require = createRequire(import.meta.url);
const GENERATED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.abw-prisma');
// the generated client (absent: the method is unavailable, "driver module not importable")
const { PrismaClient } = require(path.join(GENERATED, 'client/index.js'));
const MODELS = JSON.parse(fs.readFileSync(path.join(GENERATED, 'tables.json'), 'utf8'));

// A String field's text (adapter-pg: a timestamp as 'YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00', a date
// as 'YYYY-MM-DD', a numeric as PostgreSQL prints it) → the value node-pg reads; null: as is.
function decoderOf(type) {
  const k = kindOfType(type, 'postgresql');
  if (k === K.TIMESTAMP) return parseTimestamptz;
  if (k === K.DATE) return parseDate;
  if (k === K.BYTES) return (v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return null;
}

// A generated value → what Prisma takes for the column's field (its client checks each type):
// Int a Number, BigInt a BigInt, Float a Number, Boolean, Bytes a Uint8Array (a Buffer), and
// the String fields the text of the value (timestamps 'YYYY-MM-DD HH:MM:SS[.ffffff]', dates,
// numerics their plain text).
function binderOf(sqlType) {
  const t = sqlType.toLowerCase();
  if (/^(bigint|int8)$/.test(t)) return (v) => BigInt(v);
  if (/^(integer|int|int4|smallint|int2)$/.test(t)) return (v) => Number(v);
  if (/^(double|double precision|float8|float|real|float4)$/.test(t)) return (v) => Number(v);
  if (/^bool/.test(t)) return (v) => Boolean(v);
  if (/^(bytes|bytea)$/.test(t)) return (v) => v;
  return (v, type) => (typeof v === 'string' ? v : TEXT_FORMS[type](v));
}

// the Prisma field type of a column of the SQL type (scripts/prisma-generate.mjs)
function fieldType(sqlType) {
  if (sqlType === null) return 'Int';
  const t = sqlType.toLowerCase();
  if (/^(bigint|int8)$/.test(t)) return 'BigInt';
  if (/^(integer|int|int4|smallint|int2)$/.test(t)) return 'Int';
  if (/^(double|double precision|float8|float|real|float4)$/.test(t)) return 'Float';
  if (/^bool/.test(t)) return 'Boolean';
  if (/^(bytes|bytea)$/.test(t)) return 'Bytes';
  return 'String';
}

// a literal of the statement (a JSON string, boolean or number: integers read as BigInt) as
// Prisma takes it for a field of the column's SQL type
function literalOf(sqlType, v) {
  const t = sqlType.toLowerCase();
  if (/^(bigint|int8)$/.test(t)) return BigInt(v);
  if (typeof v === 'bigint' || typeof v === 'number') {
    return /^(integer|int|int4|smallint|int2|double|double precision|float8|float|real|float4)$/.test(t) ? Number(v) : String(v);
  }
  return v;
}

// a LIKE pattern as Prisma's string filter, or unsupported
function likeFilter(pattern) {
  const parts = likeParts(pattern);
  if (parts === null) {
    throw new Unsupported(`node-prisma+pg: Prisma has no LIKE: the pattern ${JSON.stringify(pattern)} is no prefix, ` +
      'infix or suffix (startsWith, contains, endsWith) nor an exact text');
  }
  return parts;
}

const SHAPES = shapesOf({
  join: "Prisma has no join of two tables' columns into rows: its relation queries (include, select of a relation) " +
    'return nested objects, read by a query per relation or a LATERAL JSON aggregation',
  'left-join': "Prisma has no join of two tables' columns into rows: its relation queries (include, select of a " +
    'relation) return nested objects, read by a query per relation or a LATERAL JSON aggregation',
});

// a raw statement's values, without a column to type them by: node-pg's (each value its
// PostgreSQL text, the server inferring its type; bytes a Buffer)
const RAW_BIND = { ...PG_TEXT, bytes: (v) => v };

// the adapter's column types (ColumnTypeEnum) → the checksum's kind, and its values → node-pg's
const RAW_KIND = { 0: K.INT, 1: K.INT, 2: K.FLOAT, 3: K.FLOAT, 4: K.DECIMAL, 5: K.BOOL, 6: K.TEXT, 7: K.TEXT,
  8: K.DATE, 9: K.TIME, 10: K.TIMESTAMP, 13: K.BYTES };
const RAW_READ = { 1: (v) => BigInt(v), 8: parseDate, 9: parseTime, 10: parseTimestamptz,
  13: (v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength) };

export default class PrismaPgLayer extends PgDriver {
  constructor(method) {
    super(method);
    this.driverName = '@prisma/client';
    this.modes = ['extended', 'prepared'];
    this.concurrency = PROCESSES;
    this.loadPolicies = ['persistent'];
    this.naming = null; // prepared steps: SQL text → statement name (the adapter's statementNameGenerator)
    this.named = new Set();
    this.lastKinds = null;
    this.lastWidth = undefined;
    this.shapes = SHAPES;
    this.counting = null; // the verification pass's client, logging its queries (made when first needed)
    this.client = null;
  }

  hasLoad() {
    return true;
  }

  // The verification pass's client: a second client of the same adapter (and pool) that logs
  // every query Prisma runs as an event, counted ($on('query')) into the step's counter; made and
  // connected once, before the first verification op is built (untimed).
  async beforeVerify() {
    if (this.counting !== null || !this.factory) return;
    const counting = new PrismaClient({ adapter: this.factory, log: [{ emit: 'event', level: 'query' }] });
    counting.$on('query', () => {
      if (this.counter) this.counter.n++;
    });
    await counting.$connect();
    this.counting = counting;
  }

  // the client an op is built on: the timed pass's has no log, the verification pass's counts
  clientFor() {
    if (!this.counter || this.counting === null) return this.prisma;
    this.counter.on = true;
    return this.counting;
  }

  configure(key, value) {
    throw new Unsupported(`node-prisma+pg has no setting ${key}=${value}`);
  }

  version() {
    return `${packageVersion('@prisma/client')} (@prisma/adapter-pg ${packageVersion('@prisma/adapter-pg')}, ` +
      `pg ${packageVersion('pg')})`;
  }

  batchStyle() {
    return 'prisma.$transaction([model.createMany({data: rows})]): one multi-row INSERT per group in its own ' +
      'transaction';
  }

  settings() {
    const pg_ = super.settings();
    return {
      layer: `Prisma ORM ${packageVersion('@prisma/client')}, Rust-free client (generator prisma-client-js, ` +
        'query compiler in wasm, driver adapter @prisma/adapter-pg): no engine binary, nothing downloaded',
      client: 'generated at build time (npm postinstall: scripts/prisma-generate.mjs, prisma generate) with a ' +
        "model per table of the built-in suites and the conformance script; a table it has no model for: unsupported",
      models: 'integer/smallint → Int, bigint → BigInt, double/real → Float, boolean → Boolean, bytes → Bytes, ' +
        'char/varchar/text → String; timestamp, date and numeric → String (Prisma\'s DateTime is a JavaScript ' +
        'Date with milliseconds only and its Decimal drops trailing zeros; the pg adapter hands their text to a ' +
        "String field), turned into µs since 1970 and days by this worker's parsers inside the operation",
      pool: "the adapter's pg.Pool, made here: max = min = 1 connection (made at open), idleTimeoutMillis 0, no " +
        "expiry; node-pg's connection settings (socket directory or host, options=-c search_path, TLS: see tls); " +
        "the adapter's own per-query type parsers",
      tls: "node-pg's, in the pg.Pool's configuration (the adapter's connections are pg.Clients): " + pg_.tls,
      read_only: "node-pg's, in the pg.Pool's configuration: " + pg_.read_only,
      connection: pg_.connection,
      statements: 'read by key: findUnique({where: key, select}); other reads: findMany({where, select}); insert: ' +
        'create({data}) (Prisma returns the row: INSERT … RETURNING); update by key: update({where: key, data}) ' +
        '(RETURNING the row), any other: updateMany({where, data}); delete: deleteMany({where}); richer shapes: ' +
        'findMany({where: {AND: […], OR: […], c: v | {not, lt, lte, gt, gte, in} | {gte, lte} (BETWEEN) | null | ' +
        '{not: null} | {startsWith | contains | endsWith} (LIKE), orderBy: [{c: dir}], take, skip, select}), ' +
        'groupBy({by, where, _count: {_all | c}, _sum, _min, _max, _avg, orderBy, take, skip}), aggregate({…}) ' +
        'without a GROUP BY, updateMany({where, data: {c: v | {increment: x}}}), deleteMany({where}); a literal of ' +
        "the statement given as the field's value; a LIKE pattern other than a prefix, infix, suffix or exact " +
        "text: unsupported (before the clock); _avg over a non-float column: unsupported (Prisma's _avg is a " +
        "Float, PostgreSQL's avg of an integer or numeric a numeric), _sum of a String field (numeric, timestamp " +
        'kept as text): unsupported (Prisma sums numeric fields only); a statement of no shape: see raw reads, ' +
        'answered "api": "raw"',
      relations: "from the suites' references, in the generated schema: the child model's field named after the " +
        'parent (one, optional), the parent\'s named after the child (many), relation name child_column; the ' +
        'generator enables the relationJoins preview feature (Prisma 7.10: still a preview) for relationLoadStrategy',
      load: 'joined = findMany({relationLoadStrategy: "join", where, include: {<child>: {include: {<grandchild>: ' +
        'true}}}}) (relationJoins preview: one statement, LATERAL joins aggregating each level as JSON); selectin = ' +
        'the same with relationLoadStrategy: "query" (Prisma\'s default without the preview: a statement per ' +
        'level, WHERE fk IN the keys read); lazy = Prisma has no lazy loading (its results are plain objects with ' +
        'no relation to touch), so the N+1 its users write: findMany of the parents, then for each parent ' +
        'prisma.<child>.findMany({where: {fk: parent.key}}), and so for each child',
      literal: LITERAL_BOUND('Prisma'),
      extended: "the adapter's default: pg's client.query({text, values, rowMode: 'array'}), unnamed, parsed " +
        'every time',
      prepared: "the adapter's statementNameGenerator (set for the step): each SQL text Prisma runs gets a statement " +
        "name abw_pN, so pg parses it once per connection (in the first operation) and binds it after; " +
        'DEALLOCATE after the step',
      parameters: "Prisma's own types (Int a Number, BigInt, Float, Boolean, Bytes a Buffer; the String fields " +
        "the value's text), passed to pg by the adapter as it maps them",
      'raw reads': "a read of no plain shape: the driver adapter's queryRaw (Prisma's SqlDriverAdapter under the " +
        'client, on the same pool): its column types and values as text where they have to be (timestamps, ' +
        "numerics, int8); $queryRawUnsafe would turn timestamps into Dates (milliseconds) and numerics into " +
        "Decimals (trailing zeros dropped); raw writes: $executeRawUnsafe; parameters as node-pg's (text, bytes Buffer)",
      'query log': "off (no log option), no tracing, no metrics, for the timed pass; the verification pass's ops run " +
        "on a second client of the same adapter and pool with log [{emit: 'event', level: 'query'}], its $on('query') " +
        'counting the statements',
      connect: "node-pg's connect and end (Prisma adds nothing to opening a connection)",
      'load clients': 'persistent connections only, one client per worker process',
    };
  }

  poolConfig(ep) {
    const c = this.loadConfig(ep);
    delete c.types; // the adapter gives every query its own type parsers
    return { ...c, max: 1, min: 1, idleTimeoutMillis: 0, maxLifetimeSeconds: 0 };
  }

  async open(ep) {
    const info = await super.open(ep); // learns TLS (prefer) and DateStyle
    await PgDriver.prototype.close.call(this);
    this.pool = new pg.Pool(this.poolConfig(ep));
    this.pool.on('error', (e) => process.stderr.write(`abworker-node: pg pool error: ${e && e.message}\n`));
    const options = { statementNameGenerator: (q) => (this.naming ? this.naming(q.sql) : undefined) };
    if (ep.schema) options.schema = ep.schema;
    const factory = new PrismaPg(this.pool, options);
    this.factory = factory;
    this.prisma = new PrismaClient({ adapter: factory });
    await this.prisma.$connect();
    this.adapter = await factory.connect(); // raw reads (below): the same pool, its one connection
    const [row] = await this.prisma.$queryRawUnsafe('SELECT pg_backend_pid() AS pid');
    this.pid = Number(row.pid);
    return { server_pid: this.pid, server_version: info.server_version };
  }

  async close() {
    const p = this.prisma, pool = this.pool, c = this.counting;
    this.prisma = this.pool = this.counting = this.factory = null;
    if (c) await c.$disconnect();
    if (p) await p.$disconnect();
    if (pool) await pool.end().catch(() => {});
  }

  serverPid() {
    return this.pid || 0;
  }

  txnBegin() {
    return this.prisma.$executeRawUnsafe('BEGIN');
  }

  txnCommit() {
    return this.prisma.$executeRawUnsafe('COMMIT');
  }

  async recover() {
    if (this.prisma) await this.prisma.$executeRawUnsafe('ROLLBACK');
  }

  // the model of the shape's table, when the client was generated with the same table
  model(shape) {
    return this.modelOf(shape.table, shape.table_columns, shape.table_types);
  }

  modelOf(table, columns, types) {
    const m = MODELS[table];
    if (!m || JSON.stringify(m.columns) !== JSON.stringify(columns) || JSON.stringify(m.types) !== JSON.stringify(types)) {
      throw new Unsupported(`${this.method}: the Prisma client was generated without table ${table} as this ` +
        'suite defines it (models come from the built-in suites at build time)');
    }
    const name = table.charAt(0).toLowerCase() + table.slice(1);
    return this.clientFor()[name];
  }

  // generated values → Prisma's types, by what each marker binds (in marker order): a column's
  // field type, a LIMIT's or OFFSET's Int, a LIKE pattern's string filter (startsWith …)
  adapt(rows, types) {
    const shape = mapped(this.shape);
    if (!shape) {
      return rows.map((row) => row.map((v, k) => (v === null ? null : RAW_BIND[types[k]](v))));
    }
    const binders = paramTargets(shape).map((target) => {
      if (target === 'count') return (v) => Number(v);
      if (target === 'pattern') return (v, type) => likeFilter(typeof v === 'string' ? v : TEXT_FORMS[type](v));
      return binderOf(columnType(shape, target.table, target.column));
    });
    return rows.map((row) => row.map((v, k) => (v === null ? null : binders[k](v, types[k]))));
  }

  // the condition tree as Prisma's where: {AND: […]}, {OR: […]}, a field's filter
  static where(shape, term, args) {
    if (term.and) return { AND: term.and.map((t) => PrismaPgLayer.where(shape, t, args)) };
    if (term.or) return { OR: term.or.map((t) => PrismaPgLayer.where(shape, t, args)) };
    const type = columnType(shape, term.column.table, term.column.column);
    const v = term.args.map((a) => ('param' in a ? args[a.param] : term.op === 'like' ? likeFilter(a.value) : literalOf(type, a.value)));
    const c = term.column.column;
    switch (term.op) {
      case '=': return { [c]: v[0] };
      case '<>': return { [c]: { not: v[0] } };
      case '<': return { [c]: { lt: v[0] } };
      case '<=': return { [c]: { lte: v[0] } };
      case '>': return { [c]: { gt: v[0] } };
      case '>=': return { [c]: { gte: v[0] } };
      case 'between': return { [c]: { gte: v[0], lte: v[1] } };
      case 'in': return { [c]: { in: v } };
      case 'is null': return { [c]: null };
      case 'is not null': return { [c]: { not: null } };
      default: return { [c]: v[0] }; // like: its string filter
    }
  }

  // the where of any shape: the plain one's equalities, or the tree
  static whereOf(shape, args) {
    if (shape.where !== null) return record(shape.where, args || []);
    return shape.filter ? PrismaPgLayer.where(shape, shape.filter, args) : {};
  }

  // a richer read: findMany, or groupBy / aggregate when it aggregates; each item read from the
  // record (an aggregate from _count._all, _sum.c, …)
  richReadOp(shape) {
    if (shape.joins.length) throw new Unsupported(`${this.method}: ${SHAPES.unsupported.join}`);
    const model = this.model(shape);
    const kinds = itemKinds(shape, 'postgresql');
    const take = (args) => (shape.limit ? { take: Number(operand(shape.limit, args)) } : {});
    const skip = (args) => (shape.offset ? { skip: Number(operand(shape.offset, args)) } : {});
    const orderBy = shape.order.map((o) => ({ [o.column]: o.desc ? 'desc' : 'asc' }));
    const order = orderBy.length ? { orderBy } : {};
    const aggregated = shape.items.some((it) => 'fn' in it);
    const getters = shape.items.map((it, i) => {
      const type = it.column === null ? null : columnType(shape, it.table, it.column);
      if (!('fn' in it)) {
        const decode = decoderOf(type);
        return decode === null ? (o) => o[it.column] : (o) => (o[it.column] === null ? null : decode(o[it.column]));
      }
      const field = it.column === null ? '_all' : it.column;
      const key = `_${it.fn}`;
      const prismaType = fieldType(type);
      if (it.fn === 'avg' && kinds[i] !== K.FLOAT) {
        throw new Unsupported(`${this.method}: Prisma's _avg is a Float (a JavaScript number), while PostgreSQL's avg of ` +
          `${type} is a numeric: the value read would not be the statement's`);
      }
      if (it.fn === 'sum' && prismaType === 'String') {
        throw new Unsupported(`${this.method}: Prisma has no _sum of a String field (${it.column}, ${type}, is kept as ` +
          'text in this client)');
      }
      const decode = it.fn === 'min' || it.fn === 'max' ? decoderOf(type)
        : it.fn === 'sum' && kinds[i] === K.DECIMAL ? (v) => String(v) : null;
      return (o) => {
        const v = o[key][field];
        return v === null || v === undefined ? null : decode === null ? v : decode(v);
      };
    });
    const read = (objects) => {
      this.lastKinds = kinds;
      this.lastWidth = getters.length;
      const rows = new Array(objects.length);
      for (let r = 0; r < objects.length; r++) rows[r] = getters.map((g) => g(objects[r]));
      return rows;
    };
    if (!aggregated && !shape.group.length) {
      const select = shape.star ? undefined : Object.fromEntries(shape.items.map((it) => [it.column, true]));
      return async (args) => read(await model.findMany({
        where: PrismaPgLayer.whereOf(shape, args), ...(select ? { select } : {}), ...order, ...take(args), ...skip(args),
      }));
    }
    const asked = {};
    for (const it of shape.items) {
      if ('fn' in it) (asked[`_${it.fn}`] ??= {})[it.column === null ? '_all' : it.column] = true;
    }
    if (!shape.group.length) {
      return async (args) => read([await model.aggregate({ where: PrismaPgLayer.whereOf(shape, args), ...asked, ...order, ...take(args), ...skip(args) })]);
    }
    const by = shape.group.map((g) => g.column);
    return async (args) => read(await model.groupBy({
      by, where: PrismaPgLayer.whereOf(shape, args), ...asked, ...order, ...take(args), ...skip(args),
    }));
  }

  // a richer update (updateMany, `c = c + x` as {increment: x}) or delete (deleteMany)
  richWriteOp(shape) {
    const model = this.model(shape);
    if (shape.kind === 'delete') return async (args) => (await model.deleteMany({ where: PrismaPgLayer.whereOf(shape, args) })).count;
    const types = shape.set.map((s) => columnType(shape, shape.table, s.column));
    return async (args) => {
      const data = {};
      shape.set.forEach((s, i) => {
        const v = 'param' in s.arg ? args[s.arg.param] : literalOf(types[i], s.arg.value);
        data[s.column] = s.op === '+' ? { increment: v } : v;
      });
      return (await model.updateMany({ where: PrismaPgLayer.whereOf(shape, args), data })).count;
    };
  }

  // A load through the generated relations: include, with relationLoadStrategy "join" (joined) or
  // "query" (selectin); lazy: the N+1 a Prisma user writes (findMany per parent and per child).
  loadOp(plan) {
    const shape = plan.shape;
    const parent = this.model(shape);
    const levels = plan.levels.map((l) => this.modelOf(l.table, l.columns, l.types));
    const tables = [plan.table, ...plan.levels.map((l) => l.table)];
    const fields = plan.levels.map((l, k) => {
      const child = (MODELS[tables[k]].children || []).find((c) => c.table === l.table && c.column === l.column);
      if (!child) {
        throw new Unsupported(`${this.method}: the Prisma client has no relation ${tables[k]} → ${l.table}.${l.column} ` +
          '(relations come from the built-in suites\' references at build time)');
      }
      return child.field;
    });
    const columns = [plan.columns, ...plan.levels.map((l) => l.columns)];
    const kinds = [plan.types, ...plan.levels.map((l) => l.types)].map((ts) => ts.map((t) => kindOfType(t, 'postgresql')));
    const decode = [plan.types, ...plan.levels.map((l) => l.types)].map((ts) => ts.map(decoderOf));
    const order = shape.order.map((o) => ({ [o.column]: o.desc ? 'desc' : 'asc' }));
    const query = (args) => ({
      where: PrismaPgLayer.whereOf(shape, args),
      ...(order.length ? { orderBy: order } : {}),
      ...(shape.limit ? { take: Number(operand(shape.limit, args)) } : {}),
      ...(shape.offset ? { skip: Number(operand(shape.offset, args)) } : {}),
    });
    const entities = (found) => { // found[k]: level k's records
      const rows = [], counts = [];
      found.forEach((objects, k) => {
        for (const row of rowsOf(objects, columns[k], decode[k])) rows.push(row);
        counts.push([objects.length, kinds[k]]);
      });
      rows.levels = counts;
      return rows;
    };
    if (plan.strategy === 'lazy') {
      return async (args) => {
        const found = [await parent.findMany(query(args))];
        for (let k = 0; k < levels.length; k++) {
          const l = plan.levels[k], next = [];
          for (const o of found[k]) {
            const key = o[l.parentColumn];
            if (key === null) continue;
            for (const child of await levels[k].findMany({ where: { [l.column]: key } })) next.push(child);
          }
          found.push(next);
        }
        return entities(found);
      };
    }
    let include = true;
    for (let k = fields.length - 1; k >= 0; k--) include = { [fields[k]]: include === true ? true : { include } };
    const relationLoadStrategy = plan.strategy === 'joined' ? 'join' : 'query';
    return async (args) => {
      const found = [await parent.findMany({ relationLoadStrategy, ...query(args), include })];
      for (let k = 0; k < fields.length; k++) {
        const next = [];
        for (const o of found[k]) for (const child of o[fields[k]]) next.push(child);
        found.push(next);
      }
      return entities(found);
    };
  }

  // the where of a key: {id: v} or, for a compound key, {k1_k2: {k1, k2}}
  static keyWhere(shape, values) {
    const found = record(shape.where, values);
    if (shape.key.length === 1) return { [shape.key[0]]: found[shape.key[0]] };
    const parts = {};
    for (const k of shape.key) parts[k] = found[k];
    return { [shape.key.join('_')]: parts };
  }

  prepare(mode) {
    if (mode === 'literal') throw new Unsupported(`${this.method}: ${LITERAL_BOUND('Prisma')}`);
    if (mode !== 'prepared') return;
    const names = new Map();
    this.naming = (text) => {
      let name = names.get(text);
      if (name === undefined) {
        name = `abw_p${names.size + 1}_${++PrismaPgLayer.steps}`;
        names.set(text, name);
        this.named.add(name);
      }
      return name;
    };
  }

  scanOp(sql) {
    return this.readOp(sql);
  }

  readOp(sql) {
    const shape = mapped(this.shape);
    if (!shape || shape.kind !== 'select') return this.rawRead(sql);
    if (rich(shape)) return this.richReadOp(shape);
    const model = this.model(shape);
    const { columns, where } = shape;
    const select = {};
    for (const c of columns) select[c] = true;
    const types = typesOf(shape, columns);
    const kinds = types.map((t) => kindOfType(t, 'postgresql'));
    const decode = types.map(decoderOf);
    const read = (objects) => {
      this.lastKinds = kinds;
      this.lastWidth = columns.length;
      return rowsOf(objects, columns, decode);
    };
    if (byKey(shape)) {
      return async (args) => {
        const found = await model.findUnique({ where: PrismaPgLayer.keyWhere(shape, args), select });
        return read(found === null ? [] : [found]);
      };
    }
    return async (args) => read(await model.findMany({ where: record(where, args || []), select }));
  }

  // A statement of no plain shape, read: the driver adapter's queryRaw (Prisma's SqlDriverAdapter,
  // under the client): column types and each value as the adapter reads it (timestamps, dates,
  // numerics and 64-bit integers as text). $queryRawUnsafe would deserialize them itself:
  // timestamps into Dates (milliseconds only) and numerics into Decimals (trailing zeros dropped).
  rawRead(sql) {
    const text = convertMarkers(sql, 'numeric');
    this.api = 'raw';
    const adapter = this.adapter, counter = this.counter;
    if (counter) counter.on = true; // the adapter runs it: one statement, counted here
    return async (args) => {
      const values = args || [];
      const argTypes = values.map((v) => ({ scalarType: v instanceof Uint8Array ? 'bytes' : 'string', arity: 'scalar' }));
      let r;
      try {
        if (counter) counter.n++;
        r = await adapter.queryRaw({ sql: text, args: values, argTypes });
      } catch (e) {
        throw e && e.cause ? Object.assign(new Error(e.cause.message || e.message), { code: e.cause.originalCode }) : e;
      }
      const parse = r.columnTypes.map((t) => RAW_READ[t] || null);
      this.lastKinds = r.columnTypes.map((t) => RAW_KIND[t] ?? K.TEXT);
      this.lastWidth = r.columnNames.length;
      for (const row of r.rows) {
        for (let i = 0; i < row.length; i++) if (row[i] !== null && parse[i] !== null) row[i] = parse[i](row[i]);
      }
      return r.rows;
    };
  }

  execOp(sql, mode, reads) {
    this.prepare(mode);
    if (reads) return this.readOp(sql);
    const shape = mapped(this.shape);
    if (!shape || shape.kind === 'select') {
      const text = convertMarkers(sql, 'numeric');
      const client = this.clientFor();
      this.api = 'raw';
      return (args) => client.$executeRawUnsafe(text, ...args);
    }
    if (rich(shape)) return this.richWriteOp(shape);
    const model = this.model(shape);
    const { columns, where } = shape;
    const n = columns.length;
    switch (shape.kind) {
      case 'insert':
        return async (args) => {
          await model.create({ data: record(columns, args) });
          return 1;
        };
      case 'update':
        if (byKey(shape)) {
          return async (args) => {
            try {
              await model.update({ where: PrismaPgLayer.keyWhere(shape, args.slice(n)), data: record(columns, args) });
              return 1;
            } catch (e) {
              if (e && e.code === 'P2025') return 0; // no row with that key
              throw e;
            }
          };
        }
        return async (args) => (await model.updateMany({ where: record(where, args, n), data: record(columns, args) })).count;
      default:
        return async (args) => (await model.deleteMany({ where: record(where, args) })).count;
    }
  }

  batchOp() {
    const shape = batchShape(this.shape, this.method, 'createMany({data: rows})');
    const model = this.model(shape);
    const { columns } = shape;
    const client = this.clientFor();
    return async (group) => {
      await client.$transaction([model.createMany({ data: group.map((values) => record(columns, values)) })]);
      return group.length;
    };
  }

  kinds() {
    return this.lastKinds;
  }

  width() {
    return this.lastWidth;
  }

  sqlstate(e) {
    const code = e && (e.meta?.driverAdapterError?.cause?.originalCode || e.meta?.code || e.cause?.originalCode);
    return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : super.sqlstate(e);
  }

  async endStep() {
    this.naming = null;
    this.lastKinds = null;
    this.lastWidth = undefined;
    const names = [...this.named];
    this.named.clear();
    if (!this.pool || names.length === 0) return;
    const c = await this.pool.connect();
    try {
      for (const name of names) {
        if (name in c.connection.parsedStatements) await c.query(`DEALLOCATE ${name}`);
        delete c.connection.parsedStatements[name];
      }
    } finally {
      c.release();
    }
  }
}
PrismaPgLayer.steps = 0;
