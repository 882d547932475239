// The web tier's Node pages (docs/tier.md): a node:http server of one process, the stack as
// Node runs it by default (no cluster, no worker threads), every request on its one event loop.
//
//   ACCESSBENCH_TIER_DIR=… ACCESSBENCH_TIER_PORT=… node workers/node/src/web/server.js
//
// Pages: /static.html, /hello, /op?step=ID[&verify=1], /op?connect=1 (the host's open) and
// TechEmpower's tests, /db, /queries, /fortunes and /updates with ?step=ID[&verify=1]. The operation page is a Node worker
// driver as a page uses it: the method named in $ACCESSBENCH_TIER_DIR/endpoint.json
// (node-http-pg → node-pg …, its catalog entry's page_driver), with the step's arguments, op, connection policy and checksum made
// by the worker's own pieces, so the page measures the same operation as the worker does, plus
// the HTTP server around it. Prints `listening <port>` on stdout once it listens.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { parse as parseJson, stringify } from '../json.js';
import { Checksum, generateRows, inline, segments } from '../protocol.js';
import { Unsupported } from '../driver.js';
import { loadDriver } from '../drivers/index.js';

const MODES = ['literal', 'extended', 'prepared'];
const STEP_ID = /^[A-Za-z0-9_-]+$/;

const log = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');

// The static page's bytes, read once (the path from the tier worker; by default the repository's).
const STATIC = fs.readFileSync(process.env.ACCESSBENCH_STATIC_PAGE ||
  new URL('../../../../src/accessbench/tier/static.html', import.meta.url));
const HELLO = Buffer.from('Hello, world!\n');

class NoStep extends Error {}

// ---- the process's side of the tier -----------------------------------------------------------
// Made on the first request for an operation page: the static and hello pages need none of it.

let tierPromise = null;

// The endpoint and the driver (made again by a later request if this failed).
function tier() {
  tierPromise ??= loadTier().catch((e) => {
    tierPromise = null;
    throw e;
  });
  return tierPromise;
}

async function loadTier() {
  const dir = process.env.ACCESSBENCH_TIER_DIR;
  if (!dir) throw new Error('ACCESSBENCH_TIER_DIR is not set');
  const config = parseJson(fs.readFileSync(path.join(dir, 'endpoint.json'), 'utf8'));
  // the worker driver the tier method's pages reuse: its catalog entry's page_driver (loadDriver
  // refuses, as unsupported, a name the Node worker's registry lacks)
  const driverName = String(config.page_driver || '');
  const ep = { ...config.endpoint };
  if (process.env.ACCESSBENCH_DB_PASSWORD) ep.password = process.env.ACCESSBENCH_DB_PASSWORD; // in memory only
  const driver = await loadDriver(driverName);
  return { dir, ep, driver, method: driverName, opened: null, steps: new Map(), pools: new Map() };
}

// The process's one connection, opened as the worker's session opens it (pg learns there
// whether the server takes TLS and its DateStyle, mysql2 whether sessions start in autocommit:
// what every connection made later is set up with); steps with the persistent policy run on
// it, the others leave it idle. Opened again by a later request if this failed.
function opened(t) {
  t.opened ??= t.driver.open(t.ep).catch((e) => {
    t.opened = null;
    throw e;
  });
  return t.opened;
}

// The driver's own pool (pg.Pool, mysql2's createPool) of `size` connections, made and filled by
// the first request that asks for it and kept for the process's life.
function poolOf(t, size) {
  let pool = t.pools.get(size);
  if (pool === undefined) {
    pool = t.driver.openPool(t.ep, size);
    t.pools.set(size, pool);
    pool.catch(() => t.pools.delete(size));
  }
  return pool;
}

// ---- steps --------------------------------------------------------------------------------------
// steps/ID.json never changes once written: read once, its arguments made as the worker's
// step.js makes them, its op built once, as an app keeps its statements.

function step(t, id) {
  let s = t.steps.get(id);
  if (s === undefined) {
    s = loadStep(t, id);
    t.steps.set(id, s);
    s.catch(() => t.steps.delete(id));
  }
  return s;
}

