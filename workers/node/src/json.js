// JSON for the protocol. JavaScript's JSON.parse turns every number into a double, which
// loses u64 seeds and 64-bit integers, so this reader returns every integer literal (no
// fraction, no exponent) as a BigInt and every other number as a Number: the type of a parsed
// number says whether the sender wrote an integer or a float, as in Python's json module.
// The writer prints BigInts as plain integers.

export class JSONError extends Error {
  get name() {
    return 'JSONError';
  }
}

export function parse(text) {
  let i = 0;
  const n = text.length;

  function fail(what) {
    throw new JSONError(`${what} at offset ${i}`);
  }

  function ws() {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  }

  function value() {
    ws();
    if (i >= n) fail('unexpected end of input');
    const c = text[i];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === 't') return word('true', true);
    if (c === 'f') return word('false', false);
    if (c === 'n') return word('null', null);
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    return fail(`unexpected character ${JSON.stringify(c)}`);
  }

  function word(w, v) {
    if (text.startsWith(w, i)) {
      i += w.length;
      return v;
    }
    return fail('unexpected word');
  }

  function number() {
    const start = i;
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (text[i] >= '1' && text[i] <= '9') while (i < n && text[i] >= '0' && text[i] <= '9') i++;
    else fail('bad number');
    let integer = true;
    if (text[i] === '.') {
      integer = false;
      i++;
      if (!(text[i] >= '0' && text[i] <= '9')) fail('bad number');
      while (i < n && text[i] >= '0' && text[i] <= '9') i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      integer = false;
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!(text[i] >= '0' && text[i] <= '9')) fail('bad number');
      while (i < n && text[i] >= '0' && text[i] <= '9') i++;
    }
    const s = text.slice(start, i);
    return integer ? BigInt(s) : Number(s);
  }

  function string() {
    i++; // opening quote
    let out = '';
    let from = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(from, i);
        i++;
        return out;
      }
      if (c === 92) {
        out += text.slice(from, i);
        i++;
        const e = text[i++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const hex = text.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            fail('bad escape');
        }
        from = i;
      } else if (c < 32) {
        fail('control character in string');
      } else {
        i++;
      }
    }
  }

  function array() {
    i++;
    const out = [];
    ws();
    if (text[i] === ']') {
      i++;
      return out;
    }
    for (;;) {
      out.push(value());
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return out;
      }
      fail("expected ',' or ']'");
    }
  }

  function object() {
    i++;
    const out = {};
    ws();
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') fail('expected a key');
      const key = string();
      ws();
      if (text[i] !== ':') fail("expected ':'");
      i++;
      out[key] = value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return out;
      }
      fail("expected ',' or '}'");
    }
  }

  const v = value();
  ws();
  if (i < n) fail('trailing characters');
  return v;
}

export function stringify(v) {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      break;
  }
  if (Array.isArray(v)) return '[' + v.map(stringify).join(',') + ']';
  const parts = [];
  for (const [k, x] of Object.entries(v)) {
    if (x !== undefined) parts.push(JSON.stringify(k) + ':' + stringify(x));
  }
  return '{' + parts.join(',') + '}';
}
