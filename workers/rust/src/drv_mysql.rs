//! rust-mysql: the synchronous `mysql` crate (rust-mysql-simple, pure Rust over mysql_common)
//! on MariaDB. No settings. `literal` = the text protocol (COM_QUERY), `extended` = the binary
//! protocol prepared, executed and closed every operation, `prepared` = prepared once, then
//! COM_STMT_EXECUTE; `record` = HANDLER statements. The crate's statement cache is off, so
//! each mode does what it says. Under load: one OS thread per client; pooled = the crate's
//! own `Pool`.

use crate::assoc::{self, Fetch, LoadPlan, Markers};
use crate::host::{Client, Ctx, Described, Link, Method, Slot};
use crate::load::ThreadPause;
use crate::pg::f32_as_text;
use crate::protocol::{self, Gv, Sink, Val};
use crate::step::{Endpoint, Fail, Kind, Mode, Res, Step};
use crate::Hello;
use mysql::consts::{CapabilityFlags, ColumnFlags, ColumnType};
use mysql::prelude::{Protocol, Queryable};
use mysql::{Column, Compression, Conn, Opts, OptsBuilder, Params, Pool, PoolConstraints, PoolOpts, PooledConn, QueryResult, SslOpts, Statement, TxOpts, Value};
use std::path::PathBuf;
use rust_decimal::Decimal;
use std::sync::atomic::{AtomicU64, Ordering};

/// HANDLER … READ NEXT returns this many records per round trip in a record-level scan (as
/// the Python reference).
const HANDLER_ROWS: i64 = 1000;
/// The statement cache of a pooled connection in the prepared mode and for batches (the
/// crate's default size): how the prepared statement survives from one borrowing to the next.
const POOL_STMT_CACHE: usize = mysql::DEFAULT_STMT_CACHE_SIZE;
/// The serving thread's OS id (the runner reads its CPU clock), the version, and whether the
/// server's default is autocommit, in one untimed query at open.
const OPEN_INFO_SQL: &str =
    "SELECT TID, VERSION(), @@autocommit FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()";
/// The binary collation of result columns that hold bytes rather than text.
const BINARY_CHARSET: u16 = 63;

static HANDLERS: AtomicU64 = AtomicU64::new(1);

pub struct Mysql;

impl Mysql {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        if let Some((k, v)) = settings.first() {
            return Err(format!("rust-mysql has no setting {k}={v}"));
        }
        Ok(Mysql)
    }
}

/// The endpoint's TLS as the crate's `SslOpts` (its native-tls backend: OpenSSL), for
/// rust-mysql and the side connection of the Diesel layer: sslmode disable, prefer (or
/// absent) → none (the crate's default: no TLS, and it never probes for it); require →
/// `with_danger_accept_invalid_certs(true)`; verify-ca → `with_root_cert_path(sslrootcert)`
/// and `with_danger_skip_domain_validation(true)`; verify-full → `with_root_cert_path`. No
/// TLS version setting in the crate: a pinned version is unsupported. The crate never secures
/// a unix socket connection (TLS keys are ignored there, as in libpq).
pub(crate) fn ssl_opts(ep: &Endpoint) -> Res<Option<SslOpts>> {
    if ep.direct {
        return Err(Fail::unsupported("sslnegotiation=direct is PostgreSQL's; MariaDB has no direct TLS handshake"));
    }
    if ep.socket.is_some() {
        return Ok(None);
    }
    let root = || ep.sslrootcert.clone().map(PathBuf::from);
    let o = match ep.sslmode.as_str() {
        "disable" | "allow" | "prefer" => return Ok(None),
        "require" => SslOpts::default().with_danger_accept_invalid_certs(true),
        "verify-ca" => SslOpts::default().with_root_cert_path(root()).with_danger_skip_domain_validation(true),
        "verify-full" => SslOpts::default().with_root_cert_path(root()),
        other => return Err(Fail::unsupported(format!("the mysql crate has no sslmode={other}"))),
    };
    if let Some(v) = ep.tls_version {
        return Err(Fail::unsupported(format!(
            "the mysql crate {} has no TLS version setting (tls_version={}): its SslOpts sets no minimum or maximum protocol version",
            env!("ABW_V_MYSQL"),
            v.name()
        )));
    }
    Ok(Some(o))
}

/// Why a batch over TLS is unsupported: the crate's own bug, as the server answers it.
const TLS_BULK: &str = concat!("over TLS the mysql crate ", env!("ABW_V_MYSQL"), " sends its SSLRequest without MariaDB's extended capabilities (Conn::do_ssl_request, no SslRequest::with_mariadb_capabilities), so the server turns bulk operations off for the connection while the crate still sends exec_batch as COM_STMT_BULK_EXECUTE, which the server refuses (ERROR 1295)");

