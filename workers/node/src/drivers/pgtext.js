// PostgreSQL's text result format → native JavaScript values, shared by node-pg and
// node-postgres-js (both read text results). Decoded by type OID, as c-libpq does:
//   int2/int4/oid/xid/cid → Number; int8 → BigInt; float4/float8 → Number (float4 as the
//   shortest text PostgreSQL prints, parsed as a double: what any text-format driver gets);
//   numeric → the text PostgreSQL prints (string); bool → boolean; bytea (hex) → Buffer;
//   timestamp/timestamptz → BigInt µs since 1970 (parsed from the text, microseconds kept, no
//   time-zone shift; timestamptz converted to UTC by its printed offset); date → Number days
//   since 1970; time → Number µs since midnight; every other type → the text as sent (string).
//
// With them each type's parameter text (PG_TEXT) and `PgTextDriver`, the base of both drivers:
// the DBMS, errors answered with the server's severity and SQLSTATE.

import { Driver } from '../driver.js';
import { K, TEXT_FORMS, daysFromCivil } from '../protocol.js';

export const OID = {
  BOOL: 16, BYTEA: 17, CHAR: 18, NAME: 19, INT8: 20, INT2: 21, INT4: 23, TEXT: 25, OID: 26, XID: 28, CID: 29,
  FLOAT4: 700, FLOAT8: 701, BPCHAR: 1042, VARCHAR: 1043, DATE: 1082, TIME: 1083, TIMESTAMP: 1114,
  TIMESTAMPTZ: 1184, NUMERIC: 1700,
};

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const DAY_US = 86400000000;
const SAFE_DAYS = 100000; // |days| * DAY_US stays below 2^53

function num2(s, p) {
  return (s.charCodeAt(p) - 48) * 10 + (s.charCodeAt(p + 1) - 48);
}

// 'HH:MM:SS[.ffffff]' at p → [µs, position after it]
function timeOfDay(s, p) {
  let us = ((num2(s, p) * 60 + num2(s, p + 3)) * 60 + num2(s, p + 6)) * 1e6;
  p += 8;
  if (s.charCodeAt(p) === 46) { // '.'
    p++;
    let frac = 0, nd = 0;
    for (let c = s.charCodeAt(p); c >= 48 && c <= 57; c = s.charCodeAt(++p)) {
      if (nd < 6) {
        frac = frac * 10 + (c - 48);
        nd++;
      }
    }
    for (; nd < 6; nd++) frac *= 10;
    us += frac;
  }
  return [us, p];
}

// 'YYYY-MM-DD' (any number of year digits) at 0 → [year, month, day, position after it]
function ymd(s) {
  let p = 0, y = 0;
  for (let c = s.charCodeAt(p); c >= 48 && c <= 57; c = s.charCodeAt(++p)) y = y * 10 + (c - 48);
  return [y, num2(s, p + 1), num2(s, p + 4), p + 6];
}

function timestampOf(s, tz) {
  const c0 = s.charCodeAt(0);
  if (c0 === 105) return INT64_MAX; // infinity
  if (c0 === 45) return INT64_MIN; // -infinity
  let [y, m, d, p] = ymd(s);
  let [us, q] = timeOfDay(s, p + 1);
  if (tz) {
    const sign = s.charCodeAt(q);
    if (sign === 43 || sign === 45) { // '+' / '-'
      let off = num2(s, q + 1) * 3600;
      q += 3;
      if (s.charCodeAt(q) === 58) {
        off += num2(s, q + 1) * 60;
        q += 3;
        if (s.charCodeAt(q) === 58) {
          off += num2(s, q + 1);
          q += 3;
        }
      }
      us -= (sign === 45 ? -1 : 1) * off * 1e6;
    }
  }
  if (s.endsWith(' BC')) y = 1 - y;
  const days = daysFromCivil(y, m, d);
  return days > -SAFE_DAYS && days < SAFE_DAYS ? BigInt(days * DAY_US + us) : BigInt(days) * 86400000000n + BigInt(us);
}

