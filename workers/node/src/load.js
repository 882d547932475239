// Steps under load (protocol/PROTOCOL.md, "Steps under load"), as the Python reference does
// them (src/accessbench/pyworker/load.py, src/accessbench/protocol/{histogram,schedule}.py):
// C clients at once in this one process, each an async loop on the one event loop, all
// starting at a wall-clock barrier; by duration or by count; closed loop, or open loop at a
// rate with latency from each operation's intended start; every latency into a histogram.
// Uniform arrivals are dealt to the clients in turn (client k's stream starts at phase_ns +
// k · 10⁹ / rate), and an open loop by duration lasts its duration: it starts no arrival at or
// after it, a client whose arrivals are over idles (untimed) until it has passed, and one still
// behind schedule when it has passed stops there, counting the arrivals due before it that it
// had not started as skipped.
//
// Per operation the loop reads the clock once (a BigInt, as the plain loop does) and works in
// Numbers of ns since the common start from there: the histogram is a fixed Float64Array and
// the arrival stream a splitmix64 on 32-bit halves, so recording and scheduling allocate
// nothing.

import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';

import { ProtocolError } from './protocol.js';

const clock = process.hrtime.bigint;

// ---- the histogram (src/accessbench/protocol/histogram.py) ----------------------------------
// Log-linear over integer ns: v < 256 is bucket v; otherwise, with L the bit length of v,
// bucket (L − 8) · 128 + (v >> (L − 8)). Values of 2⁴⁰ ns or more count in `overflow`.

const EXACT = 256;
const SUB = 128;
const LIMIT = 2 ** 40;
const TWO32 = 4294967296;
export const BUCKETS = (40 - 8 + 1) * SUB + EXACT; // more than the 4352 the highest value needs
const POW2 = Array.from({ length: 64 }, (_, i) => 2 ** i);

// The bucket of an integer value in [0, 2⁴⁰), with integer operations only: the bit length
// from clz32 of the right 32-bit half, the shift as >>> below 2³² and as a division by a
// power of two (exact in a double, floored) above.
export function bucketOf(v) {
  if (v < EXACT) return v;
  if (v < TWO32) {
    const shift = 24 - Math.clz32(v); // bit length − 8
    return shift * SUB + (v >>> shift);
  }
  const shift = 56 - Math.clz32(Math.floor(v / TWO32));
  return shift * SUB + Math.floor(v / POW2[shift]);
}

export class Histogram {
  constructor() {
    this.counts = new Float64Array(BUCKETS);
    this.overflow = 0;
    this.n = 0;
    this.min = 0;
    this.max = 0;
    this.sum = 0; // ns; exact below 2⁵³ (104 days of latencies)
  }

  record(v) {
    if (v >= LIMIT) this.overflow++;
    else this.counts[bucketOf(v)]++;
    if (this.n === 0 || v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    this.sum += v;
    this.n++;
  }

  merge(other) {
    for (let b = 0; b < BUCKETS; b++) this.counts[b] += other.counts[b];
    if (other.n && (this.n === 0 || other.min < this.min)) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
    this.overflow += other.overflow;
    this.sum += other.sum;
    this.n += other.n;
  }

  // the wire form: sparse [bucket, count] pairs in bucket order
  toWire() {
    const buckets = [];
    for (let b = 0; b < BUCKETS; b++) if (this.counts[b]) buckets.push([b, this.counts[b]]);
    return { buckets, overflow: this.overflow, min: this.min, max: this.max, sum: this.sum };
  }
}

// ---- the arrival schedule (src/accessbench/protocol/schedule.py) ------------------------------
// splitmix64 as protocol.js has it, but on two 32-bit halves held in Numbers instead of BigInts,
// so drawing an arrival allocates nothing. A 64-bit product's low half: the low words'
// product split into 16-bit pieces (exact in a double) plus the cross products mod 2³².

const G_HI = 0x9e3779b9, G_LO = 0x7f4a7c15;
const M1_HI = 0xbf58476d, M1_LO = 0x1ce4e5b9;
const M2_HI = 0x94d049bb, M2_LO = 0x133111eb;

class SplitMix64Halves {
  constructor(seed) {
    const s = BigInt.asUintN(64, BigInt(seed));
    this.hi = Number(s >> 32n);
    this.lo = Number(s & 0xffffffffn);
    this.h = 0; // the last product / result
    this.l = 0;
  }

