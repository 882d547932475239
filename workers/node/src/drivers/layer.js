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
  return key.length > 0 && shape.where.length === key.length && key.every((k) => shape.where.includes(k));
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
