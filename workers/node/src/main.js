// abworker-node: the Node.js worker of accessbench (protocol/PROTOCOL.md, version 1).
//
// parse message → dispatch on op / step kind → timed loop → answer. One JSON object per line
// each way; stdout carries nothing else (console output of any library goes to stderr).
//
//   node workers/node/src/main.js METHOD      (node-pg, node-postgres-js, node-better-sqlite3, node-mysql2)

import fs from 'node:fs';
import os from 'node:os';
import readline from 'node:readline';

import { parse as parseJson, stringify, JSONError } from './json.js';
import {
  Checksum, ProtocolError, countMarkers, generateRows, generateValues, inline, literal, segments, toJsonValue, typedValue,
} from './protocol.js';
import { Unsupported } from './driver.js';
import { Histogram, Schedule, barrier, loadOf, merge, runClient } from './load.js';

// ---- stdout belongs to the protocol ---------------------------------------------------------

const log = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');
console.log = console.info = console.debug = console.warn = console.error;
process.stdout.write = (chunk, encoding, cb) => process.stderr.write(chunk, encoding, cb);

function writeLine(text) {
  const buf = Buffer.from(text + '\n', 'utf8');
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(1, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

process.on('unhandledRejection', (e) => log('abworker-node: unhandled rejection:', e && e.stack ? e.stack : e));
process.on('uncaughtException', (e) => log('abworker-node: uncaught exception:', e && e.stack ? e.stack : e));

// ---- drivers ----------------------------------------------------------------------------------

const DRIVERS = {
  'node-pg': './drivers/pg.js',
  'node-postgres-js': './drivers/postgresjs.js',
  'node-better-sqlite3': './drivers/sqlite.js',
  'node-mysql2': './drivers/mysql2.js',
};

// Stands in for a driver that cannot be used (unknown method or setting, module not
// installed): every message is answered `unsupported` with the reason; bye still ends.
class Missing {
  constructor(why) {
    this.why = why;
  }
}

async function loadDriver(method) {
  const slash = method.indexOf('/');
  const base = slash < 0 ? method : method.slice(0, slash);
  if (!(base in DRIVERS)) {
    return new Missing(`unknown method '${base}' (abworker-node knows ${Object.keys(DRIVERS).join(', ')})`);
  }
  let mod;
  try {
    mod = await import(DRIVERS[base]);
  } catch (e) {
    log(e && e.stack ? e.stack : e);
    return new Missing(`${base}: driver module not importable (npm ci --prefix workers/node): ${e.message}`);
  }
  const driver = new mod.default(method);
  if (slash >= 0) {
    for (const kv of method.slice(slash + 1).split(',')) {
      const eq = kv.indexOf('=');
      if (eq < 0) return new Missing(`${method}: setting '${kv}' is not key=value`);
      try {
        driver.configure(kv.slice(0, eq), kv.slice(eq + 1));
      } catch (e) {
        return new Missing(`${method}: ${e.message}`);
      }
    }
  }
  return driver;
}

// ---- message fields -----------------------------------------------------------------------

function intField(msg, key, dflt) {
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

function truthy(v) {
  if (v === undefined || v === null || v === false) return false;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

const clock = process.hrtime.bigint;

// ---- the session ------------------------------------------------------------------------------

class Session {
  constructor(method, driver) {
    this.method = method;
    this.driver = driver;
    this.endpoint = null;
  }

  async handle(msg) {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) throw new ProtocolError('not a JSON object');
    const op = msg.op;
    if (this.driver instanceof Missing) throw new Unsupported(this.driver.why);
    switch (op) {
      case 'hello': return this.hello();
      case 'open': return this.open(msg);
      case 'close': case 'bye': return this.close();
      case 'step': return this.step(msg);
      case 'generate': return this.generate(msg);
      case 'checksum': return this.checksum(msg);
      case 'histogram': return this.histogram(msg);
      case 'schedule': return this.schedule(msg);
      default: throw new ProtocolError(`unknown op ${JSON.stringify(op)}`);
    }
  }

  hello() {
    const d = this.driver;
    return {
      protocol: 1,
      name: this.method,
      language: 'node',
      runtime: `Node.js ${process.version} (V8 ${process.versions.v8})`,
      driver: d.driverName,
      driver_version: d.version(),
      settings: {
        ...d.settings(),
        timing: 'process.hrtime.bigint() once before the loop and once after each operation; ' +
          'latencies in a BigUint64Array allocated before the loop',
        cpu: 'process.cpuUsage() around the loop: the whole process (main thread, V8 GC and JIT threads, ' +
          'libuv thread pool), microsecond resolution',
        'event loop': 'one message at a time; every operation awaited before the next starts (no overlap of ' +
          'operations, except where the batch style says so); under load each client is its own such loop',
        load: (d.concurrency === 'processes'
          ? 'one client per worker process (the runner starts one process per client); '
          : 'C clients as C async loops (tasks) on the one event loop of this process, interleaving at their ' +
            'awaits; ') +
          'all wait for the wall-clock barrier start_at_unix_ns (untimed: the wall clock is process.hrtime.bigint() ' +
          'plus an offset taken at the next ms tick of Date.now(), spun to before the barrier, to within ~20 µs; ' +
          'then setTimeout, Atomics.wait and a spin of the last 100 µs), then ' +
          'share one start on process.hrtime.bigint(); per operation one clock read and the latency recorded as ' +
          'a Number into a fixed Float64Array histogram (integer bucket function, no allocation); by duration ' +
          'a closed-loop client loops while its previous operation ended before start + duration, cycling through ' +
          'the generated arguments; open loop: client k draws its own arrivals at rate / C (splitmix64 on 32-bit ' +
          'halves, seed schedule_seed + k; uniform: starting at phase_ns + k * 1e9 / rate, the worker\'s ' +
          'arrivals dealt to its clients in turn), by duration it too loops while its previous operation ended ' +
          'before start + duration, starts no arrival at or after duration_ms and, its arrivals over, sleeps (untimed) ' +
          'until the duration has passed, elapsed_ns running to then; still behind schedule when it has passed, it ' +
          'counts the arrivals due before then that it had not started as skipped; ' +
          'latency from the intended start, ahead of time it waits — one ' +
          'client: Atomics.wait then a spin of the last 100 µs (the thread is its own); several clients: ' +
          'setTimeout in whole ms to within 200 µs, then yielding spins (setImmediate) so the other clients ' +
          'keep running; CPU from process.cpuUsage() from the start to the last client\'s end; commit_every ' +
          'only with persistent connections and by count',
      },
      capabilities: {
        dbms: d.dbms,
        kinds: ['connect', 'scan', 'exec', 'batch'],
        modes: d.modes,
        batch: d.batchStyle(),
        concurrency: d.concurrency,
        jit: true,
        load: { policies: d.loadPolicies },
      },
    };
  }

  async open(msg) {
    const ep = msg.endpoint;
    if (ep === null || typeof ep !== 'object' || Array.isArray(ep)) throw new ProtocolError('open needs an endpoint object');
    if (!this.driver.dbms.includes(ep.dbms)) {
      throw new Unsupported(`${this.method} does not reach dbms '${ep.dbms}'`);
    }
    if (this.endpoint) { // a second open replaces the first connection
      await this.driver.close();
      this.endpoint = null;
    }
    const start = clock();
    const info = await this.driver.open(ep);
    const connectNs = clock() - start;
    this.endpoint = ep;
    return { connect_ns: connectNs, ...info };
  }

  async close() {
    if (this.endpoint) {
      this.endpoint = null;
      await this.driver.close();
    }
    return {};
  }

  generate(msg) {
    const count = intField(msg, 'count', 0);
    return { values: generateValues(msg.spec, count).map(toJsonValue) };
  }

  checksum(msg) {
    const rows = msg.rows;
    if (!Array.isArray(rows)) throw new ProtocolError('checksum needs rows');
    const sum = new Checksum();
    for (const row of rows) {
      if (!Array.isArray(row)) throw new ProtocolError('a row is a list');
      const values = [], kinds = [];
      for (const t of row) {
        const [v, k] = typedValue(t);
        values.push(v);
        kinds.push(k);
      }
      sum.addRow(values, kinds);
    }
    return { checksum: sum.hex(), rows: sum.rows };
  }

  histogram(msg) {
    if (!Array.isArray(msg.values)) throw new ProtocolError('histogram needs values');
    const h = new Histogram();
    for (const v of msg.values) {
      if (typeof v !== 'bigint' && !(typeof v === 'number' && Number.isInteger(v))) {
        throw new ProtocolError('histogram values are integers');
      }
      h.record(Number(v));
    }
    return { histogram: h.toWire() };
  }

  schedule(msg) {
    const seed = msg.seed;
    if (typeof seed !== 'string' || !/^[0-9a-fA-F]{1,16}$/.test(seed)) throw new ProtocolError('schedule needs a hex seed');
    const rate = Number(msg.rate);
    const schedule = new Schedule(rate, msg.arrival ?? 'poisson', BigInt(`0x${seed}`));
    const count = intField(msg, 'count');
    const offsets = new Array(count);
    for (let i = 0; i < count; i++) offsets[i] = schedule.next();
    return { offsets };
  }

  async step(msg) {
    if (!this.endpoint) throw new ProtocolError('step before open');
    const d = this.driver;
    const kind = msg.kind;
    if (!['connect', 'scan', 'exec', 'batch'].includes(kind)) throw new ProtocolError(`unknown step kind ${JSON.stringify(kind)}`);
    const n = intField(msg, 'iterations');
    if (n < 0) throw new ProtocolError('a step needs iterations >= 0');
    const sql = kind === 'connect' ? null : msg.sql;
    if (kind !== 'connect' && typeof sql !== 'string') throw new ProtocolError(`a ${kind} step needs sql`);
    const specs = msg.params === undefined || msg.params === null ? [] : msg.params;
    if (!Array.isArray(specs)) throw new ProtocolError('params must be a list');
    const markers = sql === null ? 0 : countMarkers(sql);

    // parameters generated (and adapted, or for literal inlined) before the clock; `build(conn)`
    // makes the op on a connection (the session's own when conn is undefined). A record-mode
    // build is async (it opens the table's HANDLER, untimed where the op is built before the
    // clock); the others are plain functions, awaited all the same.
    let build, args, reads = false, every = 0;
    const mode = kind === 'scan' || kind === 'exec' ? msg.mode : undefined;
    if (mode === 'record' && !d.modes.includes('record')) {
      throw new Unsupported(`${this.method} has no record-level access (mode record)`);
    }
    if (mode === 'record') {
      const record = msg.record;
      if (record === null || typeof record !== 'object' || typeof record.table !== 'string') {
        throw new ProtocolError('mode record needs record: {table[, index]}');
      }
      if (kind === 'exec' && typeof record.index !== 'string') {
        throw new ProtocolError('an exec step in mode record needs record.index');
      }
      if (specs.length !== markers) throw new ProtocolError(`${markers} markers but ${specs.length} params`);
      reads = true;
      // keyed reads: the key's values as literals, HANDLER … READ index = (key)
      const dbms = this.endpoint.dbms;
      args = kind === 'scan'
        ? new Array(n).fill(null)
        : generateRows(specs, n).map((row) => row.map((v) => literal(v, dbms)).join(', '));
      every = kind === 'exec' ? intField(msg, 'commit_every', 0) : 0;
      build = async (conn) => {
        const op = await d.recordOp(kind, record, conn);
        return every > 0 ? withCommits(d, op, every, n, conn) : op;
      };
    } else if (kind === 'connect') {
      const ep = this.endpoint;
      build = () => d.connectOp(ep);
      args = new Array(n).fill(null);
    } else if (kind === 'scan') {
      if (markers) throw new ProtocolError(`a scan runs one query without params, but the sql has ${markers} markers`);
      build = (conn) => d.scanOp(sql, conn);
      args = new Array(n).fill(null);
      reads = true;
    } else if (kind === 'exec') {
      if (!['literal', 'extended', 'prepared'].includes(mode)) throw new ProtocolError(`unknown mode ${JSON.stringify(mode)}`);
      if (specs.length !== markers) throw new ProtocolError(`${markers} markers but ${specs.length} params`);
      reads = truthy(msg.fetch);
      const rows = generateRows(specs, n);
      if (mode === 'literal') {
        const segs = segments(sql);
        args = rows.map((row) => inline(segs, row, this.endpoint.dbms));
      } else {
        args = d.adapt(rows);
      }
      every = intField(msg, 'commit_every', 0);
      build = every > 0
        ? (conn) => (d.sync ? withCommitsSync : withCommits)(d, d.execOp(sql, mode, reads, conn), every, n, conn)
        : (conn) => d.execOp(sql, mode, reads, conn);
    } else {
      const size = intField(msg, 'batch');
      if (size < 1) throw new ProtocolError('a batch step needs batch >= 1');
      if (specs.length !== markers) throw new ProtocolError(`${markers} markers but ${specs.length} params`);
      const rows = d.adapt(generateRows(specs, n));
      args = [];
      for (let i = 0; i < n; i += size) args.push(rows.slice(i, i + size));
      build = (conn) => d.batchOp(sql, conn);
    }

    const policy = msg.policy ?? 'persistent';
    if (!d.loadPolicies.includes(policy)) {
      throw new Unsupported(`${this.method} has no '${policy}' connection policy (it has ${d.loadPolicies.join(', ')})`);
    }
    const clients = intField(msg, 'clients', 1);
    if (clients < 1) throw new ProtocolError('clients must be >= 1');
    const loaded = policy !== 'persistent' || clients !== 1 ||
      ['duration_ms', 'rate', 'histogram'].some((k) => truthy(msg[k]));
    if (loaded && every > 0 && (policy !== 'persistent' || truthy(msg.duration_ms))) {
      throw new Unsupported('commit_every under load is built for persistent connections by count only (a ' +
        'transaction cannot span connections, and by duration its last operation is not known in advance)');
    }

    const pool = { pool: null };
    try {
      if (truthy(msg.verify)) {
        const op = policy === 'persistent' ? await build() : await this.policyOp(policy, msg, build, pool);
        return await this.verify(op, args, reads);
      }
      if (loaded) return await this.loaded(msg, build, args, reads, policy, clients, pool);
      return await this.timed(await build(), args, reads, msg.latency_file);
    } catch (e) {
      if (d.isDbError(e)) {
        try {
          await d.recover();
        } catch (r) {
          log('abworker-node: recover failed:', r && r.stack ? r.stack : r);
        }
      }
      throw e;
    } finally {
      if (pool.pool !== null) {
        try {
          await d.closePool(pool.pool);
        } catch (e) {
          log('abworker-node: closing the pool:', e && e.stack ? e.stack : e);
        }
      }
      try {
        await d.endStep();
      } catch (e) {
        log('abworker-node: end of step:', e && e.stack ? e.stack : e);
      }
    }
  }

  // The op of a per-request or pooled step, shared by every client; a pool is made and filled
  // here (untimed) and left in holder.pool for the step to end.
  async policyOp(policy, msg, build, holder) {
    const d = this.driver;
    if (policy === 'per-request') return d.perRequestOp(this.endpoint, build);
    const size = intField(msg, 'pool_size', intField(msg, 'clients', 1));
    if (size < 1) throw new ProtocolError('pool_size must be >= 1');
    holder.pool = await d.openPool(this.endpoint, size);
    return d.pooledOp(holder.pool, build);
  }

  // A step under load: C clients, each with its op (persistent: on its own connection, made
  // before the barrier; per-request and pooled: one op for all), started together at the
  // barrier; their results merged into one answer.
  async loaded(msg, build, args, reads, policy, clients, holder) {
    const d = this.driver;
    if (clients > 1 && d.concurrency === 'processes') {
      throw new Unsupported(`${this.method} drives one client per process (its API is synchronous): ` +
        'the runner starts one worker per client');
    }
    const load = loadOf(msg);
    if (load.rate) new Schedule(load.rate, load.arrival, 0n); // a bad rate or arrival: answered before anything runs
    const ops = [], extra = [], pids = [];
    try {
      if (policy === 'persistent') {
        ops.push(await build());
        const own = d.serverPid();
        if (own) pids.push(own);
        const opened = await Promise.allSettled(Array.from({ length: clients - 1 }, () => d.openClient(this.endpoint)));
        for (const r of opened) if (r.status === 'fulfilled') extra.push(r.value.conn);
        for (const r of opened) if (r.status === 'rejected') throw r.reason;
        for (const r of opened) {
          ops.push(await build(r.value.conn));
          if (r.value.pid) pids.push(r.value.pid);
        }
      } else {
        const op = await this.policyOp(policy, msg, build, holder);
        for (let k = 0; k < clients; k++) ops.push(op);
      }

      await barrier(load.startAt);
      const before = process.cpuUsage();
      const start = clock();
      const shared = { failed: false };
      const runs = ops.map((op, k) => runClient(k, clients, op, d.sync, args, reads, load, start, shared));
      const settled = await Promise.allSettled(runs);
      const cpu = process.cpuUsage(before);
      for (const r of settled) if (r.status === 'rejected') throw r.reason;

      const answer = merge(settled.map((r) => r.value));
      answer.user_ns = cpu.user * 1000;
      answer.sys_ns = cpu.system * 1000;
      const width = reads ? d.width() : undefined;
      if (width !== undefined && width !== null) answer.values = answer.rows * width;
      if (pids.length) answer.server_pids = pids; // per-request and pooled backends are not the clients'
      return answer;
    } finally {
      for (const c of extra) {
        try {
          await d.closeClient(c);
        } catch (e) {
          log('abworker-node: closing a client connection:', e && e.stack ? e.stack : e);
        }
      }
    }
  }

  // The untimed verification pass: every value read is checksummed; the first operation
  // (with its rows checksummed) is the cold start.
  async verify(op, args, reads) {
    const d = this.driver;
    const sum = new Checksum();
    let changed = 0, first = 0n, width = 0;
    const start = clock();
    for (let i = 0; i < args.length; i++) {
      const result = d.sync ? op(args[i]) : await op(args[i]);
      if (reads) {
        const kinds = d.kinds();
        for (const row of result) sum.addRow(row, kinds);
        width = d.width() ?? width;
      } else {
        changed += result;
      }
      if (i === 0) first = clock() - start;
    }
    const rows = reads ? sum.rows : changed;
    return { n: args.length, rows, values: reads ? rows * width : 0, checksum: sum.hex(), first_op_ns: first };
  }

  async timed(op, args, reads, latencyFile) {
    const d = this.driver;
    const n = args.length;
    const lat = new BigUint64Array(n);
    const before = process.cpuUsage();
    const [elapsed, rows] = d.sync ? timedSync(op, args, lat, reads) : await timedAsync(op, args, lat, reads);
    const cpu = process.cpuUsage(before);
    if (latencyFile) writeLatencies(latencyFile, lat);
    const answer = {
      n,
      elapsed_ns: elapsed,
      rows,
      user_ns: cpu.user * 1000,
      sys_ns: cpu.system * 1000,
      first_op_ns: n ? lat[0] : 0,
    };
    const width = reads ? d.width() : undefined;
    if (width !== undefined && width !== null) answer.values = rows * width;
    const pid = d.serverPid();
    if (pid) answer.server_pids = [pid];
    return answer;
  }
}

// ---- loops --------------------------------------------------------------------------------------
// One clock read per operation: operation i runs from the end of i−1 to its own end, so the
// latencies add up to elapsed_ns exactly.

async function timedAsync(op, args, lat, reads) {
  let rows = 0;
  const start = clock();
  let prev = start;
  if (reads) {
    for (let i = 0; i < args.length; i++) {
      rows += (await op(args[i])).length;
      const now = clock();
      lat[i] = now - prev;
      prev = now;
    }
  } else {
    for (let i = 0; i < args.length; i++) {
      rows += await op(args[i]);
      const now = clock();
      lat[i] = now - prev;
      prev = now;
    }
  }
  return [prev - start, rows];
}

function timedSync(op, args, lat, reads) {
  let rows = 0;
  const start = clock();
  let prev = start;
  if (reads) {
    for (let i = 0; i < args.length; i++) {
      rows += op(args[i]).length;
      const now = clock();
      lat[i] = now - prev;
      prev = now;
    }
  } else {
    for (let i = 0; i < args.length; i++) {
      rows += op(args[i]);
      const now = clock();
      lat[i] = now - prev;
      prev = now;
    }
  }
  return [prev - start, rows];
}

// commit_every: BEGIN before the first of every K operations, COMMIT after the K-th or the
// last, inside those operations' time (on `conn`: the session's connection when undefined).
function withCommits(d, op, every, total, conn) {
  let done = 0;
  return async (arg) => {
    if (done % every === 0) await d.txnBegin(conn);
    const result = await op(arg);
    done++;
    if (done % every === 0 || done === total) await d.txnCommit(conn);
    return result;
  };
}

function withCommitsSync(d, op, every, total, conn) {
  let done = 0;
  return (arg) => {
    if (done % every === 0) d.txnBegin(conn);
    const result = op(arg);
    done++;
    if (done % every === 0 || done === total) d.txnCommit(conn);
    return result;
  };
}

function writeLatencies(path, lat) {
  let buf;
  if (os.endianness() === 'LE') {
    buf = Buffer.from(lat.buffer, lat.byteOffset, lat.byteLength);
  } else {
    buf = Buffer.alloc(lat.length * 8);
    for (let i = 0; i < lat.length; i++) buf.writeBigUInt64LE(lat[i], i * 8);
  }
  fs.writeFileSync(path, buf);
}

// ---- errors and the loop ------------------------------------------------------------------------

function firstLine(message, kind) {
  const text = String(message ?? '').trim();
  return text ? text.split('\n')[0].trim() : kind;
}

function errorAnswer(session, e) {
  let kind, message, sqlstate;
  if (e instanceof Unsupported) {
    kind = 'unsupported';
    message = e.message;
  } else if (e instanceof ProtocolError || e instanceof JSONError) {
    kind = 'protocol';
    message = `${e.name}: ${e.message}`;
  } else if (session.driver && !(session.driver instanceof Missing) && session.driver.isDbError(e)) {
    kind = 'db';
    message = session.driver.errorMessage(e);
    sqlstate = session.driver.sqlstate(e);
  } else {
    kind = 'internal';
    message = e && e.message ? `${e.name || 'Error'}: ${e.message}` : String(e);
  }
  if (kind === 'internal') log('abworker-node:', e && e.stack ? e.stack : e);
  else log(`abworker-node: ${kind}: ${message}`);
  const error = { kind, message: firstLine(message, kind) };
  if (sqlstate) error.sqlstate = sqlstate;
  return { ok: false, error };
}

async function main(argv) {
  if (argv.length !== 1) {
    log(`usage: node workers/node/src/main.js METHOD[/key=value,...]  (${Object.keys(DRIVERS).join(', ')})`);
    process.exit(2);
  }
  const method = argv[0];
  const driver = await loadDriver(method);
  if (driver instanceof Missing) log(`abworker-node: ${driver.why}`);
  const session = new Session(method, driver);
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const line of rl) {
    if (!line.trim()) continue;
    let answer, op;
    try {
      const msg = parseJson(line);
      op = msg && typeof msg === 'object' ? msg.op : undefined;
      answer = { ok: true, ...(await session.handle(msg)) };
    } catch (e) {
      answer = errorAnswer(session, e);
    }
    let text;
    try {
      text = stringify(answer);
    } catch (e) {
      log('abworker-node: unencodable answer:', e && e.stack ? e.stack : e);
      text = stringify({ ok: false, error: { kind: 'internal', message: 'unencodable answer' } });
    }
    writeLine(text);
    if (op === 'bye') {
      process.exit(0);
    }
  }
  // end of input: close what is open and leave
  try {
    await session.close();
  } catch (e) {
    log('abworker-node: close at end of input:', e && e.stack ? e.stack : e);
  }
  process.exit(0);
}

main(process.argv.slice(2)).catch((e) => {
  log('abworker-node: fatal:', e && e.stack ? e.stack : e);
  process.exit(1);
});
