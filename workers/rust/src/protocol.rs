//! The shared pieces of protocol v1 (protocol/PROTOCOL.md), bit for bit as the Python
//! reference (src/accessbench/protocol/{prng,generators,checksum,sqltext}.py): splitmix64,
//! the generators, FNV-1a row hashes over the canonical encoding, timestamps, Python-style
//! float and decimal text, the `?`-marker scanner, SQL literals and COPY text.

use rust_decimal::Decimal;
use serde_json::Value;
use std::fmt::Write as _;

pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
pub const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

// ---- PRNG ---------------------------------------------------------------------------------

pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    #[inline]
    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A double in [0, 1) from the top 53 bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

#[inline]
pub fn fnv1a(data: &[u8], mut h: u64) -> u64 {
    for &b in data {
        h = (h ^ b as u64).wrapping_mul(FNV_PRIME);
    }
    h
}

// ---- values -------------------------------------------------------------------------------

/// A generated value (a parameter or a table value), before any driver adapts it.
#[derive(Clone, Debug)]
pub enum Gv {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    /// microseconds since 1970-01-01 00:00:00, no time zone
    Ts(i64),
}

/// The type a spec produces: what a NULL of that spec is bound as, where a driver needs one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hint {
    Bool,
    Int,
    Float,
    Text,
    Ts,
}

/// A value read from a database, decoded into a native Rust value.
pub enum Val<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Dec(Decimal),
    /// decimal as plain text (the checksum op's input)
    DecText(&'a str),
    Text(&'a str),
    Bytes(&'a [u8]),
    /// microseconds since 1970-01-01 00:00:00
    Ts(i64),
    /// days since 1970-01-01
    Date(i32),
    /// microseconds since midnight
    Time(i64),
}

#[inline]
fn fnv_byte(h: u64, b: u8) -> u64 {
    (h ^ b as u64).wrapping_mul(FNV_PRIME)
}

#[inline]
fn fnv_sized(h: u64, tag: u8, data: &[u8]) -> u64 {
    let h = fnv1a(&(data.len() as u32).to_le_bytes(), fnv_byte(h, tag));
    fnv1a(data, h)
}

impl Val<'_> {
    /// The canonical encoding of the value folded into the running row hash `h`.
    pub fn hash(&self, h: u64, scratch: &mut String) -> u64 {
        match *self {
            Val::Null => fnv_byte(h, b'N'),
            Val::Bool(b) => fnv_byte(fnv_byte(h, b'B'), b as u8),
            Val::Int(i) => fnv1a(&i.to_le_bytes(), fnv_byte(h, b'I')),
            Val::Float(f) => fnv1a(&f.to_bits().to_le_bytes(), fnv_byte(h, b'F')),
            Val::Dec(d) => {
                scratch.clear();
                let _ = write!(scratch, "{d}");
                fnv_sized(h, b'D', scratch.as_bytes())
            }
            Val::DecText(s) => fnv_sized(h, b'D', s.as_bytes()),
            Val::Text(s) => fnv_sized(h, b'S', s.as_bytes()),
            Val::Bytes(b) => fnv_sized(h, b'X', b),
            Val::Ts(us) => fnv1a(&us.to_le_bytes(), fnv_byte(h, b'T')),
            Val::Date(d) => fnv1a(&d.to_le_bytes(), fnv_byte(h, b'd')),
            Val::Time(us) => fnv1a(&us.to_le_bytes(), fnv_byte(h, b't')),
        }
    }
}

/// Where decoded rows go. In a verification pass every value is folded into the checksum;
/// in a timed pass each value is only handed to `black_box`, so that decoding cannot be
/// optimised away but nothing else is done with it.
pub struct Sink {
    pub verify: bool,
    pub sum: u64,
    pub rows: u64,
    pub width: usize, // columns of the first row seen (verification)
    pub ncols: usize, // columns of the last result read
    h: u64,
    scratch: String,
}

impl Sink {
    pub fn new(verify: bool) -> Self {
        Sink { verify, sum: 0, rows: 0, width: 0, ncols: 0, h: FNV_OFFSET, scratch: String::new() }
    }

    #[inline]
    pub fn begin_row(&mut self) {
        self.h = FNV_OFFSET;
    }

    #[inline]
    pub fn val(&mut self, v: Val<'_>) {
        if self.verify {
            self.h = v.hash(self.h, &mut self.scratch);
        } else {
            std::hint::black_box(&v);
        }
    }

    #[inline]
    pub fn end_row(&mut self, ncols: usize) {
        self.ncols = ncols;
        if self.verify {
            if self.rows == 0 {
                self.width = ncols;
            }
            self.sum = self.sum.wrapping_add(self.h);
            self.rows += 1;
        }
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.sum)
    }
}

