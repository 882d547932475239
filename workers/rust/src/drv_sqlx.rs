//! rust-sqlx: sqlx (PostgreSQL only) with one PgConnection (no pool) on a current-thread
//! tokio runtime.
//!
//! Settings: `batch=rows|values` (default `rows`).

use crate::pg::{self, Col};
use crate::protocol::{self, Gv, Hint, Sink, Val};
use crate::step::{now_ns, Endpoint, Fail, Kind, Mode, Outcome, Res, Step};
use crate::{run_ops, Driver, Hello, Opened};
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use rust_decimal::Decimal;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgConnection, PgDatabaseError, PgRow, PgSslMode, PgTypeInfo, Postgres};
use sqlx::query::Query;
use sqlx::{AssertSqlSafe, Column, ConnectOptions, Connection, QueryBuilder, Row, ValueRef};
use std::sync::Arc;
use tokio::runtime::Runtime;

/// The statement cache of the connection (`persistent(true)` statements live in it; it is
/// emptied after every step).
const STATEMENT_CACHE_CAPACITY: usize = 100;
/// PostgreSQL's limit of bind parameters per statement.
const MAX_BINDS: usize = 65535;

pub struct Sqlx {
    values: bool,
    rt: Runtime,
    conn: Option<PgConnection>,
    opts: Option<PgConnectOptions>,
    pid: Option<i64>,
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
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        Ok(Sqlx { values, rt, conn: None, opts: None, pid: None })
    }
}

fn options(ep: &Endpoint) -> Res<PgConnectOptions> {
    let mode = match ep.sslmode.as_str() {
        // as in libpq, TLS is never used on a unix socket
        _ if pg::unix_socket(ep) => PgSslMode::Disable,
        "disable" => PgSslMode::Disable,
        "prefer" | "allow" => PgSslMode::Prefer,
        other => {
            return Err(Fail::unsupported(format!(
                "sslmode={other} needs TLS, and this worker's sqlx is built without a TLS backend"
            )))
        }
    };
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
    if let Some(s) = &ep.schema {
        o = o.options([("search_path", s)]);
    }
    Ok(o.ssl_mode(mode)
        .statement_cache_capacity(STATEMENT_CACHE_CAPACITY)
        .extra_float_digits(2)
        .disable_statement_logging())
}

fn fail(e: sqlx::Error) -> Fail {
    if let sqlx::Error::Database(db) = &e {
        let code = db.code().map(|c| c.to_string());
        let sev = db
            .try_downcast_ref::<PgDatabaseError>()
            .map(|p| format!("{:?}", p.severity()).to_uppercase())
            .unwrap_or_else(|| "ERROR".into());
        return Fail::db(format!("{sev}: {}", db.message()), code);
    }
    Fail::db(e.to_string(), None)
}

fn col_of(t: &PgTypeInfo) -> Col {
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

/// A parameter as sqlx binds it: i64 (INT8), &str (TEXT), NaiveDateTime (TIMESTAMP), f64,
/// bool; a NULL is bound as None of its spec's type.
enum Bind<'a> {
    Null(Hint),
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(&'a str),
    Ts(NaiveDateTime),
}

fn adapt<'a>(st: &'a Step) -> Vec<Bind<'a>> {
    st.values
        .iter()
        .enumerate()
        .map(|(k, v)| match v {
            Gv::Null => Bind::Null(st.hints[k % st.nparams.max(1)]),
            Gv::Bool(b) => Bind::Bool(*b),
            Gv::Int(i) => Bind::Int(*i),
            Gv::Float(f) => Bind::Float(*f),
            Gv::Text(s) => Bind::Text(s),
            Gv::Ts(us) => Bind::Ts(DateTime::from_timestamp_micros(*us).map(|d| d.naive_utc()).unwrap_or_default()),
        })
        .collect()
}

type Q<'q> = Query<'q, Postgres, PgArguments>;

