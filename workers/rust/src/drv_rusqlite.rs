//! rust-rusqlite: rusqlite with its `bundled` SQLite (compiled into the worker), in process.
//! No settings. Under load: one OS thread per client, each with its own connection (or the
//! pool's: r2d2 with r2d2_sqlite's manager).

use crate::assoc::{self, Fetch, LoadPlan, Markers};
use crate::host::{self, Client, Ctx, Described, Link, Method, R2D2_TIMEOUT_S};
use crate::load::ThreadPause;
use crate::protocol::{self, Gv, Sink, Ty, Val};
use crate::step::{Endpoint, Fail, Kind, Mode, Res, Step};
use crate::Hello;
use r2d2::PooledConnection;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ffi, params_from_iter, Connection, OpenFlags, Statement, ToSql};
use std::time::Duration;

const BUSY_TIMEOUT_MS: u64 = 5000;
/// The statement cache of a pooled connection (rusqlite's default capacity): the prepared
/// mode and BEGIN/COMMIT go through prepare_cached there.
const POOL_STATEMENT_CACHE: usize = 16;

pub struct Rusqlite;

impl Rusqlite {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        if let Some((k, v)) = settings.first() {
            return Err(format!("rust-rusqlite has no setting {k}={v}"));
        }
        Ok(Rusqlite)
    }
}

/// rusqlite's default open flags: READ_WRITE | CREATE | NO_MUTEX | URI.
fn flags() -> OpenFlags {
    OpenFlags::default()
}

/// What both SQLite methods open (rusqlite and Diesel both open with SQLITE_OPEN_URI): the
/// endpoint's file, or for a `read_only` endpoint its `file:` URI with `mode=ro`, which SQLite
/// opens as SQLITE_OPEN_READONLY whatever the flags say.
pub(crate) fn file(ep: &Endpoint) -> Res<String> {
    let f = ep.file.as_deref().ok_or_else(|| Fail::protocol("the sqlite endpoint needs a file"))?;
    Ok(if ep.read_only {
        // a URI path: SQLite decodes %HH, and ? and # would end the path
        format!("file:{}?mode=ro", f.replace('%', "%25").replace('?', "%3F").replace('#', "%23"))
    } else {
        f.to_string()
    })
}

/// hello's `read_only` of both SQLite methods (`file`).
pub(crate) const READ_ONLY_SETTING: &str = "endpoint read_only: the file opened as the URI file:<path>?mode=ro (SQLITE_OPEN_URI is among the open flags; SQLite then opens it SQLITE_OPEN_READONLY), on every connection: a write fails with SQLITE_READONLY";

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

/// A parameter as rusqlite binds it, by SQLite's storage classes (PROTOCOL.md, Types):
/// integers (booleans 1/0), doubles, text (decimals as their plain text, dates
/// `YYYY-MM-DD` and timestamps `YYYY-MM-DD HH:MM:SS[.ffffff]`: SQLite has none of those
/// types, and the target stores them so), blobs, NULL; borrowed, so binding copies nothing
/// before SQLite does.
pub enum P {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl ToSql for P {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            P::Null => ValueRef::Null,
            P::Int(i) => ValueRef::Integer(*i),
            P::Float(f) => ValueRef::Real(*f),
            P::Text(s) => ValueRef::Text(s.as_bytes()),
            P::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn adapt(values: &[Gv]) -> Vec<P> {
    values.iter().map(p_of).collect()
}

fn p_of(v: &Gv) -> P {
    match v {
            Gv::Null => P::Null,
            Gv::Bool(b) => P::Int(*b as i64),
            Gv::Int(i) => P::Int(*i),
            Gv::Float(f) => P::Float(*f),
            Gv::Dec(d) => P::Text(d.to_string()),
            Gv::Text(s) => P::Text(s.clone()),
            Gv::Date(d) => P::Text(protocol::format_date(*d)),
            Gv::Ts(us) => P::Text(protocol::format_ts(*us, false)),
            Gv::Bytes(b) => P::Blob(b.clone()),
    }
}

/// A load's statements (`assoc`): `Connection::prepare` + bind + step + finalize, as the
/// extended mode runs a statement, rows decoded as an exec step's.
struct LiteFetch<'a>(&'a Connection);

impl Fetch for LiteFetch<'_> {
    async fn fetch(&mut self, sql: &str, params: &[Gv], _types: &[Ty], rows: &mut Sink) -> Res<()> {
        let p: Vec<P> = params.iter().map(p_of).collect();
        run_stmt(&mut self.0.prepare(sql).map_err(fail)?, &p, true, rows)?;
        Ok(())
    }
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

/// Where an operation's statements come from: those a client keeps on its own connection
/// (persistent), a pooled connection's statement cache (prepare_cached: prepared once per
/// connection, on its first use), or none (per-request: prepared every operation; BEGIN and
/// COMMIT with execute_batch).
enum Way<'a, 'c> {
    Kept(&'a mut Stmts<'c>),
    Cached,
    Fresh,
}

fn exec_once<'c>(conn: &'c Connection, st: &Step, params: &[P], way: Way<'_, 'c>, i: usize, sink: &mut Sink) -> Res<i64> {
    let np = st.nparams;
    let p = &params[i * np..(i + 1) * np];
    let reads = st.reads();
    match (st.mode, way) {
        // record-level access is MariaDB's HANDLER: main answers it unsupported first
        (Mode::Record, _) => Err(crate::step::no_record()),
        (Mode::Literal, _) => run_stmt(&mut conn.prepare(&st.texts[i]).map_err(fail)?, &[], reads, sink),
        (Mode::Prepared, Way::Kept(s)) => {
            if s.prepared.is_none() {
                // parsed once, inside the first operation's time
                s.prepared = Some(conn.prepare(&st.sql).map_err(fail)?);
            }
            run_stmt(s.prepared.as_mut().unwrap(), p, reads, sink)
        }
        (Mode::Prepared, Way::Cached) => run_stmt(&mut *conn.prepare_cached(&st.sql).map_err(fail)?, p, reads, sink),
        (Mode::Extended | Mode::Prepared, _) => run_stmt(&mut conn.prepare(&st.sql).map_err(fail)?, p, reads, sink),
    }
}

