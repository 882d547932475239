// The web tier's Node pages (docs/tier.md): a node:http server of one process, the stack as
// Node runs it by default (no cluster, no worker threads), every request on its one event loop.
//
//   ACCESSBENCH_TIER_DIR=… ACCESSBENCH_TIER_PORT=… node workers/node/src/web/server.js
//
// Pages: /static.html, /hello, /op?step=ID[&verify=1] and /op?connect=1 (the host's open). The operation page is a Node worker
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
    const error = errorOf(e, t && t.driver);
    if (isVerify) send(res, 500, 'application/json', JSON.stringify({ error }));
    else send(res, 500, 'text/plain', error.message + '\n');
  }
}

const server = http.createServer((req, res) => {
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
