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
// group is $transaction([createMany({data: rows})]); a statement of no plain shape goes
// through $queryRawUnsafe / $executeRawUnsafe. Values read come from the records Prisma
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
import { LITERAL_BOUND, batchShape, byKey, kindOfType, mapped, record, rowsOf, typesOf } from './layer.js';
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
        '(RETURNING the row), any other: updateMany({where, data}); delete: deleteMany({where}); a statement of no ' +
        'plain shape: see raw reads',
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
      'query log': 'off (no log option), no tracing, no metrics',
      connect: "node-pg's connect and end (Prisma adds nothing to opening a connection)",
      load: 'persistent connections only, one client per worker process',
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
    this.prisma = new PrismaClient({ adapter: factory });
    await this.prisma.$connect();
    this.adapter = await factory.connect(); // raw reads (below): the same pool, its one connection
    const [row] = await this.prisma.$queryRawUnsafe('SELECT pg_backend_pid() AS pid');
    this.pid = Number(row.pid);
    return { server_pid: this.pid, server_version: info.server_version };
  }

  async close() {
    const p = this.prisma, pool = this.pool;
    this.prisma = this.pool = null;
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
    const m = MODELS[shape.table];
    if (!m || JSON.stringify(m.columns) !== JSON.stringify(shape.table_columns) ||
        JSON.stringify(m.types) !== JSON.stringify(shape.table_types)) {
      throw new Unsupported(`${this.method}: the Prisma client was generated without table ${shape.table} as this ` +
        'suite defines it (models come from the built-in suites at build time)');
    }
    const name = shape.table.charAt(0).toLowerCase() + shape.table.slice(1);
    return this.prisma[name];
  }

  // generated values → Prisma's types, by the columns the shape binds (in marker order)
  adapt(rows, types) {
    const shape = mapped(this.shape);
    if (!shape) return rows.map((row) => row.map((v, k) => (v === null ? null : RAW_BIND[types[k]](v))));
    const bound = shape.kind === 'select' || shape.kind === 'delete' ? shape.where : [...shape.columns, ...shape.where];
    const binders = typesOf(shape, bound).map(binderOf);
    return rows.map((row) => row.map((v, k) => (v === null ? null : binders[k](v, types[k]))));
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
    return async (args) => {
      const values = args || [];
      const argTypes = values.map((v) => ({ scalarType: v instanceof Uint8Array ? 'bytes' : 'string', arity: 'scalar' }));
      let r;
      try {
        r = await this.adapter.queryRaw({ sql: text, args: values, argTypes });
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
      return (args) => this.prisma.$executeRawUnsafe(text, ...args);
    }
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
    return async (group) => {
      await this.prisma.$transaction([model.createMany({ data: group.map((values) => record(columns, values)) })]);
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