/// A batch group: BEGIN, one prepared statement executed per row, COMMIT.
fn batch_once<'c>(conn: &'c Connection, st: &Step, params: &[P], way: Way<'_, 'c>, g: usize) -> Res<i64> {
    let np = st.nparams;
    let rows = st.group(g);
    let n = rows.len() as i64;
    let run = |stmt: &mut Statement<'_>| -> Res<()> {
        for r in rows {
            stmt.execute(params_from_iter(params[r * np..(r + 1) * np].iter())).map_err(fail)?;
        }
        Ok(())
    };
    match way {
        Way::Kept(s) => {
            s.begin.execute([]).map_err(fail)?;
            if s.prepared.is_none() {
                s.prepared = Some(conn.prepare(&st.sql).map_err(fail)?); // in the first group
            }
            run(s.prepared.as_mut().unwrap())?;
            s.commit.execute([]).map_err(fail)?;
        }
        Way::Cached => {
            conn.prepare_cached("BEGIN").and_then(|mut s| s.execute([])).map_err(fail)?;
            run(&mut *conn.prepare_cached(&st.sql).map_err(fail)?)?;
            conn.prepare_cached("COMMIT").and_then(|mut s| s.execute([])).map_err(fail)?;
        }
        Way::Fresh => {
            conn.execute_batch("BEGIN").map_err(fail)?;
            run(&mut conn.prepare(&st.sql).map_err(fail)?)?;
            conn.execute_batch("COMMIT").map_err(fail)?;
        }
    }
    Ok(n)
}

/// Operation i of the step on `conn`, its statements coming the client's `way`.
fn operation<'c>(conn: &'c Connection, st: &Step, plan: &Plan, file: &str, way: Way<'_, 'c>, i: usize, sink: &mut Sink) -> Res<i64> {
    let params = &plan.params;
    match st.kind {
        Kind::Load => {
            let lp = plan.load.as_ref().ok_or_else(|| Fail::internal("a load step without its plan"))?;
            crate::host::block_on(assoc::load(&mut LiteFetch(conn), lp, st.row(i), sink))
        }
        Kind::Connect => connect_once(file),
        Kind::Scan => scan_once(conn, st, sink),
        Kind::Exec => exec_once(conn, st, params, way, i, sink),
        Kind::Batch => batch_once(conn, st, params, way, i),
    }
}

#[derive(Clone)]
pub struct Cfg {
    file: String,
}

/// What a step needs, made before the clock: its parameters as rusqlite binds them, and a
/// load step's statements.
pub struct Plan {
    params: Vec<P>,
    load: Option<LoadPlan>,
}

pub struct SqliteClient<'c> {
    st: &'c Step,
    params: &'c Plan,
    cfg: &'c Cfg,
    /// persistent: its connection, and BEGIN, COMMIT and the step's statement on it
    own: Option<(&'c Connection, Stmts<'c>)>,
    /// per-request: the operation's connection
    made: Option<Connection>,
    pool: Option<&'c r2d2::Pool<SqliteConnectionManager>>,
    lent: Option<PooledConnection<SqliteConnectionManager>>,
}

impl SqliteClient<'_> {
    fn conn(&self) -> Option<&Connection> {
        self.own.as_ref().map(|o| o.0).or(self.made.as_ref()).or(self.lent.as_deref())
    }
}