  mul(h, l, mh, ml) {
    const a0 = l & 0xffff, a1 = l >>> 16, b0 = ml & 0xffff, b1 = ml >>> 16;
    const mid = a0 * b1 + a1 * b0; // < 2³³
    const low = a0 * b0 + (mid % 65536) * 65536; // < 2³³
    const carry = Math.floor(low / TWO32);
    const high = a1 * b1 + Math.floor(mid / 65536) + carry; // the high word of l · ml
    this.l = low >>> 0;
    this.h = (high + Math.imul(h, ml) + Math.imul(l, mh)) >>> 0;
  }

  // next() >> 11, times 2⁻⁵³: a double in [0, 1) from the top 53 bits
  unit() {
    const lo = this.lo + G_LO;
    this.hi = (this.hi + G_HI + (lo >= TWO32 ? 1 : 0)) >>> 0;
    this.lo = lo >>> 0;
    let h = this.hi, l = this.lo;
    l = (l ^ ((l >>> 30) | (h << 2))) >>> 0;
    h = (h ^ (h >>> 30)) >>> 0;
    this.mul(h, l, M1_HI, M1_LO);
    h = this.h;
    l = this.l;
    l = (l ^ ((l >>> 27) | (h << 5))) >>> 0;
    h = (h ^ (h >>> 27)) >>> 0;
    this.mul(h, l, M2_HI, M2_LO);
    h = this.h;
    l = this.l;
    l = (l ^ ((l >>> 31) | (h << 1))) >>> 0;
    h = (h ^ (h >>> 31)) >>> 0;
    return (h * 2097152 + (l >>> 11)) * 2 ** -53;
  }
}

// Intended start offsets in ns from the trial's start: the first at 0, then `at += gap` in a
// double, each offset truncated toward zero. Poisson gaps are −ln(1 − u) · 10⁹ / rate (pgbench
// -R), uniform gaps 10⁹ / rate.
export class Schedule {
  constructor(rate, arrival, seed) {
    if (!(rate > 0)) throw new ProtocolError('rate must be positive');
    if (arrival !== 'poisson' && arrival !== 'uniform') throw new ProtocolError(`unknown arrival ${JSON.stringify(arrival)}`);
    this.meanGap = 1e9 / rate;
    this.poisson = arrival === 'poisson';
    this.rng = new SplitMix64Halves(seed);
    this.at = 0;
  }

