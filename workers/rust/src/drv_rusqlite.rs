//! rust-rusqlite: rusqlite with its `bundled` SQLite (compiled into the worker), in process.
//! No settings. Under load: one OS thread per client, each with its own connection (or the
//! pool's: r2d2 with r2d2_sqlite's manager).

use crate::load::{ClientLoop, Load, Loaded, Policy};
use crate::protocol::{self, Gv, Sink, Val};
use crate::step::{now_ns, rusage, Endpoint, Fail, Kind, Mode, Outcome, Res, Step};
use crate::{run_client, run_ops, Driver, Hello, Opened};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ffi, params_from_iter, Connection, OpenFlags, Statement, ToSql};
use std::sync::Arc;
use std::time::Duration;

const BUSY_TIMEOUT_MS: u64 = 5000;
/// r2d2's own default, pinned: how long Pool::build and Pool::get wait for a connection.
const POOL_TIMEOUT_S: u64 = 30;
/// The statement cache of a pooled connection (rusqlite's default capacity): the prepared
/// mode and BEGIN/COMMIT go through prepare_cached there.
const POOL_STATEMENT_CACHE: usize = 16;

pub struct Rusqlite {
    conn: Option<Connection>,
}

impl Rusqlite {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        if let Some((k, v)) = settings.first() {
            return Err(format!("rust-rusqlite has no setting {k}={v}"));
        }
        Ok(Rusqlite { conn: None })
    }
}

/// rusqlite's default open flags: READ_WRITE | CREATE | NO_MUTEX | URI.
fn flags() -> OpenFlags {
    OpenFlags::default()
}

fn code_name(code: i32) -> Option<&'static str> {
    Some(match code {
        ffi::SQLITE_CONSTRAINT_PRIMARYKEY => "SQLITE_CONSTRAINT_PRIMARYKEY",
        ffi::SQLITE_CONSTRAINT_UNIQUE => "SQLITE_CONSTRAINT_UNIQUE",
        ffi::SQLITE_CONSTRAINT_NOTNULL => "SQLITE_CONSTRAINT_NOTNULL",
        ffi::SQLITE_CONSTRAINT_CHECK => "SQLITE_CONSTRAINT_CHECK",
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => "SQLITE_CONSTRAINT_FOREIGNKEY",
        ffi::SQLITE_BUSY_SNAPSHOT => "SQLITE_BUSY_SNAPSHOT",
        _ => match code & 0xff {
            ffi::SQLITE_ERROR => "SQLITE_ERROR",
            ffi::SQLITE_INTERNAL => "SQLITE_INTERNAL",
            ffi::SQLITE_PERM => "SQLITE_PERM",
            ffi::SQLITE_ABORT => "SQLITE_ABORT",
            ffi::SQLITE_BUSY => "SQLITE_BUSY",
            ffi::SQLITE_LOCKED => "SQLITE_LOCKED",
            ffi::SQLITE_NOMEM => "SQLITE_NOMEM",
            ffi::SQLITE_READONLY => "SQLITE_READONLY",
            ffi::SQLITE_INTERRUPT => "SQLITE_INTERRUPT",
            ffi::SQLITE_IOERR => "SQLITE_IOERR",
            ffi::SQLITE_CORRUPT => "SQLITE_CORRUPT",
            ffi::SQLITE_FULL => "SQLITE_FULL",
            ffi::SQLITE_CANTOPEN => "SQLITE_CANTOPEN",
            ffi::SQLITE_SCHEMA => "SQLITE_SCHEMA",
            ffi::SQLITE_TOOBIG => "SQLITE_TOOBIG",
            ffi::SQLITE_CONSTRAINT => "SQLITE_CONSTRAINT",
            ffi::SQLITE_MISMATCH => "SQLITE_MISMATCH",
            ffi::SQLITE_MISUSE => "SQLITE_MISUSE",
            ffi::SQLITE_RANGE => "SQLITE_RANGE",
            _ => return None,
        },
    })
}

