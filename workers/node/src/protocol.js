// The shared pieces of protocol v1 (protocol/PROTOCOL.md), matching the Python reference in
// src/accessbench/protocol/{prng,generators,checksum,sqltext}.py bit for bit: splitmix64, the
// value generators and the typed values they make, the canonical checksum, the '?'-marker
// scanner and SQL literals.

export class ProtocolError extends Error {
  get name() {
    return 'ProtocolError';
  }
}

const MASK64 = (1n << 64n) - 1n;
const GOLDEN = 0x9e3779b97f4a7c15n;
const M1 = 0xbf58476d1ce4e5b9n;
const M2 = 0x94d049bb133111ebn;
const TWO32 = 4294967296;

// ---- PRNG ---------------------------------------------------------------------------------

export class SplitMix64 {
  constructor(seed) {
    this.state = BigInt.asUintN(64, BigInt(seed));
  }

  next() {
    this.state = (this.state + GOLDEN) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * M1) & MASK64;
    z = ((z ^ (z >> 27n)) * M2) & MASK64;
    return z ^ (z >> 31n);
  }

  // a double in [0, 1) from the top 53 bits
  unit() {
    return Number(this.next() >> 11n) * 2 ** -53;
  }
}

// ---- integers and time ----------------------------------------------------------------------

export function floorDiv(a, b) {
  // BigInt division truncates; Python's // floors
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

export function floorMod(a, b) {
  const m = a % b;
  return (m !== 0n && (m < 0n) !== (b < 0n)) ? m + b : m;
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian), on Numbers.
export function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [era * 400 + yoe + (m <= 2 ? 1 : 0), m, d];
}

const DAY_US = 86400000000n;

function pad(n, width) {
  const s = String(n);
  return s.length >= width ? s : '0'.repeat(width - s.length) + s;
}