async function loadStep(t, id) {
  let text;
  try {
    text = await fs.promises.readFile(path.join(t.dir, 'steps', `${id}.json`), 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') throw new NoStep(id);
    throw e;
  }
  const spec = parseJson(text);
  if (TFB_PAGES.includes(spec.page)) return loadTfbStep(t, spec);
  if (spec.kind !== 'exec' && spec.kind !== 'scan') {
    throw new Unsupported(`the operation page runs exec and scan steps, not '${spec.kind}'`);
  }
  const { driver: d, ep } = t;
  await opened(t);
  // A driver object keeps the columns of the last result it read (its kinds() and width()), so
  // each step has its own, for its op builders; connections and pools are the process's.
  const sd = await loadDriver(t.method);
  const { sql, mode } = spec;
  const scan = spec.kind === 'scan'; // the statement as it is, every row read
  const policy = spec.policy ?? 'persistent';
  if (!scan && (!MODES.includes(mode) || !sd.modes.includes(mode))) throw new Unsupported(`${t.method} has no ${mode} mode`);
  if (!d.loadPolicies.includes(policy)) throw new Unsupported(`${t.method} has no '${policy}' connection policy`);
  const reads = scan || spec.fetch === true;
  let args;
  if (scan) args = new Array(Number(spec.count)).fill(null);
  else {
    const { rows, types } = generateRows(spec.params ?? [], Number(spec.count));
    if (mode === 'literal' && sd.bindsLiterals) args = sd.adaptLiterals(rows, types);
    else if (mode === 'literal') {
      const segs = segments(sql);
      args = rows.map((row) => inline(segs, row, ep.dbms));
    } else args = sd.adapt(rows, types);
  }

  const build = (c) => (scan ? sd.scanOp(sql, c) : sd.execOp(sql, mode, reads, c));
  let op;
  if (policy === 'per-request') {
    op = d.perRequestOp(ep, build); // a new connection per request, closed before the answer
  } else if (policy === 'pooled') {
    // borrow, run, give back; the op is built once per pooled connection
    op = d.pooledOp(await poolOf(t, Number(spec.pool_size ?? 1)), build);
  } else {
    // The process's one connection: concurrent requests queue on it (pg and mysql2 send one
    // command at a time per connection), so C connections of the load generator share it.
    const run = build(d.client);
    op = async (arg) => {
      try {
        return await run(arg);
      } catch (e) {
        if (d.isDbError(e)) await d.recover().catch(() => {}); // leave it usable
        throw e;
      }
    };
  }
  return { sd, op, args, reads };
}

// ---- TechEmpower's tests (docs/tier.md, TechEmpower's tests) -------------------------------------
// The page runs the test's statements on the process's one connection: World rows by keys it
// draws at random per query (the verify form: the keys, and the updates' numbers, the shared
// generators made), or every Fortune row.

const TFB_PAGES = ['db', 'queries', 'fortunes', 'updates'];
const ADDED = 'Additional fortune added at request time.'; // TechEmpower's rule: id 0, added per request

async function loadTfbStep(t, spec) {
  const { driver: d, ep } = t;
  await opened(t);
  const sd = await loadDriver(t.method);
  const { mode, page } = spec;
  if (!MODES.includes(mode) || !sd.modes.includes(mode)) throw new Unsupported(`${t.method} has no ${mode} mode`);
  if ((spec.policy ?? 'persistent') !== 'persistent') {
    throw new Unsupported("the Node pages run TechEmpower's tests on the process's one connection (persistent)");
  }
  const { rows: keyRows, types } = generateRows(spec.params ?? [], Number(spec.count));
  // what an op of `sql` takes for one request's values: its parameters, or the statement with them inlined
  const argsOf = (sql, values, valueTypes) => {
    if (mode !== 'literal') return sd.adapt([values], valueTypes)[0];
    return sd.bindsLiterals ? sd.adaptLiterals([values], valueTypes)[0] : inline(segments(sql), values, ep.dbms);
  };
  const guarded = (run) => async (arg) => {
    try {
      return await run(arg);
    } catch (e) {
      if (d.isDbError(e)) await d.recover().catch(() => {}); // leave it usable
      throw e;
    }
  };
  const read = guarded(sd.execOp(spec.sql, mode, true, d.client));
  const write = spec.write ? guarded(sd.execOp(spec.write, mode, false, d.client)) : null;
  const keyType = types.slice(0, 1);
  return {
    tfb: true, sd, page, queries: Number(spec.queries ?? 1), count: Number(spec.count),
    lo: Number(spec.params?.[0]?.lo ?? 0), hi: Number(spec.params?.[0]?.hi ?? 0),
    keys: keyRows.map((row) => row[0]), numbers: spec.numbers ?? [],
    // one request: the fortunes, sorted with the added one, or a World row per key (updates: given
    // its number and written back, one statement per row; read again when readBack, as the verify
    // form does). clock.db: the request's time awaiting the driver (each statement and its rows,
    // queued behind the process's other requests on its one connection), the page's Server-Timing db.
    async run(keys, numbers, readBack = false, clock = { db: 0n }) {
      const timed = async (op, arg) => {
        const began = process.hrtime.bigint();
        try {
          return await op(arg);
        } finally {
          clock.db += process.hrtime.bigint() - began;
        }
      };
      if (page === 'fortunes') {
        const rows = [...await timed(read, argsOf(spec.sql, [], []))];
        rows.push([0, ADDED]);
        rows.sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
        return rows;
      }
      const readOne = async (k) => (await timed(read, argsOf(spec.sql, [k], keyType)))[0];
      let worlds = [];
      for (const k of keys) worlds.push(await readOne(k));
      if (page === 'updates') {
        worlds = worlds.map((w, i) => [w[0], numbers[i]]);
        for (const [k, n] of worlds) await timed(write, argsOf(spec.write, [n, k], [keyType[0], keyType[0]]));
        if (readBack) {
          const back = [];
          for (const [k] of worlds) back.push(await readOne(k));
          worlds = back;
        }
      }
      return worlds;
    },
  };
}

const world = ([k, n]) => ({ id: Number(k), randomNumber: Number(n) });

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) =>
  ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function fortunesPage(rows) {
  const cells = rows.map(([id, message]) => `<tr><td>${id}</td><td>${escapeHtml(message)}</td></tr>`).join('');
  return '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>' +
    `<tr><th>id</th><th>message</th></tr>${cells}</table></body></html>`;
}