fn fail(e: rusqlite::Error) -> Fail {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => Fail::db(
            msg.clone().unwrap_or_else(|| f.to_string()),
            code_name(f.extended_code).map(str::to_string),
        ),
        _ => Fail::db(e.to_string(), None),
    }
}

/// A parameter as rusqlite binds it: integers, doubles, text (timestamps as the ISO text
/// the target stores), NULL; borrowed, so binding copies nothing before SQLite does.
enum P {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
}

impl ToSql for P {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            P::Null => ValueRef::Null,
            P::Int(i) => ValueRef::Integer(*i),
            P::Float(f) => ValueRef::Real(*f),
            P::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

fn adapt(values: &[Gv]) -> Vec<P> {
    values
        .iter()
        .map(|v| match v {
            Gv::Null => P::Null,
            Gv::Bool(b) => P::Int(*b as i64),
            Gv::Int(i) => P::Int(*i),
            Gv::Float(f) => P::Float(*f),
            Gv::Text(s) => P::Text(s.clone()),
            Gv::Ts(us) => P::Text(protocol::format_ts(*us, false)),
        })
        .collect()
}

/// Steps `stmt` with `params` to the end: every row decoded by its values' storage classes
/// (ValueRef) when `reads`, else the rows changed.
fn run_stmt(stmt: &mut Statement<'_>, params: &[P], reads: bool, sink: &mut Sink) -> Res<i64> {
    if !reads {
        let changed = stmt.execute(params_from_iter(params.iter())).map_err(fail)?;
        return Ok(if stmt.readonly() { 0 } else { changed as i64 });
    }
    let ncols = stmt.column_count();
    let mut rows = stmt.query(params_from_iter(params.iter())).map_err(fail)?;
    let mut count = 0i64;
    while let Some(row) = rows.next().map_err(fail)? {
        sink.begin_row();
        for c in 0..ncols {
            match row.get_ref(c).map_err(fail)? {
                ValueRef::Null => sink.val(Val::Null),
                ValueRef::Integer(i) => sink.val(Val::Int(i)),
                ValueRef::Real(f) => sink.val(Val::Float(f)),
                ValueRef::Text(t) => {
                    sink.val(Val::Text(std::str::from_utf8(t).map_err(|e| Fail::db(format!("text column {c}: {e}"), None))?))
                }
                ValueRef::Blob(b) => sink.val(Val::Bytes(b)),
            }
        }
        sink.end_row(ncols);
        count += 1;
    }
    sink.ncols = ncols;
    Ok(count)
}

fn connect_once(file: &str) -> Res<i64> {
    let c = Connection::open_with_flags(file, flags()).map_err(fail)?;
    c.close().map_err(|(_, e)| fail(e))?;
    Ok(0)
}

/// A connection as open makes it: busy timeout, no statement cache, foreign keys off.
fn open_conn(file: &str) -> Res<Connection> {
    let conn = Connection::open_with_flags(file, flags()).map_err(fail)?;
    setup(&conn).map_err(fail)?;
    Ok(conn)
}

fn setup(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS))?;
    conn.set_prepared_statement_cache_capacity(0);
    conn.execute_batch("PRAGMA foreign_keys = OFF")
}

/// The statements a client keeps through a step: BEGIN and COMMIT (prepared once, before
/// the clock) and the step's statement once the prepared mode or a batch has prepared it.
struct Stmts<'c> {
    begin: Statement<'c>,
    commit: Statement<'c>,
    prepared: Option<Statement<'c>>,
}