/// The connection options: the unix socket when the endpoint names one (else host and
/// port, and no switch to the socket: `prefer_socket(false)`), user, password, database,
/// CLIENT_FOUND_ROWS, TLS (`ssl_opts`, checked at open), compression when the endpoint asks
/// it, the statement cache of `stmt_cache` entries (0: none), and the init commands (`init`).
fn opts(ep: &Endpoint, ssl: &Option<SslOpts>, stmt_cache: usize, set_autocommit: bool) -> OptsBuilder {
    let mut b = OptsBuilder::new()
        .user(ep.user.clone())
        .pass(ep.password.clone())
        .db_name(ep.database.clone())
        .prefer_socket(false)
        .stmt_cache_size(stmt_cache)
        .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS)
        .ssl_opts(ssl.clone())
        .compress(ep.compress.then(Compression::default));
    b = match &ep.socket {
        Some(s) => b.socket(Some(s.clone())),
        None => b.ip_or_hostname(Some(ep.host.clone().unwrap_or_else(|| "127.0.0.1".into()))).tcp_port(ep.port.unwrap_or(3306)),
    };
    b.init(init(ep, set_autocommit))
}

/// Makes a MariaDB session refuse writes (error 1792, SQLSTATE 25006).
pub(crate) const READ_ONLY_SQL: &str = "SET SESSION TRANSACTION READ ONLY";

/// The crate's init commands, run on every connection as it connects (a pool's too):
/// `READ_ONLY_SQL` when the endpoint is `read_only`, `SET autocommit = 1` where the server's
/// default is off.
pub(crate) fn init(ep: &Endpoint, set_autocommit: bool) -> Vec<&'static str> {
    let mut i = Vec::new();
    if ep.read_only {
        i.push(READ_ONLY_SQL);
    }
    if set_autocommit {
        i.push("SET autocommit = 1");
    }
    i
}

fn fail(e: mysql::Error) -> Fail {
    match e {
        mysql::Error::MySqlError(m) => Fail::db(format!("ERROR {} ({}): {}", m.code, m.state, m.message), Some(m.state)),
        other => Fail::db(other.to_string(), None),
    }
}

fn connect(o: &Opts) -> Res<Conn> {
    Conn::new(o.clone()).map_err(fail)
}

/// The serving thread, the version and the server's autocommit default (untimed).
fn open_info(c: &mut Conn) -> Res<(Option<i64>, Option<String>, bool)> {
    let row: Option<(Option<i64>, Option<String>, Option<i64>)> = c.query_first(OPEN_INFO_SQL).map_err(fail)?;
    Ok(match row {
        Some((tid, version, ac)) => (tid, version, ac != Some(0)),
        None => (None, None, true),
    })
}

// ---- parameters -----------------------------------------------------------------------------

/// The crate's date-and-time value of an instant in µs (a date: midnight, which the crate
/// sends as the date alone).
fn date_value(us: i64) -> Value {
    let (y, mo, d) = protocol::civil_from_days(us.div_euclid(protocol::US_PER_DAY));
    let rem = us.rem_euclid(protocol::US_PER_DAY);
    let secs = rem / 1_000_000;
    let (h, mi, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    Value::Date(y as u16, mo as u8, d as u8, h as u8, mi as u8, s as u8, (rem % 1_000_000) as u32)
}

/// A generated value as the crate binds it (mysql::Value, which has no boolean and no
/// decimal): integers and booleans (1/0) as LONGLONG, floats as DOUBLE, decimals as their
/// plain text (a string: the server converts it to the column's DECIMAL), text as a string,
/// bytes as a (binary) string, dates and timestamps as the crate's Value::Date (sent as
/// MYSQL_TYPE_DATETIME: a date as its 4 date bytes, a timestamp with its microseconds), NULL.
fn adapt(values: &[Gv]) -> Vec<Value> {
    values.iter().map(value_of).collect()
}

fn value_of(v: &Gv) -> Value {
    match v {
            Gv::Null => Value::NULL,
            Gv::Bool(b) => Value::Int(*b as i64),
            Gv::Int(i) => Value::Int(*i),
            Gv::Float(f) => Value::Double(*f),
            Gv::Dec(d) => Value::Bytes(d.to_string().into_bytes()),
            Gv::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
            Gv::Date(d) => date_value(*d as i64 * protocol::US_PER_DAY),
            Gv::Ts(us) => date_value(*us),
            Gv::Bytes(b) => Value::Bytes(b.clone()),
    }
}

/// A load's statements (`assoc`): `prep`, `exec_iter`, `close` (COM_STMT_PREPARE,
/// COM_STMT_EXECUTE, COM_STMT_CLOSE), as the extended mode runs a statement, rows decoded as
/// an exec step's.
struct MyFetch<'a>(&'a mut Conn);

