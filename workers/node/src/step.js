// A step message → a step object (protocol/PROTOCOL.md, "step"). Every field is read and checked
// here, before anything runs: every protocol error of a step, and every `unsupported` one that
// the message and the driver's declarations decide (a mode, a connection policy, several
// clients in a one-client process). The parameters are generated here too, and adapted to the
// driver by their types (its `adapt`: each type as the driver binds it; for `literal` rendered
// into statement texts): all of it before the clock. What runs the step (main.js) reads the
// object and never the message.

import { PROCESSES, Unsupported } from './driver.js';
import { loadOf, Schedule } from './load.js';
import { planOf } from './loading.js';
import { ProtocolError, countMarkers, generateRows, inline, literal, segments } from './protocol.js';

export const KINDS = ['connect', 'scan', 'exec', 'batch'];
// the kinds a driver has: the four, and `load` where it has loading associations
export const kindsOf = (driver) => (driver.hasLoad() ? [...KINDS, 'load'] : KINDS);
const EXEC_MODES = ['literal', 'extended', 'prepared'];

// ---- message fields -----------------------------------------------------------------------

export function intField(msg, key, dflt) {
  const v = msg[key];
  if (v === undefined || v === null) {
    if (dflt === undefined) throw new ProtocolError(`missing field '${key}'`);
    return dflt;
  }
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return Number(v);
  throw new ProtocolError(`field '${key}' must be an integer`);
}

