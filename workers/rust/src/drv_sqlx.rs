//! rust-sqlx: sqlx (PostgreSQL only) with one PgConnection (no pool) on a current-thread
//! tokio runtime. Under load: one tokio task per client on that runtime; pooled = sqlx's
//! own PgPool.
//!
//! Settings: `batch=rows|values` (default `rows`).

use crate::assoc::{self, Fetch, LoadPlan, Markers};
use crate::host::{Client, Ctx, Described, Ended, Job, Link, Method, Slot};
use crate::load::TaskPause;
use crate::pg::{self, Col};
use crate::protocol::{self, Gv, Sink, Ty, Val};
use crate::step::{Endpoint, Fail, Kind, Mode, Res, Step};
use crate::Hello;
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use rust_decimal::Decimal;
use sqlx::pool::PoolConnection;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{
    PgArgumentBuffer, PgArguments, PgConnectOptions, PgConnection, PgDatabaseError, PgPool, PgPoolOptions, PgRow, PgSslMode, PgTypeInfo, Postgres,
};
use sqlx::query::Query;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{AssertSqlSafe, Column, ConnectOptions, Connection, Encode, QueryBuilder, Row, Type, ValueRef};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// The statement cache of the connection (`persistent(true)` statements live in it; it is
/// emptied after every step).
pub(crate) const STATEMENT_CACHE_CAPACITY: usize = 100;
/// PostgreSQL's limit of bind parameters per statement.
const MAX_BINDS: usize = 65535;
/// sqlx's own default, pinned: how long PgPool::acquire waits for a connection.
pub(crate) const POOL_ACQUIRE_TIMEOUT_S: u64 = 30;

pub struct Sqlx {
    values: bool,
}

impl Sqlx {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        let mut values = false;
        for (k, v) in settings {
            match (k.as_str(), v.as_str()) {
                ("batch", "rows") => values = false,
                ("batch", "values") => values = true,
                _ => return Err(format!("rust-sqlx has no setting {k}={v} (batch=rows|values)")),
            }
        }
        Ok(Sqlx { values })
    }
}

#[derive(Clone)]
pub struct Cfg {
    opts: PgConnectOptions,
    values: bool,
}

/// The endpoint as sqlx's connect options (rust-sqlx's and the SeaORM layer's): see `hello`'s
/// options and tls.
pub(crate) fn options(ep: &Endpoint) -> Res<PgConnectOptions> {
    let (mode, root) = tls(ep)?;
    let mut o = PgConnectOptions::new_without_pgpass();
    if let Some(h) = &ep.host {
        o = if h.starts_with('/') { o.socket(h) } else { o.host(h) };
    }
    if let Some(p) = ep.port {
        o = o.port(p);
    }
    if let Some(u) = &ep.user {
        o = o.username(u);
    }
    if let Some(d) = &ep.database {
        o = o.database(d);
    }
    if let Some(p) = &ep.password {
        o = o.password(p);
    }
    let settings = pg::startup_settings(ep);
    if !settings.is_empty() {
        // options() makes an options parameter even of no pairs
        o = o.options(settings);
    }
    if let Some(pem) = root {
        o = o.ssl_root_cert_from_pem(pem);
    }
    Ok(o.ssl_mode(mode)
        .statement_cache_capacity(STATEMENT_CACHE_CAPACITY)
        .extra_float_digits(2)
        .disable_statement_logging())
}