impl Fetch for MyFetch<'_> {
    async fn fetch(&mut self, sql: &str, params: &[Gv], _types: &[crate::protocol::Ty], rows: &mut Sink) -> Res<()> {
        let p = if params.is_empty() { Params::Empty } else { Params::Positional(params.iter().map(value_of).collect()) };
        let c = &mut *self.0;
        let s = c.prep(sql).map_err(fail)?;
        let r = c.exec_iter(&s, p).map_err(fail).and_then(|q| read(q, true, rows));
        let closed = c.close(s).map_err(fail);
        r?;
        closed
    }
}

/// The parameters of row i, as the crate takes them (by value: one Vec per execution).
#[inline]
fn params(vals: &[Value], np: usize, i: usize) -> Params {
    if np == 0 {
        Params::Empty
    } else {
        Params::Positional(vals[i * np..(i + 1) * np].to_vec())
    }
}

// ---- decoding -----------------------------------------------------------------------------------

/// How a result column is decoded, from its type (and flags and character set).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Col {
    Int,
    UInt,
    F32,
    F64,
    Dec,
    Text,
    Bytes,
    Ts,
    Date,
    Time,
    Null,
}

fn col_of(c: &Column) -> Col {
    use ColumnType::*;
    match c.column_type() {
        // BOOLEAN is TINYINT(1): an integer, as the server sends it
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG | MYSQL_TYPE_INT24 | MYSQL_TYPE_YEAR => {
            if c.flags().contains(ColumnFlags::UNSIGNED_FLAG) {
                Col::UInt
            } else {
                Col::Int
            }
        }
        MYSQL_TYPE_FLOAT => Col::F32,
        MYSQL_TYPE_DOUBLE => Col::F64,
        MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => Col::Dec,
        MYSQL_TYPE_TIMESTAMP | MYSQL_TYPE_DATETIME | MYSQL_TYPE_TIMESTAMP2 | MYSQL_TYPE_DATETIME2 => Col::Ts,
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => Col::Date,
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => Col::Time,
        MYSQL_TYPE_NULL => Col::Null,
        MYSQL_TYPE_BIT | MYSQL_TYPE_GEOMETRY | MYSQL_TYPE_VECTOR => Col::Bytes,
        _ if c.character_set() == BINARY_CHARSET => Col::Bytes,
        _ => Col::Text,
    }
}

fn bad(col: Col, v: &Value) -> Fail {
    Fail::db(format!("cannot decode {v:?} as {col:?}"), None)
}

fn text_of<'a>(col: Col, v: &Value, b: &'a [u8]) -> Res<&'a str> {
    std::str::from_utf8(b).map_err(|_| bad(col, v))
}

fn micros(col: Col, v: &Value, y: u16, mo: u8, d: u8, h: u8, mi: u8, s: u8, us: u32) -> Res<i64> {
    if mo == 0 || d == 0 {
        return Err(bad(col, v)); // a zero date has no instant
    }
    let days = protocol::days_from_civil(y as i64, mo as u32, d as u32);
    Ok((days * 86_400 + h as i64 * 3600 + mi as i64 * 60 + s as i64) * 1_000_000 + us as i64)
}

/// TIME text: `[-]H…H:MM:SS[.ffffff]` (hours may exceed 24).
fn time_text(t: &str) -> Option<i64> {
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
    let mut it = hms.split(':');
    let h: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let s: i64 = it.next()?.parse().ok()?;
    let mut us = 0i64;
    for k in 0..6 {
        us = us * 10 + frac.as_bytes().get(k).map_or(0, |c| (c - b'0') as i64);
    }
    let v = (h * 3600 + m * 60 + s) * 1_000_000 + us;
    Some(if neg { -v } else { v })
}

