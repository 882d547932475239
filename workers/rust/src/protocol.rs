//! The shared pieces of protocol v1 (protocol/PROTOCOL.md), bit for bit as the Python
//! reference (src/accessbench/protocol/{prng,generators,checksum,sqltext}.py): splitmix64,
//! the generators and the typed values they make, FNV-1a row hashes over the canonical
//! encoding, timestamps and dates, float, decimal and bytes text, the `?`-marker scanner,
//! SQL literals and names, and COPY text.

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

/// The type of a spec's values (PROTOCOL.md, Types): what every value of it, NULL included,
/// is bound as. The runner names it in every spec (`type`); drivers bind by it, never by
/// guessing from a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty {
    Int,
    Bool,
    Float,
    Decimal,
    Text,
    Date,
    Timestamp,
    Bytes,
}

const TYPES: [(&str, Ty); 8] = [
    ("int", Ty::Int),
    ("bool", Ty::Bool),
    ("float", Ty::Float),
    ("decimal", Ty::Decimal),
    ("text", Ty::Text),
    ("date", Ty::Date),
    ("timestamp", Ty::Timestamp),
    ("bytes", Ty::Bytes),
];

impl Ty {
    pub fn parse(name: &str) -> Option<Ty> {
        TYPES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    pub fn name(self) -> &'static str {
        TYPES.iter().find(|(_, t)| *t == self).map_or("?", |(n, _)| n)
    }
}

/// A generated value (a parameter or a table value) of its spec's type, before any driver
/// adapts it: the one value type every driver binds from. A date and a timestamp are held
/// as generated (`D`, `T`: days and microseconds since 1970), or, in a copy made before the
/// clock (`with_time`), as the types a driver's encoder takes (pg.rs: chrono's), so that
/// no conversion is left to the timed bind.
#[derive(Clone, Debug)]
pub enum Gv<D = i32, T = i64> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// exact, with the scale it was made with
    Dec(Decimal),
    Text(String),
    /// days since 1970-01-01
    Date(D),
    /// microseconds since 1970-01-01 00:00:00, no time zone
    Ts(T),
    Bytes(Vec<u8>),
}

impl Gv {
    /// A choice's or const's JSON value as a value of type `ty`: booleans, integers, numbers
    /// (an integer is the same float), strings, and strings in the type's text form for
    /// decimal (plain digits), date (`YYYY-MM-DD`), timestamp (ISO 8601, no zone) and bytes
    /// (hex).
    pub fn from_json(v: &Value, ty: Ty) -> Result<Gv, String> {
        if v.is_null() {
            return Ok(Gv::Null);
        }
        let bad = || format!("{v} is not a {} value", ty.name());
        let text = || v.as_str().ok_or_else(bad);
        Ok(match ty {
            Ty::Bool => Gv::Bool(v.as_bool().ok_or_else(bad)?),
            Ty::Int => Gv::Int(json_int(v).ok_or_else(bad)?),
            Ty::Float => Gv::Float(v.as_f64().ok_or_else(bad)?),
            Ty::Decimal => {
                let t = match v {
                    Value::Number(n) => n.to_string(),
                    _ => text()?.to_string(),
                };
                Gv::Dec(Decimal::from_str_exact(&t).map_err(|e| format!("decimal {t}: {e}"))?)
            }
            Ty::Text => Gv::Text(text()?.to_string()),
            Ty::Date => Gv::Date(parse_iso_date(text()?).ok_or_else(bad)?),
            Ty::Timestamp => Gv::Ts(parse_iso_ts(text()?).ok_or_else(bad)?),
            Ty::Bytes => Gv::Bytes(from_hex(text()?).ok_or_else(bad)?),
        })
    }

    /// The value as the `generate` op answers it: float as its IEEE-754 bits (16 hex digits,
    /// big-endian), decimal as plain text, date `YYYY-MM-DD`, timestamp
    /// `YYYY-MM-DDTHH:MM:SS.ffffff`, bytes as lower-case hex.
    pub fn to_json(&self) -> Value {
        match self {
            Gv::Null => Value::Null,
            Gv::Bool(b) => Value::Bool(*b),
            Gv::Int(i) => Value::from(*i),
            Gv::Float(f) => Value::String(format!("{:016x}", f.to_bits())),
            Gv::Dec(d) => Value::String(d.to_string()),
            Gv::Text(s) => Value::String(s.clone()),
            Gv::Date(d) => Value::String(format_date(*d)),
            Gv::Ts(us) => Value::String(format_ts(*us, true)),
            Gv::Bytes(b) => Value::String(to_hex(b)),
        }
    }