/// The endpoint's TLS as sqlx's (tls-native-tls: OpenSSL through native-tls): sslmode →
/// `PgSslMode` of the same name (prefer: sqlx's default, TLS when the server offers it, the
/// certificate not checked); `sslrootcert` read once here, at open, and given inline
/// (`ssl_root_cert_from_pem`) for verify-ca and verify-full; no TLS version setting and no
/// direct negotiation in sqlx 0.9: unsupported. As in libpq, never TLS on a unix socket.
fn tls(ep: &Endpoint) -> Res<(PgSslMode, Option<Vec<u8>>)> {
    let mode = match ep.sslmode.as_str() {
        _ if pg::unix_socket(ep) => return Ok((PgSslMode::Disable, None)),
        "disable" => return Ok((PgSslMode::Disable, None)),
        "allow" => PgSslMode::Allow,
        "prefer" => PgSslMode::Prefer,
        "require" => PgSslMode::Require,
        "verify-ca" => PgSslMode::VerifyCa,
        "verify-full" => PgSslMode::VerifyFull,
        other => return Err(Fail::unsupported(format!("sqlx has no sslmode={other}"))),
    };
    if let Some(v) = ep.tls_version {
        return Err(Fail::unsupported(format!(
            "sqlx {} has no TLS version setting (tls_version={}): PgConnectOptions sets no minimum or maximum protocol version",
            env!("ABW_V_SQLX"),
            v.name()
        )));
    }
    if ep.direct {
        return Err(Fail::unsupported(format!(
            "sqlx {} has no sslnegotiation=direct: it always sends an SSLRequest first",
            env!("ABW_V_SQLX")
        )));
    }
    let root = match (&ep.sslrootcert, mode) {
        (Some(path), PgSslMode::VerifyCa | PgSslMode::VerifyFull) => {
            Some(std::fs::read(path).map_err(|e| Fail::db(format!("sslrootcert {path}: {e}"), None))?)
        }
        _ => None,
    };
    Ok((mode, root))
}

/// hello's `tls` of rust-sqlx and the SeaORM layer (same options).
pub(crate) const TLS_SETTING: &str = "sqlx's tls-native-tls backend (native-tls over the system OpenSSL; SeaORM: its runtime-tokio-native-tls feature, the same sqlx); sslmode → PgConnectOptions::ssl_mode: disable → Disable (no SSLRequest), prefer (or absent) → Prefer (sqlx's default: TLS when the server offers it, the certificate not checked), require → Require (danger_accept_invalid_certs), verify-ca → VerifyCa (the chain checked, danger_accept_invalid_hostnames), verify-full → VerifyFull (chain and host name); sslrootcert read once at open and given inline (ssl_root_cert_from_pem; added to OpenSSL's default roots) for verify-ca and verify-full; tls_version: unsupported (sqlx has no TLS version setting); sslnegotiation=direct: unsupported (sqlx always sends SSLRequest); on a unix socket never TLS (as libpq); sqlx builds a new native-tls TlsConnector (an SSL_CTX with the system's default roots and the CA) on every connection, on tokio's blocking pool (spawn_blocking, a second OS thread), then the handshake: all inside connect (a connect step's time), as it does for its users";

fn fail(e: sqlx::Error) -> Fail {
    fail_ref(&e)
}

/// An error as every sqlx method answers it: the server's message with its severity and
/// SQLSTATE (also for the SeaORM layer, whose errors hold sqlx's).
pub(crate) fn fail_ref(e: &sqlx::Error) -> Fail {
    if let sqlx::Error::Database(db) = e {
        let code = db.code().map(|c| c.to_string());
        let sev = db
            .try_downcast_ref::<PgDatabaseError>()
            .map(|p| format!("{:?}", p.severity()).to_uppercase())
            .unwrap_or_else(|| "ERROR".into());
        return Fail::db(format!("{sev}: {}", db.message()), code);
    }
    Fail::db(e.to_string(), None)
}

pub(crate) fn col_of(t: &PgTypeInfo) -> Col {
    match t.oid().map(|o| o.0) {
        Some(16) => Col::Bool,
        Some(21) => Col::I16,
        Some(23) => Col::I32,
        Some(20) => Col::I64,
        Some(26) => Col::Oid,
        Some(700) => Col::F32,
        Some(701) => Col::F64,
        Some(1700) => Col::Numeric,
        Some(25 | 1043 | 1042 | 19 | 705) => Col::Text,
        Some(18) => Col::Char,
        Some(1114) => Col::Ts,
        Some(1184) => Col::TsTz,
        Some(1082) => Col::Date,
        Some(1083) => Col::Time,
        Some(17) => Col::Bytea,
        _ => Col::Other,
    }
}

fn dec<T>(r: Result<T, sqlx::Error>) -> Res<T> {
    r.map_err(fail)
}

