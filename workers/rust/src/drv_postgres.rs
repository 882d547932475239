//! rust-postgres: the synchronous `postgres` crate (a blocking API over tokio-postgres: each
//! connection owns a current-thread tokio runtime that every call blocks on, on the
//! calling thread). No settings. Under load: one OS thread per client; pooled = r2d2 with
//! r2d2_postgres's manager.

use crate::load::{ClientLoop, Load, Loaded, Policy};
use crate::pg::{self, Col, PgParam};
use crate::protocol::{self, Sink};
use crate::step::{now_ns, rusage, Endpoint, Fail, Kind, Mode, Outcome, Res, Step};
use crate::{run_client, run_ops, Driver, Hello, Opened};
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Statement};
use r2d2_postgres::PostgresConnectionManager;
use std::sync::Arc;
use std::time::Duration;

/// r2d2's own default, pinned: how long Pool::build and Pool::get wait for a connection.
const POOL_TIMEOUT_S: u64 = 30;

pub struct Postgres {
    client: Option<Client>,
    cfg: Option<Config>,
    pid: Option<i64>,
    /// the server's default DateStyle is ISO (else every connection sets it, as open does)
    iso: bool,
}

impl Postgres {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        if let Some((k, v)) = settings.first() {
            return Err(format!("rust-postgres has no setting {k}={v}"));
        }
        Ok(Postgres { client: None, cfg: None, pid: None, iso: true })
    }
}

type P<'a> = &'a (dyn ToSql + Sync);

fn connect_once(cfg: &Config) -> Res<i64> {
    let client = cfg.connect(NoTls).map_err(pg::fail)?;
    client.close().map_err(pg::fail)?;
    Ok(0)
}

fn scan_once(c: &mut Client, sql: &str, sink: &mut Sink) -> Res<i64> {
    let rows = c.query(sql, &[]).map_err(pg::fail)?;
    pg::decode_rows(&rows, sink)
}

/// Column decoders of a literal statement, learnt before the clock (see rust-tokio-postgres).
fn literal_cols(c: &mut Client, st: &Step) -> Res<Vec<Col>> {
    if !st.reads() || st.n == 0 {
        return Ok(Vec::new());
    }
    let stmt = c.prepare(&st.texts[0]).map_err(pg::fail)?;
    let cols = stmt.columns().iter().map(|col| pg::col_of(col.type_())).collect();
    drop(stmt);
    c.check_connection().map_err(pg::fail)?;
    Ok(cols)
}

struct Exec<'a> {
    sql: &'a str,
    refs: Vec<P<'a>>,
    cols: Vec<Col>,
    stmt: Option<Statement>,
}

fn exec_once(c: &mut Client, st: &Step, e: &mut Exec<'_>, i: usize, sink: &mut Sink) -> Res<i64> {
    if st.begins(i) {
        c.batch_execute("BEGIN").map_err(pg::fail)?;
    }
    let np = st.nparams;
    let p = &e.refs[i * np..(i + 1) * np];
    let reads = st.reads();
    let count = match st.mode {
        // record-level access is MariaDB's HANDLER: main answers it unsupported first
        Mode::Record => return Err(crate::step::no_record()),
        Mode::Literal => {
            let msgs = c.simple_query(&st.texts[i]).map_err(pg::fail)?;
            pg::simple_rows(&msgs, reads, &e.cols, sink)?
        }
        Mode::Extended => {
            if reads {
                let rows = c.query(e.sql, p).map_err(pg::fail)?;
                pg::decode_rows(&rows, sink)?
            } else {
                c.execute(e.sql, p).map_err(pg::fail)? as i64
            }
        }
        Mode::Prepared => {
            if e.stmt.is_none() {
                // parsed once, inside the first operation's time
                e.stmt = Some(c.prepare(e.sql).map_err(pg::fail)?);
            }
            let s = e.stmt.as_ref().unwrap();
            if reads {
                let rows = c.query(s, p).map_err(pg::fail)?;
                pg::decode_rows(&rows, sink)?
            } else {
                c.execute(s, p).map_err(pg::fail)? as i64
            }
        }
    };
    if st.commits(i) {
        c.batch_execute("COMMIT").map_err(pg::fail)?;
    }
    Ok(count)
}