    /// The value with its date and timestamp made into a driver's types (its text and bytes
    /// copied): what the driver binds, made before the clock.
    pub fn with_time<D, T>(&self, date: impl Fn(i32) -> D, ts: impl Fn(i64) -> T) -> Gv<D, T> {
        match self {
            Gv::Null => Gv::Null,
            Gv::Bool(b) => Gv::Bool(*b),
            Gv::Int(i) => Gv::Int(*i),
            Gv::Float(f) => Gv::Float(*f),
            Gv::Dec(d) => Gv::Dec(*d),
            Gv::Text(s) => Gv::Text(s.clone()),
            Gv::Date(d) => Gv::Date(date(*d)),
            Gv::Ts(us) => Gv::Ts(ts(*us)),
            Gv::Bytes(b) => Gv::Bytes(b.clone()),
        }
    }
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

    /// The value as a typed value (`{"type", "value"}`, what the `checksum` op takes and a
    /// verification pass dumps): exactly what `hash` encodes, readable — the same type
    /// letter and the same integer, float bits, decimal text, text or bytes.
    pub fn typed(&self) -> Value {
        let (kind, value) = match *self {
            Val::Null => return serde_json::json!({"type": "null"}),
            Val::Bool(b) => ("bool", Value::Bool(b)),
            Val::Int(i) => ("int", Value::from(i)),
            Val::Float(f) => ("float", Value::String(format!("{:016x}", f.to_bits()))),
            Val::Dec(d) => ("decimal", Value::String(d.to_string())),
            Val::DecText(s) => ("decimal", Value::String(s.to_string())),
            Val::Text(s) => ("text", Value::String(s.to_string())),
            Val::Bytes(b) => ("bytes", Value::String(to_hex(b))),
            Val::Ts(us) => ("timestamp", Value::from(us)),
            Val::Date(d) => ("date", Value::from(d)),
            Val::Time(us) => ("time", Value::from(us)),
        };
        serde_json::json!({"type": kind, "value": value})
    }
}

/// A value read from a database, owned: what a load keeps of the rows it reads (the keys it
/// binds next, each entity once), hashable by its canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    /// the IEEE-754 bits
    Float(u64),
    Dec(Decimal),
    DecText(String),
    Text(String),
    Bytes(Vec<u8>),
    Ts(i64),
    Date(i32),
    Time(i64),
}

impl Cell {
    pub fn of(v: &Val<'_>) -> Cell {
        match *v {
            Val::Null => Cell::Null,
            Val::Bool(b) => Cell::Bool(b),
            Val::Int(i) => Cell::Int(i),
            Val::Float(f) => Cell::Float(f.to_bits()),
            Val::Dec(d) => Cell::Dec(d),
            Val::DecText(s) => Cell::DecText(s.to_string()),
            Val::Text(s) => Cell::Text(s.to_string()),
            Val::Bytes(b) => Cell::Bytes(b.to_vec()),
            Val::Ts(t) => Cell::Ts(t),
            Val::Date(d) => Cell::Date(d),
            Val::Time(t) => Cell::Time(t),
        }
    }

    pub fn val(&self) -> Val<'_> {
        match self {
            Cell::Null => Val::Null,
            Cell::Bool(b) => Val::Bool(*b),
            Cell::Int(i) => Val::Int(*i),
            Cell::Float(f) => Val::Float(f64::from_bits(*f)),
            Cell::Dec(d) => Val::Dec(*d),
            Cell::DecText(s) => Val::DecText(s),
            Cell::Text(s) => Val::Text(s),
            Cell::Bytes(b) => Val::Bytes(b),
            Cell::Ts(t) => Val::Ts(*t),
            Cell::Date(d) => Val::Date(*d),
            Cell::Time(t) => Val::Time(*t),
        }
    }

    /// The value as a parameter to bind (a key read, bound in the next statement).
    pub fn gv(&self) -> Gv {
        match self {
            Cell::Null => Gv::Null,
            Cell::Bool(b) => Gv::Bool(*b),
            Cell::Int(i) => Gv::Int(*i),
            Cell::Float(f) => Gv::Float(f64::from_bits(*f)),
            Cell::Dec(d) => Gv::Dec(*d),
            Cell::DecText(s) => Decimal::from_str_exact(s).map(Gv::Dec).unwrap_or_else(|_| Gv::Text(s.clone())),
            Cell::Text(s) => Gv::Text(s.clone()),
            Cell::Bytes(b) => Gv::Bytes(b.clone()),
            Cell::Ts(t) => Gv::Ts(*t),
            Cell::Date(d) => Gv::Date(*d),
            Cell::Time(t) => Gv::Text(format_ts(*t, false)[11..].to_string()),
        }
    }
}