/// One value into a native Rust value by its column's type: the binary protocol gives
/// typed values, the text protocol bytes that are parsed here.
fn decode_val(col: Col, v: &Value, sink: &mut Sink) -> Res<()> {
    let val = match (col, v) {
        (_, Value::NULL) | (Col::Null, _) => Val::Null,
        (Col::Int | Col::UInt, Value::Int(i)) => Val::Int(*i),
        (Col::Int | Col::UInt, Value::UInt(u)) => Val::Int(*u as i64),
        (Col::Int, Value::Bytes(b)) => Val::Int(text_of(col, v, b)?.parse::<i64>().map_err(|_| bad(col, v))?),
        (Col::UInt, Value::Bytes(b)) => Val::Int(text_of(col, v, b)?.parse::<u64>().map_err(|_| bad(col, v))? as i64),
        (Col::F32, Value::Float(f)) => Val::Float(f32_as_text(*f)),
        (Col::F32 | Col::F64, Value::Double(d)) => Val::Float(*d),
        (Col::F32 | Col::F64, Value::Bytes(b)) => Val::Float(text_of(col, v, b)?.parse::<f64>().map_err(|_| bad(col, v))?),
        (Col::Dec, Value::Bytes(b)) => {
            let t = text_of(col, v, b)?;
            match Decimal::from_str_exact(t) {
                Ok(d) => Val::Dec(d),
                // beyond rust_decimal's 28 digits: the exact text, checked
                Err(_) if protocol::decimal_plain(t).is_some() => Val::DecText(t),
                Err(_) => return Err(bad(col, v)),
            }
        }
        (Col::Text, Value::Bytes(b)) => Val::Text(text_of(col, v, b)?),
        (Col::Bytes, Value::Bytes(b)) => Val::Bytes(b),
        (Col::Ts, Value::Date(y, mo, d, h, mi, s, us)) => Val::Ts(micros(col, v, *y, *mo, *d, *h, *mi, *s, *us)?),
        (Col::Ts, Value::Bytes(b)) => Val::Ts(protocol::parse_iso_ts(text_of(col, v, b)?).ok_or_else(|| bad(col, v))?),
        (Col::Date, Value::Date(y, mo, d, ..)) => {
            Val::Date((micros(col, v, *y, *mo, *d, 0, 0, 0, 0)? / protocol::US_PER_DAY) as i32)
        }
        (Col::Date, Value::Bytes(b)) => {
            let us = protocol::parse_iso_ts(text_of(col, v, b)?).ok_or_else(|| bad(col, v))?;
            Val::Date(us.div_euclid(protocol::US_PER_DAY) as i32)
        }
        (Col::Time, Value::Time(neg, days, h, mi, s, us)) => {
            let t = ((*days as i64 * 24 + *h as i64) * 3600 + *mi as i64 * 60 + *s as i64) * 1_000_000 + *us as i64;
            Val::Time(if *neg { -t } else { t })
        }
        (Col::Time, Value::Bytes(b)) => Val::Time(time_text(text_of(col, v, b)?).ok_or_else(|| bad(col, v))?),
        _ => return Err(bad(col, v)),
    };
    sink.val(val);
    Ok(())
}

/// A statement's answer: every row of its result read as it arrives (the crate's
/// `QueryResult` iterator, one `Row` of `Value`s each) and every value decoded, when it reads
/// rows; else the rows it changed (matched, with CLIENT_FOUND_ROWS). Returns that count.
fn read<P: Protocol>(mut r: QueryResult<'_, '_, '_, P>, reads: bool, sink: &mut Sink) -> Res<i64> {
    if !reads {
        let n = r.affected_rows() as i64;
        while let Some(row) = r.next() {
            row.map_err(fail)?; // a statement that returned rows after all: read to the end
        }
        return Ok(n);
    }
    let cols: Vec<Col> = r.columns().as_ref().iter().map(col_of).collect();
    let mut count = 0i64;
    for row in r.by_ref() {
        let row = row.map_err(fail)?;
        sink.begin_row();
        for (k, &col) in cols.iter().enumerate() {
            decode_val(col, row.as_ref(k).unwrap_or(&Value::NULL), sink)?;
        }
        sink.end_row(cols.len());
        count += 1;
    }
    Ok(count)
}

// ---- the operations -------------------------------------------------------------------------------

/// A record step's HANDLER statements, made before the clock: a handler name of its own.
struct Rec {
    open: String,
    first: String,
    next: String,
    close: String,
    /// keyed reads: `HANDLER h READ `index` = (key)` per operation
    keyed: Vec<String>,
}

impl Rec {
    fn new(st: &Step) -> Option<Rec> {
        let r = st.record.as_ref()?;
        let name = format!("ab_h{}", HANDLERS.fetch_add(1, Ordering::Relaxed));
        let keyed = match &r.index {
            Some(index) if st.kind == Kind::Exec => st.texts.iter().map(|k| format!("HANDLER {name} READ `{index}` = ({k})")).collect(),
            _ => Vec::new(),
        };
        Some(Rec {
            open: format!("HANDLER {} OPEN AS {name}", r.table),
            first: format!("HANDLER {name} READ FIRST LIMIT {HANDLER_ROWS}"),
            next: format!("HANDLER {name} READ NEXT LIMIT {HANDLER_ROWS}"),
            close: format!("HANDLER {name} CLOSE"),
            keyed,
        })
    }
}

/// What a client keeps through a step: the parameters, the statement once the prepared mode
/// or a batch has prepared it, and whether statements come from the connection's cache (a
/// pooled connection, which keeps its statement from one borrowing to the next).
struct Exec<'a> {
    vals: &'a [Value],
    rec: Option<&'a Rec>,
    stmt: Option<Statement>,
    cached: bool,
}

impl Exec<'_> {
    /// The statement the step prepared on a connection the client keeps, closed (untimed).
    fn close_stmt(&mut self, c: &mut Conn) {
        if let Some(s) = self.stmt.take() {
            if let Err(e) = c.close(s) {
                eprintln!("abworker-rust: close statement: {e}");
            }
        }
    }
}

