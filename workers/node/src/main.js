// abworker-node: the Node.js worker of accessbench (protocol/PROTOCOL.md, version 1).
//
// parse message → dispatch on op / step kind → timed loop → answer. One JSON object per line
// each way; stdout carries nothing else (console output of any library goes to stderr).
//
//   node workers/node/src/main.js METHOD      (node-pg, node-postgres-js, node-better-sqlite3)

import fs from 'node:fs';
import os from 'node:os';
import readline from 'node:readline';

import { parse as parseJson, stringify, JSONError } from './json.js';
import {
  Checksum, ProtocolError, countMarkers, generateRows, generateValues, inline, segments, toJsonValue, typedValue,
} from './protocol.js';
import { Unsupported } from './driver.js';

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
          'operations, except where the batch style says so)',
      },
      capabilities: {
        dbms: d.dbms,
        kinds: ['connect', 'scan', 'exec', 'batch'],
        modes: d.modes,
        batch: d.batchStyle(),
        concurrency: 'event loop (async)',
        jit: true,
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

    // parameters generated (and adapted, or for literal inlined) before the clock
    let op, args, reads = false;
    if (kind === 'connect') {
      op = d.connectOp(this.endpoint);
      args = new Array(n).fill(null);
    } else if (kind === 'scan') {
      if (markers) throw new ProtocolError(`a scan runs one query without params, but the sql has ${markers} markers`);
      op = d.scanOp(sql);
      args = new Array(n).fill(null);
      reads = true;
    } else if (kind === 'exec') {
      const mode = msg.mode;
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
      op = d.execOp(sql, mode, reads);
      const every = intField(msg, 'commit_every', 0);
      if (every > 0) op = d.sync ? withCommitsSync(d, op, every, n) : withCommits(d, op, every, n);
    } else {
      const size = intField(msg, 'batch');
      if (size < 1) throw new ProtocolError('a batch step needs batch >= 1');
      if (specs.length !== markers) throw new ProtocolError(`${markers} markers but ${specs.length} params`);
      const rows = d.adapt(generateRows(specs, n));
      args = [];
      for (let i = 0; i < n; i += size) args.push(rows.slice(i, i + size));
      op = d.batchOp(sql);
    }

    try {
      if (truthy(msg.verify)) return await this.verify(op, args, reads);
      return await this.timed(op, args, reads, msg.latency_file);
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
      try {
        await d.endStep();
      } catch (e) {
        log('abworker-node: end of step:', e && e.stack ? e.stack : e);
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
// last, inside those operations' time.
function withCommits(d, op, every, total) {
  let done = 0;
  return async (arg) => {
    if (done % every === 0) await d.txnBegin();
    const result = await op(arg);
    done++;
    if (done % every === 0 || done === total) await d.txnCommit();
    return result;
  };
}

function withCommitsSync(d, op, every, total) {
  let done = 0;
  return (arg) => {
    if (done % every === 0) d.txnBegin();
    const result = op(arg);
    done++;
    if (done % every === 0 || done === total) d.txnCommit();
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