// Requests 0 … count-1, each on the next `queries` keys (and numbers) the shared generators made,
// every value read checksummed: the same reads in every language.
async function verifyTfb(s, dump = 0) {
  const sum = new Checksum(dump);
  let width = 0;
  for (let i = 0; i < s.count; i++) {
    const at = s.keys.length ? Array.from({ length: s.queries }, (_, k) => (i * s.queries + k) % s.count) : [];
    const rows = await s.run(at.map((j) => s.keys[j]), at.map((j) => s.numbers[j]), true);
    const kinds = s.sd.kinds();
    for (const row of rows) sum.addRow(row, kinds);
    width = s.sd.width() ?? width;
  }
  return { n: s.count, rows: sum.rows, values: sum.rows * width, checksum: sum.hex(), ...(dump ? { dump: sum.dumped } : {}) };
}

// The page's Server-Timing value (tier/tfb.py): its time in the driver and in the whole page, in
// milliseconds to the microsecond.
const serverTiming = (dbNs, appNs) => `db;dur=${(Number(dbNs) / 1e6).toFixed(3)}, app;dur=${(Number(appNs) / 1e6).toFixed(3)}`;

async function tfbPage(res, page, query, began) {
  const id = query.get('step') ?? '';
  const isVerify = query.get('verify') === '1';
  let t = null;
  try {
    if (!STEP_ID.test(id)) throw new NoStep(id);
    t = await tier();
    const s = await step(t, id);
    if (!s.tfb || s.page !== page) throw new NoStep(id);
    if (isVerify) {
      send(res, 200, 'application/json', stringify(await verifyTfb(s, Number(query.get('dump') ?? 0) || 0)));
      return;
    }
    const draw = () => s.lo + Math.floor(Math.random() * (s.hi - s.lo + 1));
    const keys = page === 'fortunes' ? [] : Array.from({ length: s.queries }, draw);
    const clock = { db: 0n };
    const rows = await s.run(keys, page === 'updates' ? keys.map(draw) : [], false, clock);
    const [type, body] = page === 'fortunes' ? ['text/html; charset=utf-8', fortunesPage(rows)]
      : ['application/json', JSON.stringify(page === 'db' ? rows.map(world)[0] : rows.map(world))];
    res.setHeader('Server-Timing', serverTiming(clock.db, process.hrtime.bigint() - began));
    send(res, 200, type, body);
  } catch (e) {
    if (e instanceof NoStep) {
      send(res, 404, 'text/plain', `no ${page} step '${id}'\n`);
      return;
    }
    failed(res, e, t, isVerify);
  }
}