fn scan_once(c: &mut Conn, st: &Step, e: &Exec<'_>, sink: &mut Sink) -> Res<i64> {
    match e.rec {
        Some(rec) => {
            // READ FIRST, then READ NEXT until a short batch
            let mut got = read(c.query_iter(&rec.first).map_err(fail)?, true, sink)?;
            let mut total = got;
            while got == HANDLER_ROWS {
                got = read(c.query_iter(&rec.next).map_err(fail)?, true, sink)?;
                total += got;
            }
            Ok(total)
        }
        None => read(c.query_iter(&st.sql).map_err(fail)?, true, sink),
    }
}

fn exec_once(c: &mut Conn, st: &Step, e: &mut Exec<'_>, i: usize, sink: &mut Sink) -> Res<i64> {
    let np = st.nparams;
    let reads = st.reads();
    Ok(match st.mode {
        Mode::Literal => read(c.query_iter(&st.texts[i]).map_err(fail)?, reads, sink)?,
        Mode::Extended => {
            // COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_STMT_CLOSE: every operation
            let s = c.prep(&st.sql).map_err(fail)?;
            let r = c.exec_iter(&s, params(e.vals, np, i)).map_err(fail).and_then(|q| read(q, reads, sink));
            let closed = c.close(s).map_err(fail);
            let n = r?;
            closed?;
            n
        }
        Mode::Prepared if e.cached => {
            // the pooled connection's statement cache: prepared on its first use
            read(c.exec_iter(st.sql.as_str(), params(e.vals, np, i)).map_err(fail)?, reads, sink)?
        }
        Mode::Prepared => {
            if e.stmt.is_none() {
                // prepared once, inside the first operation's time
                e.stmt = Some(c.prep(&st.sql).map_err(fail)?);
            }
            let s = e.stmt.as_ref().unwrap();
            read(c.exec_iter(s, params(e.vals, np, i)).map_err(fail)?, reads, sink)?
        }
        Mode::Record => {
            let rec = e.rec.ok_or_else(|| Fail::protocol("a record step needs record"))?;
            read(c.query_iter(&rec.keyed[i]).map_err(fail)?, true, sink)?
        }
    })
}

/// A batch group: START TRANSACTION, Queryable::exec_batch of the prepared statement with
/// the group's rows (on MariaDB one COM_STMT_BULK_EXECUTE), COMMIT.
fn batch_group(c: &mut Conn, st: &Step, e: &mut Exec<'_>, g: usize) -> Res<i64> {
    let np = st.nparams;
    let rows = st.group(g);
    let n = rows.len() as i64;
    let vals = e.vals;
    let group = rows.map(|r| Params::Positional(vals[r * np..(r + 1) * np].to_vec()));
    let mut tx = c.start_transaction(TxOpts::default()).map_err(fail)?;
    if e.cached {
        tx.exec_batch(st.sql.as_str(), group).map_err(fail)?;
    } else {
        if e.stmt.is_none() {
            e.stmt = Some(tx.prep(&st.sql).map_err(fail)?); // prepared once, in the first group
        }
        tx.exec_batch(e.stmt.as_ref().unwrap(), group).map_err(fail)?;
    }
    tx.commit().map_err(fail)?; // dropped uncommitted after an error: ROLLBACK
    Ok(n)
}

fn connect_once(o: &Opts) -> Res<i64> {
    drop(connect(o)?); // COM_QUIT as the Conn drops
    Ok(0)
}

#[derive(Clone)]
pub struct Cfg {
    ep: Endpoint,
    /// TLS (`ssl_opts`): the same for every connection
    ssl: Option<SslOpts>,
    /// the server's default is autocommit off, so every connection sets it on (as open does)
    set_autocommit: bool,
    /// the options of every connection but pooled ones: no statement cache
    o: Opts,
}

/// What a step needs, made before the clock: the parameters as the crate binds them, and a
/// record step's HANDLER statements.
pub struct Plan {
    vals: Vec<Value>,
    rec: Option<Rec>,
    /// a load step's statements (`assoc`)
    load: Option<LoadPlan>,
}

pub struct MysqlClient<'c> {
    cfg: &'c Cfg,
    st: &'c Step,
    load: Option<&'c LoadPlan>,
    e: Exec<'c>,
    slot: Slot<'c, Mysql, PooledConn>,
}

impl MysqlClient<'_> {
    fn conn(&mut self) -> Res<&mut Conn> {
        self.slot.get(|c| c, |pc| pc.as_mut())
    }
}