impl Client for SqliteClient<'_> {
    async fn op(&mut self, i: usize, sink: &mut Sink) -> Res<i64> {
        let (st, params, file) = (self.st, self.params, self.cfg.file.as_str());
        if let Some((conn, s)) = &mut self.own {
            return operation(conn, st, params, file, Way::Kept(s), i, sink);
        }
        match (&self.made, &self.lent) {
            (Some(conn), _) => operation(conn, st, params, file, Way::Fresh, i, sink),
            (_, Some(pc)) => operation(pc, st, params, file, Way::Cached, i, sink),
            _ => Err(Fail::internal("an operation without a connection")),
        }
    }

    async fn tx_begin(&mut self) -> Res<()> {
        let s = &mut self.own.as_mut().ok_or_else(|| Fail::internal("commit_every without a connection"))?.1;
        s.begin.execute([]).map(|_| ()).map_err(fail)
    }

    async fn tx_commit(&mut self) -> Res<()> {
        let s = &mut self.own.as_mut().ok_or_else(|| Fail::internal("commit_every without a connection"))?.1;
        s.commit.execute([]).map(|_| ()).map_err(fail)
    }

    async fn recover(&mut self) {
        if let Some(c) = self.conn().filter(|c| !c.is_autocommit()) {
            let _ = c.execute_batch("ROLLBACK");
        }
    }

    /// Open as open does (busy timeout, no statement cache, foreign keys off).
    async fn connect(&mut self) -> Res<()> {
        self.made = Some(open_conn(&self.cfg.file)?);
        Ok(())
    }

    async fn disconnect(&mut self) -> Res<()> {
        match self.made.take() {
            Some(c) => c.close().map_err(|(_, e)| fail(e)),
            None => Ok(()),
        }
    }

    async fn borrow(&mut self) -> Res<()> {
        let pool = self.pool.ok_or_else(|| Fail::internal("a pooled operation without a pool"))?;
        self.lent = Some(pool.get().map_err(|e| Fail::db(format!("r2d2 pool: {e}"), None))?);
        Ok(())
    }

    fn give_back(&mut self) {
        self.lent = None; // back to the pool as it drops, inside the operation's time
    }
}

impl Method for Rusqlite {
    type Config = Cfg;
    type Conn = Connection;
    type Plan = Plan;
    type Pool = r2d2::Pool<SqliteConnectionManager>;
    type Client<'c> = SqliteClient<'c>;
    type Pause = ThreadPause;