/// One row: every value decoded by Row::try_get into the Rust type of its column. `text`:
/// the row came from the simple protocol (text format), where bytea decodes only to Vec<u8>.
fn decode_row(row: &PgRow, cols: &[Col], text: bool, sink: &mut Sink) -> Res<()> {
    sink.begin_row();
    for (i, c) in cols.iter().enumerate() {
        match c {
            Col::Bool => sink.val(dec(row.try_get::<Option<bool>, _>(i))?.map_or(Val::Null, Val::Bool)),
            Col::I16 => sink.val(dec(row.try_get::<Option<i16>, _>(i))?.map_or(Val::Null, |x| Val::Int(x as i64))),
            Col::I32 => sink.val(dec(row.try_get::<Option<i32>, _>(i))?.map_or(Val::Null, |x| Val::Int(x as i64))),
            Col::I64 => sink.val(dec(row.try_get::<Option<i64>, _>(i))?.map_or(Val::Null, Val::Int)),
            Col::Oid => sink.val(dec(row.try_get::<Option<Oid>, _>(i))?.map_or(Val::Null, |x| Val::Int(x.0 as i64))),
            Col::F32 => sink.val(dec(row.try_get::<Option<f32>, _>(i))?.map_or(Val::Null, |x| Val::Float(pg::f32_as_text(x)))),
            Col::F64 => sink.val(dec(row.try_get::<Option<f64>, _>(i))?.map_or(Val::Null, Val::Float)),
            Col::Numeric => match dec(row.try_get::<Option<Decimal>, _>(i))? {
                // sqlx 0.9.0 decodes a binary numeric zero as Decimal::ZERO, dropping its
                // scale (0.00 → 0); the scale is put back from the value's dscale field
                Some(mut d) if d.is_zero() && !text => {
                    let raw = dec(row.try_get_raw(i))?;
                    let b = raw.as_bytes().map_err(|e| Fail::db(e.to_string(), None))?;
                    if b.len() >= 8 {
                        d.rescale(u16::from_be_bytes([b[6], b[7]]) as u32);
                    }
                    sink.val(Val::Dec(d))
                }
                Some(d) => sink.val(Val::Dec(d)),
                None => sink.val(Val::Null),
            },
            Col::Text => sink.val(dec(row.try_get::<Option<&str>, _>(i))?.map_or(Val::Null, Val::Text)),
            Col::Char => match dec(row.try_get::<Option<i8>, _>(i))? {
                Some(x) => {
                    let b = [x as u8];
                    sink.val(Val::Text(std::str::from_utf8(&b).unwrap_or("")))
                }
                None => sink.val(Val::Null),
            },
            Col::Ts => sink.val(dec(row.try_get::<Option<NaiveDateTime>, _>(i))?.map_or(Val::Null, |t| Val::Ts(pg::ts_micros(t)))),
            Col::TsTz => {
                sink.val(dec(row.try_get::<Option<DateTime<Utc>>, _>(i))?.map_or(Val::Null, |t| Val::Ts(t.timestamp_micros())))
            }
            Col::Date => sink.val(dec(row.try_get::<Option<NaiveDate>, _>(i))?.map_or(Val::Null, |d| Val::Date(pg::date_days(d)))),
            Col::Time => sink.val(dec(row.try_get::<Option<NaiveTime>, _>(i))?.map_or(Val::Null, |t| Val::Time(pg::time_micros(t)))),
            Col::Bytea if text => match dec(row.try_get::<Option<Vec<u8>>, _>(i))? {
                Some(b) => sink.val(Val::Bytes(&b)),
                None => sink.val(Val::Null),
            },
            Col::Bytea => sink.val(dec(row.try_get::<Option<&[u8]>, _>(i))?.map_or(Val::Null, Val::Bytes)),
            Col::Other => {
                let raw = dec(row.try_get_raw(i))?;
                if raw.is_null() {
                    sink.val(Val::Null)
                } else {
                    sink.val(Val::Bytes(raw.as_bytes().map_err(|e| Fail::db(e.to_string(), None))?))
                }
            }
        }
    }
    sink.end_row(cols.len());
    Ok(())
}

fn decode_rows(rows: &[PgRow], text: bool, sink: &mut Sink) -> Res<i64> {
    let Some(first) = rows.first() else { return Ok(0) };
    let cols: Vec<Col> = first.columns().iter().map(|c| col_of(c.type_info())).collect();
    for row in rows {
        decode_row(row, &cols, text, sink)?;
    }
    Ok(rows.len() as i64)
}