impl Client for MysqlClient<'_> {
    async fn op(&mut self, i: usize, sink: &mut Sink) -> Res<i64> {
        let st = self.st;
        if st.kind == Kind::Connect {
            return connect_once(&self.cfg.o);
        }
        let c = self.slot.get(|c| c, |pc| pc.as_mut())?;
        match st.kind {
            Kind::Scan => scan_once(c, st, &self.e, sink),
            Kind::Batch => batch_group(c, st, &mut self.e, i),
            Kind::Load => {
                let plan = self.load.ok_or_else(|| Fail::internal("a load step without its plan"))?;
                crate::host::block_on(assoc::load(&mut MyFetch(c), plan, st.row(i), sink))
            }
            _ => exec_once(c, st, &mut self.e, i, sink),
        }
    }

    async fn tx_begin(&mut self) -> Res<()> {
        self.conn()?.query_drop("BEGIN").map_err(fail)
    }

    async fn tx_commit(&mut self) -> Res<()> {
        self.conn()?.query_drop("COMMIT").map_err(fail)
    }

    async fn recover(&mut self) {
        if let Ok(c) = self.conn() {
            let _ = c.query_drop("ROLLBACK");
        }
    }

    /// Connect, and open the record step's HANDLER on it: inside the operation's time.
    async fn connect(&mut self) -> Res<()> {
        let mut c = connect(&self.cfg.o)?;
        if let Some(rec) = self.e.rec {
            c.query_drop(&rec.open).map_err(fail)?;
        }
        self.slot.made = Some(c);
        Ok(())
    }

    async fn disconnect(&mut self) -> Res<()> {
        self.e.stmt = None; // a statement lives and dies with its connection
        self.slot.made = None; // COM_QUIT
        Ok(())
    }

    async fn borrow(&mut self) -> Res<()> {
        self.slot.lent = Some(self.slot.pool()?.get_conn().map_err(fail)?);
        Ok(())
    }

    fn give_back(&mut self) {
        self.slot.lent = None; // back to the pool as the PooledConn drops, inside the operation's time
    }

    /// On a connection of its own: the prepared statement closed (COM_STMT_CLOSE has no
    /// answer: a COM_PING then waits until the server has read it), the HANDLER closed.
    async fn end(&mut self) {
        if let Link::Own(c) = &mut self.slot.link {
            self.e.close_stmt(c);
            let _ = c.ping();
            if let Some(rec) = self.e.rec {
                let _ = c.query_drop(&rec.close);
            }
        }
    }
}

impl Method for Mysql {
    type Config = Cfg;
    type Conn = Conn;
    type Plan = Plan;
    type Pool = Pool;
    type Client<'c> = MysqlClient<'c>;
    type Pause = ThreadPause;