impl<'c> Stmts<'c> {
    fn new(conn: &'c Connection) -> Res<Stmts<'c>> {
        Ok(Stmts { begin: conn.prepare("BEGIN").map_err(fail)?, commit: conn.prepare("COMMIT").map_err(fail)?, prepared: None })
    }
}

fn scan_once(conn: &Connection, st: &Step, sink: &mut Sink) -> Res<i64> {
    let mut stmt = conn.prepare(&st.sql).map_err(fail)?;
    run_stmt(&mut stmt, &[], true, sink)
}

fn exec_once<'c>(conn: &'c Connection, st: &Step, params: &[P], s: &mut Stmts<'c>, i: usize, sink: &mut Sink) -> Res<i64> {
    if st.begins(i) {
        s.begin.execute([]).map_err(fail)?;
    }
    let np = st.nparams;
    let p = &params[i * np..(i + 1) * np];
    let reads = st.reads();
    let count = match st.mode {
        // record-level access is MariaDB's HANDLER: main answers it unsupported first
        Mode::Record => return Err(crate::step::no_record()),
        Mode::Literal => {
            let mut stmt = conn.prepare(&st.texts[i]).map_err(fail)?;
            run_stmt(&mut stmt, &[], reads, sink)?
        }
        Mode::Extended => {
            let mut stmt = conn.prepare(&st.sql).map_err(fail)?;
            run_stmt(&mut stmt, p, reads, sink)?
        }
        Mode::Prepared => {
            if s.prepared.is_none() {
                // parsed once, inside the first operation's time
                s.prepared = Some(conn.prepare(&st.sql).map_err(fail)?);
            }
            run_stmt(s.prepared.as_mut().unwrap(), p, reads, sink)?
        }
    };
    if st.commits(i) {
        s.commit.execute([]).map_err(fail)?;
    }
    Ok(count)
}

fn batch_once<'c>(conn: &'c Connection, st: &Step, params: &[P], s: &mut Stmts<'c>, g: usize) -> Res<i64> {
    let np = st.nparams;
    s.begin.execute([]).map_err(fail)?;
    if s.prepared.is_none() {
        s.prepared = Some(conn.prepare(&st.sql).map_err(fail)?);
    }
    let stmt = s.prepared.as_mut().unwrap();
    let rows = st.group(g);
    let n = rows.len() as i64;
    for r in rows {
        stmt.execute(params_from_iter(params[r * np..(r + 1) * np].iter())).map_err(fail)?;
    }
    s.commit.execute([]).map_err(fail)?;
    Ok(n)
}

/// Operation i of the step on a connection the client keeps: the plain loop's operation.
fn once<'c>(conn: &'c Connection, st: &Step, params: &[P], file: &str, s: &mut Stmts<'c>, i: usize, sink: &mut Sink) -> Res<i64> {
    match st.kind {
        Kind::Connect => connect_once(file),
        Kind::Scan => scan_once(conn, st, sink),
        Kind::Exec => exec_once(conn, st, params, s, i, sink),
        Kind::Batch => batch_once(conn, st, params, s, i),
    }
}

fn run(conn: &Connection, st: &Step, file: &str) -> Res<Outcome> {
    // BEGIN and COMMIT, prepared once per step (before the clock)
    let mut s = Stmts::new(conn)?;
    let params = adapt(&st.values);
    Ok(run_ops!(st, sink, i, once(conn, st, &params, file, &mut s, i, &mut sink)))
}

