// Loading associations (protocol/PROTOCOL.md, "Loading associations"): a `load` step reads a
// parent table's rows and, level by level, the rows of each child table that reference the
// level above (users → posts → comments). One operation is one whole load; it answers every
// entity it read, each once (by its table's key): the parents, then the children, then the
// grandchildren, as rows of their tables' columns in table order, so every strategy and every
// method on a target checksum the same rows.
//
// The three strategies a programmer writes by hand, written once here for every driver of this
// worker (and for Knex, which has no relations: its users write the same strategies with its
// builder):
//   lazy      the parents' statement, then for each distinct value of the referenced column
//             read at a level, that value's rows of the next level (the N+1 pattern: one
//             statement per parent and per child);
//   selectin  the parents' statement, then one statement per level for all the distinct values
//             read at the level above (an IN list; none when the level above read no rows);
//   joined    one statement: the parents left-joined to each level, every row split by the
//             levels' column counts, each entity kept once by its key (a level whose key is NULL
//             in a row has no entity there).
// A strategy is a generator that yields requests — [PARENTS], [ONE, level, value], [IN, level,
// values] or [JOINED] — and receives each one's result as [rows, meta] (rows: arrays of native
// values, as the method's scans read them; meta: what the method's `kinds(meta)` turns into the
// checksum's column kinds, once per level). The method supplies the statements (a driver: the
// message's `one`, `in` and `joined` texts, bound in its extended mode; Knex: its builder) and
// runs the generator, synchronously or awaiting each result (runSync, runAsync), so that a
// synchronous driver's load is not made asynchronous. Statements are counted by the runner as
// it sends them (`counter`, the verification pass's only).

import { ProtocolError } from './protocol.js';

export const PARENTS = 0, ONE = 1, IN = 2, JOINED = 3;

// a driver's settings["load"], before how it binds
export const HAND_WRITTEN = "hand-written, as a programmer writes each strategy (the worker's one implementation, " +
  "loading.js): lazy = the parents' statement, then the message's `one` statement per parent and per child (N+1); " +
  'selectin = the parents, then one `in` statement per level over the distinct keys read; joined = the ' +
  "message's one LEFT JOIN statement, each row split by the levels' column counts, each entity kept once by its " +
  'key; statements counted by this code as it sends them (verification pass)';

// The load step's plan, from its message: the parents' statement and table, and each level.
export function planOf(msg, shape) {
  const load = msg.load;
  if (load === null || typeof load !== 'object') throw new ProtocolError('a load step needs load: {strategy, levels, joined}');
  if (!['lazy', 'joined', 'selectin'].includes(load.strategy)) {
    throw new ProtocolError(`unknown load strategy ${JSON.stringify(load.strategy)}`);
  }
  if (!shape || shape.kind !== 'select' || !Array.isArray(shape.table_columns) || !Array.isArray(shape.key)) {
    throw new ProtocolError("a load step's shape is the select of its parents' table (table_columns, key)");
  }
  if (!Array.isArray(load.levels) || load.levels.length === 0) throw new ProtocolError('load.levels must be a list');
  let above = shape.table_columns;
  const levels = load.levels.map((l) => {
    for (const f of ['table', 'column', 'parent_column', 'one', 'in', 'table_columns', 'table_types', 'key']) {
      if (l[f] === undefined) throw new ProtocolError(`load.levels[]: missing field '${f}'`);
    }
    const level = {
      table: l.table, column: l.column, parentColumn: l.parent_column, columns: l.table_columns,
      types: l.table_types, key: l.key, one: l.one, in: l.in,
      above: above.indexOf(l.parent_column), // where the referenced value is in a row of the level above
    };
    if (level.above < 0) throw new ProtocolError(`load: ${l.parent_column} is not a column of the level above`);
    above = l.table_columns;
    return level;
  });
  return {
    strategy: load.strategy, sql: msg.sql, shape, table: shape.table, columns: shape.table_columns,
    types: shape.table_types, key: shape.key, levels, joined: load.joined,
  };
}

// the distinct non-NULL values of column `at` of `rows`, in the order first read
export function distinct(rows, at) {
  const seen = new Map(); // a BigInt, a Number or a string is its own key; a Buffer's is its text
  for (let r = 0; r < rows.length; r++) {
    const v = rows[r][at];
    if (v === null || v === undefined) continue;
    const k = typeof v === 'object' ? `${typeof v}:${String(v)}` : v;
    if (!seen.has(k)) seen.set(k, v);
  }
  return [...seen.values()];
}