/// Where decoded rows go. In a verification pass every value is folded into the checksum
/// (and, while fewer than `dump` rows are dumped, also written as its typed value, so that a
/// mismatch can be explained by the very values the checksum encoded); in a timed pass each
/// value is only handed to `black_box`, so that decoding cannot be optimised away but
/// nothing else is done with it. A keeping sink (a load's statements) keeps every value
/// owned (`cells`), as the load works with the rows it reads.
pub struct Sink {
    pub verify: bool,
    pub sum: u64,
    pub rows: u64,
    pub width: usize, // columns of the first row seen (verification)
    pub ncols: usize, // columns of the last result read
    /// the statements the pass sent, where the driver (or the layer's hook) counts them
    pub statements: Option<u64>,
    /// verifying or keeping: anything but the timed pass's black_box (one test on the timed path)
    special: bool,
    keep: bool,
    /// a keeping sink's values, row after row
    pub cells: Vec<Cell>,
    h: u64,
    scratch: String,
    dump: usize,        // rows to dump (verification with `dump`; 0: none)
    dumped: Vec<Value>, // the rows dumped so far, each an array of typed values
    row: Vec<Value>,    // the row being dumped
}

impl Sink {
    pub fn new(verify: bool) -> Self {
        Sink {
            verify,
            sum: 0,
            rows: 0,
            width: 0,
            ncols: 0,
            statements: None,
            special: verify,
            keep: false,
            cells: Vec::new(),
            h: FNV_OFFSET,
            scratch: String::new(),
            dump: 0,
            dumped: Vec::new(),
            row: Vec::new(),
        }
    }

    /// A sink that keeps every value it is given, owned (`cells`; `ncols` values a row).
    pub fn keeping() -> Self {
        Sink { special: true, keep: true, ..Sink::new(false) }
    }

    /// A verification sink that also dumps the first `rows` rows it is given.
    pub fn dumping(self, rows: usize) -> Self {
        Sink { dump: rows, ..self }
    }

    /// Counts `n` statements sent.
    #[inline]
    pub fn sent(&mut self, n: u64) {
        self.statements = Some(self.statements.unwrap_or(0) + n);
    }

    /// The rows dumped, when a dump was asked for.
    pub fn take_dump(&mut self) -> Option<Value> {
        (self.dump > 0).then(|| Value::Array(std::mem::take(&mut self.dumped)))
    }

    #[inline]
    pub fn begin_row(&mut self) {
        self.h = FNV_OFFSET;
    }

    #[inline]
    pub fn val(&mut self, v: Val<'_>) {
        if self.special {
            self.special_val(v);
        } else {
            std::hint::black_box(&v);
        }
    }

    fn special_val(&mut self, v: Val<'_>) {
        if self.keep {
            self.cells.push(Cell::of(&v));
            return;
        }
        self.h = v.hash(self.h, &mut self.scratch);
        if self.dumped.len() < self.dump {
            self.row.push(v.typed());
        }
    }

    #[inline]
    pub fn end_row(&mut self, ncols: usize) {
        self.ncols = ncols;
        if self.special {
            self.special_end(ncols);
        }
    }