    fn hello(&self) -> Hello {
        let s: Vec<(&str, String)> = vec![
            ("crate", format!("mysql {} over mysql_common {}, pure Rust; default features off, features minimal-rust (flate2's Rust backend: miniz_oxide, for compress), buffer-pool (the crate's default packet-buffer reuse), client_ed25519 and native-tls (TLS by native-tls over the system OpenSSL)", env!("ABW_V_MYSQL"), env!("ABW_V_MYSQL_COMMON"))),
            ("tls", "OptsBuilder::ssl_opts (the crate's native-tls backend, OpenSSL): sslmode disable and prefer (or absent) → no SslOpts (the crate's default: no TLS, never probed); require → SslOpts::with_danger_accept_invalid_certs(true); verify-ca → with_root_cert_path(sslrootcert) and with_danger_skip_domain_validation(true) (the chain checked, the host name not); verify-full → with_root_cert_path(sslrootcert) (the chain and the host name or IP address); tls_version: unsupported (SslOpts has no protocol version setting); the crate never secures a unix socket connection; it builds a native-tls TlsConnector on every connection (reading the CA file, an SSL_CTX with OpenSSL's default roots and the CA), after the server's greeting, then the handshake: inside connect (a connect step's time); over TLS the crate's SSLRequest carries none of MariaDB's extended capabilities, so the server keeps metadata caching and bulk operations off for the connection: the crate reads full metadata (it checks the server's flag) but still sends exec_batch as COM_STMT_BULK_EXECUTE, which the server refuses, so a batch over TLS is unsupported".into()),
            ("login", "the server's: mysql_native_password, or client_ed25519 on the auth switch (the crate's client_ed25519 feature); mysql_common's AuthSwitchRequest::plugin_data strips a zero last byte, meant for the NUL after a native-password scramble, so when MariaDB's 32-byte ed25519 nonce ends in one (1 login in 256) the crate signs 31 bytes and the server answers 1045 Access denied (accessbench measured 12 in 2,000)".into()),
            ("compress", "OptsBuilder::compress(Some(Compression::default())) when the endpoint asks it (flate2 level 6, by miniz_oxide: zlib streams; the crate compresses only packets of 50 bytes or more, as the protocol allows), else None (the crate's default: no compression)".into()),
            ("connect", "OptsBuilder: the endpoint's unix socket when it has one (socket(path)), else host and port with prefer_socket(false) (the crate's default true would reconnect a loopback TCP connection through the server's socket); user, password (the server's auth plugin: mysql_native_password on the managed server), database in the handshake; handshake collation utf8mb4_general_ci (the crate's, for servers >= 5.5.3); connect attributes as the crate sends them; the crate then asks SELECT @@max_allowed_packet on every new connection (its default, inside a connect step's time)".into()),
            ("client_flag", "additional_capabilities(CLIENT_FOUND_ROWS): an UPDATE counts the rows it matched; the crate always sets CLIENT_MULTI_STATEMENTS/MULTI_RESULTS/PS_MULTI_RESULTS and negotiates MariaDB's MARIADB_CLIENT_CACHE_METADATA (the server may skip re-sending a prepared statement's result metadata) and STMT_BULK_OPERATIONS".into()),
            ("read_only", format!("endpoint read_only: OptsBuilder::init([\"{READ_ONLY_SQL}\"]), the crate's init command, run on every connection as it connects (open's, per-request, load clients', the pool's), inside connect: the server refuses writes (error 1792, SQLSTATE 25006)")),
            ("autocommit", "on: the server's default, which the crate leaves alone (checked at open: where the server's default is off, every connection sends SET autocommit = 1 at connect); BEGIN/COMMIT explicit as text queries".into()),
            ("statement cache", "stmt_cache_size(0) on every connection of open, per-request and persistent clients: nothing is cached, so extended prepares every time and prepared keeps its Statement itself; pooled connections in the prepared mode and for batches: the crate's cache of the default size 32 (how the statement survives between borrowings)".into()),
            ("literal", "Queryable::query_iter(text) with values inlined (MariaDB literal rules: ' and \\ doubled in strings, floats in exponent form so that they are DOUBLE literals, booleans TRUE/FALSE, dates 'YYYY-MM-DD', bytes X'…'): COM_QUERY, text protocol, sent as it is (no parameters, no client-side interpolation, no prepare); text results parsed by column type".into()),
            ("extended", "Queryable::prep(sql) (COM_STMT_PREPARE), exec_iter(&Statement, params) (COM_STMT_EXECUTE), close(Statement) (COM_STMT_CLOSE, no answer): every operation; binary protocol both ways".into()),
            ("prepared", "Queryable::prep once (inside the first operation's time), then exec_iter(&Statement, params): one COM_STMT_EXECUTE round trip each; closed after the step (untimed; a COM_PING then waits until the server has read the close)".into()),
            ("record", format!("HANDLER table OPEN AS h before the loop (untimed; a per-request connection opens it inside each operation, a pooled one once per connection before the start); per operation HANDLER h READ `index` = (key values as literals), or for a scan READ FIRST then READ NEXT, LIMIT {HANDLER_ROWS} records per round trip, as text queries; CLOSE after the step")),
            ("scan", "Queryable::query_iter(sql): text protocol (COM_QUERY), as the Python MariaDB drivers".into()),
            ("reading", "the QueryResult iterator: rows read as they arrive, one Row of mysql::Value each (not buffered as a whole); every value decoded by its column's type: integers (BOOLEAN = TINYINT(1) as an integer) i64, DOUBLE f64, FLOAT its shortest text as f64, DECIMAL rust_decimal::Decimal parsed from the server's exact text (its scale kept; over 28 digits the checked text), strings &str (UTF-8 checked), binary-collation columns &[u8], DATETIME/TIMESTAMP µs, DATE days, TIME µs".into()),
            ("parameters", "mysql::Value per marker: integers and booleans (1/0) as LONGLONG, floats as DOUBLE, text as strings, bytes as strings of their bytes (MYSQL_TYPE_VAR_STRING, the crate's only type for them), dates and timestamps as the crate's date-time value Value::Date, sent as MYSQL_TYPE_DATETIME (a date as its 4 date bytes, a timestamp with its microseconds: the crate has no separate DATE parameter type), NULL; decimals as their plain text (a string: mysql::Value has no decimal, so the server converts the text to the DECIMAL it is compared with or stored in); one Params::Positional Vec per execution (the crate takes parameters by value)".into()),
            ("rows changed", "QueryResult::affected_rows (matched rows, CLIENT_FOUND_ROWS)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread (under load: every client's thread)".into()),
            ("under load", "C clients = C OS threads (std::thread::scope), each blocking on its own connection; persistent: client 0 uses the connection from open, the others each open their own (in parallel, with the open query for its thread id) before the barrier, untimed, and close it after the trial; each thread waits for start_at_unix_ns on the wall clock (sleep, then spin the last 100 µs), then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate), sleep until 100 µs before the intended start, then spin; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the client then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; a prepared statement is prepared per client, in its first operation, closed after the trial; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("load", crate::assoc::LOAD_SETTING.into()),
            ("per-request", "Conn::new (socket or TCP connect, handshake, authentication, SELECT @@max_allowed_packet), the step's statement prepared on it when the mode needs one (the HANDLER opened for a record step), the operation, the Conn dropped (COM_QUIT, the socket closed, not waited for): all inside the operation's time".into()),
            ("pool", format!("the crate's own mysql::Pool: PoolOpts with_constraints(PoolConstraints::new(pool_size, pool_size)) (Pool::new opens all pool_size connections, before the barrier), with_reset_connection(false) (no COM_RESET_CONNECTION round trip per return), with_check_health(false) (no COM_PING per borrow); statement cache 0, or {POOL_STMT_CACHE} in the prepared mode and for batches (prepared once per connection, on its first use, inside that operation's time); each operation: Pool::get_conn (a mutex-guarded queue), the operation, the PooledConn dropped back; the pool dropped after the trial")),
        ];
        Hello {
            driver: "mysql",
            driver_version: format!("{} (mysql_common {})", env!("ABW_V_MYSQL"), env!("ABW_V_MYSQL_COMMON")),
            dbms: &["mariadb"],
            batch: "a transaction per group (Conn::start_transaction: START TRANSACTION), one Queryable::exec_batch of the prepared statement (prepared once, in the first group) with the group's rows: MariaDB's COM_STMT_BULK_EXECUTE, the whole group in one request (split only past max_allowed_packet), then COMMIT".into(),
            concurrency: "threads (one OS thread per client, each blocking on its own connection)",
            policies: &["persistent", "per-request", "pooled"],
            sqlstate: None,
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            load: true,
            shapes: None,
        }
    }

    fn modes(&self) -> &'static [&'static str] {
        &["literal", "extended", "prepared", "record"]
    }

