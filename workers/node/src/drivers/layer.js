// What every layer method shares (an ORM or a query builder over a driver this worker measures
// bare: protocol/PROTOCOL.md, the step's `shape`). A layer never parses SQL: the runner says
// what a statement does — kind, table, columns read or written, the columns its WHERE compares
// with markers, and for a table of the suite all its columns, their SQL types and its key —
// and the layer builds that with its own API. Values are read from the layer's records (objects)
// by column name, then turned into the protocol's native values as the bare driver reads them
// (the worker's own parsers), so that checksums agree with the driver's.

import { Unsupported } from '../driver.js';
import { K } from '../protocol.js';

// The checksum's kind of a column of the suite's SQL type, on a DBMS (as the bare driver
// derives it from the result's column types). SQLite: null (by each value's type).
export function kindOfType(type, dbms) {
  const t = type.toLowerCase();
  if (/^(integer|int|smallint|bigint|int2|int4|int8)\b/.test(t)) return K.INT;
  if (/^(double|real|float)/.test(t)) return K.FLOAT;
  if (/^(numeric|decimal)/.test(t)) return K.DECIMAL;
  if (/^bool/.test(t)) return dbms === 'mariadb' ? K.INT : K.BOOL; // MariaDB: TINYINT(1), read as an integer
  if (/^timestamp|^datetime/.test(t)) return K.TIMESTAMP;
  if (/^date$/.test(t)) return K.DATE;
  if (/^time$/.test(t)) return K.TIME;
  if (/^(bytes|bytea|blob)/.test(t)) return K.BYTES;
  return K.TEXT;
}

// Each named column's SQL type in the shape's table.
export function typesOf(shape, columns) {
  return columns.map((c) => {
    const i = shape.table_columns.indexOf(c);
    if (i < 0) throw new Unsupported(`column ${c} is not one of table ${shape.table}'s`);
    return shape.table_types[i];
  });
}

// The step's shape when the layer can map its table (a table of the suite); else null.
export function mapped(shape) {
  return shape && Array.isArray(shape.table_columns) && Array.isArray(shape.table_types) ? shape : null;
}

// A select whose WHERE is exactly the table's primary key: a get-by-key.
export function byKey(shape) {
  const key = shape.key || [];
  return shape.where !== null && key.length > 0 && shape.where.length === key.length &&
    key.every((k) => shape.where.includes(k));
}

// ---- richer shapes (protocol: Shapes) ----------------------------------------------------------
// A shape whose `where` is null is richer than ANDed equalities: its `filter` (a tree), `items`,
// `joins`, `group`, `order`, `limit`, `offset` and `set` say what it does, and a layer builds it
// from them with its own API. An operand is a marker ({param: i}: the operation's i-th value) or
// a literal ({value}).

// Every feature a shape can use (src/accessbench/suite/shape.py FEATURES): a layer's hello says,
// for each, that its API maps it or why not.
export const FEATURES = ['select', 'get', 'where', 'star', 'compare', 'between', 'in', 'null', 'like', 'or', 'join',
  'left-join', 'aggregate', 'group', 'order', 'limit', 'offset', 'insert', 'update', 'increment', 'delete',
  'load-lazy', 'load-joined', 'load-selectin'];

// capabilities.shapes: every feature mapped but those `unsupported` gives a reason for
export function shapesOf(unsupported) {
  return { maps: FEATURES.filter((f) => !(f in unsupported)), unsupported };
}

export const rich = (shape) => shape.where === null;

// an operand's value in one operation (args: its values in marker order)
export const operand = (op, args) => ('param' in op ? args[op.param] : op.value);

// The SQL type of a column of a table the shape names (`tables`, else the shape's own table).
export function columnType(shape, table, column) {
  const t = shape.tables && shape.tables[table];
  const columns = t ? t.columns : table === shape.table ? shape.table_columns : null;
  const types = t ? t.types : shape.table_types;
  const i = columns ? columns.indexOf(column) : -1;
  if (i < 0) throw new Unsupported(`column ${table}.${column} is not one of the suite's tables'`);
  return types[i];
}