/// A parameter as sqlx binds it: each type as the Rust type sqlx encodes natively — bool
/// (BOOL), i64 (INT8), f64 (FLOAT8), rust_decimal::Decimal (NUMERIC), &str (TEXT),
/// chrono::NaiveDate (DATE), NaiveDateTime (TIMESTAMP), &[u8] (BYTEA) — and a NULL as NULL
/// of its spec's type. One `Encode` that hands each value to sqlx's own encoder and names
/// that encoder's type (`produces`), so a row binds with `bind` / `push_bind` alike.
enum Bind<'a> {
    Null(Ty),
    Bool(bool),
    Int(i64),
    Float(f64),
    Dec(Decimal),
    Text(&'a str),
    Date(NaiveDate),
    Ts(NaiveDateTime),
    Bytes(&'a [u8]),
}

fn adapt<'a>(st: &'a Step) -> Vec<Bind<'a>> {
    st.values.iter().enumerate().map(|(k, v)| bind_of(v, st.types[k % st.nparams.max(1)])).collect()
}

fn bind_of(v: &Gv, ty: Ty) -> Bind<'_> {
    match v {
        Gv::Null => Bind::Null(ty),
        Gv::Bool(b) => Bind::Bool(*b),
        Gv::Int(i) => Bind::Int(*i),
        Gv::Float(f) => Bind::Float(*f),
        Gv::Dec(d) => Bind::Dec(*d),
        Gv::Text(s) => Bind::Text(s),
        Gv::Date(d) => Bind::Date(pg::naive_date(*d)),
        Gv::Ts(us) => Bind::Ts(pg::naive_ts(*us)),
        Gv::Bytes(b) => Bind::Bytes(b),
    }
}

/// A load's statements (`assoc`): `sqlx::query(sql).bind(..).persistent(false).fetch_all`,
/// as the extended mode runs a statement, rows decoded as an exec step's.
struct SqlxFetch<'a>(&'a mut PgConnection);

impl Fetch for SqlxFetch<'_> {
    async fn fetch(&mut self, sql: &str, params: &[Gv], types: &[Ty], rows: &mut Sink) -> Res<()> {
        let binds: Vec<Bind<'_>> = params.iter().zip(types).map(|(v, t)| bind_of(v, *t)).collect();
        let q = bind(sqlx::query(AssertSqlSafe(sql.to_string())).persistent(false), &binds);
        let got = q.fetch_all(&mut *self.0).await.map_err(fail)?;
        decode_rows(&got, false, rows)?;
        Ok(())
    }
}

fn enc<'q, T: Encode<'q, Postgres>>(v: &T, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
    v.encode_by_ref(buf)
}

impl Type<Postgres> for Bind<'_> {
    /// Never asked: every value names its own type (`produces`).
    fn type_info() -> PgTypeInfo {
        <&str as Type<Postgres>>::type_info()
    }
}

impl Encode<'_, Postgres> for Bind<'_> {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        match self {
            Bind::Null(_) => Ok(IsNull::Yes),
            Bind::Bool(v) => enc(v, buf),
            Bind::Int(v) => enc(v, buf),
            Bind::Float(v) => enc(v, buf),
            Bind::Dec(v) => enc(v, buf),
            Bind::Text(v) => enc(v, buf),
            Bind::Date(v) => enc(v, buf),
            Bind::Ts(v) => enc(v, buf),
            Bind::Bytes(v) => enc(v, buf),
        }
    }

    fn produces(&self) -> Option<PgTypeInfo> {
        Some(match self {
            Bind::Bool(_) | Bind::Null(Ty::Bool) => bool::type_info(),
            Bind::Int(_) | Bind::Null(Ty::Int) => i64::type_info(),
            Bind::Float(_) | Bind::Null(Ty::Float) => f64::type_info(),
            Bind::Dec(_) | Bind::Null(Ty::Decimal) => Decimal::type_info(),
            Bind::Text(_) | Bind::Null(Ty::Text) => <&str as Type<Postgres>>::type_info(),
            Bind::Date(_) | Bind::Null(Ty::Date) => NaiveDate::type_info(),
            Bind::Ts(_) | Bind::Null(Ty::Timestamp) => NaiveDateTime::type_info(),
            Bind::Bytes(_) | Bind::Null(Ty::Bytes) => <&[u8] as Type<Postgres>>::type_info(),
        })
    }
}