fn bind<'q>(mut q: Q<'q>, row: &'q [Bind<'q>]) -> Q<'q> {
    for b in row {
        q = match b {
            Bind::Null(Hint::Int) => q.bind(None::<i64>),
            Bind::Null(Hint::Text) => q.bind(None::<&str>),
            Bind::Null(Hint::Ts) => q.bind(None::<NaiveDateTime>),
            Bind::Null(Hint::Float) => q.bind(None::<f64>),
            Bind::Null(Hint::Bool) => q.bind(None::<bool>),
            Bind::Bool(v) => q.bind(*v),
            Bind::Int(v) => q.bind(*v),
            Bind::Float(v) => q.bind(*v),
            Bind::Text(v) => q.bind(*v),
            Bind::Ts(v) => q.bind(*v),
        };
    }
    q
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
    if st.begins(i) {
        raw(conn, "BEGIN").await?;
    }
    let reads = st.reads();
    let count = match st.mode {
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
    };
    if st.commits(i) {
        raw(conn, "COMMIT").await?;
    }
    Ok(count)
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
            match v {
                Bind::Null(Hint::Int) => b.push_bind(None::<i64>),
                Bind::Null(Hint::Text) => b.push_bind(None::<&str>),
                Bind::Null(Hint::Ts) => b.push_bind(None::<NaiveDateTime>),
                Bind::Null(Hint::Float) => b.push_bind(None::<f64>),
                Bind::Null(Hint::Bool) => b.push_bind(None::<bool>),
                Bind::Bool(x) => b.push_bind(*x),
                Bind::Int(x) => b.push_bind(*x),
                Bind::Float(x) => b.push_bind(*x),
                Bind::Text(x) => b.push_bind(*x),
                Bind::Ts(x) => b.push_bind(*x),
            };
        }
    });
    let mut tx = conn.begin().await.map_err(fail)?;
    qb.build().execute(&mut *tx).await.map_err(fail)?;
    tx.commit().await.map_err(fail)?;
    Ok(n)
}

async fn run(conn: &mut PgConnection, opts: &PgConnectOptions, st: &Step, values: bool) -> Res<Outcome> {
    Ok(match st.kind {
        Kind::Connect => run_ops!(st, sink, i, connect_once(opts).await),
        Kind::Scan => {
            let sql: Arc<str> = st.sql.as_str().into();
            run_ops!(st, sink, i, scan_once(conn, &sql, &mut sink).await)
        }
        Kind::Exec => {
            let e = Exec {
                sql: protocol::dollar_markers(&st.sql, &st.marks).into(),
                texts: st.texts.iter().map(|t| Arc::from(t.as_str())).collect(),
                binds: adapt(st),
            };
            run_ops!(st, sink, i, exec_once(conn, st, &e, i, &mut sink).await)
        }
        Kind::Batch if values => {
            let (table, cols) = protocol::insert_parts(&st.sql, st.nparams).map_err(|why| {
                Fail::unsupported(format!("batch=values writes only INSERT INTO t (cols) VALUES (?, …) statements: {why}"))
            })?;
            if st.batch * st.nparams > MAX_BINDS {
                return Err(Fail::unsupported(format!(
                    "batch=values: {} rows × {} columns is more than PostgreSQL's {MAX_BINDS} bind parameters per statement",
                    st.batch, st.nparams
                )));
            }
            let prefix = format!("INSERT INTO {table} {cols} ");
            let binds = adapt(st);
            run_ops!(st, sink, i, batch_values(conn, st, i, &prefix, &binds).await)
        }
        Kind::Batch => {
            let sql: Arc<str> = protocol::dollar_markers(&st.sql, &st.marks).into();
            let binds = adapt(st);
            run_ops!(st, sink, i, batch_rows(conn, st, i, &sql, &binds).await)
        }
    })
}