    fn special_end(&mut self, ncols: usize) {
        if self.keep {
            self.rows += 1;
            return;
        }
        if self.rows == 0 {
            self.width = ncols;
        }
        self.sum = self.sum.wrapping_add(self.h);
        self.rows += 1;
        if self.dumped.len() < self.dump {
            self.dumped.push(Value::Array(std::mem::take(&mut self.row)));
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

/// `YYYY-MM-DD` of a day counted from 1970-01-01.
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `date.fromisoformat` (Python 3.11) for `YYYY-MM-DD` or `YYYYMMDD`: days since 1970-01-01.
pub fn parse_iso_date(text: &str) -> Option<i32> {
    if text.len() != 10 && text.len() != 8 {
        return None;
    }
    parse_iso_ts(text).map(|us| us.div_euclid(US_PER_DAY) as i32)
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

// ---- float, decimal and bytes text ------------------------------------------------------------------

/// A double's shortest round-trip text, always in exponent form (Rust's `{:e}`: `1e-1`,
/// `-2.5e0`, `1e300`): what the literal rules ask (MariaDB reads `0.1` as DECIMAL but
/// `1e-1` as DOUBLE), and what COPY and a text parameter get.
pub fn float_text(x: f64) -> String {
    format!("{x:e}")
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

/// Lower-case hex of bytes.
pub fn to_hex(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(out, "{x:02x}");
    }
    out
}

fn hexval(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Bytes from hex (either case), or None for an odd length or a non-hex digit.
pub fn from_hex(hex: &str) -> Option<Vec<u8>> {
    let hex = hex.as_bytes();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks(2).map(|p| Some(hexval(p[0])? << 4 | hexval(p[1])?)).collect()
}

// ---- generators ---------------------------------------------------------------------------------

enum GenKind {
    Seq { start: i64, step: i64, div: i64, modulo: i64 },
    Uniform { lo: i64, span: u64 },
    Choice(Vec<Gv>),
    Const(Gv),
    Text(String),
    Timestamp { start: i64, step_us: i64, jitter_us: u64 },
    /// `scale`: 10^digits, when the values are rounded to `digits` decimals
    Float { lo: f64, hi: f64, scale: Option<f64> },
    /// lo and span count units of 10^-scale
    Decimal { lo: i64, span: u64, scale: u32 },
    Date { start: i32, step_days: i64, jitter_days: u64 },
    Bytes(usize),
}

/// One spec's stream: value i (from 0) is made in order, as PROTOCOL.md says, every value of
/// the spec's type.
pub struct Gen {
    kind: GenKind,
    ty: Ty,
    rng: SplitMix64,
    null: f64,
}

fn json_i64(spec: &Value, key: &str, dflt: Option<i64>) -> Result<Option<i64>, String> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(dflt),
        Some(v) => json_int(v).map(Some).ok_or_else(|| format!("generator field '{key}' must be an integer")),
    }
}

fn json_f64(spec: &Value, key: &str) -> Result<f64, String> {
    spec.get(key).and_then(Value::as_f64).ok_or_else(|| format!("generator field '{key}' must be a number"))
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

/// `lo, hi` (inclusive) as `lo` and the span `hi - lo + 1` (mod 2^64; 0 = all 2^64 values).
fn range(spec: &Value, what: &str) -> Result<(i64, u64), String> {
    let need = || format!("{what}: lo and hi must be integers");
    let lo = json_i64(spec, "lo", None)?.ok_or_else(need)?;
    let hi = json_i64(spec, "hi", None)?.ok_or_else(need)?;
    Ok((lo, (hi as u64).wrapping_sub(lo as u64).wrapping_add(1)))
}

/// The type of a spec without `type` (the vectors' older cases): a choice's or const's from
/// its (first) value, as generators.py's `value_type`.
fn json_type(v: Option<&Value>) -> Ty {
    match v {
        Some(Value::Bool(_)) => Ty::Bool,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ty::Int,
        Some(Value::Number(_)) => Ty::Float,
        _ => Ty::Text,
    }
}

impl Gen {
    pub fn new(spec: &Value) -> Result<Gen, String> {
        if !spec.is_object() {
            return Err("a generator spec must be an object".into());
        }
        let kind_name = spec.get("kind").and_then(Value::as_str).ok_or("generator spec without kind")?;
        let seed = match spec.get("seed") {
            None | Some(Value::Null) => 0u64,
            Some(v) => json_int(v).ok_or("generator seed must be an integer")? as u64,
        };
        let null = spec.get("null").and_then(Value::as_f64).unwrap_or(0.0);
        let declared = match spec.get("type") {
            None | Some(Value::Null) => None,
            Some(t) => Some(t.as_str().and_then(Ty::parse).ok_or_else(|| format!("unknown value type {t}"))?),
        };
        // choice and const make their declared type; every other kind its own
        let first = match kind_name {
            "choice" => spec.get("values").and_then(Value::as_array).and_then(|a| a.first()),
            _ => spec.get("value"),
        };
        let ty = match kind_name {
            "seq" | "uniform" => Ty::Int,
            "text" => Ty::Text,
            "timestamp" => Ty::Timestamp,
            "float" => Ty::Float,
            "decimal" => Ty::Decimal,
            "date" => Ty::Date,
            "bytes" => Ty::Bytes,
            _ => declared.unwrap_or_else(|| json_type(first)),
        };
        if declared.is_some_and(|d| d != ty) {
            return Err(format!("a {kind_name} generator makes {} values, not {}", ty.name(), declared.unwrap().name()));
        }
        let kind = match kind_name {
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
                let (lo, span) = range(spec, "uniform")?;
                GenKind::Uniform { lo, span }
            }
            "choice" => {
                let values = spec.get("values").and_then(Value::as_array).filter(|a| !a.is_empty());
                let values = values.ok_or("choice: values must be a non-empty list")?;
                GenKind::Choice(values.iter().map(|v| Gv::from_json(v, ty)).collect::<Result<_, _>>()?)
            }
            "const" => GenKind::Const(Gv::from_json(spec.get("value").ok_or("const: value is missing")?, ty)?),
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
            "float" => {
                // 10^d by repeated exact multiplication, as every worker makes it
                let scale = json_i64(spec, "digits", None)?.map(|d| (0..d).fold(1.0f64, |p, _| p * 10.0));
                GenKind::Float { lo: json_f64(spec, "lo")?, hi: json_f64(spec, "hi")?, scale }
            }
            "decimal" => {
                let (lo, span) = range(spec, "decimal")?;
                let scale = json_i64(spec, "scale", Some(0))?.unwrap();
                if !(0..=Decimal::MAX_SCALE as i64).contains(&scale) {
                    return Err(format!("decimal: scale must be 0 to {}", Decimal::MAX_SCALE));
                }
                GenKind::Decimal { lo, span, scale: scale as u32 }
            }
            "date" => {
                let start = spec.get("start").and_then(Value::as_str).and_then(parse_iso_date);
                let jitter = json_i64(spec, "jitter_days", Some(0))?.unwrap();
                if jitter < 0 {
                    return Err("date: jitter_days must be >= 0".into());
                }
                GenKind::Date {
                    start: start.ok_or("date: start must be a date YYYY-MM-DD")?,
                    step_days: json_i64(spec, "step_days", Some(1))?.unwrap(),
                    jitter_days: jitter as u64,
                }
            }
            "bytes" => {
                let length = json_i64(spec, "length", None)?.filter(|l| *l >= 0);
                GenKind::Bytes(length.ok_or("bytes: length must be an integer >= 0")? as usize)
            }
            other => return Err(format!("unknown generator kind '{other}'")),
        };
        Ok(Gen { kind, ty, rng: SplitMix64::new(seed), null })
    }

    /// The type of every value of the spec (what a NULL of it is bound as).
    pub fn ty(&self) -> Ty {
        self.ty
    }

    /// `lo + next() mod span`, in 64-bit two's complement (span 0: all 2^64 values).
    fn draw(&mut self, lo: i64, span: u64) -> i64 {
        let r = self.rng.next();
        let off = if span == 0 { r } else { r % span };
        (lo as u64).wrapping_add(off) as i64
    }

    /// Position i of a timestamp or date: `i·step` (+ `next() mod (jitter + 1)` with a jitter).
    fn offset(&mut self, i: i64, step: i64, jitter: u64) -> i64 {
        let off = i.wrapping_mul(step);
        if jitter == 0 {
            off
        } else {
            off + (self.rng.next() % (jitter + 1)) as i64
        }
    }

    /// Value i.
    pub fn next(&mut self, i: i64) -> Gv {
        if self.null != 0.0 && self.rng.unit() < self.null {
            return Gv::Null; // the null draw comes first; a NULL makes no further draws
        }
        match &self.kind {
            GenKind::Seq { start, step, div, modulo } => {
                let v = floor_div(start + i * step, *div);
                Gv::Int(if *modulo != 0 { floor_mod(v, *modulo) } else { v })
            }
            &GenKind::Uniform { lo, span } => Gv::Int(self.draw(lo, span)),
            GenKind::Choice(vals) => {
                let k = (self.rng.next() % vals.len() as u64) as usize;
                vals[k].clone()
            }
            GenKind::Const(g) => g.clone(),
            GenKind::Text(pattern) => {
                let mut out = String::with_capacity(pattern.len());
                for ch in pattern.chars() {
                    match ch {
                        '#' => out.push((b'0' + (self.rng.next() % 10) as u8) as char),
                        '?' => out.push((b'a' + (self.rng.next() % 26) as u8) as char),
                        c => out.push(c),
                    }
                }
                Gv::Text(out)
            }
            &GenKind::Timestamp { start, step_us, jitter_us } => Gv::Ts(start + self.offset(i, step_us, jitter_us)),
            &GenKind::Float { lo, hi, scale } => {
                let v = lo + self.rng.unit() * (hi - lo);
                Gv::Float(match scale {
                    Some(p) => (v * p + 0.5).floor() / p,
                    None => v,
                })
            }
            &GenKind::Decimal { lo, span, scale } => Gv::Dec(Decimal::new(self.draw(lo, span), scale)),
            &GenKind::Date { start, step_days, jitter_days } => {
                Gv::Date((start as i64 + self.offset(i, step_days, jitter_days)) as i32)
            }
            &GenKind::Bytes(len) => Gv::Bytes((0..len).map(|_| self.rng.next() as u8).collect()),
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

/// A value as an SQL literal (the `literal` mode's rules): booleans `TRUE`/`FALSE` (SQLite,
/// which binds them as integers: `1`/`0`), floats in exponent form (PostgreSQL reads that as
/// numeric, so it is cast: `…::float8`), decimals as their plain digits, dates `'…'`
/// (PostgreSQL: `DATE '…'`), bytes `'\x…'::bytea` (PostgreSQL) or `X'…'`.
pub fn literal(v: &Gv, dialect: Dialect, out: &mut String) {
    let pg = dialect == Dialect::PostgreSQL;
    match v {
        Gv::Null => out.push_str("NULL"),
        Gv::Bool(b) if dialect == Dialect::SQLite => out.push(if *b { '1' } else { '0' }),
        Gv::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        Gv::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Gv::Float(f) => {
            out.push_str(&float_text(*f));
            if pg {
                out.push_str("::float8");
            }
        }
        Gv::Dec(d) => {
            let _ = write!(out, "{d}");
        }
        Gv::Date(d) => {
            let _ = write!(out, "{}'{}'", if pg { "DATE " } else { "" }, format_date(*d));
        }
        Gv::Bytes(b) if pg => {
            let _ = write!(out, "'\\x{}'::bytea", to_hex(b));
        }
        Gv::Bytes(b) => {
            let _ = write!(out, "X'{}'", to_hex(b));
        }
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

/// A table's or column's name as a statement written by the worker names it (a COPY, a
/// multi-row INSERT on PostgreSQL): double-quoted, a `"` doubled. A shape gives names as the
/// statement spells them, without quotes; quoted, they are read as spelled (the workers of
/// every language agree).
pub fn sql_name(name: &str, out: &mut String) {
    out.push('"');
    out.push_str(&name.replace('"', "\"\""));
    out.push('"');
}

/// `t (a, b)`: an insert's table and columns (its shape's) as COPY and INSERT name them.
pub fn table_columns(table: &str, columns: &[String]) -> String {
    let mut out = String::new();
    sql_name(table, &mut out);
    out.push_str(" (");
    for (k, c) in columns.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        sql_name(c, &mut out);
    }
    out.push(')');
    out
}

// ---- COPY ------------------------------------------------------------------------------------------

/// One row in COPY's text format (tab-separated, `\N` for NULL, `\`, tab, newline and CR
/// escaped), appended to `out`: booleans `t`/`f`, floats as their shortest round-trip text,
/// decimals plain, dates and timestamps ISO, bytea as `\x…` hex (its backslash escaped).
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
            Gv::Bool(b) => (if *b { "t" } else { "f" }).into(),
            Gv::Int(i) => i.to_string().into(),
            Gv::Float(f) => float_text(*f).into(),
            Gv::Dec(d) => d.to_string().into(),
            Gv::Text(s) => s.as_str().into(),
            Gv::Date(d) => format_date(*d).into(),
            Gv::Ts(us) => format_ts(*us, false).into(),
            Gv::Bytes(b) => format!("\\x{}", to_hex(b)).into(),
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
            let b = v.as_str().and_then(from_hex).ok_or("a bytes value is an even number of hex digits")?;
            Val::Bytes(&b).hash(h, scratch)
        }
        other => return Err(format!("unknown value type '{other}'")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        let lit = |v: Gv, d: Dialect| {
            let mut s = String::new();
            literal(&v, d, &mut s);
            s
        };
        assert_eq!(lit(Gv::Float(0.1), Dialect::MariaDB), "1e-1");
        assert_eq!(lit(Gv::Float(-2.5), Dialect::PostgreSQL), "-2.5e0::float8");
        assert_eq!(lit(Gv::Float(1e300), Dialect::SQLite), "1e300");
        assert_eq!(lit(Gv::Bool(true), Dialect::SQLite), "1");
        assert_eq!(lit(Gv::Bool(false), Dialect::MariaDB), "FALSE");
        assert_eq!(lit(Gv::Dec(Decimal::new(-1234, 2)), Dialect::PostgreSQL), "-12.34");
        assert_eq!(lit(Gv::Dec(Decimal::new(5, 3)), Dialect::MariaDB), "0.005");
        assert_eq!(lit(Gv::Date(-1), Dialect::PostgreSQL), "DATE '1969-12-31'");
        assert_eq!(lit(Gv::Date(0), Dialect::SQLite), "'1970-01-01'");
        assert_eq!(lit(Gv::Bytes(vec![0, 255]), Dialect::PostgreSQL), "'\\x00ff'::bytea");
        assert_eq!(lit(Gv::Bytes(vec![]), Dialect::MariaDB), "X''");
    }

    #[test]
    fn typed() {
        assert_eq!(Gv::from_json(&serde_json::json!(3), Ty::Float).unwrap().to_json(), "4008000000000000");
        assert_eq!(Gv::from_json(&serde_json::json!("12345.670"), Ty::Decimal).unwrap().to_json(), "12345.670");
        assert_eq!(Gv::from_json(&serde_json::json!("00FF10"), Ty::Bytes).unwrap().to_json(), "00ff10");
        assert_eq!(Gv::from_json(&serde_json::json!("2000-02-29"), Ty::Date).unwrap().to_json(), "2000-02-29");
        assert!(Gv::from_json(&serde_json::json!("2001-02-29"), Ty::Date).is_err());
        let mut row = Vec::new();
        copy_row(&[Gv::Bool(true), Gv::Float(0.5), Gv::Bytes(vec![1]), Gv::Null], &mut row);
        assert_eq!(row, b"t\t5e-1\t\\\\x01\t\\N\n");
    }

    #[test]
    fn dumped() {
        // a typed value is what the checksum encodes: through the checksum op, the same hash
        let b = [0u8, 255];
        let mut scratch = String::new();
        for v in [
            Val::Null,
            Val::Bool(true),
            Val::Int(i64::MIN),
            Val::Float(-0.1),
            Val::Dec(Decimal::new(-1230, 3)),
            Val::DecText("0.000"),
            Val::Text(","),
            Val::Bytes(&b),
            Val::Ts(-1),
            Val::Date(-719162),
            Val::Time(86_399_999_999),
        ] {
            let want = v.hash(FNV_OFFSET, &mut scratch);
            assert_eq!(hash_typed(FNV_OFFSET, &v.typed(), &mut scratch).unwrap(), want, "{}", v.typed());
        }
        assert_eq!(Val::Float(1.0).typed(), serde_json::json!({"type": "float", "value": "3ff0000000000000"}));
        let mut sink = Sink::new(true).dumping(1);
        for i in 0..2 {
            sink.begin_row();
            sink.val(Val::Int(i));
            sink.end_row(1);
        }
        assert_eq!(sink.take_dump().unwrap(), serde_json::json!([[{"type": "int", "value": 0}]]));
        assert_eq!(Sink::new(true).take_dump(), None);
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
    fn names() {
        let cols = |c: &[&str]| c.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(table_columns("conf_new", &cols(&["id", "grp"])), "\"conf_new\" (\"id\", \"grp\")");
        assert_eq!(table_columns("Hits_2", &cols(&["_a$1"])), "\"Hits_2\" (\"_a$1\")");
        assert_eq!(table_columns("my table", &cols(&["a\"b", "1x", "é"])), "\"my table\" (\"a\"\"b\", \"1x\", \"é\")");
        let mut s = String::new();
        sql_name("", &mut s);
        assert_eq!(s, "\"\"");
    }

    #[test]
    fn marks() {
        assert_eq!(markers("SELECT '?', \"a?\" -- ?\n, ? /* ? */ , ?").len(), 2);
    }
}