type Q<'q> = Query<'q, Postgres, PgArguments>;

fn bind<'q>(q: Q<'q>, row: &[Bind<'_>]) -> Q<'q> {
    row.iter().fold(q, |q, b| q.bind(b))
}

async fn raw(conn: &mut PgConnection, sql: &'static str) -> Res<()> {
    sqlx::raw_sql(sql).execute(conn).await.map(|_| ()).map_err(fail)
}

async fn connect_once(opts: &PgConnectOptions) -> Res<i64> {
    let conn = opts.connect().await.map_err(fail)?;
    conn.close().await.map_err(fail)?;
    Ok(0)
}

async fn scan_once(conn: &mut PgConnection, sql: &Arc<str>, sink: &mut Sink) -> Res<i64> {
    let rows = sqlx::query(AssertSqlSafe(sql.clone())).persistent(false).fetch_all(conn).await.map_err(fail)?;
    decode_rows(&rows, false, sink)
}

struct Exec<'a> {
    sql: Arc<str>,
    texts: Vec<Arc<str>>,
    binds: Vec<Bind<'a>>,
}

async fn exec_once(conn: &mut PgConnection, st: &Step, e: &Exec<'_>, i: usize, sink: &mut Sink) -> Res<i64> {
    let reads = st.reads();
    Ok(match st.mode {
        // record-level access is MariaDB's HANDLER: main answers it unsupported first
        Mode::Record => return Err(crate::step::no_record()),
        Mode::Literal => {
            let q = sqlx::raw_sql(AssertSqlSafe(e.texts[i].clone()));
            if reads {
                let rows = q.fetch_all(&mut *conn).await.map_err(fail)?;
                decode_rows(&rows, true, sink)?
            } else {
                q.execute(&mut *conn).await.map_err(fail)?.rows_affected() as i64
            }
        }
        Mode::Extended | Mode::Prepared => {
            let np = st.nparams;
            let q = sqlx::query(AssertSqlSafe(e.sql.clone())).persistent(st.mode == Mode::Prepared);
            let q = bind(q, &e.binds[i * np..(i + 1) * np]);
            if reads {
                let rows = q.fetch_all(&mut *conn).await.map_err(fail)?;
                decode_rows(&rows, false, sink)?
            } else {
                q.execute(&mut *conn).await.map_err(fail)?.rows_affected() as i64
            }
        }
    })
}