impl Driver for Rusqlite {
    fn hello(&self) -> Hello {
        let s: Vec<(&str, String)> = vec![
            ("sqlite", format!("{} bundled by libsqlite3-sys {} (compiled into the worker with its flags, among them SQLITE_DEFAULT_FOREIGN_KEYS=1, SQLITE_ENABLE_STAT4, SQLITE_THREADSAFE=1), not the system library", rusqlite::version(), env!("ABW_V_LIBSQLITE3_SYS"))),
            ("open", format!("Connection::open_with_flags(file, READ_WRITE|CREATE|NO_MUTEX|URI: rusqlite's defaults), extended result codes on, busy timeout {BUSY_TIMEOUT_MS} ms (rusqlite's default, set explicitly)")),
            ("foreign_keys", "PRAGMA foreign_keys = OFF at open (the bundled build turns them on by default; OFF is SQLite's standard default, as c-sqlite and py-sqlite3 get)".into()),
            ("statement cache", "prepare_cached is not used and its cache capacity is set to 0".into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, each prepared once per step before the clock)".into()),
            ("literal", "Connection::prepare of the text with values inlined + step + finalize, every operation".into()),
            ("extended", "Connection::prepare + bind + step + finalize (drop), every operation".into()),
            ("prepared", "Connection::prepare once (inside the first operation's time), then query/execute on the same Statement (rebinds every parameter; reset after each use); finalized after the step".into()),
            ("scan", "prepare, step every row, finalize".into()),
            ("decoding", "Row::get_ref → ValueRef by each value's storage class: Integer → i64, Real → f64, Text → &str (UTF-8 checked), Blob → &[u8], Null".into()),
            ("parameters", "i64, f64, text borrowed (ToSqlOutput::Borrowed); timestamps as ISO text (as the target stores them)".into()),
            ("rows changed", "Statement::execute (sqlite3_changes)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread (under load: every client's thread, and r2d2's)".into()),
            ("load", "C clients = C OS threads (std::thread::scope), each with its own connection (SQLite's multi-thread mode: NO_MUTEX, no connection shared between threads); persistent: client 0 uses the connection from open, the others each open their own (as open does) before the barrier, untimed, and close it after the trial; each thread waits for start_at_unix_ns on the wall clock (sleep, then spin the last 100 µs), then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate), sleep until 100 µs before the intended start, then spin; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the client then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; BEGIN/COMMIT prepared per client before the barrier, a prepared statement per client in its first operation; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("per-request", "open as open does (Connection::open_with_flags, busy timeout, PRAGMA foreign_keys = OFF), prepare what the operation needs (BEGIN/COMMIT of a batch with execute_batch), run it, Connection::close: all inside the operation's time".into()),
            ("pool", format!("r2d2 {} with r2d2_sqlite {}: SqliteConnectionManager::file(file).with_flags(rusqlite's defaults).with_init(busy timeout {BUSY_TIMEOUT_MS} ms, PRAGMA foreign_keys = OFF, statement cache capacity {POOL_STATEMENT_CACHE}); Pool::builder().max_size(pool_size).min_idle(Some(pool_size)): build() waits until all pool_size connections are open, before the barrier; test_on_check_out(false) (no is_valid statement per check-out), max_lifetime(None), idle_timeout(None), connection_timeout({POOL_TIMEOUT_S} s); each operation: Pool::get, the operation, the PooledConnection dropped back; the prepared mode and a batch's statement, BEGIN and COMMIT through Connection::prepare_cached (rusqlite's per-connection cache: prepared once per connection, on its first use, inside that operation's time); literal and extended prepare every operation as in the plain loop", env!("ABW_V_R2D2"), env!("ABW_V_R2D2_SQLITE"))),
        ];
        Hello {
            driver: "rusqlite",
            driver_version: format!("{} (SQLite {} bundled)", env!("ABW_V_RUSQLITE"), rusqlite::version()),
            dbms: &["sqlite"],
            batch: "BEGIN, one prepared Statement (prepared once, in the first group) executed per row, COMMIT".into(),
            concurrency: "threads (one OS thread per client, each with its own connection)",
            policies: &["persistent", "per-request", "pooled"],
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    fn open(&mut self, ep: &Endpoint) -> Res<Opened> {
        let file = ep.file.as_deref().ok_or_else(|| Fail::protocol("the sqlite endpoint needs a file"))?;
        let start = now_ns();
        let conn = Connection::open_with_flags(file, flags()).map_err(fail)?;
        let connect_ns = now_ns() - start;
        setup(&conn).map_err(fail)?;
        self.conn = Some(conn);
        Ok(Opened { connect_ns, server_pid: None, server_version: Some(rusqlite::version().to_string()) })
    }

    fn close(&mut self) {
        if let Some(c) = self.conn.take() {
            if let Err((_, e)) = c.close() {
                eprintln!("abworker-rust: close: {e}");
            }
        }
    }

    fn step(&mut self, st: &Step, ep: &Endpoint) -> Res<Outcome> {
        let conn = self.conn.as_ref().ok_or_else(|| Fail::protocol("step before open"))?;
        let file = ep.file.clone().unwrap_or_default();
        let r = run(conn, st, &file); // every statement of the step is finalized when it returns
        if r.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        r
    }

    fn server_pid(&self) -> Option<i64> {
        None
    }

    fn load(&mut self, st: &Arc<Step>, ep: &Endpoint, load: &Load) -> Res<Loaded> {
        let conn = self.conn.as_mut().ok_or_else(|| Fail::protocol("step before open"))?;
        let file = ep.file.clone().unwrap_or_default();
        let r = run_load(conn, st, &file, load);
        if r.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        r
    }

    fn verify_under(&mut self, st: &Step, ep: &Endpoint, load: &Load) -> Res<Outcome> {
        let file = ep.file.clone().unwrap_or_default();
        let params = adapt(&st.values);
        Ok(match load.policy {
            Policy::Pooled => {
                let pool = pool(&file, load.pool_size)?;
                run_ops!(st, sink, i, pooled_once(&pool, st, &params, i, &mut sink))
            }
            _ => run_ops!(st, sink, i, per_request_once(&file, st, &params, i, &mut sink)),
        })
    }
}

// ---- steps under load ---------------------------------------------------------------------------

/// The step's pool, filled before the barrier (settings pinned: see `hello`).
fn pool(file: &str, size: usize) -> Res<r2d2::Pool<SqliteConnectionManager>> {
    let manager = SqliteConnectionManager::file(file).with_flags(flags()).with_init(|c| {
        c.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS))?;
        c.set_prepared_statement_cache_capacity(POOL_STATEMENT_CACHE);
        c.execute_batch("PRAGMA foreign_keys = OFF")
    });
    r2d2::Pool::builder()
        .max_size(size as u32)
        .min_idle(Some(size as u32))
        .test_on_check_out(false)
        .max_lifetime(None)
        .idle_timeout(None)
        .connection_timeout(Duration::from_secs(POOL_TIMEOUT_S))
        .build(manager)
        .map_err(|e| Fail::db(format!("r2d2 pool: {e}"), None))
}

/// Operation i on a connection that keeps nothing of the step between operations: one made
/// for it (per-request) or one borrowed from the pool, whose statement cache (`cached`)
/// keeps the prepared mode's statement and BEGIN/COMMIT from one borrowing to the next.
fn fresh_once(conn: &Connection, st: &Step, params: &[P], i: usize, sink: &mut Sink, cached: bool) -> Res<i64> {
    let np = st.nparams;
    let reads = st.reads();
    match st.kind {
        Kind::Connect => Err(Fail::unsupported("a connect step runs with the persistent policy only")),
        Kind::Scan => scan_once(conn, st, sink),
        Kind::Exec => {
            let p = &params[i * np..(i + 1) * np];
            match st.mode {
                // record-level access is MariaDB's HANDLER: main answers it unsupported first
                Mode::Record => return Err(crate::step::no_record()),
                Mode::Literal => {
                    let mut stmt = conn.prepare(&st.texts[i]).map_err(fail)?;
                    run_stmt(&mut stmt, &[], reads, sink)
                }
                Mode::Prepared if cached => {
                    let mut stmt = conn.prepare_cached(&st.sql).map_err(fail)?;
                    run_stmt(&mut stmt, p, reads, sink)
                }
                Mode::Extended | Mode::Prepared => {
                    let mut stmt = conn.prepare(&st.sql).map_err(fail)?;
                    run_stmt(&mut stmt, p, reads, sink)
                }
            }
        }
        Kind::Batch => {
            let rows = st.group(i);
            let n = rows.len() as i64;
            if cached {
                conn.prepare_cached("BEGIN").and_then(|mut s| s.execute([])).map_err(fail)?;
                let mut stmt = conn.prepare_cached(&st.sql).map_err(fail)?;
                for r in rows {
                    stmt.execute(params_from_iter(params[r * np..(r + 1) * np].iter())).map_err(fail)?;
                }
                conn.prepare_cached("COMMIT").and_then(|mut s| s.execute([])).map_err(fail)?;
            } else {
                conn.execute_batch("BEGIN").map_err(fail)?;
                let mut stmt = conn.prepare(&st.sql).map_err(fail)?;
                for r in rows {
                    stmt.execute(params_from_iter(params[r * np..(r + 1) * np].iter())).map_err(fail)?;
                }
                conn.execute_batch("COMMIT").map_err(fail)?;
            }
            Ok(n)
        }
    }
}

/// Open, prepare, run, close: all inside the operation's time.
fn per_request_once(file: &str, st: &Step, params: &[P], i: usize, sink: &mut Sink) -> Res<i64> {
    let conn = open_conn(file)?;
    let r = fresh_once(&conn, st, params, i, sink, false);
    let closed = conn.close().map_err(|(_, e)| fail(e));
    let n = r?;
    closed?;
    Ok(n)
}

/// Borrow, run, return: all inside the operation's time.
fn pooled_once(pool: &r2d2::Pool<SqliteConnectionManager>, st: &Step, params: &[P], i: usize, sink: &mut Sink) -> Res<i64> {
    let conn = pool.get().map_err(|e| Fail::db(format!("r2d2 pool: {e}"), None))?;
    let r = fresh_once(&conn, st, params, i, sink, true);
    if r.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    r // the connection goes back to the pool as it drops, inside the operation's time
}

/// The clients of a loaded step, one OS thread each; `conn` is the session's connection
/// (client 0's when persistent).
fn run_load(conn: &mut Connection, st: &Step, file: &str, load: &Load) -> Res<Loaded> {
    let params = adapt(&st.values);
    let mut extra = Vec::new();
    let pool = match load.policy {
        Policy::Persistent => {
            extra = (1..load.clients).map(|_| open_conn(file)).collect::<Res<Vec<_>>>()?;
            None
        }
        Policy::PerRequest => None,
        Policy::Pooled => Some(pool(file, load.pool_size)?),
    };
    let mut own: Vec<&mut Connection> = Vec::new();
    if load.policy == Policy::Persistent {
        own = std::iter::once(conn).chain(extra.iter_mut()).collect();
    }
    let mut own = own.into_iter();
    let (params, shared) = (&params, pool.as_ref());
    let before = rusage();
    let results: Vec<Res<ClientLoop>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..load.clients)
            .map(|k| {
                let mut cl = load.client(k, st.nops);
                let mine = own.next();
                s.spawn(move || -> Res<ClientLoop> {
                    let mut sink = Sink::new(false);
                    let r = match (mine, shared) {
                        (Some(conn), _) => {
                            let conn: &Connection = conn;
                            let mut stmts = Stmts::new(conn)?;
                            let r = (|| -> Res<()> {
                                run_client!(&mut cl, j, once(conn, st, params, file, &mut stmts, j, &mut sink));
                                Ok(())
                            })();
                            drop(stmts);
                            if r.is_err() && !conn.is_autocommit() {
                                let _ = conn.execute_batch("ROLLBACK");
                            } else if st.commit_every > 0 && !conn.is_autocommit() {
                                let _ = conn.execute_batch("COMMIT"); // a group the duration cut short (untimed)
                            }
                            r
                        }
                        (None, Some(pool)) => (|| -> Res<()> {
                            run_client!(&mut cl, j, pooled_once(pool, st, params, j, &mut sink));
                            Ok(())
                        })(),
                        (None, None) => (|| -> Res<()> {
                            run_client!(&mut cl, j, per_request_once(file, st, params, j, &mut sink));
                            Ok(())
                        })(),
                    };
                    cl.ncols = sink.ncols;
                    r.map(|_| cl)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Fail::internal("a client thread panicked")))).collect()
    });
    let after = rusage();
    for c in extra {
        if let Err((_, e)) = c.close() {
            eprintln!("abworker-rust: close: {e}");
        }
    }
    drop(pool);
    Ok(Loaded {
        clients: results.into_iter().collect::<Res<Vec<_>>>()?,
        reads: st.reads(),
        user_ns: after.0 - before.0,
        sys_ns: after.1 - before.1,
        server_pids: Vec::new(),
    })
}
