// node-drizzle+pg: Drizzle ORM over node-pg's own pg.Client (drizzle({client})), so that the
// cells beside node-pg's give what the layer costs.
//
// Drizzle is used as its users use it: a table object per table of the suite — pgTable(name,
// {columns}, primaryKey) — built at run time from the step's shape (`table_columns`,
// `table_types`, `key`) when a step first needs it, and its query builders:
// db.select({cols}).from(t).where(and(eq(t.k, v), …)) for reads (by key and any other),
// db.insert(t).values({…}), db.update(t).set({…}).where(…), db.delete(t).where(…); prepared
// mode is the same query's .prepare(name) with sql.placeholder() values, executed per
// operation; a batch group is db.insert(t).values([rows]) inside db.transaction. A richer
// statement is built from its shape with Drizzle's operators and builders:
// where(and(gt(…), or(…), between(…), inArray(…), isNull(…), like(…))), innerJoin/leftJoin(t,
// eq(a, b)) over the declared reference, count()/sum()/min()/max()/avg() with groupBy,
// orderBy(asc/desc(…)), limit/offset, update(t).set({c: sql`${t.c} + ${x}`}) (Drizzle's
// documented increment), delete(t).where(…). A load step goes through Drizzle's relational query
// API (relations() between the tables' objects, db.query.<parent>.findMany({with: {…}})), which
// on PostgreSQL reads everything in one statement (LATERAL joins aggregating each level with
// json_agg): its eager load, `joined`; it has no lazy loading and no query-per-level loader. A
// statement of no shape goes through db.execute(sql`…`), Drizzle's raw-SQL API, answered
// "api": "raw".
//
// Reading: Drizzle gives each query pg type parsers of its own (timestamps and dates as their
// text, everything else pg's defaults), then maps each value by its column builder. The
// builders are picked so each value reads back as node-pg reads it: integer/smallint → Number,
// bigint({mode: 'bigint'}) → BigInt, char/varchar/text → the text as sent (char padded),
// numeric → its text, doublePrecision/real → Number, boolean, bytea (a custom type) → Buffer,
// timestamp({mode: 'string'}) and date({mode: 'string'}) → their text, turned inside the
// operation into µs since 1970 and days by this worker's parsers (as node-pg's type parsers
// do): Drizzle's Date mode would keep only milliseconds.

import {
  and, asc, avg, between, count, desc, eq, gt, gte, inArray, isNotNull, isNull, like, lt, lte, max, min, ne, or,
  relations, sql, sum,
} from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import {
  bigint, boolean, char, customType, date, doublePrecision, integer, numeric, pgTable, primaryKey, real, smallint, text,
  timestamp, varchar,
} from 'drizzle-orm/pg-core';

import { PROCESSES, Unsupported, packageVersion } from '../driver.js';
import { segments } from '../protocol.js';
import {
  LITERAL_BOUND, batchShape, itemKinds, kindOfType, mapped, operand, paramTargets, record, rich, rowsOf, shapesOf,
  typesOf,
} from './layer.js';
import { K } from '../protocol.js';
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

const SHAPES = shapesOf({
  'load-lazy': "Drizzle's relations load nothing on access: its results are plain objects, and the relational " +
    'query API reads every relation asked for (with) in the one statement of the query',
  'load-selectin': "Drizzle's relational query API has no query-per-level loader: on PostgreSQL every `with` is " +
    'read in the same statement (LATERAL joins aggregating each level with json_agg)',
});