  next() {
    const offset = this.at;
    this.at += this.poisson ? -Math.log(1 - this.rng.unit()) * this.meanGap : this.meanGap;
    return Math.trunc(offset);
  }
}

// ---- waiting --------------------------------------------------------------------------------

// Sleep until this close to an instant, then spin (as the reference: a sleep overshoots).
const SPIN_NS = 100_000;
// With several clients on the event loop a client may neither block the thread (the others'
// answers would wait) nor sleep finer than a millisecond (Node's timers count whole ms): it
// sleeps whole ms to within this margin of the instant, then spins by yielding to the event
// loop (setImmediate), so the others keep running. The spin is what is left of the last ms.
const YIELD_MARGIN_NS = 200_000;
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

// The wall clock as an offset from the monotonic clock (wall ns = clock() + offset). Node's
// only wall clock is Date.now() in whole ms (performance.timeOrigin + performance.now() was
// measured here up to ~0.5 ms ahead of it, which let the barrier open early): spin to its next
// ms tick and read the monotonic clock there. The tick lies between the clock reads around the
// last two Date.now() calls; a try where they are over 20 µs apart (preempted) is done again.
// Up to about a millisecond per try, before the barrier (untimed).
function wallOffset() {
  for (let tries = 1; ; tries++) {
    let a = clock(), prevA = a, b = a;
    const first = Date.now();
    let ms = first;
    while (ms === first) {
      prevA = a;
      a = clock();
      ms = Date.now();
      b = clock();
    }
    if (b - prevA < 20_000n || tries === 20) return BigInt(ms) * 1_000_000n - a;
  }
}

// Block the thread until `rel` ns after `start` (one client: nothing else needs the thread).
function blockUntil(start, rel) {
  const left = rel - Number(clock() - start);
  if (left > SPIN_NS) Atomics.wait(SLEEPER, 0, 0, (left - SPIN_NS) / 1e6);
  while (Number(clock() - start) < rel);
}

// Wait until `rel` ns after `start`, letting the other clients run meanwhile.
async function yieldUntil(start, rel) {
  const ms = Math.floor((rel - Number(clock() - start) - YIELD_MARGIN_NS) / 1e6);
  if (ms >= 1) await sleep(ms);
  while (Number(clock() - start) < rel) await immediate();
}

// Idle until `rel` ns after `start`: an open loop whose arrivals are over waits out its
// duration. Untimed and nothing measured at that instant, so no spin; several clients sleep
// (setTimeout) so that the others keep running.
async function idleUntil(start, rel, block) {
  let left;
  while ((left = rel - Number(clock() - start)) > 0) {
    if (block) Atomics.wait(SLEEPER, 0, 0, left / 1e6);
    else await sleep(Math.ceil(left / 1e6));
  }
}

// The barrier: return when the wall clock reaches `unixNs` (a BigInt; null: at once). One wait
// for all clients: the last 2 ms block the thread, which then belongs to nobody else.
export async function barrier(unixNs) {
  if (unixNs === null) return;
  const target = unixNs - wallOffset();
  const left = Number(target - clock());
  if (left <= 0) return;
  if (left > 3e6) await sleep(Math.floor(left / 1e6) - 2);
  blockUntil(target, 0);
}

// ---- the step's load fields -------------------------------------------------------------------

function num(msg, key) {
  const v = msg[key];
  if (v === undefined || v === null || v === false) return null;
  const x = Number(v);
  if (!Number.isFinite(x)) throw new ProtocolError(`field '${key}' must be a number`);
  return x;
}

// What a step asks for beyond the plain loop (falsy fields count as absent, as in load.py).
export function loadOf(msg) {
  const rate = num(msg, 'rate');
  const duration = num(msg, 'duration_ms');
  const skip = num(msg, 'skip_ns');
  const late = num(msg, 'late_ns');
  const start = msg.start_at_unix_ns;
  const phase = num(msg, 'phase_ns');
  if (phase !== null && phase < 0) throw new ProtocolError("field 'phase_ns' must not be negative");
  const seed = msg.schedule_seed ?? 0;
  if (typeof seed !== 'bigint' && !(typeof seed === 'number' && Number.isInteger(seed))) {
    throw new ProtocolError("field 'schedule_seed' must be an integer");
  }
  return {
    durationNs: duration ? Math.trunc(duration * 1e6) : null,
    rate: rate || null,
    arrival: msg.arrival ?? 'poisson',
    seed: BigInt(seed),
    phaseNs: phase ? Math.trunc(phase) : 0, // uniform: this worker's first intended start
    lateNs: late ?? 1_000_000,
    skipNs: skip || null,
    startAt: start ? BigInt(start) : null,
  };
}

// ---- the loop of one client -------------------------------------------------------------------

// Client k of `clients`: runs `op` over `args` (cycling through them by duration), closed loop
// (latency from the end of its previous operation) or open loop on its own arrival stream at
// rate / clients seeded seed + k (latency from the intended start; uniform: starting at
// phase_ns + k · 10⁹ / rate, the worker's arrivals dealt to its clients in turn). Times are ns
// since the common `start`. `shared.failed` stops every client once one has failed.
// By duration, open loop or closed, a client loops while its previous operation ended before
// the duration (no backlog served past it); an open loop starts no arrival at or after it and,
// its arrivals over, idles until it has passed, its elapsed running to then; behind schedule at
// the end, it counts the arrivals due before it that it had not started as skipped (its elapsed
// running to its last operation's end).
export async function runClient(k, clients, op, sync, args, reads, load, start, shared) {
  const out = { n: 0, rows: 0, elapsed: 0, late: 0, skipped: 0, first: 0, histogram: new Histogram() };
  const count = args.length;
  if (count === 0) return out;
  const hist = out.histogram;
  const stop = load.durationNs;
  const schedule = load.rate
    ? new Schedule(load.rate / clients, load.arrival, BigInt.asUintN(64, load.seed + BigInt(k)))
    : null;
  // rounded down once: the offsets are whole ns, so this equals flooring each start
  const phase = schedule !== null && load.arrival === 'uniform'
    ? Math.trunc(load.phaseNs + k * 1e9 / load.rate)
    : 0;
  const block = clients === 1;
  const lateNs = load.lateNs, skipNs = load.skipNs;
  let prev = 0, i = 0, rows = 0, late = 0, skipped = 0;
  try {
    // by duration, open loop or closed, while the previous operation ended before the stop:
    // no client serves a backlog past the duration (an open loop also ends at the break below)
    while ((stop === null ? i < count : prev < stop) && !shared.failed) {
      const arg = args[i % count];
      let result, now, latency;
      if (schedule !== null) {
        const intended = phase + schedule.next();
        if (stop !== null && intended >= stop) break; // the arrivals are over; the trial is not
        now = Number(clock() - start);
        if (now < intended) {
          if (block) blockUntil(start, intended);
          else await yieldUntil(start, intended);
        } else if (skipNs !== null && now - intended > skipNs) {
          skipped++;
          i++;
          continue;
        } else if (now - intended > lateNs) {
          late++;
        }
        result = sync ? op(arg) : await op(arg);
        now = Number(clock() - start);
        latency = now - intended;
      } else {
        result = sync ? op(arg) : await op(arg);
        now = Number(clock() - start);
        latency = now - prev;
      }
      rows += reads ? result.length : result;
      hist.record(latency);
      if (i === skipped) out.first = latency;
      prev = now;
      i++;
    }
    if (schedule !== null && stop !== null && !shared.failed) {
      if (prev < stop) { // an open loop lasts its duration (PROTOCOL.md)
        await idleUntil(start, stop, block);
        prev = stop;
      } else { // behind schedule at the end: the arrivals due before it that never started
        while (phase + schedule.next() < stop) {
          skipped++;
          i++;
        }
      }
    }
  } catch (e) {
    shared.failed = true;
    throw e;
  }
  out.n = i - skipped;
  out.rows = rows;
  out.elapsed = prev;
  out.late = late;
  out.skipped = skipped;
  return out;
}

// The clients' results as one answer's fields: counts add up, the trial lasts from the common
// start to the last client's end, one histogram.
export function merge(results) {
  const histogram = new Histogram();
  let n = 0, rows = 0, late = 0, skipped = 0, elapsed = 0;
  for (const r of results) {
    histogram.merge(r.histogram);
    n += r.n;
    rows += r.rows;
    late += r.late;
    skipped += r.skipped;
    if (r.elapsed > elapsed) elapsed = r.elapsed;
  }
  return {
    n,
    elapsed_ns: elapsed,
    rows,
    first_op_ns: results.length ? results[0].first : 0,
    histogram: histogram.toWire(),
    late,
    skipped,
    clients: results.length,
    per_client: results.map((r) => ({ n: r.n, elapsed_ns: r.elapsed })),
  };
}