// ---- time ---------------------------------------------------------------------------------

pub const US_PER_DAY: i64 = 86_400_000_000;

/// Howard Hinnant's days_from_civil (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = (y - era * 400) as u32;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe as i64 - 719_468
}

pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = (z - era * 146_097) as u32;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe as i64 + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `generate` form `YYYY-MM-DDTHH:MM:SS.ffffff` (always six digits), or Python's
/// `isoformat(sep=" ")`: `YYYY-MM-DD HH:MM:SS[.ffffff]` (fraction only when non-zero).
pub fn format_ts(us: i64, generate_form: bool) -> String {
    let days = us.div_euclid(US_PER_DAY);
    let rem = us.rem_euclid(US_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    let secs = rem / 1_000_000;
    let frac = rem % 1_000_000;
    let (h, mi, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if generate_form {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{frac:06}")
    } else if frac != 0 {
        format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{frac:06}")
    } else {
        format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
    }
}

fn days_in_month(y: i64, m: u32) -> u32 {
    const DM: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) {
        29
    } else {
        DM[(m - 1) as usize]
    }
}

fn digits(s: &[u8], at: &mut usize, n: usize) -> Option<u32> {
    let mut v = 0u32;
    for k in 0..n {
        let c = *s.get(*at + k)?;
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    *at += n;
    Some(v)
}

/// `datetime.fromisoformat` (Python 3.11) for naive values: `YYYY-MM-DD` or `YYYYMMDD`,
/// then optionally one separator character and `HH[:MM[:SS[.f…]]]` (or compact forms).
/// A time zone is an error. Returns microseconds since 1970.
pub fn parse_iso_ts(text: &str) -> Option<i64> {
    let s = text.as_bytes();
    let mut p = 0usize;
    let y = digits(s, &mut p, 4)? as i64;
    let (mo, d);
    if s.get(p) == Some(&b'-') {
        p += 1;
        mo = digits(s, &mut p, 2)?;
        if s.get(p) != Some(&b'-') {
            return None;
        }
        p += 1;
        d = digits(s, &mut p, 2)?;
    } else {
        mo = digits(s, &mut p, 2)?;
        d = digits(s, &mut p, 2)?;
    }
    if y < 1 || !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    let (mut h, mut mi, mut se, mut frac) = (0u32, 0u32, 0u32, 0u32);
    if p < s.len() {
        // any one separator character (a whole UTF-8 character)
        let ch_len = text[p..].chars().next().map(|c| c.len_utf8()).unwrap_or(1);
        p += ch_len;
        h = digits(s, &mut p, 2)?;
        let colon = s.get(p) == Some(&b':');
        if p < s.len() {
            if colon {
                p += 1;
            }
            mi = digits(s, &mut p, 2)?;
            if p < s.len() && (!colon || s[p] == b':') {
                if colon {
                    p += 1;
                }
                se = digits(s, &mut p, 2)?;
                if p < s.len() && (s[p] == b'.' || s[p] == b',') {
                    p += 1;
                    let mut nd = 0;
                    while p < s.len() && s[p].is_ascii_digit() {
                        if nd < 6 {
                            frac = frac * 10 + (s[p] - b'0') as u32;
                        }
                        nd += 1;
                        p += 1;
                    }
                    if nd == 0 {
                        return None;
                    }
                    for _ in nd..6 {
                        frac *= 10;
                    }
                }
            }
        }
        if p < s.len() || h > 23 || mi > 59 || se > 59 {
            return None;
        }
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + (h as i64) * 3600 + (mi as i64) * 60 + se as i64;
    Some(secs * 1_000_000 + frac as i64)
}

// ---- float and decimal text -------------------------------------------------------------------

/// Python's `repr(float)`: shortest round-trip digits, positional for 1e-4 <= |x| < 1e16,
/// otherwise `d.ddde±XX`.
pub fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let sci = format!("{:e}", x.abs()); // shortest round-trip digits: d[.ddd]e[-]X
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut dig: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    while dig.len() > 1 && dig.ends_with('0') {
        dig.pop();
    }
    let nd = dig.len() as i32;
    let mut out = String::with_capacity(32);
    if x < 0.0 {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            for k in 0..=exp {
                out.push(if k < nd { dig.as_bytes()[k as usize] as char } else { '0' });
            }
            out.push('.');
            if nd > exp + 1 {
                out.push_str(&dig[(exp + 1) as usize..]);
            } else {
                out.push('0');
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&dig);
        }
    } else {
        out.push_str(&dig[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&dig[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// Python's `format(Decimal(text), "f")`: plain decimal text, no exponent.
pub fn decimal_plain(text: &str) -> Option<String> {
    let mut p = text.trim_start();
    let mut neg = false;
    if let Some(r) = p.strip_prefix('+') {
        p = r;
    } else if let Some(r) = p.strip_prefix('-') {
        p = r;
        neg = true;
    }
    let sign = if neg { "-" } else { "" };
    let lower = p.to_ascii_lowercase();
    match lower.as_str() {
        "nan" => return Some(format!("{sign}NaN")),
        "snan" => return Some(format!("{sign}sNaN")),
        "inf" | "infinity" => return Some(format!("{sign}Infinity")),
        _ => {}
    }
    let (body, exp_text) = match p.find(['e', 'E']) {
        Some(k) => (&p[..k], Some(&p[k + 1..])),
        None => (p, None),
    };
    let mut coef = String::new();
    let mut exp: i64 = 0;
    let (mut seen, mut dot) = (false, false);
    for c in body.chars() {
        if c == '.' {
            if dot {
                return None;
            }
            dot = true;
        } else if c.is_ascii_digit() {
            seen = true;
            if !coef.is_empty() || c != '0' {
                coef.push(c);
            }
            if dot {
                exp -= 1;
            }
        } else {
            return None;
        }
    }
    if let Some(e) = exp_text {
        exp += e.parse::<i64>().ok()?;
    }
    if !seen {
        return None;
    }
    if coef.is_empty() {
        coef.push('0');
        if exp > 0 {
            exp = 0;
        }
    }
    let mut out = String::from(sign);
    if exp >= 0 {
        out.push_str(&coef);
        for _ in 0..exp {
            out.push('0');
        }
    } else {
        let k = coef.len() as i64 + exp;
        if k > 0 {
            out.push_str(&coef[..k as usize]);
            out.push('.');
            out.push_str(&coef[k as usize..]);
        } else {
            out.push_str("0.");
            for _ in 0..(-k) {
                out.push('0');
            }
            out.push_str(&coef);
        }
    }
    Some(out)
}

// ---- generators ---------------------------------------------------------------------------------

enum GenKind {
    Seq { start: i64, step: i64, div: i64, modulo: i64 },
    Uniform { lo: i64, span: u64 },
    Choice(Vec<(Gv, Value)>),
    Const(Gv, Value),
    Text(String),
    Timestamp { start: i64, step_us: i64, jitter_us: u64 },
}

/// One spec's stream: value i (from 0) is made in order, as PROTOCOL.md says.
pub struct Gen {
    kind: GenKind,
    rng: SplitMix64,
    null: f64,
}

fn json_i64(spec: &Value, key: &str, dflt: Option<i64>) -> Result<Option<i64>, String> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(dflt),
        Some(v) => json_int(v).map(Some).ok_or_else(|| format!("generator field '{key}' must be an integer")),
    }
}

/// An integer from JSON: i64, u64 (as the same 64 bits) or an integral float.
pub fn json_int(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if let Some(u) = v.as_u64() {
        return Some(u as i64);
    }
    match v.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.3e18 => Some(f as i64),
        _ => None,
    }
}

fn gv_from_json(v: &Value) -> Result<Gv, String> {
    Ok(match v {
        Value::Null => Gv::Null,
        Value::Bool(b) => Gv::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Gv::Int(i)
            } else if let Some(u) = n.as_u64() {
                Gv::Int(u as i64)
            } else {
                Gv::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Gv::Text(s.clone()),
        _ => return Err("a choice/const value must be a number, string, boolean or null".into()),
    })
}

fn hint_of(v: &Gv) -> Option<Hint> {
    match v {
        Gv::Null => None,
        Gv::Bool(_) => Some(Hint::Bool),
        Gv::Int(_) => Some(Hint::Int),
        Gv::Float(_) => Some(Hint::Float),
        Gv::Text(_) => Some(Hint::Text),
        Gv::Ts(_) => Some(Hint::Ts),
    }
}

impl Gen {
    pub fn new(spec: &Value) -> Result<Gen, String> {
        if !spec.is_object() {
            return Err("a generator spec must be an object".into());
        }
        let kind = spec.get("kind").and_then(Value::as_str).ok_or("generator spec without kind")?;
        let seed = match spec.get("seed") {
            None | Some(Value::Null) => 0u64,
            Some(v) => json_int(v).ok_or("generator seed must be an integer")? as u64,
        };
        let null = spec.get("null").and_then(Value::as_f64).unwrap_or(0.0);
        let kind = match kind {
            "seq" => {
                let div = json_i64(spec, "div", Some(1))?.unwrap();
                if div == 0 {
                    return Err("seq: div must not be 0".into());
                }
                GenKind::Seq {
                    start: json_i64(spec, "start", Some(1))?.unwrap(),
                    step: json_i64(spec, "step", Some(1))?.unwrap(),
                    div,
                    modulo: json_i64(spec, "mod", Some(0))?.unwrap(),
                }
            }
            "uniform" => {
                let lo = json_i64(spec, "lo", None)?.ok_or("uniform: lo and hi must be integers")?;
                let hi = json_i64(spec, "hi", None)?.ok_or("uniform: lo and hi must be integers")?;
                GenKind::Uniform { lo, span: (hi as u64).wrapping_sub(lo as u64).wrapping_add(1) }
            }
            "choice" => {
                let values = spec.get("values").and_then(Value::as_array).filter(|a| !a.is_empty());
                let values = values.ok_or("choice: values must be a non-empty list")?;
                let mut out = Vec::with_capacity(values.len());
                for v in values {
                    out.push((gv_from_json(v)?, v.clone()));
                }
                GenKind::Choice(out)
            }
            "const" => {
                let v = spec.get("value").ok_or("const: value is missing")?;
                GenKind::Const(gv_from_json(v)?, v.clone())
            }
            "text" => GenKind::Text(
                spec.get("pattern").and_then(Value::as_str).ok_or("text: pattern must be a string")?.to_string(),
            ),
            "timestamp" => {
                let start = spec.get("start").and_then(Value::as_str).and_then(parse_iso_ts).ok_or(
                    "timestamp: start must be an ISO timestamp without time zone, like 2001-01-01T00:00:00",
                )?;
                let jitter = json_i64(spec, "jitter_us", Some(0))?.unwrap();
                if jitter < 0 {
                    return Err("timestamp: jitter_us must be >= 0".into());
                }
                GenKind::Timestamp {
                    start,
                    step_us: json_i64(spec, "step_us", Some(1_000_000))?.unwrap(),
                    jitter_us: jitter as u64,
                }
            }
            other => return Err(format!("unknown generator kind '{other}'")),
        };
        Ok(Gen { kind, rng: SplitMix64::new(seed), null })
    }

    pub fn hint(&self) -> Hint {
        match &self.kind {
            GenKind::Seq { .. } | GenKind::Uniform { .. } => Hint::Int,
            GenKind::Text(_) => Hint::Text,
            GenKind::Timestamp { .. } => Hint::Ts,
            GenKind::Choice(vals) => vals.iter().find_map(|(g, _)| hint_of(g)).unwrap_or(Hint::Text),
            GenKind::Const(g, _) => hint_of(g).unwrap_or(Hint::Text),
        }
    }

    /// Value i, plus (for choice and const) the JSON value it came from.
    fn make(&mut self, i: i64) -> (Gv, Option<&Value>) {
        if self.null != 0.0 && self.rng.unit() < self.null {
            return (Gv::Null, None);
        }
        match &self.kind {
            GenKind::Seq { start, step, div, modulo } => {
                let v = floor_div(start + i * step, *div);
                let v = if *modulo != 0 { floor_mod(v, *modulo) } else { v };
                (Gv::Int(v), None)
            }
            GenKind::Uniform { lo, span } => {
                let r = self.rng.next();
                let off = if *span == 0 { r } else { r % span };
                (Gv::Int((*lo as u64).wrapping_add(off) as i64), None)
            }
            GenKind::Choice(vals) => {
                let k = (self.rng.next() % vals.len() as u64) as usize;
                (vals[k].0.clone(), Some(&vals[k].1))
            }
            GenKind::Const(g, v) => (g.clone(), Some(v)),
            GenKind::Text(pattern) => {
                let mut out = String::with_capacity(pattern.len());
                for ch in pattern.chars() {
                    match ch {
                        '#' => out.push((b'0' + (self.rng.next() % 10) as u8) as char),
                        '?' => out.push((b'a' + (self.rng.next() % 26) as u8) as char),
                        c => out.push(c),
                    }
                }
                (Gv::Text(out), None)
            }
            GenKind::Timestamp { start, step_us, jitter_us } => {
                let mut off = i.wrapping_mul(*step_us);
                if *jitter_us != 0 {
                    off += (self.rng.next() % (jitter_us + 1)) as i64;
                }
                (Gv::Ts(start + off), None)
            }
        }
    }

    pub fn next(&mut self, i: i64) -> Gv {
        self.make(i).0
    }

    /// Value i as the `generate` op answers it.
    pub fn next_json(&mut self, i: i64) -> Value {
        let (g, src) = self.make(i);
        if let Some(v) = src {
            return v.clone();
        }
        match g {
            Gv::Null => Value::Null,
            Gv::Bool(b) => Value::Bool(b),
            Gv::Int(i) => Value::from(i),
            Gv::Float(f) => Value::from(f),
            Gv::Text(s) => Value::String(s),
            Gv::Ts(us) => Value::String(format_ts(us, true)),
        }
    }
}

fn floor_div(a: i64, b: i64) -> i64 {
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn floor_mod(a: i64, b: i64) -> i64 {
    let m = a % b;
    if m != 0 && ((m < 0) != (b < 0)) {
        m + b
    } else {
        m
    }
}

// ---- SQL text -------------------------------------------------------------------------------------

/// Byte offsets of the `?` markers of `sql`, skipping quoted strings, quoted identifiers and
/// comments exactly as sqltext.py does.
pub fn markers(sql: &str) -> Vec<usize> {
    let s = sql.as_bytes();
    let n = s.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let ch = s[i];
        if ch == b'\'' || ch == b'"' {
            let mut end = i + 1;
            while end < n {
                if s[end] == ch {
                    if end + 1 < n && s[end + 1] == ch {
                        end += 2;
                        continue;
                    }
                    break;
                }
                end += 1;
            }
            i = end + 1;
        } else if s[i..].starts_with(b"--") {
            i = sql[i..].find('\n').map(|k| i + k).unwrap_or(n);
        } else if s[i..].starts_with(b"/*") {
            i = sql[i + 2..].find("*/").map(|k| i + 2 + k + 2).unwrap_or(n);
        } else if ch == b'?' {
            out.push(i);
            i += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The statement with its markers as `$1, $2, …` (PostgreSQL) or left as `?`.
pub fn dollar_markers(sql: &str, marks: &[usize]) -> String {
    let mut out = String::with_capacity(sql.len() + marks.len() * 3);
    let mut prev = 0;
    for (k, &m) in marks.iter().enumerate() {
        out.push_str(&sql[prev..m]);
        let _ = write!(out, "${}", k + 1);
        prev = m + 1;
    }
    out.push_str(&sql[prev..]);
    out
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Dialect {
    PostgreSQL,
    SQLite,
    /// backslash is an escape character in its strings (the default sql_mode)
    MariaDB,
}

/// A value as an SQL literal (the `literal` mode's rules).
pub fn literal(v: &Gv, dialect: Dialect, out: &mut String) {
    match v {
        Gv::Null => out.push_str("NULL"),
        Gv::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        Gv::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Gv::Float(f) => out.push_str(&py_float_repr(*f)),
        Gv::Text(s) => {
            out.push('\'');
            for c in s.chars() {
                if c == '\'' {
                    out.push_str("''");
                } else if c == '\\' && dialect == Dialect::MariaDB {
                    out.push_str("\\\\");
                } else {
                    out.push(c);
                }
            }
            out.push('\'');
        }
        Gv::Ts(us) => {
            out.push('\'');
            out.push_str(&format_ts(*us, false));
            out.push('\'');
        }
    }
}

/// The statement with each marker replaced by its value as a literal.
pub fn inline(sql: &str, marks: &[usize], values: &[Gv], dialect: Dialect) -> String {
    let mut out = String::with_capacity(sql.len() + values.len() * 16);
    let mut prev = 0;
    for (&m, v) in marks.iter().zip(values) {
        out.push_str(&sql[prev..m]);
        literal(v, dialect, &mut out);
        prev = m + 1;
    }
    out.push_str(&sql[prev..]);
    out
}

// ---- COPY ------------------------------------------------------------------------------------------

fn skip_ws(s: &[u8], mut p: usize) -> usize {
    while p < s.len() && s[p].is_ascii_whitespace() {
        p += 1;
    }
    p
}

fn word(s: &[u8], p: usize, w: &str) -> Option<usize> {
    let n = w.len();
    if p + n > s.len() || !s[p..p + n].eq_ignore_ascii_case(w.as_bytes()) {
        return None;
    }
    match s.get(p + n) {
        Some(c) if c.is_ascii_alphanumeric() || *c == b'_' => None,
        _ => Some(p + n),
    }
}

/// The table and the parenthesised column list of `INSERT INTO t (cols) VALUES (?, …)` (all
/// values `?` markers), or why the statement is not of that form.
pub fn insert_parts(sql: &str, nparams: usize) -> Result<(String, String), &'static str> {
    let s = sql.as_bytes();
    let generic = "it is not INSERT INTO t (cols) VALUES (?, …)";
    let Some(p) = word(s, skip_ws(s, 0), "INSERT") else { return Err(generic) };
    let Some(mut p) = word(s, skip_ws(s, p), "INTO") else { return Err(generic) };
    p = skip_ws(s, p);
    let table = p;
    while p < s.len() && s[p] != b'(' && !s[p].is_ascii_whitespace() {
        if s[p] == b'"' {
            p += 1;
            while p < s.len() && !(s[p] == b'"' && s.get(p + 1) != Some(&b'"')) {
                p += if s[p] == b'"' { 2 } else { 1 };
            }
            if p >= s.len() {
                return Err(generic);
            }
        }
        p += 1;
    }
    let table_end = p;
    p = skip_ws(s, p);
    if table_end == table || s.get(p) != Some(&b'(') {
        return Err("it names no column list");
    }
    let cols = p;
    let Some(close) = sql[p..].find(')').map(|k| p + k) else { return Err(generic) };
    let cols_end = close + 1;
    let Some(mut p) = word(s, skip_ws(s, cols_end), "VALUES") else { return Err(generic) };
    p = skip_ws(s, p);
    if s.get(p) != Some(&b'(') {
        return Err(generic);
    }
    p += 1;
    for k in 0..nparams {
        p = skip_ws(s, p);
        if s.get(p) != Some(&b'?') {
            return Err("its VALUES are not all '?' markers");
        }
        p = skip_ws(s, p + 1);
        if k + 1 < nparams {
            if s.get(p) != Some(&b',') {
                return Err(generic);
            }
            p += 1;
        }
    }
    p = skip_ws(s, p);
    if s.get(p) != Some(&b')') {
        return Err(generic);
    }
    p = skip_ws(s, p + 1);
    if s.get(p) == Some(&b';') {
        p = skip_ws(s, p + 1);
    }
    if p != s.len() {
        return Err(generic);
    }
    Ok((sql[table..table_end].to_string(), sql[cols..cols_end].to_string()))
}

/// `INSERT INTO t (cols) VALUES (?, …)` → `COPY t (cols) FROM STDIN`; anything else is not
/// a statement COPY can stand for (the reason is returned).
pub fn copy_statement(sql: &str, nparams: usize) -> Result<String, String> {
    match insert_parts(sql, nparams) {
        Ok((table, cols)) => Ok(format!("COPY {table} {cols} FROM STDIN")),
        Err(why) => Err(format!("batch=copy writes only INSERT INTO t (cols) VALUES (?, …) statements: {why}")),
    }
}

/// One row in COPY's text format (tab-separated, `\N` for NULL, `\`, tab, newline and CR
/// escaped), appended to `out`.
pub fn copy_row(values: &[Gv], out: &mut Vec<u8>) {
    for (k, v) in values.iter().enumerate() {
        if k > 0 {
            out.push(b'\t');
        }
        let text: std::borrow::Cow<str> = match v {
            Gv::Null => {
                out.extend_from_slice(b"\\N");
                continue;
            }
            Gv::Bool(b) => (if *b { "true" } else { "false" }).into(),
            Gv::Int(i) => i.to_string().into(),
            Gv::Float(f) => py_float_repr(*f).into(),
            Gv::Text(s) => s.as_str().into(),
            Gv::Ts(us) => format_ts(*us, false).into(),
        };
        for &b in text.as_bytes() {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                _ => out.push(b),
            }
        }
    }
    out.push(b'\n');
}

// ---- the checksum op ------------------------------------------------------------------------------

fn hexval(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// A typed conformance value (`{"type", "value"}`) folded into a row hash.
pub fn hash_typed(h: u64, t: &Value, scratch: &mut String) -> Result<u64, String> {
    let kind = t.get("type").and_then(Value::as_str).ok_or("a typed value needs a type")?;
    let v = t.get("value").unwrap_or(&Value::Null);
    let int = |what: &str| json_int(v).ok_or_else(|| format!("a {what} value must be an integer"));
    Ok(match kind {
        "null" => Val::Null.hash(h, scratch),
        "bool" => Val::Bool(v.as_bool().unwrap_or(false)).hash(h, scratch),
        "int" => Val::Int(int("int")?).hash(h, scratch),
        "timestamp" => Val::Ts(int("timestamp")?).hash(h, scratch),
        "date" => Val::Date(int("date")? as i32).hash(h, scratch),
        "time" => Val::Time(int("time")?).hash(h, scratch),
        "float" => {
            let hex = v.as_str().filter(|s| s.len() == 16).ok_or("a float value is 16 hex digits")?;
            let bits = u64::from_str_radix(hex, 16).map_err(|_| "a float value is 16 hex digits")?;
            Val::Float(f64::from_bits(bits)).hash(h, scratch)
        }
        "decimal" => {
            let text = v.as_str().ok_or("a decimal value is text")?;
            let plain = decimal_plain(text).ok_or_else(|| format!("not a decimal: {text}"))?;
            Val::DecText(&plain).hash(h, scratch)
        }
        "text" => Val::Text(v.as_str().ok_or("a text value is a string")?).hash(h, scratch),
        "bytes" => {
            let hex = v.as_str().unwrap_or("x").as_bytes();
            if !hex.len().is_multiple_of(2) {
                return Err("a bytes value is an even number of hex digits".into());
            }
            let mut b = Vec::with_capacity(hex.len() / 2);
            for pair in hex.chunks(2) {
                match (hexval(pair[0]), hexval(pair[1])) {
                    (Some(hi), Some(lo)) => b.push(hi * 16 + lo),
                    _ => return Err("bad hex in a bytes value".into()),
                }
            }
            Val::Bytes(&b).hash(h, scratch)
        }
        other => return Err(format!("unknown value type '{other}'")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr() {
        assert_eq!(py_float_repr(0.1), "0.1");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(1e-5), "1e-05");
        assert_eq!(py_float_repr(123.0), "123.0");
        assert_eq!(py_float_repr(-2.5e-300), "-2.5e-300");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(1234567890123456.0), "1234567890123456.0");
    }

    #[test]
    fn plain() {
        assert_eq!(decimal_plain("12345.670").unwrap(), "12345.670");
        assert_eq!(decimal_plain("-0.001").unwrap(), "-0.001");
        assert_eq!(decimal_plain("1E+2").unwrap(), "100");
        assert_eq!(decimal_plain("0.000").unwrap(), "0.000");
    }

    #[test]
    fn ts() {
        assert_eq!(parse_iso_ts("1970-01-01T00:00:00"), Some(0));
        assert_eq!(format_ts(-1, true), "1969-12-31T23:59:59.999999");
        assert_eq!(format_ts(983404828628337, false), "2001-03-01 00:00:28.628337");
        assert_eq!(parse_iso_ts("1999-12-31T23:59:59.5").map(|u| format_ts(u, false)).unwrap(), "1999-12-31 23:59:59.500000");
    }

    #[test]
    fn copy() {
        assert_eq!(
            copy_statement("INSERT INTO conf_new (id, grp) VALUES (?, ?)", 2).unwrap(),
            "COPY conf_new (id, grp) FROM STDIN"
        );
        assert!(copy_statement("UPDATE t SET a = ?", 1).is_err());
    }

    #[test]
    fn marks() {
        assert_eq!(markers("SELECT '?', \"a?\" -- ?\n, ? /* ? */ , ?").len(), 2);
    }
}