export const parseTimestamp = (s) => timestampOf(s, false);
export const parseTimestamptz = (s) => timestampOf(s, true);

export function parseDate(s) {
  const c0 = s.charCodeAt(0);
  if (c0 === 105) return 2147483647; // infinity
  if (c0 === 45) return -2147483648; // -infinity
  let [y, m, d] = ymd(s);
  if (s.endsWith(' BC')) y = 1 - y;
  return daysFromCivil(y, m, d);
}

export const parseTime = (s) => timeOfDay(s, 0)[0];
export const parseBool = (s) => s === 't';
export const parseInt8 = (s) => BigInt(s);
export const parseSmall = (s) => +s;
export const parseFloat_ = (s) => +s; // '+' reads NaN, Infinity and -Infinity as PostgreSQL prints them
export const identity = (s) => s;
export function parseBytea(s) {
  // hex format (bytea_output = hex, the default); the escape format is kept as its text bytes
  return s.startsWith('\\x') ? Buffer.from(s.slice(2), 'hex') : Buffer.from(s, 'latin1');
}

// OID → text parser (every OID not listed: the text itself)
export const PARSERS = new Map([
  [OID.BOOL, parseBool],
  [OID.BYTEA, parseBytea],
  [OID.INT8, parseInt8],
  [OID.INT2, parseSmall],
  [OID.INT4, parseSmall],
  [OID.OID, parseSmall],
  [OID.XID, parseSmall],
  [OID.CID, parseSmall],
  [OID.FLOAT4, parseFloat_],
  [OID.FLOAT8, parseFloat_],
  [OID.NUMERIC, identity],
  [OID.DATE, parseDate],
  [OID.TIME, parseTime],
  [OID.TIMESTAMP, parseTimestamp],
  [OID.TIMESTAMPTZ, parseTimestamptz],
]);

export function parserFor(oid) {
  return PARSERS.get(oid) || identity;
}

// OID → the checksum's kind of the decoded value
export function kindOf(oid) {
  switch (oid) {
    case OID.BOOL: return K.BOOL;
    case OID.BYTEA: return K.BYTES;
    case OID.INT8: case OID.INT2: case OID.INT4: case OID.OID: case OID.XID: case OID.CID: return K.INT;
    case OID.FLOAT4: case OID.FLOAT8: return K.FLOAT;
    case OID.NUMERIC: return K.DECIMAL;
    case OID.DATE: return K.DATE;
    case OID.TIME: return K.TIME;
    case OID.TIMESTAMP: case OID.TIMESTAMPTZ: return K.TIMESTAMP;
    default: return K.TEXT;
  }
}

// Each type's value in PostgreSQL's text input form: what both drivers send (the values go
// out in text format; node-pg's bytes aside): the types' text forms, bytea as \x and hex.
export const PG_TEXT = { ...TEXT_FORMS, bytes: (v) => '\\x' + v.toString('hex') };

// The session parameters both drivers put in the startup packet (node-pg as options=-c k=v,
// postgres.js in its connection map): the endpoint's schema as search_path, and read_only as
// default_transaction_read_only, so that the server itself refuses every write (SQLSTATE 25006).
export function startupParameters(ep) {
  const p = {};
  if (ep.schema) p.search_path = ep.schema;
  if (ep.read_only === true) p.default_transaction_read_only = 'on';
  return p;
}

// What both PostgreSQL drivers share: the DBMS, and errors answered with the server's severity
// and SQLSTATE.
export class PgTextDriver extends Driver {
  constructor(method) {
    super(method);
    this.dbms = ['postgresql'];
  }

  errorMessage(e) {
    const sev = e && (e.severity || e.severity_local);
    return sev && e.message ? `${sev}: ${e.message}` : `${e && e.name ? e.name : 'Error'}: ${e && e.message}`;
  }

  sqlstate(e) {
    return e && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
  }
}
