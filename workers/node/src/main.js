// abworker-node: the Node.js worker of accessbench (protocol/PROTOCOL.md, version 1).
//
// parse message → dispatch on op → answer. One JSON object per line each way; stdout carries
// nothing else (console output of any library goes to stderr). A step is parsed and checked
// whole first (step.js: message → step object, every protocol error there), then run here: its
// op built by the driver, then the verification pass, the plain timed loop or the loop under
// load (load.js).
//
//   node workers/node/src/main.js METHOD      (a method of the registry, src/drivers/index.js)

import fs from 'node:fs';
import os from 'node:os';
import readline from 'node:readline';

import { parse as parseJson, stringify, JSONError } from './json.js';
import { Checksum, ProtocolError, generateValues, toJsonValue, typedValue } from './protocol.js';
import { PROCESSES, Unsupported } from './driver.js';
import { DRIVERS, loadDriver } from './drivers/index.js';
import { Histogram, Schedule, barrier, merge, runClient } from './load.js';
import { intField, kindsOf, parseStep } from './step.js';

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

const clock = process.hrtime.bigint;

// ---- the session ------------------------------------------------------------------------------

class Session {
  // `driver` is null when the method cannot be used; `why` then says why, and every message is
  // answered `unsupported` with it (bye still ends).
  constructor(method, driver, why) {
    this.method = method;
    this.driver = driver;
    this.why = why;
    this.endpoint = null;
  }

  async handle(msg) {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) throw new ProtocolError('not a JSON object');
    const op = msg.op;
    if (this.driver === null) throw new Unsupported(this.why);
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
      methods: Object.keys(DRIVERS).sort(), // the registry's bases (keys: each once)
      settings: {
        ...d.settings(),
        timing: 'process.hrtime.bigint() once before the loop and once after each operation; ' +
          'latencies in a BigUint64Array allocated before the loop',
        cpu: 'process.cpuUsage() around the loop: the whole process (main thread, V8 GC and JIT threads, ' +
          'libuv thread pool), microsecond resolution',
        'event loop': 'one message at a time; every operation awaited before the next starts (no overlap of ' +
          'operations, except where the batch style says so); under load each client is its own such loop',
        'under load': (d.concurrency === PROCESSES
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
        kinds: kindsOf(d),
        modes: d.modes,
        batch: d.batchStyle(),
        concurrency: d.concurrency,
        jit: true,
        load: { policies: d.loadPolicies },
        // a layer's: the shape features it maps through its own API, and why not the others
        ...(d.shapes ? { shapes: d.shapes } : {}),
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
    return this.run(parseStep(msg, this.driver, this.endpoint.dbms));
  }

  // Runs a parsed step: the untimed verification pass, the plain timed loop or the loop under
  // load. After a `db` error whatever transaction is open is rolled back; a pool the step made
  // is ended and what the step prepared released, whatever happened (untimed).
  async run(step) {
    const d = this.driver;
    d.shape = step.shape; // a layer's op builders read it
    // the verification pass counts the statements its operations send (a layer's hook is
    // installed when its op is built with a counter, and only then); `api` is set by a layer
    // whose op runs the statement through its raw-SQL API
    d.counter = step.verify ? { n: 0, on: false } : null;
    d.api = null;
    if (step.verify) await d.beforeVerify(); // untimed: what counting needs made (a layer's second client)
    const build = this.builder(step);
    const pool = { pool: null };
    try {
      if (step.verify) {
        const op = step.policy === 'persistent' ? await build() : await this.policyOp(step, build, pool);
        return this.answer(await this.verify(op, step.args, step.reads, step.dump));
      }
      if (step.loaded) return this.answer(await this.loaded(step, build, pool));
      return this.answer(await this.timed(await build(), step.args, step.reads, step.latencyFile));
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
      d.counter = null;
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

  // what every answer of the step adds: `api` (raw) and, counted, `statements`
  answer(a) {
    const d = this.driver;
    if (d.api) a.api = d.api;
    if (d.counter && d.counter.on) a.statements = d.counter.n;
    return a;
  }

  // `build(conn)` makes the step's op on a connection (the session's own when conn is
  // undefined), untimed where the op is built before the clock. A record-mode build is async
  // (it opens the table's HANDLER); the others are plain functions, awaited all the same.
  builder(step) {
    const d = this.driver;
    const { kind, mode, sql, reads, every, n } = step;
    if (mode === 'record') {
      return async (conn) => {
        const op = await d.recordOp(kind, step.record, conn);
        return every > 0 ? withCommits(d, op, every, n, conn) : op;
      };
    }
    switch (kind) {
      case 'connect': {
        const ep = this.endpoint;
        return () => d.connectOp(ep);
      }
      case 'scan':
        return (conn) => d.scanOp(sql, conn);
      case 'load':
        return (conn) => d.loadOp(step.plan, conn);
      case 'exec':
        return every > 0
          ? (conn) => (d.sync ? withCommitsSync : withCommits)(d, d.execOp(sql, mode, reads, conn), every, n, conn)
          : (conn) => d.execOp(sql, mode, reads, conn);
      default:
        return (conn) => d.batchOp(sql, conn);
    }
  }

  // The op of a per-request or pooled step, shared by every client; a pool is made and filled
  // here (untimed) and left in holder.pool for the step to end.
  async policyOp(step, build, holder) {
    const d = this.driver;
    if (step.policy === 'per-request') return d.perRequestOp(this.endpoint, build);
    holder.pool = await d.openPool(this.endpoint, step.poolSize);
    return d.pooledOp(holder.pool, build);
  }

  // A step under load: C clients, each with its op (persistent: on its own connection, made
  // before the barrier; per-request and pooled: one op for all), started together at the
  // barrier; their results merged into one answer.
  async loaded(step, build, holder) {
    const d = this.driver;
    const { args, reads, clients, load } = step;
    const ops = [], extra = [], pids = [];
    try {
      if (step.policy === 'persistent') {
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
        const op = await this.policyOp(step, build, holder);
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
  // (with its rows checksummed) is the cold start. With `dump`, the checksum also keeps the
  // first `dump` rows read, in the order read, as typed values: answered as `dump` when the
  // statement reads rows.
  async verify(op, args, reads, dump) {
    const d = this.driver;
    const sum = new Checksum(dump);
    let changed = 0, first = 0n, width = 0, loads = false; // a load's width: the values read, summed
    const start = clock();
    for (let i = 0; i < args.length; i++) {
      const result = d.sync ? op(args[i]) : await op(args[i]);
      if (reads && result.levels) { // a load: each level's entities with their own kinds
        loads = true;
        let at = 0;
        for (const [count, kinds] of result.levels) {
          for (let r = 0; r < count; r++) {
            width += result[at].length;
            sum.addRow(result[at++], kinds);
          }
        }
      } else if (reads) {
        const kinds = d.kinds();
        for (const row of result) sum.addRow(row, kinds);
        width = d.width() ?? width;
      } else {
        changed += result;
      }
      if (i === 0) first = clock() - start;
    }
    const rows = reads ? sum.rows : changed;
    const values = !reads ? 0 : loads ? width : rows * width;
    return {
      n: args.length, rows, values, checksum: sum.hex(), first_op_ns: first,
      ...(dump && reads ? { dump: sum.dumped } : {}),
    };
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
  } else if (session.driver !== null && session.driver.isDbError(e)) {
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
  let driver = null, why = null;
  try {
    driver = await loadDriver(method);
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e;
    why = e.message;
    log(`abworker-node: ${why}`);
  }
  const session = new Session(method, driver, why);
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