// One operation's entities, level after level: the rows (each entity once) and, for the
// verification pass, how many each level has and their kinds (`levels`: [[count, kinds], …]).
export function entities(parts, kindsOf) {
  const rows = [];
  const levels = [];
  for (const [found, meta] of parts) {
    for (let i = 0; i < found.length; i++) rows.push(found[i]);
    levels.push([found.length, found.length > 0 ? kindsOf(meta) : null]);
  }
  rows.levels = levels;
  return rows;
}

function* lazy(plan) {
  const parts = [yield [PARENTS]];
  for (let k = 0; k < plan.levels.length; k++) {
    const level = plan.levels[k];
    const rows = [];
    let meta = null;
    for (const value of distinct(parts[k][0], level.above)) {
      const [found, m] = yield [ONE, k, value];
      for (let i = 0; i < found.length; i++) rows.push(found[i]);
      meta = m;
    }
    parts.push([rows, meta]);
  }
  return parts;
}

function* selectin(plan) {
  const parts = [yield [PARENTS]];
  for (let k = 0; k < plan.levels.length; k++) {
    const values = distinct(parts[k][0], plan.levels[k].above);
    parts.push(values.length > 0 ? yield [IN, k, values] : [[], null]);
  }
  return parts;
}

function* joined(plan) {
  const [rows, meta] = yield [JOINED];
  return split(plan, rows, meta);
}

// joined rows → each level's entities, each once by its key (none where its key is NULL)
export function split(plan, rows, meta) {
  const widths = [plan.columns.length, ...plan.levels.map((l) => l.columns.length)];
  const keys = [plan.columns, ...plan.levels.map((l) => l.columns)].map((columns, k) =>
    (k === 0 ? plan.key : plan.levels[k - 1].key).map((c) => columns.indexOf(c)));
  const parts = widths.map(() => [[], meta]);
  const seen = widths.map(() => new Set());
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    let at = 0;
    for (let k = 0; k < widths.length; k++) {
      const key = keyOf(row, at, keys[k]);
      if (key !== null && !seen[k].has(key)) {
        seen[k].add(key);
        parts[k][0].push(row.slice(at, at + widths[k]));
      }
      at += widths[k];
    }
  }
  return parts.map((p, k) => [p[0], { joined: meta, from: widths.slice(0, k).reduce((a, b) => a + b, 0), width: widths[k] }]);
}

function keyOf(row, at, key) {
  if (key.length === 1) {
    const v = row[at + key[0]];
    return v === null || v === undefined ? null : typeof v === 'object' ? String(v) : v;
  }
  let s = '';
  for (const i of key) {
    const v = row[at + i];
    if (v === null || v === undefined) return null;
    s += `${typeof v}:${String(v)}\u0000`;
  }
  return s;
}

const STRATEGIES = { lazy, selectin, joined };

// The kinds of a level's rows: from a joined result's kinds, the level's slice
export function levelKinds(kindsOf) {
  return (meta) => {
    if (meta && meta.joined !== undefined) {
      const all = kindsOf(meta.joined);
      return all === null ? null : all.slice(meta.from, meta.from + meta.width);
    }
    return kindsOf(meta);
  };
}

// The op of a load, run synchronously: `run(request, args)` answers each request ([rows, meta]).
export function runSync(plan, run, kindsOf, counter) {
  const strategy = STRATEGIES[plan.strategy];
  const kinds = levelKinds(kindsOf);
  return (args) => {
    const g = strategy(plan);
    let step = g.next();
    while (!step.done) {
      if (counter) counter.n++;
      step = g.next(run(step.value, args));
    }
    return entities(step.value, kinds);
  };
}

// … and awaiting each result.
export function runAsync(plan, run, kindsOf, counter) {
  const strategy = STRATEGIES[plan.strategy];
  const kinds = levelKinds(kindsOf);
  return async (args) => {
    const g = strategy(plan);
    let step = g.next();
    while (!step.done) {
      if (counter) counter.n++;
      step = g.next(await run(step.value, args));
    }
    return entities(step.value, kinds);
  };
}

// A driver's statements for each request: the message's texts, `?` markers; `in` joins one
// marker per value. `bind(value)`: a value read → the driver's parameter.
export function statementOf(plan, request, args, bind) {
  switch (request[0]) {
    case PARENTS: return [plan.sql, args];
    case ONE: return [plan.levels[request[1]].one, [bind(request[2])]];
    case IN: {
      const level = plan.levels[request[1]], values = request[2];
      return [level.in[0] + new Array(values.length).fill('?').join(', ') + level.in[1], values.map(bind)];
    }
    default: return [plan.joined, args];
  }
}