const COMPARE = { '=': eq, '<>': ne, '<': lt, '<=': lte, '>': gt, '>=': gte };
const AGGREGATE = { count, sum, min, max, avg };

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
    this.shapes = SHAPES;
  }

  hasLoad() {
    return true;
  }

  // the db an op is built on: the verification pass's logs every query into its counter
  // (Drizzle's logger, only on this instance), the timed pass's has no logger
  dbFor(schema) {
    const counter = this.counter;
    if (counter) counter.on = true;
    const logger = counter ? { logQuery: () => counter.n++ } : false;
    if (!schema && !counter) return this.db;
    return drizzle({ client: this.client, logger, ...(schema ? { schema } : {}) });
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
        'and any other), db.insert(t).values({…}), db.update(t).set({…}).where(…), db.delete(t).where(…); richer ' +
        'shapes: db.select() (every column) or db.select({fields}).from(t) with innerJoin/leftJoin(t2, eq(a, b)), ' +
        '.where(and(…), or(…), eq/ne/lt/lte/gt/gte, between, inArray, isNull/isNotNull, like), count()/sum()/' +
        'min()/max()/avg() (count a Number, sum and avg their text, min and max mapped as their column), ' +
        '.groupBy(…), .orderBy(asc/desc(…)), .limit/.offset; update(t).set({c: sql`${t.c} + ${x}`}); a literal of ' +
        'the statement bound as a value; a statement of no shape: db.execute(sql`…`) with its values as ' +
        'parameters, answered "api": "raw"',
      load: "joined = the relational query API: relations() between the tables' objects (one() on the child's " +
        'referencing column, many() on the parent), drizzle({client, schema}), db.query.<parent>.findMany({where, ' +
        'with: {<child>: {with: {<grandchild>: true}}}}): one statement (LATERAL joins, each level aggregated with ' +
        "json_agg; nested values come through JSON, so a 64-bit integer or a numeric beyond a double's precision " +
        'would not read back exactly — the suites\' related tables hold integers and text); lazy and selectin: ' +
        'unsupported (capabilities.shapes)',
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
      'query log': "off (no logger) for the timed pass; the verification pass's op is built on an instance with a " +
        'logger whose logQuery counts the statements',
      cache: "none (Drizzle's NoopCache, the default)",
      connect: "node-pg's connect and end (Drizzle adds nothing to opening a connection)",
      'load clients': 'persistent connections only, one client per worker process',
    };
  }

  async open(ep) {
    const info = await super.open(ep);
    this.db = drizzle({ client: this.client, logger: false });
    return info;
  }

  // the table object of a table the shape names (`tables`)
  tableNamed(shape, name) {
    if (name === shape.table) return this.tableOf(shape);
    const t = shape.tables && shape.tables[name];
    if (!t) throw new Unsupported(`${this.method}: the shape names table ${name} without its columns`);
    return this.tableOf({ table: name, table_columns: t.columns, table_types: t.types, key: t.key });
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

  // An operand in one operation: a marker's value (args) or, built once for a prepared query
  // (args null), its placeholder p<i>; a literal as it is.
  static value(op, args) {
    if (!('param' in op)) return op.value;
    return args === null ? sql.placeholder(`p${op.param}`) : args[op.param];
  }

  // the condition tree with Drizzle's operators
  condition(shape, term, args) {
    if (!term) return undefined;
    if (term.and) return and(...term.and.map((t) => this.condition(shape, t, args)));
    if (term.or) return or(...term.or.map((t) => this.condition(shape, t, args)));
    const c = this.tableNamed(shape, term.column.table).table[term.column.column];
    const v = term.args.map((a) => DrizzlePg.value(a, args));
    switch (term.op) {
      case 'between': return between(c, v[0], v[1]);
      case 'in': return inArray(c, v);
      case 'is null': return isNull(c);
      case 'is not null': return isNotNull(c);
      case 'like': return like(c, v[0]);
      default: return COMPARE[term.op](c, v[0]);
    }
  }

  // the placeholders' values of one operation (a LIMIT's or OFFSET's as a Number)
  placeholderValues(shape) {
    const targets = paramTargets(shape);
    return (args) => {
      const out = {};
      for (let i = 0; i < targets.length; i++) out[`p${i}`] = targets[i] === 'count' ? Number(args[i]) : args[i];
      return out;
    };
  }

  // a richer select: db.select([fields]).from(t)[.innerJoin/.leftJoin][.where][.groupBy][.orderBy]
  // [.limit][.offset], read by each item's field name
  richReadOp(shape, mode) {
    const db = this.dbFor();
    const main = this.tableOf(shape).table;
    const col = (c) => this.tableNamed(shape, c.table).table[c.column];
    const names = [], decode = [], fields = {};
    shape.items.forEach((it, i) => {
      if ('fn' in it) {
        const name = it.as || `${it.fn}_${i}`;
        names.push(name);
        fields[name] = it.column === null ? count() : AGGREGATE[it.fn](col(it));
        decode.push(null);
      } else {
        const name = shape.star ? it.column : `${it.table}.${it.column}`;
        names.push(name);
        fields[name] = col(it);
        decode.push(this.tableNamed(shape, it.table).decode[it.column]);
      }
    });
    const kinds = itemKinds(shape, 'postgresql');
    // sum and avg are their text (mapWith(String)): an integer sum a BigInt, a float's a Number
    shape.items.forEach((it, i) => {
      if (it.fn === 'sum' || it.fn === 'avg') decode[i] = kinds[i] === K.INT ? BigInt : kinds[i] === K.FLOAT ? Number : null;
    });
    // a LIMIT or OFFSET: a Number (a literal is read from the message as a BigInt), or its placeholder
    const count_ = (op, args) => ('param' in op && args === null ? DrizzlePg.value(op, args) : Number(operand(op, args)));
    const build = (args) => {
      let q = shape.star ? db.select().from(main) : db.select(fields).from(main);
      for (const j of shape.joins) {
        const on = eq(col(j.on[0]), col(j.on[1]));
        q = j.type === 'left' ? q.leftJoin(this.tableNamed(shape, j.table).table, on)
          : q.innerJoin(this.tableNamed(shape, j.table).table, on);
      }
      if (shape.filter) q = q.where(this.condition(shape, shape.filter, args));
      if (shape.group.length) q = q.groupBy(...shape.group.map(col));
      if (shape.order.length) q = q.orderBy(...shape.order.map((o) => (o.desc ? desc(col(o)) : asc(col(o)))));
      if (shape.limit) q = q.limit(count_(shape.limit, args));
      if (shape.offset) q = q.offset(count_(shape.offset, args));
      return q;
    };
    const read = (objects) => {
      this.lastKinds = kinds;
      this.lastWidth = names.length;
      return rowsOf(objects, names, decode);
    };
    return this.queryOp(mode, build, this.placeholderValues(shape), read);
  }

  // a richer update or delete: its condition with Drizzle's operators, `c = c + x` as
  // set({c: sql`${t.c} + ${x}`})
  richWriteOp(shape, mode) {
    const db = this.dbFor();
    const { table } = this.tableOf(shape);
    const changed = (r) => r.rowCount || 0;
    const values = this.placeholderValues(shape);
    if (shape.kind === 'delete') {
      return this.queryOp(mode, (args) => db.delete(table).where(this.condition(shape, shape.filter, args)), values, changed);
    }
    const build = (args) => {
      const data = {};
      for (const s of shape.set) {
        const v = DrizzlePg.value(s.arg, args);
        data[s.column] = s.op === '+' ? sql`${table[s.column]} + ${v}` : v;
      }
      return db.update(table).set(data).where(this.condition(shape, shape.filter, args));
    };
    return this.queryOp(mode, build, values, changed);
  }

  // A load through the relational query API: relations() between the levels' table objects, a
  // drizzle instance with them as its schema, db.query.<parent>.findMany({where, with}); the
  // entities read from the nested objects, level by level.
  loadOp(plan) {
    if (plan.strategy !== 'joined') throw new Unsupported(`${this.method}: ${SHAPES.unsupported[`load-${plan.strategy}`]}`);
    const shape = plan.shape;
    const tables = [this.tableOf(shape), ...plan.levels.map((l) => this.tableOf({
      table: l.table, table_columns: l.columns, table_types: l.types, key: l.key,
    }))];
    const names = [plan.table, ...plan.levels.map((l) => l.table)];
    const columns = [plan.columns, ...plan.levels.map((l) => l.columns)];
    // each level's relation on the level above is named after its table (a column of that name:
    // with _rel), and the one back after the table above
    const down = plan.levels.map((l, k) => (columns[k].includes(l.table) ? `${l.table}_rel` : l.table));
    const schema = {};
    names.forEach((name, k) => {
      schema[`t${k}`] = tables[k].table;
      schema[`r${k}`] = relations(tables[k].table, ({ one, many }) => {
        const r = {};
        if (k > 0) {
          const l = plan.levels[k - 1];
          const up = columns[k].includes(names[k - 1]) || names[k - 1] === down[k] ? `${names[k - 1]}_rel` : names[k - 1];
          r[up] = one(tables[k - 1].table, { fields: [tables[k].table[l.column]], references: [tables[k - 1].table[l.parentColumn]] });
        }
        if (k < plan.levels.length) r[down[k]] = many(tables[k + 1].table);
        return r;
      });
    });
    const db = this.dbFor(schema);
    let with_ = true;
    for (let k = plan.levels.length - 1; k >= 0; k--) with_ = { [down[k]]: with_ === true ? true : { with: with_ } };
    const query = db.query.t0;
    const kinds = [shape.table_types, ...plan.levels.map((l) => l.types)].map((ts) => ts.map((t) => kindOfType(t, 'postgresql')));
    const decode = tables.map((t, k) => columns[k].map((c) => t.decode[c]));
    const order = shape.order.map((o) => (o.desc ? desc(tables[0].table[o.column]) : asc(tables[0].table[o.column])));
    return async (args) => {
      const parents = await query.findMany({
        where: shape.filter ? this.condition(shape, shape.filter, args)
          : shape.where && shape.where.length ? DrizzlePg.where(tables[0].table, shape.where, args) : undefined,
        ...(order.length ? { orderBy: order } : {}),
        ...(shape.limit ? { limit: Number(operand(shape.limit, args)) } : {}),
        ...(shape.offset ? { offset: Number(operand(shape.offset, args)) } : {}),
        with: with_,
      });
      const rows = [];
      const levels = [];
      let above = parents;
      for (let k = 0; k < names.length; k++) {
        const found = rowsOf(above, columns[k], decode[k]);
        for (const row of found) rows.push(row);
        levels.push([found.length, kinds[k]]);
        if (k < plan.levels.length) {
          const next = [];
          for (const o of above) for (const child of o[down[k]]) next.push(child);
          above = next;
        }
      }
      rows.levels = levels;
      return rows;
    };
  }

  readOp(text, mode) {
    const shape = mapped(this.shape);
    if (!shape || shape.kind !== 'select') return this.rawOp(text, mode, true);
    if (rich(shape)) return this.richReadOp(shape, mode);
    const db = this.dbFor();
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
    const shape = mapped(this.shape);
    if (!shape || shape.kind === 'select') return this.rawOp(text, mode, false);
    if (rich(shape)) return this.richWriteOp(shape, mode);
    const db = this.dbFor();
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
    const db = this.dbFor();
    this.api = 'raw';
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
    const db = this.dbFor();
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