export function truthy(v) {
  if (v === undefined || v === null || v === false) return false;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

// ---- the step ---------------------------------------------------------------------------------

/**
 * @typedef {object} Step
 * @property {string} kind            connect, scan, exec, batch or load
 * @property {string|undefined} mode  literal, extended, prepared or record (scan and exec only)
 * @property {string|null} sql        the statement with neutral `?` markers (null for connect)
 * @property {object|null} shape      a layer method's: what the statement does (null: no shape)
 * @property {object|null} plan       load: the parents, the levels and their statements (loading.js)
 * @property {{table: string, index?: string}|null} record  the table (and index) of mode record
 * @property {number} n               iterations
 * @property {Array} args             one argument per operation (batch: one group of rows per
 *                                    operation), generated and adapted before the clock
 * @property {boolean} reads          whether the op returns rows (else the rows it changed)
 * @property {number} every           commit_every (0: none)
 * @property {boolean} verify         the untimed verification pass instead of the timed one
 * @property {number} dump            verification only: how many of the rows read to answer as
 *                                    typed values (0: none)
 * @property {string} policy          persistent, per-request or pooled
 * @property {number} clients
 * @property {number|null} poolSize   pooled only
 * @property {boolean} loaded         runs under load (load.js) rather than the plain loop
 * @property {object|null} load       loadOf(msg), for a loaded step that is not a verification
 * @property {string|undefined} latencyFile
 */

// The step a message asks for, of a session open on `dbms`, for `driver`.
/** @returns {Step} */
export function parseStep(msg, driver, dbms) {
  const kind = msg.kind;
  if (kind === 'load' && !driver.hasLoad()) throw new Unsupported(`${driver.method} has no load steps`);
  if (!KINDS.includes(kind) && kind !== 'load') throw new ProtocolError(`unknown step kind ${JSON.stringify(kind)}`);
  const n = intField(msg, 'iterations');
  if (n < 0) throw new ProtocolError('a step needs iterations >= 0');
  const sql = kind === 'connect' ? null : msg.sql;
  if (kind !== 'connect' && typeof sql !== 'string') throw new ProtocolError(`a ${kind} step needs sql`);
  const specs = msg.params === undefined || msg.params === null ? [] : msg.params;
  if (!Array.isArray(specs)) throw new ProtocolError('params must be a list');
  const markers = sql === null ? 0 : countMarkers(sql);
  const mode = kind === 'scan' || kind === 'exec' ? msg.mode : undefined;
  const step = { kind, mode, sql, record: null, n, args: null, reads: false, every: 0, plan: null };
  // A layer method's: what the statement does (protocol: `shape`), worked out by the runner;
  // null for a statement of no plain shape, and for drivers. Set on the driver before its
  // parameters are adapted (a layer binds each by its column's type) and its op is built.
  step.shape = msg.shape === undefined ? null : msg.shape;
  driver.shape = step.shape;
  if (mode === 'record') parseRecord(step, msg, driver, dbms, specs, markers);
  else PARSE_KIND[kind](step, msg, driver, dbms, specs, markers);
  parseLoad(step, msg, driver);
  step.latencyFile = msg.latency_file;
  return step;
}

const nulls = (n) => new Array(n).fill(null);

function checkParams(specs, markers) {
  if (specs.length !== markers) throw new ProtocolError(`${markers} markers but ${specs.length} params`);
}

// Record-level access (MariaDB's HANDLER): a scan, or keyed reads whose keys are rendered as
// literals (HANDLER … READ index = (key)).
function parseRecord(step, msg, driver, dbms, specs, markers) {
  if (!driver.modes.includes('record')) {
    throw new Unsupported(`${driver.method} has no record-level access (mode record)`);
  }
  const record = msg.record;
  if (record === null || typeof record !== 'object' || typeof record.table !== 'string') {
    throw new ProtocolError('mode record needs record: {table[, index]}');
  }
  if (step.kind === 'exec' && typeof record.index !== 'string') {
    throw new ProtocolError('an exec step in mode record needs record.index');
  }
  checkParams(specs, markers);
  step.record = record;
  step.reads = true;
  step.args = step.kind === 'scan'
    ? nulls(step.n)
    : generateRows(specs, step.n).rows.map((row) => row.map((v) => literal(v, dbms)).join(', '));
  step.every = step.kind === 'exec' ? intField(msg, 'commit_every', 0) : 0;
}

// The arguments of each step kind (mode record aside).
const PARSE_KIND = {
  connect(step) {
    step.args = nulls(step.n);
  },

  scan(step, msg, driver, dbms, specs, markers) {
    if (markers) throw new ProtocolError(`a scan runs one query without params, but the sql has ${markers} markers`);
    step.args = nulls(step.n);
    step.reads = true;
  },

  exec(step, msg, driver, dbms, specs, markers) {
    if (!EXEC_MODES.includes(step.mode)) throw new ProtocolError(`unknown mode ${JSON.stringify(step.mode)}`);
    checkParams(specs, markers);
    step.reads = truthy(msg.fetch);
    const { rows, types } = generateRows(specs, step.n);
    if (step.mode === 'literal' && driver.bindsLiterals) {
      // a layer that inlines values itself (Knex over mysql2: mysql2's client-side escaping)
      // is given the values, in its own form, rather than texts
      step.args = driver.adaptLiterals(rows, types);
    } else if (step.mode === 'literal') {
      const segs = segments(step.sql);
      step.args = rows.map((row) => inline(segs, row, dbms));
    } else {
      step.args = driver.adapt(rows, types);
    }
    step.every = intField(msg, 'commit_every', 0);
  },

  // the parents' parameters, bound as the driver's extended mode binds them
  load(step, msg, driver, dbms, specs, markers) {
    checkParams(specs, markers);
    step.plan = planOf(msg, step.shape);
    step.reads = true;
    const { rows, types } = generateRows(specs, step.n);
    step.args = driver.bindsLiterals ? driver.adaptLiterals(rows, types) : driver.adapt(rows, types);
  },

  batch(step, msg, driver, dbms, specs, markers) {
    const size = intField(msg, 'batch');
    if (size < 1) throw new ProtocolError('a batch step needs batch >= 1');
    checkParams(specs, markers);
    const { rows: generated, types } = generateRows(specs, step.n);
    const rows = driver.adapt(generated, types);
    step.args = [];
    for (let i = 0; i < step.n; i += size) step.args.push(rows.slice(i, i + size));
  },
};

// Verification (and how many rows it dumps) or the timed pass; plain loop or under load; the
// connection policy, its pool and the load's fields (read only for a loaded step that is not a
// verification).
function parseLoad(step, msg, driver) {
  const policy = msg.policy ?? 'persistent';
  if (!driver.loadPolicies.includes(policy)) {
    throw new Unsupported(`${driver.method} has no '${policy}' connection policy (it has ${driver.loadPolicies.join(', ')})`);
  }
  const clients = intField(msg, 'clients', 1);
  if (clients < 1) throw new ProtocolError('clients must be >= 1');
  const loaded = policy !== 'persistent' || clients !== 1 ||
    ['duration_ms', 'rate', 'histogram'].some((k) => truthy(msg[k]));
  if (loaded && step.every > 0 && (policy !== 'persistent' || truthy(msg.duration_ms))) {
    throw new Unsupported('commit_every under load is built for persistent connections by count only (a ' +
      'transaction cannot span connections, and by duration its last operation is not known in advance)');
  }
  const verify = truthy(msg.verify);
  const dump = verify ? intField(msg, 'dump', 0) : 0;
  if (dump < 0) throw new ProtocolError('dump must be >= 0');
  let load = null;
  if (loaded && !verify) {
    if (clients > 1 && driver.concurrency === PROCESSES) {
      throw new Unsupported(`${driver.method} drives one client per process (its API is synchronous): ` +
        'the runner starts one worker per client');
    }
    load = loadOf(msg);
    if (load.rate) new Schedule(load.rate, load.arrival, 0n); // a bad rate or arrival: answered before anything runs
  }
  let poolSize = null;
  if (policy === 'pooled') {
    poolSize = intField(msg, 'pool_size', clients);
    if (poolSize < 1) throw new ProtocolError('pool_size must be >= 1');
  }
  Object.assign(step, { verify, dump, policy, clients, poolSize, loaded, load });
}