// µs since 1970 (BigInt) → 'YYYY-MM-DD HH:MM:SS[.ffffff]' (datetime.isoformat(sep=sep)), or with
// always six fraction digits when full is true (the `generate` form, with sep 'T').
export function formatTimestamp(us, sep = ' ', full = false) {
  const days = floorDiv(us, DAY_US);
  const rem = Number(us - days * DAY_US);
  const [y, m, d] = civilFromDays(Number(days));
  const secs = Math.floor(rem / 1e6);
  const frac = rem % 1e6;
  let s = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}${sep}${pad(Math.floor(secs / 3600), 2)}:` +
    `${pad(Math.floor(secs / 60) % 60, 2)}:${pad(secs % 60, 2)}`;
  if (full || frac) s += '.' + pad(frac, 6);
  return s;
}

function daysInMonth(y, m) {
  if (m === 2 && ((y % 4 === 0 && y % 100 !== 0) || y % 400 === 0)) return 29;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

// datetime.fromisoformat (3.11) for naive values: YYYY-MM-DD or YYYYMMDD, then optionally one
// separator character and HH[:MM[:SS[.f…]]] (or the compact forms). → BigInt µs, or null.
export function parseIsoTimestamp(s) {
  let p = 0;
  const digits = (k) => {
    const part = s.slice(p, p + k);
    if (part.length !== k || !/^[0-9]+$/.test(part)) return null;
    p += k;
    return Number(part);
  };
  let h = 0, mi = 0, se = 0, frac = 0;
  const y = digits(4);
  if (y === null) return null;
  let mo, d;
  if (s[p] === '-') {
    p++;
    mo = digits(2);
    if (mo === null || s[p++] !== '-') return null;
    d = digits(2);
  } else {
    mo = digits(2);
    d = mo === null ? null : digits(2);
  }
  if (mo === null || d === null) return null;
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  if (p < s.length) {
    p++; // any one separator character
    h = digits(2);
    if (h === null) return null;
    const colon = s[p] === ':';
    if (p < s.length) {
      if (colon) p++;
      mi = digits(2);
      if (mi === null) return null;
      if (p < s.length && (!colon || s[p] === ':')) {
        if (colon) p++;
        se = digits(2);
        if (se === null) return null;
        if (s[p] === '.' || s[p] === ',') {
          p++;
          let nd = 0;
          while (p < s.length && s[p] >= '0' && s[p] <= '9') {
            if (nd < 6) frac = frac * 10 + (s.charCodeAt(p) - 48);
            nd++;
            p++;
          }
          if (nd === 0) return null;
          for (; nd < 6; nd++) frac *= 10;
        }
      }
    }
    if (p < s.length) return null; // a time zone, or junk: only naive timestamps
    if (h > 23 || mi > 59 || se > 59) return null;
  }
  return BigInt(daysFromCivil(y, mo, d)) * DAY_US + BigInt(((h * 60 + mi) * 60 + se) * 1e6 + frac);
}

// ---- typed values ---------------------------------------------------------------------------
// Every generated value has one of TYPES (protocol/PROTOCOL.md, "Types"), each with a JavaScript
// representation of its own, so a value's type is what it is and never a guess from JSON:
//   int → BigInt, bool → boolean, float → Number, text → string, bytes → Buffer,
//   timestamp → Timestamp, date → CalendarDate, decimal → Decimal; NULL → null (its type is its
//   column's: Generator.type).
// Drivers bind a value by its type (their `adapt`) in one of the text forms given here.

export const TYPES = ['int', 'bool', 'float', 'decimal', 'text', 'date', 'timestamp', 'bytes'];

// A generated timestamp: µs since 1970 without time zone.
export class Timestamp {
  constructor(us) {
    this.us = us;
  }

  iso(sep = ' ') {
    return formatTimestamp(this.us, sep, false);
  }
}

// A generated date: days since 1970-01-01.
export class CalendarDate {
  constructor(days) {
    this.days = days;
  }

  // YYYY-MM-DD
  iso() {
    const [y, m, d] = civilFromDays(this.days);
    return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
  }
}

// A generated decimal: its plain text (no exponent, with the scale it was made with).
export class Decimal {
  constructor(text) {
    this.text = text;
  }
}

// A double's shortest round-trip text (JavaScript's; -0 keeps its sign): what a float is bound as
// where a driver sends text. Never NaN or ±Infinity here: generators make finite values.
export function floatText(x) {
  return Object.is(x, -0) ? '-0' : String(x);
}

// The same text always in exponent form (literals: MariaDB reads 0.1 as DECIMAL, 0.1e0 as DOUBLE).
export function floatExpText(x) {
  if (!Number.isFinite(x)) throw new ProtocolError(`cannot write ${x} as an SQL literal`);
  const t = floatText(x);
  return t.includes('e') ? t : t + 'e0';
}

// A double's IEEE-754 bits as 16 hex digits, big-endian (the `generate` answer)
export function floatBits(x) {
  f64.setFloat64(0, x);
  return f64.getUint32(0).toString(16).padStart(8, '0') + f64.getUint32(4).toString(16).padStart(8, '0');
}

// An integer count of 10^-scale as plain decimal text: (-1234n, 2) → "-12.34"
export function decimalText(units, scale) {
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  const body = scale ? digits.slice(0, -scale) + '.' + digits.slice(-scale) : digits;
  return (units < 0n ? '-' : '') + body;
}

// Each type's text form, for the drivers that bind a type as text: integers in decimal,
// booleans true/false, doubles' shortest round-trip text, decimals' plain text, dates
// YYYY-MM-DD, timestamps 'YYYY-MM-DD HH:MM:SS[.ffffff]', bytes in hex.
export const TEXT_FORMS = {
  int: (v) => v.toString(),
  bool: (v) => (v ? 'true' : 'false'),
  float: floatText,
  decimal: (v) => v.text,
  text: (v) => v,
  date: (v) => v.iso(),
  timestamp: (v) => v.iso(' '),
  bytes: (v) => v.toString('hex'),
};

// 'YYYY-MM-DD' (date.fromisoformat's extended form) → days since 1970, or null
export function parseIsoDate(s) {
  const m = typeof s === 'string' ? /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s) : null;
  if (!m) return null;
  const y = Number(m[1]), mo = Number(m[2]), d = Number(m[3]);
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  return daysFromCivil(y, mo, d);
}

// format(Decimal(text), "f"): the plain form of a decimal's text (no exponent). null if not a
// decimal.
export function decimalPlain(text) {
  const m = /^\s*([+-]?)(.*?)\s*$/.exec(text);
  const neg = m[1] === '-';
  const body = m[2];
  const special = /^(nan|snan|inf|infinity)$/i.exec(body);
  if (special) {
    const w = special[1].toLowerCase();
    return (neg ? '-' : '') + (w === 'nan' ? 'NaN' : w === 'snan' ? 'sNaN' : 'Infinity');
  }
  const parts = /^([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(body);
  if (!parts || (parts[1] === '' && (parts[2] === undefined || parts[2] === ''))) return null;
  const fracDigits = parts[2] || '';
  let coef = (parts[1] + fracDigits).replace(/^0+/, '');
  let exp = (parts[3] ? Number(parts[3]) : 0) - fracDigits.length;
  if (coef === '') {
    coef = '0';
    if (exp > 0) exp = 0;
  }
  let out;
  if (exp >= 0) {
    out = coef + '0'.repeat(exp);
  } else {
    const k = coef.length + exp;
    out = k > 0 ? coef.slice(0, k) + '.' + coef.slice(k) : '0.' + '0'.repeat(-k) + coef;
  }
  return (neg ? '-' : '') + out;
}

// ---- generators -----------------------------------------------------------------------------

function bigField(spec, key, dflt) {
  const v = spec[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new ProtocolError(`generator field '${key}' must be an integer`);
}

// The type a kind's values always have (choice and const: their spec's `type`)
const KIND_TYPES = {
  seq: 'int', uniform: 'int', text: 'text', timestamp: 'timestamp', float: 'float', decimal: 'decimal', date: 'date',
  bytes: 'bytes',
};

// The type of a spec's values: its kind's, or for choice and const the spec's `type` (which the
// runner always sends; without one, the type of the first value as JSON has it, as the Python
// reference reads the older vectors).
function specType(spec) {
  const declared = spec.type;
  if (declared !== undefined && declared !== null && !TYPES.includes(declared)) {
    throw new ProtocolError(`unknown value type ${JSON.stringify(declared)}`);
  }
  const own = KIND_TYPES[spec.kind];
  if (own !== undefined) {
    if (declared && declared !== own) throw new ProtocolError(`a ${spec.kind} generator makes ${own}, not ${declared}`);
    return own;
  }
  if (declared) return declared;
  const first = spec.kind === 'choice' ? (Array.isArray(spec.values) ? spec.values[0] : undefined) : spec.value;
  switch (typeof first) {
    case 'boolean': return 'bool';
    case 'bigint': return 'int';
    case 'number': return 'float';
    default: return 'text';
  }
}

// A choice's or const's JSON value as a value of `type`: booleans, integers, numbers (a float
// may be written as an integer), strings; decimals, dates, timestamps and bytes as their text
// forms (plain digits, YYYY-MM-DD, ISO 8601, hex).
function typedOf(v, type) {
  const shown = typeof v === 'bigint' ? String(v) : JSON.stringify(v);
  const bad = () => new ProtocolError(`${shown} is not a ${type} value`);
  switch (type) {
    case 'bool':
      if (typeof v !== 'boolean') throw bad();
      return v;
    case 'int':
      if (typeof v === 'bigint') return v;
      if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
      throw bad();
    case 'float':
      if (typeof v === 'bigint' || typeof v === 'number') return Number(v);
      throw bad();
    case 'text':
      if (typeof v !== 'string') throw bad();
      return v;
    case 'decimal': {
      const plain = ['string', 'bigint', 'number'].includes(typeof v) ? decimalPlain(String(v)) : null;
      if (plain === null) throw bad();
      return new Decimal(plain);
    }
    case 'date': {
      const days = parseIsoDate(v);
      if (days === null) throw bad();
      return new CalendarDate(days);
    }
    case 'timestamp': {
      const us = typeof v === 'string' ? parseIsoTimestamp(v) : null;
      if (us === null) throw bad();
      return new Timestamp(us);
    }
    case 'bytes':
      if (typeof v !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(v)) throw bad();
      return Buffer.from(v, 'hex');
    default:
      throw bad();
  }
}

function numberField(spec, key) {
  const v = spec[key];
  if (typeof v === 'bigint' || typeof v === 'number') return Number(v);
  throw new ProtocolError(`generator field '${key}' must be a number`);
}

// One spec's stream of values, each of the spec's type (`type`, one of TYPES, represented as
// above), NULL as null.
export class Generator {
  constructor(spec) {
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
      throw new ProtocolError('a generator spec must be an object');
    }
    this.rng = new SplitMix64(bigField(spec, 'seed', 0n));
    this.null = spec.null === undefined || spec.null === null ? 0 : Number(spec.null);
    const kind = spec.kind;
    this.kind = kind;
    this.type = specType(spec);
    const rng = this.rng;
    if (kind === 'seq') {
      const start = bigField(spec, 'start', 1n), step = bigField(spec, 'step', 1n);
      const div = bigField(spec, 'div', 1n), mod = bigField(spec, 'mod', 0n);
      if (div === 0n) throw new ProtocolError('seq: div must not be 0');
      this.make = mod !== 0n
        ? (i) => floorMod(floorDiv(start + BigInt(i) * step, div), mod)
        : (i) => floorDiv(start + BigInt(i) * step, div);
    } else if (kind === 'uniform') {
      if (spec.lo === undefined || spec.hi === undefined) throw new ProtocolError('uniform: lo and hi are required');
      const lo = bigField(spec, 'lo', 0n), span = bigField(spec, 'hi', 0n) - lo + 1n;
      if (span <= 0n) throw new ProtocolError('uniform: hi must be >= lo');
      this.make = () => lo + rng.next() % span;
    } else if (kind === 'choice') {
      if (!Array.isArray(spec.values) || spec.values.length === 0) {
        throw new ProtocolError('choice: values must be a non-empty list');
      }
      const values = spec.values.map((v) => typedOf(v, this.type));
      const len = BigInt(values.length);
      this.make = () => values[Number(rng.next() % len)];
    } else if (kind === 'text') {
      const pattern = spec.pattern;
      if (typeof pattern !== 'string') throw new ProtocolError('text: pattern must be a string');
      this.make = () => {
        let out = '';
        for (const ch of pattern) {
          if (ch === '#') out += String.fromCharCode(48 + Number(rng.next() % 10n));
          else if (ch === '?') out += String.fromCharCode(97 + Number(rng.next() % 26n));
          else out += ch;
        }
        return out;
      };
    } else if (kind === 'timestamp') {
      const start = typeof spec.start === 'string' ? parseIsoTimestamp(spec.start) : null;
      if (start === null) {
        throw new ProtocolError('timestamp: start must be an ISO timestamp without time zone, like 2001-01-01T00:00:00');
      }
      const stepUs = bigField(spec, 'step_us', 1000000n), jitter = bigField(spec, 'jitter_us', 0n);
      if (jitter < 0n) throw new ProtocolError('timestamp: jitter_us must be >= 0');
      this.make = jitter
        ? (i) => new Timestamp(start + BigInt(i) * stepUs + rng.next() % (jitter + 1n))
        : (i) => new Timestamp(start + BigInt(i) * stepUs);
    } else if (kind === 'const') {
      if (!('value' in spec)) throw new ProtocolError('const: value is missing');
      const value = typedOf(spec.value, this.type);
      this.make = () => value;
    } else if (kind === 'float') {
      // all in binary64: v = lo + unit()·(hi − lo); with digits d, floor(v·P + 0.5) / P where
      // P = 10^d is made by multiplying 1.0 by 10.0 d times (exact up to 10^22)
      const lo = numberField(spec, 'lo'), width = numberField(spec, 'hi') - lo;
      const digits = spec.digits === undefined || spec.digits === null ? null : Number(bigField(spec, 'digits'));
      if (digits === null) {
        this.make = () => lo + rng.unit() * width;
      } else {
        if (digits < 0 || digits > 15) throw new ProtocolError('float: digits must be 0…15');
        let p = 1.0;
        for (let k = 0; k < digits; k++) p *= 10.0;
        this.make = () => Math.floor((lo + rng.unit() * width) * p + 0.5) / p;
      }
    } else if (kind === 'decimal') {
      // lo and hi count units of 10^-scale
      if (spec.lo === undefined || spec.hi === undefined) throw new ProtocolError('decimal: lo and hi are required');
      const lo = bigField(spec, 'lo', 0n), span = bigField(spec, 'hi', 0n) - lo + 1n;
      const scale = Number(bigField(spec, 'scale', 0n));
      if (span <= 0n) throw new ProtocolError('decimal: hi must be >= lo');
      if (scale < 0) throw new ProtocolError('decimal: scale must be >= 0');
      this.make = () => new Decimal(decimalText(lo + rng.next() % span, scale));
    } else if (kind === 'date') {
      const start = parseIsoDate(spec.start);
      if (start === null) throw new ProtocolError('date: start must be a date YYYY-MM-DD');
      const step = Number(bigField(spec, 'step_days', 1n)), jitter = bigField(spec, 'jitter_days', 0n);
      if (jitter < 0n) throw new ProtocolError('date: jitter_days must be >= 0');
      this.make = jitter
        ? (i) => new CalendarDate(start + i * step + Number(rng.next() % (jitter + 1n)))
        : (i) => new CalendarDate(start + i * step);
    } else if (kind === 'bytes') {
      const length = Number(bigField(spec, 'length', -1n));
      if (length < 0) throw new ProtocolError('bytes: length must be >= 0');
      this.make = () => {
        const out = Buffer.allocUnsafe(length);
        for (let k = 0; k < length; k++) out[k] = Number(rng.next() & 0xffn);
        return out;
      };
    } else {
      throw new ProtocolError(`unknown generator kind ${JSON.stringify(kind)}`);
    }
    this.i = 0;
  }

  next() {
    const i = this.i++;
    // the null draw comes first; a NULL value makes no value draws
    if (this.null && this.rng.unit() < this.null) return null;
    return this.make(i);
  }
}

export function generateValues(spec, count) {
  const g = new Generator(spec);
  const out = new Array(count);
  for (let i = 0; i < count; i++) out[i] = g.next();
  return out;
}

// `count` rows, one value from each spec per row, and the columns' types.
export function generateRows(specs, count) {
  const gens = specs.map((s) => new Generator(s));
  const rows = new Array(count);
  for (let i = 0; i < count; i++) {
    const row = new Array(gens.length);
    for (let k = 0; k < gens.length; k++) row[k] = gens[k].next();
    rows[i] = row;
  }
  return { rows, types: gens.map((g) => g.type) };
}

// A generated value as the `generate` op answers it: floats as their bits in hex, decimals as
// their text, dates YYYY-MM-DD, timestamps with six fraction digits, bytes in hex.
export function toJsonValue(v) {
  if (typeof v === 'number') return floatBits(v);
  if (v instanceof Timestamp) return formatTimestamp(v.us, 'T', true);
  if (v instanceof CalendarDate) return v.iso();
  if (v instanceof Decimal) return v.text;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  return v;
}

// ---- checksum -------------------------------------------------------------------------------

// Column kinds: the canonical encoding's tag of a non-NULL value.
export const K = {
  BOOL: 66, // 'B'
  INT: 73, // 'I'
  FLOAT: 70, // 'F'
  DECIMAL: 68, // 'D'
  TEXT: 83, // 'S'
  BYTES: 88, // 'X'
  TIMESTAMP: 84, // 'T'
  DATE: 100, // 'd'
  TIME: 116, // 't'
};

const f64 = new DataView(new ArrayBuffer(8));
let scratch = Buffer.alloc(1 << 16);

// FNV-1a 64 over 32-bit halves (the prime is 2^40 + 0x1b3).
class Fnv {
  constructor() {
    this.hi = 0xcbf29ce4;
    this.lo = 0x84222325;
  }

  byte(b) {
    const lo = (this.lo ^ b) >>> 0;
    const a = lo * 0x1b3;
    const aLo = a >>> 0;
    this.hi = (this.hi * 0x1b3 + (a - aLo) / TWO32 + ((lo << 8) >>> 0)) >>> 0;
    this.lo = aLo;
  }

  u32(w) {
    this.byte(w & 0xff);
    this.byte((w >>> 8) & 0xff);
    this.byte((w >>> 16) & 0xff);
    this.byte(w >>> 24);
  }

  // an integer (Number or BigInt) as i64 little-endian
  i64(v) {
    if (typeof v === 'bigint') {
      this.u32(Number(v & 0xffffffffn));
      this.u32(Number((v >> 32n) & 0xffffffffn));
    } else {
      this.u32(v >>> 0);
      this.u32(Math.floor(v / TWO32) >>> 0);
    }
  }

  bytes(buf, n) {
    for (let k = 0; k < n; k++) this.byte(buf[k]);
  }

  text(tag, s) {
    if (scratch.length < s.length * 3) scratch = Buffer.alloc(s.length * 3 + 1024);
    const n = scratch.write(s, 0, 'utf8');
    this.byte(tag);
    this.u32(n);
    this.bytes(scratch, n);
  }
}

function dynamicKind(v) {
  switch (typeof v) {
    case 'bigint': return K.INT;
    case 'number': return K.FLOAT;
    case 'string': return K.TEXT;
    case 'boolean': return K.BOOL;
    default:
      if (v instanceof Uint8Array) return K.BYTES;
      throw new TypeError(`no canonical encoding for ${Object.prototype.toString.call(v)}`);
  }
}

function hashValue(h, v, kind) {
  if (v === null || v === undefined) {
    h.byte(78); // 'N'
    return;
  }
  switch (kind) {
    case K.BOOL:
      h.byte(66);
      h.byte(v ? 1 : 0);
      return;
    case K.INT:
    case K.TIMESTAMP:
    case K.TIME:
      h.byte(kind);
      h.i64(v);
      return;
    case K.FLOAT:
      h.byte(70);
      f64.setFloat64(0, v, true);
      h.u32(f64.getUint32(0, true));
      h.u32(f64.getUint32(4, true));
      return;
    case K.DECIMAL:
    case K.TEXT:
      h.text(kind, v);
      return;
    case K.BYTES:
      h.byte(88);
      h.u32(v.length);
      h.bytes(v, v.length);
      return;
    case K.DATE:
      h.byte(100);
      h.u32(Number(v) >>> 0);
      return;
    default:
      throw new TypeError(`unknown column kind ${kind}`);
  }
}

// A value read as the protocol writes it out ({"type", "value"}: the `checksum` op's input, a
// verification pass's `dump`): what hashValue encodes for it, readable — the same type tag and
// the same integer, bits or text (an integer as the i64 it is hashed as, a date as its i32).
// typedValue below reads it back.
function typedJson(v, kind) {
  if (v === null || v === undefined) return { type: 'null' };
  switch (kind) {
    case K.BOOL: return { type: 'bool', value: Boolean(v) };
    case K.INT:
    case K.TIMESTAMP:
    case K.TIME: {
      const type = kind === K.INT ? 'int' : kind === K.TIMESTAMP ? 'timestamp' : 'time';
      return { type, value: BigInt.asIntN(64, BigInt(v)) };
    }
    case K.FLOAT: return { type: 'float', value: floatBits(v) };
    case K.DECIMAL:
    case K.TEXT: return { type: kind === K.DECIMAL ? 'decimal' : 'text', value: v };
    case K.BYTES: return { type: 'bytes', value: Buffer.from(v).toString('hex') };
    case K.DATE: return { type: 'date', value: Number(v) | 0 };
    default: throw new TypeError(`unknown column kind ${kind}`);
  }
}

// The verification checksum: the sum mod 2^64 of each row's FNV-1a 64 over its values'
// canonical encodings. A row's kinds are given per column (PostgreSQL: from the type OIDs), or
// taken from each value's JavaScript type when kinds is null (SQLite: integers are BigInt,
// reals Number, text string, blobs Buffer).
// With `dump` > 0 it also keeps its first `dump` rows as typed values (`dumped`), written from
// the very value and kind each one is hashed with, so that a mismatch can be explained.
export class Checksum {
  constructor(dump = 0) {
    this.hi = 0;
    this.lo = 0;
    this.rows = 0;
    this.dump = dump;
    this.dumped = [];
  }

  addRow(row, kinds) {
    const h = new Fnv();
    const typed = this.rows < this.dump ? new Array(row.length) : null;
    for (let c = 0; c < row.length; c++) {
      const v = row[c];
      const kind = kinds ? kinds[c] : (v === null ? 0 : dynamicKind(v));
      hashValue(h, v, kind);
      if (typed) typed[c] = typedJson(v, kind);
    }
    if (typed) this.dumped.push(typed);
    const lo = this.lo + h.lo;
    this.lo = lo >>> 0;
    this.hi = (this.hi + h.hi + (lo >= TWO32 ? 1 : 0)) >>> 0;
    this.rows++;
  }

  addRows(rows, kinds) {
    for (const row of rows) this.addRow(row, kinds);
  }

  hex() {
    return this.hi.toString(16).padStart(8, '0') + this.lo.toString(16).padStart(8, '0');
  }
}

// A typed conformance value ({"type", "value"}) → [native value, kind].
export function typedValue(t) {
  if (t === null || typeof t !== 'object') throw new ProtocolError('a typed value is an object');
  const v = t.value;
  switch (t.type) {
    case 'null':
      return [null, 0];
    case 'bool':
      return [v === true, K.BOOL];
    case 'int':
    case 'timestamp':
    case 'time':
      if (typeof v !== 'bigint') throw new ProtocolError(`a ${t.type} value must be an integer`);
      return [v, t.type === 'int' ? K.INT : t.type === 'timestamp' ? K.TIMESTAMP : K.TIME];
    case 'date':
      if (typeof v !== 'bigint') throw new ProtocolError('a date value must be an integer');
      return [Number(v), K.DATE];
    case 'float': {
      if (typeof v !== 'string' || !/^[0-9a-fA-F]{16}$/.test(v)) throw new ProtocolError('a float value is 16 hex digits');
      f64.setUint32(0, parseInt(v.slice(0, 8), 16));
      f64.setUint32(4, parseInt(v.slice(8), 16));
      return [f64.getFloat64(0), K.FLOAT];
    }
    case 'decimal': {
      const plain = typeof v === 'string' ? decimalPlain(v) : null;
      if (plain === null) throw new ProtocolError(`not a decimal: ${v}`);
      return [plain, K.DECIMAL];
    }
    case 'text':
      if (typeof v !== 'string') throw new ProtocolError('a text value is a string');
      return [v, K.TEXT];
    case 'bytes':
      if (typeof v !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(v)) throw new ProtocolError('a bytes value is hex');
      return [Buffer.from(v, 'hex'), K.BYTES];
    default:
      throw new ProtocolError(`unknown value type ${JSON.stringify(t.type)}`);
  }
}

// ---- SQL text -------------------------------------------------------------------------------

// Split sql at its '?' markers (n markers → n + 1 segments), skipping quoted strings, quoted
// identifiers and comments exactly as sqltext.py does.
export function segments(sql) {
  const out = [];
  let current = '';
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const ch = sql[i];
    if (ch === "'" || ch === '"') {
      let end = i + 1;
      while (end < n) {
        if (sql[end] === ch) {
          if (end + 1 < n && sql[end + 1] === ch) {
            end += 2;
            continue;
          }
          break;
        }
        end++;
      }
      current += sql.slice(i, end + 1);
      i = end + 1;
    } else if (sql.startsWith('--', i)) {
      let end = sql.indexOf('\n', i);
      end = end < 0 ? n : end;
      current += sql.slice(i, end);
      i = end;
    } else if (sql.startsWith('/*', i)) {
      let end = sql.indexOf('*/', i + 2);
      end = end < 0 ? n : end + 2;
      current += sql.slice(i, end);
      i = end;
    } else if (ch === '?') {
      out.push(current);
      current = '';
      i++;
    } else {
      current += ch;
      i++;
    }
  }
  out.push(current);
  return out;
}

export function countMarkers(sql) {
  return segments(sql).length - 1;
}

// '?' markers → the driver's: 'qmark' (?) or 'numeric' ($1, $2, …)
export function convertMarkers(sql, style) {
  const segs = segments(sql);
  let out = segs[0];
  for (let k = 1; k < segs.length; k++) out += (style === 'numeric' ? '$' + k : '?') + segs[k];
  return out;
}

// A value as an SQL literal of `dialect` (protocol/PROTOCOL.md, "Literal rules"), by its type.
export function literal(v, dialect) {
  if (v === null || v === undefined) return 'NULL';
  switch (typeof v) {
    case 'boolean': // SQLite has no boolean type: bound as integer 1/0, so written as one
      return dialect === 'sqlite' ? (v ? '1' : '0') : v ? 'TRUE' : 'FALSE';
    case 'bigint': return v.toString();
    case 'number': // exponent form: a double on MariaDB; PostgreSQL reads it as numeric, so cast
      return dialect === 'postgresql' ? floatExpText(v) + '::float8' : floatExpText(v);
    case 'string': // on MariaDB backslash is an escape character in strings (default sql_mode): doubled
      return "'" + (dialect === 'mariadb' ? v.replaceAll('\\', '\\\\') : v).replaceAll("'", "''") + "'";
    default: break;
  }
  if (v instanceof Decimal) return v.text;
  if (v instanceof Timestamp) return "'" + v.iso(' ') + "'";
  if (v instanceof CalendarDate) return (dialect === 'postgresql' ? "DATE '" : "'") + v.iso() + "'";
  if (v instanceof Uint8Array) {
    const hex = Buffer.from(v).toString('hex');
    return dialect === 'postgresql' ? "'\\x" + hex + "'::bytea" : "X'" + hex + "'";
  }
  throw new ProtocolError(`cannot inline ${typeof v} as an SQL literal`);
}

// The statement with each marker replaced by its value as a literal.
export function inline(segs, params, dialect) {
  let out = segs[0];
  for (let k = 1; k < segs.length; k++) out += literal(params[k - 1], dialect) + segs[k];
  return out;
}