/// batch=rows: a transaction per group (Connection::begin), one query per row, each awaited
/// (sqlx has no batch or pipeline API), the statement from the statement cache
/// (persistent, the sqlx default: prepared by the first row of the first group), COMMIT.
async fn batch_rows(conn: &mut PgConnection, st: &Step, g: usize, sql: &Arc<str>, binds: &[Bind<'_>]) -> Res<i64> {
    let np = st.nparams;
    let rows = st.group(g);
    let n = rows.len() as i64;
    let mut tx = conn.begin().await.map_err(fail)?;
    for r in rows {
        let q = bind(sqlx::query(AssertSqlSafe(sql.clone())), &binds[r * np..(r + 1) * np]);
        q.execute(&mut *tx).await.map_err(fail)?;
    }
    tx.commit().await.map_err(fail)?;
    Ok(n)
}

/// batch=values: a transaction per group, one multi-row `INSERT INTO t (cols) VALUES (…),
/// (…)` built with QueryBuilder::push_values (binds as in the other modes), executed as
/// sqlx does by default (persistent: one statement per distinct group size, in the cache).
async fn batch_values(conn: &mut PgConnection, st: &Step, g: usize, prefix: &str, binds: &[Bind<'_>]) -> Res<i64> {
    let np = st.nparams;
    let rows = st.group(g);
    let n = rows.len() as i64;
    let mut qb: QueryBuilder<Postgres> = QueryBuilder::new(prefix);
    qb.push_values(rows, |mut b, r| {
        for v in &binds[r * np..(r + 1) * np] {
            b.push_bind(v);
        }
    });
    let mut tx = conn.begin().await.map_err(fail)?;
    qb.build().execute(&mut *tx).await.map_err(fail)?;
    tx.commit().await.map_err(fail)?;
    Ok(n)
}

/// batch=values: `INSERT INTO t (cols) ` of the step's insert shape, to which each group's
/// VALUES are pushed.
fn values_prefix(st: &Step) -> Res<String> {
    let target = st.insert_target("batch=values")?;
    if st.batch * st.nparams > MAX_BINDS {
        return Err(Fail::unsupported(format!(
            "batch=values: {} rows × {} columns is more than PostgreSQL's {MAX_BINDS} bind parameters per statement",
            st.batch, st.nparams
        )));
    }
    Ok(format!("INSERT INTO {target} "))
}


/// batch=values: `INSERT INTO t (cols) ` of the step's insert shape (checked before the clock).
pub struct Plan {
    prefix: String,
    /// a load step's statements (`assoc`)
    load: Option<LoadPlan>,
}

pub struct SqlxClient<'c> {
    cfg: &'c Cfg,
    st: &'c Step,
    prefix: &'c str,
    load: Option<&'c LoadPlan>,
    e: Exec<'c>,
    slot: Slot<'c, Sqlx, PoolConnection<Postgres>>,
}

impl SqlxClient<'_> {
    fn conn(&mut self) -> Res<&mut PgConnection> {
        self.slot.get(|c| c, |pc| &mut **pc)
    }
}

impl Client for SqlxClient<'_> {
    async fn op(&mut self, i: usize, sink: &mut Sink) -> Res<i64> {
        let (st, e) = (self.st, &self.e);
        if st.kind == Kind::Connect {
            return connect_once(&self.cfg.opts).await;
        }
        let c = self.slot.get(|c| c, |pc| &mut **pc)?;
        match st.kind {
            Kind::Scan => scan_once(c, &e.sql, sink).await,
            Kind::Batch if self.cfg.values => batch_values(c, st, i, self.prefix, &e.binds).await,
            Kind::Batch => batch_rows(c, st, i, &e.sql, &e.binds).await,
            Kind::Load => {
                let plan = self.load.ok_or_else(|| Fail::internal("a load step without its plan"))?;
                assoc::load(&mut SqlxFetch(c), plan, st.row(i), sink).await
            }
            _ => exec_once(c, st, e, i, sink).await,
        }
    }

    async fn tx_begin(&mut self) -> Res<()> {
        raw(self.conn()?, "BEGIN").await
    }

    async fn tx_commit(&mut self) -> Res<()> {
        raw(self.conn()?, "COMMIT").await
    }

    async fn recover(&mut self) {
        if let Ok(c) = self.conn() {
            let _ = raw(c, "ROLLBACK").await;
        }
    }

    async fn connect(&mut self) -> Res<()> {
        self.slot.made = Some(Sqlx::connect(self.cfg).await?);
        Ok(())
    }

    async fn disconnect(&mut self) -> Res<()> {
        match self.slot.made.take() {
            Some(c) => c.close().await.map_err(fail),
            None => Ok(()),
        }
    }

    async fn borrow(&mut self) -> Res<()> {
        self.slot.lent = Some(self.slot.pool()?.acquire().await.map_err(fail)?);
        Ok(())
    }

    fn give_back(&mut self) {
        self.slot.lent = None; // back to the pool as the PoolConnection drops, inside the operation's time
    }
}

impl Method for Sqlx {
    type Config = Cfg;
    type Conn = PgConnection;
    type Plan = Plan;
    type Pool = PgPool;
    type Client<'c> = SqlxClient<'c>;
    type Pause = TaskPause;