    fn config(&self, ep: &Endpoint) -> Res<Cfg> {
        let ssl = ssl_opts(ep)?;
        let o = opts(ep, &ssl, 0, false).into();
        Ok(Cfg { ep: ep.clone(), ssl, set_autocommit: false, o })
    }

    async fn connect(cfg: &Cfg) -> Res<Conn> {
        connect(&cfg.o)
    }

    /// The serving thread, the version, and where the server's default is autocommit off,
    /// `SET autocommit = 1` (every later connection of the session sets it as it connects).
    async fn describe(cfg: &mut Cfg, c: &mut Conn) -> Res<Described> {
        let (tid, version, autocommit) = open_info(c)?;
        if !autocommit && !cfg.set_autocommit {
            c.query_drop("SET autocommit = 1").map_err(fail)?;
            cfg.set_autocommit = true;
            cfg.o = opts(&cfg.ep, &cfg.ssl, 0, true).into();
        }
        Ok(Described { server_pid: tid, server_version: version })
    }

    async fn close(c: Conn) {
        drop(c); // COM_QUIT as it drops
    }

    async fn plan(cfg: &Cfg, _c: &mut Conn, st: &Step) -> Res<Plan> {
        if st.kind == Kind::Batch && cfg.ssl.is_some() {
            return Err(Fail::unsupported(TLS_BULK));
        }
        let load = if st.kind == Kind::Load { Some(LoadPlan::new(st, Markers::Question)?) } else { None };
        Ok(Plan { vals: adapt(&st.values), rec: Rec::new(st), load })
    }

    /// The step's pool, filled before the barrier (settings pinned: see `hello`); a record
    /// step's handler opened on each of its connections, untimed.
    async fn pool(cfg: &Cfg, plan: &Plan, st: &Step, size: usize) -> Res<Pool> {
        let cache = if st.mode == Mode::Prepared || st.kind == Kind::Batch { POOL_STMT_CACHE } else { 0 };
        let constraints = PoolConstraints::new(size, size).ok_or_else(|| Fail::protocol("pool_size must be at least 1"))?;
        let po = PoolOpts::default().with_constraints(constraints).with_reset_connection(false).with_check_health(false);
        let pool = Pool::new(opts(&cfg.ep, &cfg.ssl, cache, cfg.set_autocommit).pool_opts(po)).map_err(fail)?;
        if let Some(rec) = &plan.rec {
            // every connection of the pool at once (it holds exactly pool_size), each opening the handler
            let mut held = Vec::with_capacity(size);
            for _ in 0..size {
                let mut pc = pool.get_conn().map_err(fail)?;
                pc.query_drop(&rec.open).map_err(fail)?;
                held.push(pc);
            }
        }
        Ok(pool)
    }

    /// A record step opens its HANDLER on a connection of its own here (untimed).
    async fn client<'c>(ctx: Ctx<'c, Self>, mut link: Link<'c, Self>) -> Res<MysqlClient<'c>> {
        let rec = ctx.plan.rec.as_ref();
        if let (Link::Own(c), Some(rec)) = (&mut link, rec) {
            c.query_drop(&rec.open).map_err(fail)?;
        }
        let cached = matches!(link, Link::Pool(_));
        let e = Exec { vals: &ctx.plan.vals, rec, stmt: None, cached };
        Ok(MysqlClient { cfg: ctx.cfg, st: ctx.st, load: ctx.plan.load.as_ref(), e, slot: Slot::new(link) })
    }
}