// Operations 0 … count-1 in order under the step's policy, every value read checksummed.
async function verify(s, dump = 0) {
  const sum = new Checksum(dump); // keeps the first `dump` rows read, typed, to explain a mismatch
  let changed = 0, width = 0;
  for (const arg of s.args) {
    const result = await s.op(arg);
    if (s.reads) {
      const kinds = s.sd.kinds();
      for (const row of result) sum.addRow(row, kinds);
      width = s.sd.width() ?? width;
    } else {
      changed += result;
    }
  }
  const rows = s.reads ? sum.rows : changed;
  return { n: s.args.length, rows, values: rows * width, checksum: sum.hex(), ...(dump && s.reads ? { dump: sum.dumped } : {}) };
}

// ---- answers ------------------------------------------------------------------------------------

function send(res, status, type, body) {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': buf.length });
  res.end(buf);
}

// An error as the protocol answers it: kind, the driver's message (first line), sqlstate.
function errorOf(e, d) {
  let kind = 'internal', message, sqlstate;
  if (e instanceof Unsupported) {
    kind = 'unsupported';
    message = e.message;
  } else if (d && d.isDbError(e)) {
    kind = 'db';
    message = d.errorMessage(e);
    sqlstate = d.sqlstate(e);
  } else {
    log('abworker-node web:', e && e.stack ? e.stack : e);
    message = e && e.message ? `${e.name || 'Error'}: ${e.message}` : String(e);
  }
  const error = { kind, message: String(message).trim().split('\n')[0] || kind };
  if (sqlstate) error.sqlstate = sqlstate;
  return error;
}

async function opPage(res, query) {
  const id = query.get('step') ?? '';
  const isConnect = query.get('connect') === '1';
  const isVerify = isConnect || query.get('verify') === '1'; // both answer JSON
  let t = null;
  try {
    if (isConnect) {
      // the host's open: the process's connection made as the first step would make it (and kept)
      t = await tier();
      await opened(t);
      send(res, 200, 'application/json', '{"ok": true}');
      return;
    }
    if (!STEP_ID.test(id)) throw new NoStep(id);
    t = await tier();
    const s = await step(t, id);
    if (isVerify) {
      // the worker's own JSON writer: a dumped 64-bit integer is a BigInt
      send(res, 200, 'application/json', stringify(await verify(s, Number(query.get('dump') ?? 0) || 0)));
      return;
    }
    // one operation, its argument row drawn at random (as the pages of a multi-process server,
    // which share no counter)
    const result = await s.op(s.args[Math.floor(Math.random() * s.args.length)]);
    send(res, 200, 'text/plain', `rows=${s.reads ? result.length : result}`);
  } catch (e) {
    if (e instanceof NoStep) {
      send(res, 404, 'text/plain', `no step '${id}'\n`);
      return;
    }
    failed(res, e, t, isVerify);
  }
}

// A 500: the error as JSON for a verify (or connect) form, else its message alone.
function failed(res, e, t, isVerify) {
  const error = errorOf(e, t && t.driver);
  if (isVerify) send(res, 500, 'application/json', JSON.stringify({ error }));
  else send(res, 500, 'text/plain', error.message + '\n');
}

const server = http.createServer((req, res) => {
  const began = process.hrtime.bigint(); // the page's first moment (its Server-Timing app time)
  const url = new URL(req.url, 'http://localhost');
  switch (url.pathname) {
    case '/op':
      opPage(res, url.searchParams).catch((e) => {
        log('abworker-node web:', e && e.stack ? e.stack : e);
        if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
      });
      break;
    case '/hello':
      send(res, 200, 'text/plain', HELLO);
      break;
    case '/db':
    case '/queries':
    case '/fortunes':
    case '/updates':
      tfbPage(res, url.pathname.slice(1), url.searchParams, began).catch((e) => {
        log('abworker-node web:', e && e.stack ? e.stack : e);
        if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
      });
      break;
    case '/static.html':
      send(res, 200, 'text/html', STATIC);
      break;
    default:
      send(res, 404, 'text/plain', 'not found\n');
  }
});

server.listen(Number(process.env.ACCESSBENCH_TIER_PORT || 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