/// A batch group: Client::transaction (BEGIN), one Transaction::execute of the prepared
/// statement (prepared in the first group) per row, each a round trip, then COMMIT.
fn batch_group(c: &mut Client, st: &Step, g: usize, sql: &str, refs: &[P<'_>], stmt: &mut Option<Statement>) -> Res<i64> {
    let np = st.nparams;
    let mut tx = c.transaction().map_err(pg::fail)?;
    if stmt.is_none() {
        *stmt = Some(tx.prepare(sql).map_err(pg::fail)?);
    }
    let s = stmt.as_ref().unwrap();
    let rows = st.group(g);
    let n = rows.len() as i64;
    for r in rows {
        tx.execute(s, &refs[r * np..(r + 1) * np]).map_err(pg::fail)?;
    }
    tx.commit().map_err(pg::fail)?;
    Ok(n)
}

fn run(c: &mut Client, cfg: &Config, st: &Step) -> Res<Outcome> {
    Ok(match st.kind {
        Kind::Connect => run_ops!(st, sink, i, connect_once(cfg)),
        Kind::Scan => run_ops!(st, sink, i, scan_once(c, &st.sql, &mut sink)),
        Kind::Exec => {
            let sql = protocol::dollar_markers(&st.sql, &st.marks);
            let params: Vec<PgParam> = pg::params(st);
            let cols = if st.mode == Mode::Literal { literal_cols(c, st)? } else { Vec::new() };
            let mut e = Exec { sql: &sql, refs: params.iter().map(|p| p as P).collect(), cols, stmt: None };
            run_ops!(st, sink, i, exec_once(c, st, &mut e, i, &mut sink))
        }
        Kind::Batch => {
            let sql = protocol::dollar_markers(&st.sql, &st.marks);
            let params: Vec<PgParam> = pg::params(st);
            let refs: Vec<P> = params.iter().map(|p| p as P).collect();
            let mut stmt = None;
            run_ops!(st, sink, i, batch_group(c, st, i, &sql, &refs, &mut stmt))
        }
    })
}

impl Driver for Postgres {
    fn hello(&self) -> Hello {
        let s: Vec<(&str, String)> = vec![
            ("runtime", "blocking calls; the crate drives each connection on its own current-thread tokio runtime, on the calling thread".into()),
            ("tls", "NoTls connector: sslmode disable/prefer connect without TLS (prefer sends no SSLRequest); require over TCP is unsupported; on a unix socket TLS is never used (as in libpq)".into()),
            ("search_path", "options=-c search_path=<schema> in the startup packet".into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, as simple queries)".into()),
            ("literal", "Client::simple_query of the text with values inlined: simple query protocol, text results, each value parsed by its column type; the column types are learnt before the clock by preparing the first text once (then closed)".into()),
            ("extended", "Client::query/execute(&str, params): a named statement prepared every call (Parse+Describe+Sync, one round trip), Bind+Execute+Sync (a second), Close+Sync sent when it drops (read behind the next request); parameters binary, typed as the server inferred them; results binary".into()),
            ("prepared", "Client::prepare once (inside the first operation's time), then query/execute(&Statement, params): one round trip each; closed after the step (untimed)".into()),
            ("scan", "Client::query(sql, &[]): as extended, binary results, whole result buffered (Vec<Row>)".into()),
            ("decoding", "as rust-tokio-postgres: Row::try_get by column type (i16/i32/i64, f32 via its shortest text → f64, f64, rust_decimal::Decimal, bool, &str, chrono NaiveDateTime/NaiveDate/NaiveTime → µs/days/µs, &[u8])".into()),
            ("statement cache", "none (the crate has none)".into()),
            ("tcp", "TCP_NODELAY on; TCP keepalives on (tokio-postgres default, idle 2 h)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread (under load: every client's thread)".into()),
            ("load", "C clients = C OS threads (std::thread::scope), each blocking on its own connection; persistent: client 0 uses the connection from open, the others each open their own (in parallel, with the open query for its backend pid) before the barrier, untimed, and close it after the trial; each thread waits for start_at_unix_ns on the wall clock (sleep, then spin the last 100 µs), then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate), sleep until 100 µs before the intended start, then spin; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the client then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; a prepared statement is prepared per client, in its first operation; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("per-request", "Config::connect(NoTls) (its own current-thread tokio runtime, startup, authentication), the step's statement prepared on it when the mode needs one, the operation, Client::close (Terminate, waits for the connection to end): all inside the operation's time".into()),
            ("pool", format!("r2d2 {} with r2d2_postgres {}'s PostgresConnectionManager(config, NoTls), wrapped so that each pooled connection keeps the step's prepared statement (prepared once per connection, on its first use, inside that operation's time: the postgres crate has no statement cache); Pool::builder().max_size(pool_size).min_idle(Some(pool_size)): build() waits until all pool_size connections are open, before the barrier; test_on_check_out(false) (no is_valid query per check-out), max_lifetime(None), idle_timeout(None), connection_timeout({POOL_TIMEOUT_S} s); each operation: Pool::get, the operation, the PooledConnection dropped back (has_broken = Client::is_closed); the pool dropped after the trial", env!("ABW_V_R2D2"), env!("ABW_V_R2D2_POSTGRES"))),
        ];
        Hello {
            driver: "postgres",
            driver_version: format!("{} (tokio-postgres {})", env!("ABW_V_POSTGRES"), env!("ABW_V_TOKIO_POSTGRES")),
            dbms: &["postgresql"],
            batch: "a transaction per group (Client::transaction), one Transaction::execute of the prepared statement (prepared once, in the first group) per row, each awaited in turn (the blocking API cannot pipeline), then COMMIT".into(),
            concurrency: "threads (one OS thread per client, each blocking on its own connection)",
            policies: &["persistent", "per-request", "pooled"],
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    fn open(&mut self, ep: &Endpoint) -> Res<Opened> {
        let cfg: Config = pg::config(ep)?.into();
        let start = now_ns();
        let mut client = cfg.connect(NoTls).map_err(pg::fail)?;
        let connect_ns = now_ns() - start;
        let msgs = client.simple_query(pg::OPEN_INFO_SQL).map_err(pg::fail)?;
        let (pid, version, iso) = pg::open_info(&msgs);
        if !iso {
            client.batch_execute("SET DateStyle = ISO").map_err(pg::fail)?;
        }
        self.client = Some(client);
        self.cfg = Some(cfg);
        self.pid = pid;
        self.iso = iso;
        Ok(Opened { connect_ns, server_pid: pid, server_version: version })
    }

    fn close(&mut self) {
        if let Some(c) = self.client.take() {
            if let Err(e) = c.close() {
                eprintln!("abworker-rust: close: {e}");
            }
        }
        self.pid = None;
    }

    fn step(&mut self, st: &Step, _ep: &Endpoint) -> Res<Outcome> {
        let c = self.client.as_mut().ok_or_else(|| Fail::protocol("step before open"))?;
        let r = run(c, self.cfg.as_ref().unwrap(), st);
        if r.is_err() {
            let _ = c.batch_execute("ROLLBACK");
        }
        // statements closed at the end of the step: wait for the server's answer
        let _ = c.check_connection();
        r
    }

    fn server_pid(&self) -> Option<i64> {
        self.pid
    }

    fn load(&mut self, st: &Arc<Step>, _ep: &Endpoint, load: &Load) -> Res<Loaded> {
        let c = self.client.as_mut().ok_or_else(|| Fail::protocol("step before open"))?;
        let r = run_load(c, self.pid, self.cfg.as_ref().unwrap(), self.iso, st, load);
        if r.is_err() {
            let _ = c.batch_execute("ROLLBACK");
        }
        let _ = c.check_connection(); // the statements closed after the step, answered
        r
    }

    fn verify_under(&mut self, st: &Step, _ep: &Endpoint, load: &Load) -> Res<Outcome> {
        let c = self.client.as_mut().ok_or_else(|| Fail::protocol("step before open"))?;
        let (cfg, iso) = (self.cfg.as_ref().unwrap(), self.iso);
        let sql = protocol::dollar_markers(&st.sql, &st.marks);
        let params: Vec<PgParam> = pg::params(st);
        let cols = if st.mode == Mode::Literal { literal_cols(c, st)? } else { Vec::new() };
        let mut e = Exec { sql: &sql, refs: params.iter().map(|p| p as P).collect(), cols, stmt: None };
        let pool = if load.policy == Policy::Pooled { Some(pool(cfg, iso, load.pool_size)?) } else { None };
        let mut via = pool.as_ref().map_or(Via::PerRequest, Via::Pool);
        Ok(run_ops!(st, sink, i, op(&mut via, cfg, iso, st, &mut e, i, &mut sink)))
    }
}

// ---- steps under load ---------------------------------------------------------------------------

/// A pooled connection with the statement the step prepared on it: r2d2 keeps nothing per
/// connection and the postgres crate has no statement cache, so the connection carries it,
/// and the prepared mode prepares once per connection (on its first use), as the statement
/// caches of deadpool-postgres and sqlx do.
pub struct PooledPg {
    client: Client,
    stmt: Option<Statement>,
}

/// r2d2_postgres's manager, making `PooledPg`s (and setting DateStyle where open had to).
struct Manager {
    inner: PostgresConnectionManager<NoTls>,
    iso: bool,
}

impl r2d2::ManageConnection for Manager {
    type Connection = PooledPg;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PooledPg, postgres::Error> {
        let mut client = self.inner.connect()?;
        if !self.iso {
            client.batch_execute("SET DateStyle = ISO")?;
        }
        Ok(PooledPg { client, stmt: None })
    }

    fn is_valid(&self, c: &mut PooledPg) -> Result<(), postgres::Error> {
        self.inner.is_valid(&mut c.client)
    }

    fn has_broken(&self, c: &mut PooledPg) -> bool {
        self.inner.has_broken(&mut c.client)
    }
}

/// The step's pool, filled before the barrier (settings pinned: see `hello`).
fn pool(cfg: &Config, iso: bool, size: usize) -> Res<r2d2::Pool<Manager>> {
    r2d2::Pool::builder()
        .max_size(size as u32)
        .min_idle(Some(size as u32))
        .test_on_check_out(false)
        .max_lifetime(None)
        .idle_timeout(None)
        .connection_timeout(Duration::from_secs(POOL_TIMEOUT_S))
        .build(Manager { inner: PostgresConnectionManager::new(cfg.clone(), NoTls), iso })
        .map_err(|e| Fail::db(format!("r2d2 pool: {e}"), None))
}

/// A connection as open makes it (DateStyle set where the server's default is not ISO).
fn connect(cfg: &Config, iso: bool) -> Res<Client> {
    let mut c = cfg.connect(NoTls).map_err(pg::fail)?;
    if !iso {
        c.batch_execute("SET DateStyle = ISO").map_err(pg::fail)?;
    }
    Ok(c)
}

/// Where a client's operations get their connection.
enum Via<'a> {
    /// its own for the whole trial (persistent)
    Own(&'a mut Client),
    PerRequest,
    Pool(&'a r2d2::Pool<Manager>),
}

/// Operation i of the step on connection c: the plain loop's operation.
fn once(c: &mut Client, cfg: &Config, st: &Step, e: &mut Exec<'_>, i: usize, sink: &mut Sink) -> Res<i64> {
    match st.kind {
        Kind::Connect => connect_once(cfg),
        Kind::Scan => scan_once(c, &st.sql, sink),
        Kind::Exec => exec_once(c, st, e, i, sink),
        Kind::Batch => batch_group(c, st, i, e.sql, &e.refs, &mut e.stmt),
    }
}

/// Operation i under the client's connection policy.
fn op(via: &mut Via<'_>, cfg: &Config, iso: bool, st: &Step, e: &mut Exec<'_>, i: usize, sink: &mut Sink) -> Res<i64> {
    match via {
        Via::Own(c) => once(c, cfg, st, e, i, sink),
        Via::PerRequest => {
            // connect, prepare what the operation needs, run it, disconnect: all in its time
            let mut c = connect(cfg, iso)?;
            let r = once(&mut c, cfg, st, e, i, sink);
            e.stmt = None; // a statement lives and dies with its connection
            let closed = c.close().map_err(pg::fail);
            let n = r?;
            closed?;
            Ok(n)
        }
        Via::Pool(pool) => {
            let mut pc = pool.get().map_err(|e| Fail::db(format!("r2d2 pool: {e}"), None))?;
            std::mem::swap(&mut e.stmt, &mut pc.stmt); // this connection's statement, if any
            let r = once(&mut pc.client, cfg, st, e, i, sink);
            std::mem::swap(&mut e.stmt, &mut pc.stmt);
            if r.is_err() {
                let _ = pc.client.batch_execute("ROLLBACK");
            }
            r // the connection goes back to the pool as `pc` drops, inside the operation's time
        }
    }
}

/// The other persistent clients' connections, opened at once (one thread each) before the
/// barrier, with the backend pid of each.
fn open_clients(cfg: &Config, iso: bool, n: usize) -> Res<Vec<(Client, Option<i64>)>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(move || -> Res<(Client, Option<i64>)> {
                    let mut c = connect(cfg, iso)?;
                    let msgs = c.simple_query(pg::OPEN_INFO_SQL).map_err(pg::fail)?;
                    Ok((c, pg::open_info(&msgs).0))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Fail::internal("a client thread panicked")))).collect()
    })
}

/// The clients of a loaded step, one OS thread each; `c` is the session's connection (client
/// 0's when persistent).
fn run_load(c: &mut Client, pid: Option<i64>, cfg: &Config, iso: bool, st: &Step, load: &Load) -> Res<Loaded> {
    let sql = protocol::dollar_markers(&st.sql, &st.marks);
    let params: Vec<PgParam> = pg::params(st);
    let cols = if st.mode == Mode::Literal { literal_cols(c, st)? } else { Vec::new() };
    let mut extra = Vec::new();
    let mut server_pids = Vec::new();
    let pool = match load.policy {
        Policy::Persistent => {
            extra = open_clients(cfg, iso, load.clients - 1)?;
            server_pids = pid.into_iter().chain(extra.iter().filter_map(|x| x.1)).collect();
            None
        }
        Policy::PerRequest => None,
        Policy::Pooled => Some(pool(cfg, iso, load.pool_size)?),
    };
    let vias: Vec<Via> = match &pool {
        Some(p) => (0..load.clients).map(|_| Via::Pool(p)).collect(),
        None if load.policy == Policy::PerRequest => (0..load.clients).map(|_| Via::PerRequest).collect(),
        None => std::iter::once(c).chain(extra.iter_mut().map(|x| &mut x.0)).map(Via::Own).collect(),
    };
    let (params, sql, cols) = (&params, sql.as_str(), &cols);
    let before = rusage();
    let results: Vec<Res<ClientLoop>> = std::thread::scope(|s| {
        let handles: Vec<_> = vias
            .into_iter()
            .enumerate()
            .map(|(k, mut via)| {
                let mut cl = load.client(k, st.nops);
                s.spawn(move || -> Res<ClientLoop> {
                    let mut e = Exec { sql, refs: params.iter().map(|p| p as P).collect(), cols: cols.clone(), stmt: None };
                    let mut sink = Sink::new(false);
                    let r = (|| -> Res<()> {
                        run_client!(&mut cl, j, op(&mut via, cfg, iso, st, &mut e, j, &mut sink));
                        Ok(())
                    })();
                    if let Via::Own(c) = &mut via {
                        if r.is_err() {
                            let _ = c.batch_execute("ROLLBACK");
                        } else if st.commit_every > 0 {
                            let _ = c.batch_execute("COMMIT"); // a group the duration cut short (untimed)
                        }
                    }
                    cl.ncols = sink.ncols;
                    r.map(|_| cl)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Fail::internal("a client thread panicked")))).collect()
    });
    let after = rusage();
    for (c, _) in extra {
        if let Err(e) = c.close() {
            eprintln!("abworker-rust: close: {e}");
        }
    }
    drop(pool);
    Ok(Loaded {
        clients: results.into_iter().collect::<Res<Vec<_>>>()?,
        reads: st.reads(),
        user_ns: after.0 - before.0,
        sys_ns: after.1 - before.1,
        server_pids,
    })
}