// What each marker of a shape binds: {table, column} (a column it is compared with, set or
// inserted into), 'count' (a LIMIT or OFFSET) or 'pattern' (a LIKE's), in marker order.
export function paramTargets(shape) {
  const out = [];
  const put = (op, what) => {
    if (op && 'param' in op) out[op.param] = what;
  };
  if (shape.kind === 'insert') return shape.columns.map((column) => ({ table: shape.table, column }));
  if (shape.where !== null) {
    const bound = shape.kind === 'select' || shape.kind === 'delete' ? shape.where : [...shape.columns, ...shape.where];
    return bound.map((column) => ({ table: shape.table, column }));
  }
  for (const s of shape.set || []) put(s.arg, { table: shape.table, column: s.column });
  const walk = (term) => {
    if (!term) return;
    if (term.and || term.or) {
      for (const t of term.and || term.or) walk(t);
      return;
    }
    for (const a of term.args) put(a, term.op === 'like' ? 'pattern' : term.column);
  };
  walk(shape.filter);
  put(shape.limit, 'count');
  put(shape.offset, 'count');
  return out;
}

// The checksum's kind of an aggregate over a column of SQL type `type` on a DBMS, as the DBMS
// types the result (null: SQLite, by each value): count → bigint; sum of an integer → bigint
// (PostgreSQL) or DECIMAL (MariaDB), of a bigint or numeric → numeric, of a float → double;
// avg → numeric, or double over a float; min and max → the column's own.
export function aggregateKind(fn, type, dbms) {
  if (dbms === 'sqlite') return null;
  if (fn === 'count') return K.INT;
  const k = kindOfType(type, dbms);
  if (fn === 'min' || fn === 'max') return k;
  if (k === K.FLOAT) return K.FLOAT;
  if (fn === 'sum' && dbms === 'postgresql' && k === K.INT && !/^(bigint|int8)/i.test(type)) return K.INT;
  return K.DECIMAL;
}

// each result column's kind (null: SQLite, by each value)
export function itemKinds(shape, dbms) {
  if (dbms === 'sqlite') return null;
  return shape.items.map((it) => ('fn' in it
    ? aggregateKind(it.fn, it.column === null ? 'integer' : columnType(shape, it.table, it.column), dbms)
    : kindOfType(columnType(shape, it.table, it.column), dbms)));
}

// the SQL type of each result column (an aggregate's: its column's; count's: null)
export function itemTypes(shape) {
  return shape.items.map((it) => (it.column === null ? null : columnType(shape, it.table, it.column)));
}

// A LIKE pattern (SQL's % and _) as a prefix, an infix, a suffix or an exact text — what a layer
// with startsWith/contains/endsWith has — or null when it is none of these (a _, a % inside).
export function likeParts(pattern) {
  if (typeof pattern !== 'string' || pattern.includes('_') || pattern.includes('\\')) return null;
  const lead = pattern.startsWith('%'), tail = pattern.length > 1 && pattern.endsWith('%');
  const core = pattern.slice(lead ? 1 : 0, tail ? -1 : undefined);
  if (core.includes('%')) return null;
  if (lead && tail) return { contains: core };
  if (lead) return { endsWith: core };
  if (tail) return { startsWith: core };
  return { equals: core };
}

// { column: value } of the columns named, from one operation's values (in marker order)
export function record(columns, values, offset = 0) {
  const r = {};
  for (let i = 0; i < columns.length; i++) r[columns[i]] = values[offset + i];
  return r;
}

// The batch step of a layer is an insert of rows through its bulk API: nothing else has one.
export function batchShape(shape, method, how) {
  if (!mapped(shape) || shape.kind !== 'insert') {
    throw new Unsupported(`${method}: a batch is an insert of rows (${how}); this statement is not one`);
  }
  return shape;
}

// Records (objects) → row arrays of `columns`, each value through `decode[i]` (null: as is).
export function rowsOf(objects, columns, decode) {
  const n = columns.length;
  const rows = new Array(objects.length);
  for (let r = 0; r < objects.length; r++) {
    const o = objects[r];
    const row = new Array(n);
    for (let i = 0; i < n; i++) {
      const v = o[columns[i]];
      row[i] = v === null || v === undefined ? null : decode[i] === null ? v : decode[i](v);
    }
    rows[r] = row;
  }
  return rows;
}

export const LITERAL_BOUND = (layer) => `unsupported: ${layer} binds every value (it has no API that runs a ` +
  'statement with its values inlined)';