impl Driver for Sqlx {
    fn hello(&self) -> Hello {
        let batch = if self.values { "values" } else { "rows" };
        let s: Vec<(&str, String)> = vec![
            ("connection", "one PgConnection (PgConnection::connect_with), no pool".into()),
            ("runtime", "tokio current-thread runtime (one thread)".into()),
            ("tls", "no TLS backend compiled in: sslmode disable/prefer connect without TLS (prefer sends no SSLRequest); require over TCP is unsupported; on a unix socket TLS is never used (as in libpq)".into()),
            ("options", format!("PgConnectOptions::new_without_pgpass (no ~/.pgpass lookup) with the endpoint's host (a directory → socket), port, user, password, database; options -c search_path=<schema> in the startup packet; statement_cache_capacity={STATEMENT_CACHE_CAPACITY}; extra_float_digits=2 (the sqlx default, pinned); statement logging off (log_statements and log_slow_statements Off; sqlx still reads the clock twice per query for its logger)")),
            ("startup parameters", "sqlx sends DateStyle=ISO, MDY, client_encoding=UTF8, TimeZone=UTC, extra_float_digits=2".into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, as simple queries via raw_sql)".into()),
            ("literal", "sqlx::raw_sql(text).fetch_all/execute: simple query protocol, text results decoded by sqlx's Decode impls (text format) per column type".into()),
            ("extended", "sqlx::query(sql).bind(..).persistent(false): unnamed statement, Parse+Describe+Sync (one round trip) then Bind+Execute+Close portal+Sync (a second), every time; binary parameters and results".into()),
            ("prepared", format!("sqlx::query(sql).bind(..).persistent(true): sqlx's statement cache (capacity {STATEMENT_CACHE_CAPACITY}, keyed by SQL text) prepares a named statement on first use (inside the first operation's time), later executions are Bind+Execute+Close portal+Sync; the cache is cleared after every step (clear_cached_statements, untimed)")),
            ("scan", "sqlx::query(sql).persistent(false).fetch_all: as extended, binary results, whole result buffered (Vec<PgRow>)".into()),
            ("parameters", "bound as sqlx types them: i64 → int8, &str → text, chrono::NaiveDateTime → timestamp, f64, bool; a NULL as None of its generator's type; the server casts them to the columns' types".into()),
            ("decoding", "Row::try_get by column type OID: int2/int4/int8 → i16/i32/i64, float4 → f32 then its shortest text parsed as f64, float8 → f64, numeric → rust_decimal::Decimal (scale kept), bool, text types → &str, timestamp → chrono::NaiveDateTime → µs, timestamptz → DateTime<Utc>, date, time, bytea → &[u8] (Vec<u8> for text results)".into()),
            ("batch", batch.into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread".into()),
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
            concurrency: "async tasks (tokio current-thread runtime, one connection)",
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    fn open(&mut self, ep: &Endpoint) -> Res<Opened> {
        let opts = options(ep)?;
        let start = now_ns();
        let mut conn = self.rt.block_on(opts.connect()).map_err(fail)?;
        let connect_ns = now_ns() - start;
        let (pid, version) = self.rt.block_on(async {
            let row = sqlx::raw_sql(pg::OPEN_INFO_SQL).fetch_one(&mut conn).await.map_err(fail)?;
            let pid = dec(row.try_get::<i32, _>(0))? as i64;
            let version = dec(row.try_get::<String, _>(1))?;
            Ok::<_, Fail>((pid, version))
        })?;
        self.conn = Some(conn);
        self.opts = Some(opts);
        self.pid = Some(pid);
        Ok(Opened { connect_ns, server_pid: Some(pid), server_version: Some(version) })
    }

    fn close(&mut self) {
        if let Some(conn) = self.conn.take() {
            if let Err(e) = self.rt.block_on(conn.close()) {
                eprintln!("abworker-rust: close: {e}");
            }
        }
        self.pid = None;
    }

    fn step(&mut self, st: &Step, _ep: &Endpoint) -> Res<Outcome> {
        let conn = self.conn.as_mut().ok_or_else(|| Fail::protocol("step before open"))?;
        let opts = self.opts.as_ref().unwrap();
        let values = self.values;
        self.rt.block_on(async move {
            let r = run(conn, opts, st, values).await;
            if r.is_err() {
                let _ = raw(conn, "ROLLBACK").await;
            }
            // a step's prepared statements do not outlive it (untimed)
            if let Err(e) = conn.clear_cached_statements().await {
                eprintln!("abworker-rust: clear_cached_statements: {e}");
            }
            r
        })
    }

    fn server_pid(&self) -> Option<i64> {
        self.pid
    }
}