    fn hello(&self) -> Hello {
        let batch = if self.values { "values" } else { "rows" };
        let s: Vec<(&str, String)> = vec![
            ("connection", "one PgConnection (PgConnection::connect_with), no pool (a pooled step under load uses a PgPool: see pool)".into()),
            ("runtime", "tokio current-thread runtime (one thread)".into()),
            ("tls", TLS_SETTING.into()),
            ("options", format!("PgConnectOptions::new_without_pgpass (no ~/.pgpass lookup) with the endpoint's host (a directory → socket), port, user, password, database; options -c search_path=<schema> and, read_only, -c default_transaction_read_only=on in the startup packet (PgConnectOptions::options, as pg::startup_settings); statement_cache_capacity={STATEMENT_CACHE_CAPACITY}; extra_float_digits=2 (the sqlx default, pinned); statement logging off (log_statements and log_slow_statements Off; sqlx still reads the clock twice per query for its logger)")),
            ("read_only", pg::READ_ONLY_SETTING.into()),
            ("startup parameters", "sqlx sends DateStyle=ISO, MDY, client_encoding=UTF8, TimeZone=UTC, extra_float_digits=2".into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, as simple queries via raw_sql)".into()),
            ("literal", "sqlx::raw_sql(text).fetch_all/execute: simple query protocol, text results decoded by sqlx's Decode impls (text format) per column type".into()),
            ("extended", "sqlx::query(sql).bind(..).persistent(false): unnamed statement, Parse+Describe+Sync (one round trip) then Bind+Execute+Close portal+Sync (a second), every time; binary parameters and results".into()),
            ("prepared", format!("sqlx::query(sql).bind(..).persistent(true): sqlx's statement cache (capacity {STATEMENT_CACHE_CAPACITY}, keyed by SQL text) prepares a named statement on first use (inside the first operation's time), later executions are Bind+Execute+Close portal+Sync; the cache is cleared after every step (clear_cached_statements, untimed)")),
            ("scan", "sqlx::query(sql).persistent(false).fetch_all: as extended, binary results, whole result buffered (Vec<PgRow>)".into()),
            ("parameters", "bound as sqlx types them, binary, each value of its spec's type: bool → bool, i64 → int8, f64 → float8, rust_decimal::Decimal → numeric, &str → text, chrono::NaiveDate → date, NaiveDateTime → timestamp, &[u8] → bytea; a NULL as NULL of its spec's type (one Encode impl that hands each value to sqlx's encoder and names its type with Encode::produces); the server casts them to the columns' types".into()),
            ("decoding", "Row::try_get by column type OID: int2/int4/int8 → i16/i32/i64, float4 → f32 then its shortest text parsed as f64, float8 → f64, numeric → rust_decimal::Decimal (scale kept), bool, text types → &str, timestamp → chrono::NaiveDateTime → µs, timestamptz → DateTime<Utc>, date, time, bytea → &[u8] (Vec<u8> for text results)".into()),
            ("batch", batch.into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread".into()),
            ("under load", "C clients = C tokio tasks, all on the worker's current-thread runtime (one OS thread for every client and every connection's I/O); persistent: client 0 uses the connection from open, the others each open their own (at once, with a query for its backend pid) before the barrier, untimed, and close it after the trial; each task waits for start_at_unix_ns on the wall clock, then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate); a task ahead of schedule sleeps on a timerfd of its own registered with tokio's reactor (tokio's timer has 1 ms granularity) until 100 µs before the intended start, then spins with yield_now (the other tasks keep running) until it; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the task then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; the prepared mode prepares per connection (its statement cache), in a client's first operation; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("load", crate::assoc::LOAD_SETTING.into()),
            ("per-request", "PgConnectOptions::connect (the options above), the operation (the prepared mode prepares into the new connection's statement cache), PgConnection::close (Terminate, socket shut): all inside the operation's time".into()),
            ("pool", format!("sqlx's own PgPool: PgPoolOptions::new().max_connections(pool_size).min_connections(pool_size).test_before_acquire(false) (no ping per acquire).max_lifetime(None).idle_timeout(None).acquire_timeout({POOL_ACQUIRE_TIMEOUT_S} s), connect_with(the options above): the pool opens its pool_size connections before the barrier; each operation: Pool::acquire, the operation on the PoolConnection (the prepared mode: that connection's statement cache, capacity {STATEMENT_CACHE_CAPACITY}, so prepared once per connection on its first use, inside that operation's time), the PoolConnection dropped; sqlx then gives it back from a spawned task that first pings it (a Sync round trip, not configurable) before it is idle again; Pool::close after the trial")),
        ];
        Hello {
            driver: "sqlx",
            driver_version: format!("{} (postgres; rust_decimal {}, chrono {})", env!("ABW_V_SQLX"), env!("ABW_V_RUST_DECIMAL"), env!("ABW_V_CHRONO")),
            dbms: &["postgresql"],
            batch: if self.values {
                "a transaction per group (Connection::begin), one multi-row INSERT … VALUES (…), (…) per group built with QueryBuilder::push_values (persistent: cached per distinct group size), COMMIT".into()
            } else {
                "a transaction per group (Connection::begin), one query per row awaited in turn (sqlx has no batch or pipeline API), the statement from sqlx's cache (prepared by the first row), COMMIT".into()
            },
            concurrency: "async tasks (one tokio task per client, all on the worker's current-thread runtime)",
            policies: &["persistent", "per-request", "pooled"],
            sqlstate: None,
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            load: true,
            shapes: None,
        }
    }

    fn config(&self, ep: &Endpoint) -> Res<Cfg> {
        Ok(Cfg { opts: options(ep)?, values: self.values })
    }

    const TASKS: bool = true;

    fn spawn(job: Job<Self>) -> JoinHandle<Ended<Self>> {
        tokio::spawn(job.run())
    }

    async fn connect(cfg: &Cfg) -> Res<PgConnection> {
        cfg.opts.connect().await.map_err(fail)
    }

    async fn describe(_cfg: &mut Cfg, c: &mut PgConnection) -> Res<Described> {
        let row = sqlx::raw_sql(pg::OPEN_INFO_SQL).fetch_one(c).await.map_err(fail)?;
        let pid = dec(row.try_get::<i32, _>(0))? as i64;
        let version = dec(row.try_get::<String, _>(1))?;
        Ok(Described { server_pid: Some(pid), server_version: Some(version) })
    }

    async fn close(c: PgConnection) {
        if let Err(e) = c.close().await {
            eprintln!("abworker-rust: close: {e}");
        }
    }

    async fn plan(cfg: &Cfg, _c: &mut PgConnection, st: &Step) -> Res<Plan> {
        let prefix = if cfg.values && st.kind == Kind::Batch { values_prefix(st)? } else { String::new() };
        let load = if st.kind == Kind::Load { Some(LoadPlan::new(st, Markers::Dollar)?) } else { None };
        Ok(Plan { prefix, load })
    }

    /// The step's pool (settings pinned: see `hello`); connect_with opens min_connections =
    /// pool_size connections before it returns, so the pool is full before the barrier.
    async fn pool(cfg: &Cfg, _plan: &Plan, _st: &Step, size: usize) -> Res<PgPool> {
        PgPoolOptions::new()
            .max_connections(size as u32)
            .min_connections(size as u32)
            .test_before_acquire(false)
            .max_lifetime(None)
            .idle_timeout(None)
            .acquire_timeout(Duration::from_secs(POOL_ACQUIRE_TIMEOUT_S))
            .connect_with(cfg.opts.clone())
            .await
            .map_err(fail)
    }

    async fn close_pool(p: PgPool) {
        p.close().await;
    }

    /// The client's statement texts and parameters as sqlx takes them, made before the clock.
    async fn client<'c>(ctx: Ctx<'c, Self>, link: Link<'c, Self>) -> Res<SqlxClient<'c>> {
        let st = ctx.st;
        let e = Exec {
            // no markers in a scan: its text is the statement's as it is
            sql: protocol::dollar_markers(&st.sql, &st.marks).into(),
            texts: st.texts.iter().map(|t| Arc::from(t.as_str())).collect(),
            binds: if matches!(st.kind, Kind::Exec | Kind::Batch) { adapt(st) } else { Vec::new() },
        };
        Ok(SqlxClient { cfg: ctx.cfg, st, prefix: &ctx.plan.prefix, load: ctx.plan.load.as_ref(), e, slot: Slot::new(link) })
    }

    /// A step's prepared statements do not outlive it (untimed).
    async fn release(c: &mut PgConnection) {
        if let Err(e) = c.clear_cached_statements().await {
            eprintln!("abworker-rust: clear_cached_statements: {e}");
        }
    }
}