    fn hello(&self) -> Hello {
        let s: Vec<(&str, String)> = vec![
            ("sqlite", format!("{} bundled by libsqlite3-sys {} (compiled into the worker with its flags, among them SQLITE_DEFAULT_FOREIGN_KEYS=1, SQLITE_ENABLE_STAT4, SQLITE_THREADSAFE=1), not the system library", rusqlite::version(), env!("ABW_V_LIBSQLITE3_SYS"))),
            ("open", format!("Connection::open_with_flags(file, READ_WRITE|CREATE|NO_MUTEX|URI: rusqlite's defaults), extended result codes on, busy timeout {BUSY_TIMEOUT_MS} ms (rusqlite's default, set explicitly)")),
            ("read_only", READ_ONLY_SETTING.into()),
            ("foreign_keys", "PRAGMA foreign_keys = OFF at open (the bundled build turns them on by default; OFF is SQLite's standard default, as c-sqlite and py-sqlite3 get)".into()),
            ("statement cache", "prepare_cached is not used and its cache capacity is set to 0".into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, each prepared once per step before the clock)".into()),
            ("literal", "Connection::prepare of the text with values inlined + step + finalize, every operation".into()),
            ("extended", "Connection::prepare + bind + step + finalize (drop), every operation".into()),
            ("prepared", "Connection::prepare once (inside the first operation's time), then query/execute on the same Statement (rebinds every parameter; reset after each use); finalized after the step".into()),
            ("scan", "prepare, step every row, finalize".into()),
            ("decoding", "Row::get_ref → ValueRef by each value's storage class: Integer → i64, Real → f64, Text → &str (UTF-8 checked), Blob → &[u8], Null".into()),
            ("parameters", "by storage class, borrowed (ToSqlOutput::Borrowed): integers and booleans (1/0) as i64, floats as f64, text, bytes as blobs; SQLite has no boolean, decimal, date or timestamp type, so decimals are bound as their plain text, dates as YYYY-MM-DD and timestamps as YYYY-MM-DD HH:MM:SS[.ffffff] text (as the target stores them)".into()),
            ("rows changed", "Statement::execute (sqlite3_changes)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread (under load: every client's thread, and r2d2's)".into()),
            ("under load", "C clients = C OS threads (std::thread::scope), each with its own connection (SQLite's multi-thread mode: NO_MUTEX, no connection shared between threads); persistent: client 0 uses the connection from open, the others each open their own (as open does) before the barrier, untimed, and close it after the trial; each thread waits for start_at_unix_ns on the wall clock (sleep, then spin the last 100 µs), then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate), sleep until 100 µs before the intended start, then spin; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the client then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; BEGIN/COMMIT prepared per client before the barrier, a prepared statement per client in its first operation; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("load", crate::assoc::LOAD_SETTING.into()),
            ("per-request", "open as open does (Connection::open_with_flags, busy timeout, PRAGMA foreign_keys = OFF), prepare what the operation needs (BEGIN/COMMIT of a batch with execute_batch), run it, Connection::close: all inside the operation's time".into()),
            ("pool", format!("r2d2 {} with r2d2_sqlite {}: SqliteConnectionManager::file(file).with_flags(rusqlite's defaults).with_init(busy timeout {BUSY_TIMEOUT_MS} ms, PRAGMA foreign_keys = OFF, statement cache capacity {POOL_STATEMENT_CACHE}); Pool::builder().max_size(pool_size).min_idle(Some(pool_size)): build() waits until all pool_size connections are open, before the barrier; test_on_check_out(false) (no is_valid statement per check-out), max_lifetime(None), idle_timeout(None), connection_timeout({R2D2_TIMEOUT_S} s); each operation: Pool::get, the operation, the PooledConnection dropped back; the prepared mode and a batch's statement, BEGIN and COMMIT through Connection::prepare_cached (rusqlite's per-connection cache: prepared once per connection, on its first use, inside that operation's time); literal and extended prepare every operation as in the plain loop", env!("ABW_V_R2D2"), env!("ABW_V_R2D2_SQLITE"))),
        ];
        Hello {
            driver: "rusqlite",
            driver_version: format!("{} (SQLite {} bundled)", env!("ABW_V_RUSQLITE"), rusqlite::version()),
            dbms: &["sqlite"],
            batch: "BEGIN, one prepared Statement (prepared once, in the first group) executed per row, COMMIT".into(),
            concurrency: "threads (one OS thread per client, each with its own connection)",
            policies: &["persistent", "per-request", "pooled"],
            sqlstate: None,
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            load: true,
            shapes: None,
        }
    }

    fn config(&self, ep: &Endpoint) -> Res<Cfg> {
        Ok(Cfg { file: file(ep)? })
    }

    async fn connect(cfg: &Cfg) -> Res<Connection> {
        Connection::open_with_flags(&cfg.file, flags()).map_err(fail)
    }

    async fn ready(_cfg: &Cfg, c: &mut Connection) -> Res<()> {
        setup(c).map_err(fail)
    }

    async fn describe(_cfg: &mut Cfg, _c: &mut Connection) -> Res<Described> {
        Ok(Described { server_pid: None, server_version: Some(rusqlite::version().to_string()) })
    }

    async fn close(c: Connection) {
        if let Err((_, e)) = c.close() {
            eprintln!("abworker-rust: close: {e}");
        }
    }

    async fn plan(_cfg: &Cfg, _c: &mut Connection, st: &Step) -> Res<Plan> {
        let load = if st.kind == Kind::Load { Some(LoadPlan::new(st, Markers::Question)?) } else { None };
        Ok(Plan { params: adapt(&st.values), load })
    }

    /// The step's pool, filled before the barrier (settings pinned: see `hello`).
    async fn pool(cfg: &Cfg, _plan: &Plan, _st: &Step, size: usize) -> Res<r2d2::Pool<SqliteConnectionManager>> {
        let manager = SqliteConnectionManager::file(&cfg.file).with_flags(flags()).with_init(|c| {
            c.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS))?;
            c.set_prepared_statement_cache_capacity(POOL_STATEMENT_CACHE);
            c.execute_batch("PRAGMA foreign_keys = OFF")
        });
        host::r2d2_pool(manager, size)
    }

    /// On a connection of its own, BEGIN and COMMIT prepared once for the step (before the
    /// clock); every statement of the step is finalized when the client drops.
    async fn client<'c>(ctx: Ctx<'c, Self>, link: Link<'c, Self>) -> Res<SqliteClient<'c>> {
        let mut c = SqliteClient { st: ctx.st, params: ctx.plan, cfg: ctx.cfg, own: None, made: None, pool: None, lent: None };
        match link {
            Link::Own(conn) => {
                let conn: &'c Connection = conn;
                c.own = Some((conn, Stmts::new(conn)?));
            }
            Link::PerRequest => {}
            Link::Pool(p) => c.pool = Some(p),
        }
        Ok(c)
    }
}
