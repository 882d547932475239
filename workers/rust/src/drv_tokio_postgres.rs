//! rust-tokio-postgres: tokio-postgres on a current-thread tokio runtime (async tasks; the
//! connection future is a task on the same thread). Under load: one tokio task per client
//! on that runtime; pooled = deadpool-postgres.
//!
//! Settings: `batch=pipeline|copy` (default `pipeline`).

use crate::load::{ClientLoop, Load, Loaded, Policy};
use crate::pg::{self, Col, PgParam};
use crate::protocol::{self, Sink};
use crate::step::{now_ns, rusage, Endpoint, Fail, Kind, Mode, Outcome, Res, Step};
use crate::{run_client, run_ops, Driver, Hello, Opened};
use bytes::Bytes;
use deadpool_postgres::{ManagerConfig, QueueMode, RecyclingMethod};
use futures_util::future::{join_all, try_join_all};
use futures_util::SinkExt;
use std::pin::pin;
use std::sync::Arc;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Statement};

pub struct TokioPostgres {
    copy: bool,
    rt: Runtime,
    client: Option<Client>,
    task: Option<JoinHandle<()>>,
    cfg: Option<Config>,
    pid: Option<i64>,
    /// the server's default DateStyle is ISO (else every connection sets it, as open does)
    iso: bool,
}

impl TokioPostgres {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        let mut copy = false;
        for (k, v) in settings {
            match (k.as_str(), v.as_str()) {
                ("batch", "pipeline") => copy = false,
                ("batch", "copy") => copy = true,
                _ => return Err(format!("rust-tokio-postgres has no setting {k}={v} (batch=pipeline|copy)")),
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        Ok(TokioPostgres { copy, rt, client: None, task: None, cfg: None, pid: None, iso: true })
    }
}

type P<'a> = &'a (dyn ToSql + Sync);

async fn begin(c: &Client) -> Res<()> {
    c.batch_execute("BEGIN").await.map_err(pg::fail)
}

async fn commit(c: &Client) -> Res<()> {
    c.batch_execute("COMMIT").await.map_err(pg::fail)
}

/// One connection opened and closed: connect (startup, authentication), then drop the
/// client and drive the connection until it has sent Terminate and closed the socket.
async fn connect_once(cfg: &Config) -> Res<i64> {
    let (client, conn) = cfg.connect(NoTls).await.map_err(pg::fail)?;
    drop(client);
    conn.await.map_err(pg::fail)?;
    Ok(0)
}

async fn scan_once(c: &Client, sql: &str, sink: &mut Sink) -> Res<i64> {
    let rows = c.query(sql, &[]).await.map_err(pg::fail)?;
    pg::decode_rows(&rows, sink)
}

/// Column decoders of a literal statement: the simple protocol returns text with no type
/// information in tokio-postgres's API, so the types are learnt before the clock by
/// preparing the first statement text once (Parse + Describe, then Close).
async fn literal_cols(c: &Client, st: &Step) -> Res<Vec<Col>> {
    if !st.reads() || st.n == 0 {
        return Ok(Vec::new());
    }
    let stmt = c.prepare(&st.texts[0]).await.map_err(pg::fail)?;
    let cols = stmt.columns().iter().map(|col| pg::col_of(col.type_())).collect();
    drop(stmt); // sends Close + Sync
    c.check_connection().await.map_err(pg::fail)?; // and waits for it, before the clock
    Ok(cols)
}

struct Exec<'a> {
    sql: &'a str,
    refs: Vec<P<'a>>,
    cols: Vec<Col>,
    stmt: Option<Statement>,
}

async fn exec_once(c: &Client, st: &Step, e: &mut Exec<'_>, i: usize, sink: &mut Sink) -> Res<i64> {
    if st.begins(i) {
        begin(c).await?;
    }
    let np = st.nparams;
    let p = &e.refs[i * np..(i + 1) * np];
    let reads = st.reads();
    let count = match st.mode {
        // record-level access is MariaDB's HANDLER: main answers it unsupported first
        Mode::Record => return Err(crate::step::no_record()),
        Mode::Literal => {
            let msgs = c.simple_query(&st.texts[i]).await.map_err(pg::fail)?;
            pg::simple_rows(&msgs, reads, &e.cols, sink)?
        }
        Mode::Extended => {
            if reads {
                let rows = c.query(e.sql, p).await.map_err(pg::fail)?;
                pg::decode_rows(&rows, sink)?
            } else {
                c.execute(e.sql, p).await.map_err(pg::fail)? as i64
            }
        }
        Mode::Prepared => {
            if e.stmt.is_none() {
                // parsed once, inside the first operation's time
                e.stmt = Some(c.prepare(e.sql).await.map_err(pg::fail)?);
            }
            let s = e.stmt.as_ref().unwrap();
            if reads {
                let rows = c.query(s, p).await.map_err(pg::fail)?;
                pg::decode_rows(&rows, sink)?
            } else {
                c.execute(s, p).await.map_err(pg::fail)? as i64
            }
        }
    };
    if st.commits(i) {
        commit(c).await?;
    }
    Ok(count)
}

/// A batch group: a transaction (BEGIN awaited), one execute of the prepared statement per
/// row, all issued at once as concurrent futures (tokio-postgres pipelines them on the one
/// connection), then COMMIT awaited.
async fn batch_pipeline(
    c: &mut Client,
    st: &Step,
    g: usize,
    sql: &str,
    refs: &[P<'_>],
    stmt: &mut Option<Statement>,
) -> Res<i64> {
    let np = st.nparams;
    let tx = c.transaction().await.map_err(pg::fail)?;
    if stmt.is_none() {
        *stmt = Some(tx.prepare(sql).await.map_err(pg::fail)?);
    }
    let s = stmt.as_ref().unwrap();
    let rows = st.group(g);
    let n = rows.len() as i64;
    try_join_all(rows.map(|r| tx.execute(s, &refs[r * np..(r + 1) * np]))).await.map_err(pg::fail)?;
    tx.commit().await.map_err(pg::fail)?;
    Ok(n)
}

struct Copy {
    sql: String,
    data: Bytes,
    offsets: Vec<usize>,
    stmt: Option<Statement>,
}

/// A batch group with batch=copy: BEGIN, `COPY t (cols) FROM STDIN` (prepared once, in the
/// first group) with the group's rows as one CopyData in text format, COMMIT.
async fn batch_copy(c: &mut Client, st: &Step, g: usize, cp: &mut Copy) -> Res<i64> {
    let tx = c.transaction().await.map_err(pg::fail)?;
    if cp.stmt.is_none() {
        cp.stmt = Some(tx.prepare(&cp.sql).await.map_err(pg::fail)?);
    }
    let rows = st.group(g);
    let data = cp.data.slice(cp.offsets[rows.start]..cp.offsets[rows.end]);
    let mut sink = pin!(tx.copy_in::<_, Bytes>(cp.stmt.as_ref().unwrap()).await.map_err(pg::fail)?);
    sink.send(data).await.map_err(pg::fail)?;
    let n = sink.as_mut().finish().await.map_err(pg::fail)?;
    tx.commit().await.map_err(pg::fail)?;
    Ok(n as i64)
}

/// batch=copy: the COPY statement and every row as COPY text, made before the clock.
fn copy_data(st: &Step) -> Res<Copy> {
    let sql = protocol::copy_statement(&st.sql, st.nparams).map_err(Fail::unsupported)?;
    let mut data = Vec::new();
    let mut offsets = Vec::with_capacity(st.n + 1);
    for r in 0..st.n {
        offsets.push(data.len());
        protocol::copy_row(st.row(r), &mut data);
    }
    offsets.push(data.len());
    Ok(Copy { sql, data: Bytes::from(data), offsets, stmt: None })
}

async fn run(c: &mut Client, cfg: &Config, st: &Step, copy: bool) -> Res<Outcome> {
    Ok(match st.kind {
        Kind::Connect => run_ops!(st, sink, i, connect_once(cfg).await),
        Kind::Scan => run_ops!(st, sink, i, scan_once(c, &st.sql, &mut sink).await),
        Kind::Exec => {
            let sql = protocol::dollar_markers(&st.sql, &st.marks);
            let params: Vec<PgParam> = pg::params(st);
            let cols = if st.mode == Mode::Literal { literal_cols(c, st).await? } else { Vec::new() };
            let mut e = Exec { sql: &sql, refs: params.iter().map(|p| p as P).collect(), cols, stmt: None };
            let c: &Client = c;
            run_ops!(st, sink, i, exec_once(c, st, &mut e, i, &mut sink).await)
        }
        Kind::Batch if copy => {
            let mut cp = copy_data(st)?;
            run_ops!(st, sink, i, batch_copy(c, st, i, &mut cp).await)
        }
        Kind::Batch => {
            let sql = protocol::dollar_markers(&st.sql, &st.marks);
            let params: Vec<PgParam> = pg::params(st);
            let refs: Vec<P> = params.iter().map(|p| p as P).collect();
            let mut stmt = None;
            run_ops!(st, sink, i, batch_pipeline(c, st, i, &sql, &refs, &mut stmt).await)
        }
    })
}

impl Driver for TokioPostgres {
    fn hello(&self) -> Hello {
        let mut s = vec![
            ("runtime", "tokio current-thread runtime (one thread); the Connection future is a task spawned on it".into()),
            ("tls", "NoTls connector: sslmode disable/prefer connect without TLS (prefer sends no SSLRequest); require over TCP is unsupported; on a unix socket TLS is never used (as in libpq)".into()),
            ("search_path", "options=-c search_path=<schema> in the startup packet".into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, as simple queries)".into()),
            ("literal", "Client::simple_query of the text with values inlined: simple query protocol, text results, each value parsed by its column type (chrono/rust_decimal/std parsers); the column types are learnt before the clock by preparing the first text once (Parse+Describe+Sync, then Close)".into()),
            ("extended", "Client::query/execute(&str, params): tokio-postgres prepares a named statement every call (Parse+Describe+Sync, one round trip), then Bind+Execute+Sync (a second round trip), then sends Close+Sync when the statement drops (its reply is read behind the next request); parameters binary, typed as the server inferred them; results binary".into()),
            ("prepared", "Client::prepare once (inside the first operation's time), then query/execute(&Statement, params): Bind+Execute+Sync, one round trip; the statement is closed after the step (untimed)".into()),
            ("scan", "Client::query(sql, &[]): as extended (prepare + execute + close of a named statement), binary results, whole result buffered (Vec<Row>)".into()),
            ("decoding", "Row::try_get by column type: int2/int4/int8/oid → i16/i32/i64/u32, float4 → f32 then its shortest text parsed as f64 (as a text-format driver sees it), float8 → f64, numeric → rust_decimal::Decimal (scale kept), bool, text types → &str, timestamp → chrono::NaiveDateTime → µs, timestamptz → DateTime<Utc>, date → NaiveDate → days, time → NaiveTime → µs, bytea → &[u8]".into()),
            ("statement cache", "none (tokio-postgres has none)".into()),
            ("tcp", "TCP_NODELAY on; TCP keepalives on (tokio-postgres default, idle 2 h)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread".into()),
            ("load", "C clients = C tokio tasks, all on the worker's current-thread runtime (one OS thread for every client and every connection's I/O); persistent: client 0 uses the connection from open, the others each open their own (at once, with the open query for its backend pid) before the barrier, untimed, and close it after the trial; each task waits for start_at_unix_ns on the wall clock, then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate); a task ahead of schedule sleeps on a timerfd of its own registered with tokio's reactor (tokio's timer has 1 ms granularity) until 100 µs before the intended start, then spins with yield_now (the other tasks keep running) until it; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the task then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; a prepared statement is prepared per client, in its first operation; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("per-request", "Config::connect(NoTls) with the Connection future spawned as a task, the step's statement prepared on it when the mode needs one, the operation, then the statement and client dropped and the connection task awaited (Terminate sent, socket closed): all inside the operation's time".into()),
            ("pool", format!("deadpool-postgres {} (deadpool {}): Manager::from_config(config, NoTls, ManagerConfig {{ recycling_method: Fast }}) (a check-out only looks at Client::is_closed, no query); Pool::builder(manager).max_size(pool_size), queue_mode Fifo, no wait/create/recycle timeouts; filled before the barrier by checking out pool_size connections at once and returning them; each operation: Pool::get, the step's statement from ClientWrapper::prepare_cached when the mode (or a batch) needs one (deadpool-postgres's per-connection statement cache: prepared once per connection, on its first use, inside that operation's time), the operation, the Object dropped back into the pool; the pool dropped after the trial (deadpool aborts the connections' tasks)", env!("ABW_V_DEADPOOL_POSTGRES"), env!("ABW_V_DEADPOOL"))),
        ];
        s.push(("batch", if self.copy { "copy".into() } else { "pipeline".into() }));
        Hello {
            driver: "tokio-postgres",
            driver_version: env!("ABW_V_TOKIO_POSTGRES").into(),
            dbms: &["postgresql"],
            batch: batch_style(self.copy).into(),
            concurrency: "async tasks (one tokio task per client, all on the worker's current-thread runtime)",
            policies: &["persistent", "per-request", "pooled"],
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    fn open(&mut self, ep: &Endpoint) -> Res<Opened> {
        let cfg = pg::config(ep)?;
        let start = now_ns();
        let (client, conn) = self.rt.block_on(cfg.connect(NoTls)).map_err(pg::fail)?;
        let connect_ns = now_ns() - start;
        self.task = Some(self.rt.spawn(async move {
            if let Err(e) = conn.await {
                eprintln!("abworker-rust: connection: {e}");
            }
        }));
        let msgs = self.rt.block_on(client.simple_query(pg::OPEN_INFO_SQL)).map_err(pg::fail)?;
        let (pid, version, iso) = pg::open_info(&msgs);
        if !iso {
            self.rt.block_on(client.batch_execute("SET DateStyle = ISO")).map_err(pg::fail)?;
        }
        self.client = Some(client);
        self.cfg = Some(cfg);
        self.pid = pid;
        self.iso = iso;
        Ok(Opened { connect_ns, server_pid: pid, server_version: version })
    }

    fn close(&mut self) {
        if let Some(client) = self.client.take() {
            drop(client);
            if let Some(task) = self.task.take() {
                let _ = self.rt.block_on(task);
            }
        }
        self.pid = None;
    }

    fn step(&mut self, st: &Step, _ep: &Endpoint) -> Res<Outcome> {
        let client = self.client.as_mut().ok_or_else(|| Fail::protocol("step before open"))?;
        let cfg = self.cfg.as_ref().unwrap();
        let copy = self.copy;
        self.rt.block_on(async move {
            let r = run(client, cfg, st, copy).await;
            if r.is_err() {
                // leave no transaction open (a warning only when none is)
                let _ = client.batch_execute("ROLLBACK").await;
            }
            // the step's statements were dropped (Close + Sync sent): wait until the server
            // has answered, so that nothing of this step runs inside the next one's clock
            let _ = client.check_connection().await;
            r
        })
    }

    fn server_pid(&self) -> Option<i64> {
        self.pid
    }

    fn load(&mut self, st: &Arc<Step>, ep: &Endpoint, load: &Load) -> Res<Loaded> {
        let client = self.client.take().ok_or_else(|| Fail::protocol("step before open"))?;
        let cfg = self.cfg.clone().unwrap();
        let (r, client) = self.rt.block_on(run_load(client, self.pid, cfg, self.iso, self.copy, st.clone(), load));
        match client {
            Some(c) => self.client = Some(c),
            None => {
                // client 0's task died with the session's connection: open it again
                if let Some(task) = self.task.take() {
                    let _ = self.rt.block_on(task);
                }
                if let Err(e) = self.open(ep) {
                    eprintln!("abworker-rust: reopen after a failed loaded step: {}", e.message);
                }
            }
        }
        r
    }

    fn verify_under(&mut self, st: &Step, _ep: &Endpoint, load: &Load) -> Res<Outcome> {
        let client = self.client.as_mut().ok_or_else(|| Fail::protocol("step before open"))?;
        let (cfg, iso, copy) = (self.cfg.as_ref().unwrap(), self.iso, self.copy);
        self.rt.block_on(async move {
            let sql = protocol::dollar_markers(&st.sql, &st.marks);
            let params: Vec<PgParam> = pg::params(st);
            let cols = if st.mode == Mode::Literal { literal_cols(client, st).await? } else { Vec::new() };
            let mut cp = if copy && st.kind == Kind::Batch { Some(copy_data(st)?) } else { None };
            let mut e = Exec { sql: &sql, refs: params.iter().map(|p| p as P).collect(), cols, stmt: None };
            let mut via = match load.policy {
                Policy::Pooled => Via::Pool(pool(cfg, iso, load.pool_size).await?),
                _ => Via::PerRequest,
            };
            Ok(run_ops!(st, sink, i, op(&mut via, cfg, iso, st, &mut e, cp.as_mut(), i, &mut sink).await))
        })
    }
}

// ---- steps under load ---------------------------------------------------------------------------

/// Where a client's operations get their connection.
enum Via {
    /// its own for the whole trial (persistent)
    Own(Client),
    PerRequest,
    Pool(deadpool_postgres::Pool),
}

/// The step's pool (settings pinned: see `hello`), filled before the barrier: deadpool
/// opens connections on demand, so all pool_size are checked out at once, then returned.
async fn pool(cfg: &Config, iso: bool, size: usize) -> Res<deadpool_postgres::Pool> {
    let manager = deadpool_postgres::Manager::from_config(
        cfg.clone(),
        NoTls,
        ManagerConfig { recycling_method: RecyclingMethod::Fast },
    );
    let pool = deadpool_postgres::Pool::builder(manager)
        .max_size(size)
        .queue_mode(QueueMode::Fifo)
        .build()
        .map_err(|e| Fail::internal(format!("deadpool-postgres: {e}")))?;
    let objects = try_join_all((0..size).map(|_| pool.get())).await.map_err(pool_fail)?;
    if !iso {
        for o in &objects {
            o.batch_execute("SET DateStyle = ISO").await.map_err(pg::fail)?;
        }
    }
    drop(objects);
    Ok(pool)
}

fn pool_fail(e: deadpool_postgres::PoolError) -> Fail {
    match e {
        deadpool_postgres::PoolError::Backend(e) => pg::fail(e),
        e => Fail::db(format!("deadpool-postgres: {e}"), None),
    }
}

/// Operation i of the step on connection c: the plain loop's operation.
async fn once(c: &mut Client, cfg: &Config, st: &Step, e: &mut Exec<'_>, cp: Option<&mut Copy>, i: usize, sink: &mut Sink) -> Res<i64> {
    match st.kind {
        Kind::Connect => connect_once(cfg).await,
        Kind::Scan => scan_once(c, &st.sql, sink).await,
        Kind::Exec => exec_once(c, st, e, i, sink).await,
        Kind::Batch => match cp {
            Some(cp) => batch_copy(c, st, i, cp).await,
            None => batch_pipeline(c, st, i, e.sql, &e.refs, &mut e.stmt).await,
        },
    }
}

/// Operation i under the client's connection policy.
#[allow(clippy::too_many_arguments)]
async fn op(
    via: &mut Via,
    cfg: &Config,
    iso: bool,
    st: &Step,
    e: &mut Exec<'_>,
    mut cp: Option<&mut Copy>,
    i: usize,
    sink: &mut Sink,
) -> Res<i64> {
    match via {
        Via::Own(c) => once(c, cfg, st, e, cp, i, sink).await,
        Via::PerRequest => {
            // connect, prepare what the operation needs, run it, disconnect: all in its time
            let (mut c, conn) = cfg.connect(NoTls).await.map_err(pg::fail)?;
            let task = tokio::spawn(conn);
            let r = async {
                if !iso {
                    c.batch_execute("SET DateStyle = ISO").await.map_err(pg::fail)?;
                }
                once(&mut c, cfg, st, e, cp.as_deref_mut(), i, sink).await
            }
            .await;
            e.stmt = None; // a statement lives and dies with its connection
            if let Some(cp) = cp {
                cp.stmt = None;
            }
            drop(c);
            let ended = task.await;
            let n = r?;
            ended.map_err(|e| Fail::internal(format!("connection task: {e}")))?.map_err(pg::fail)?;
            Ok(n)
        }
        Via::Pool(pool) => {
            let mut obj = pool.get().await.map_err(pool_fail)?;
            let r = async {
                // this connection's statement, from deadpool-postgres's statement cache
                match (st.kind, cp.as_deref_mut()) {
                    (Kind::Batch, Some(cp)) => cp.stmt = Some(obj.prepare_cached(&cp.sql).await.map_err(pg::fail)?),
                    (Kind::Batch, None) => e.stmt = Some(obj.prepare_cached(e.sql).await.map_err(pg::fail)?),
                    (Kind::Exec, _) if st.mode == Mode::Prepared => {
                        e.stmt = Some(obj.prepare_cached(e.sql).await.map_err(pg::fail)?)
                    }
                    _ => {}
                }
                once(&mut obj, cfg, st, e, cp.as_deref_mut(), i, sink).await
            }
            .await;
            e.stmt = None;
            if let Some(cp) = cp {
                cp.stmt = None;
            }
            if r.is_err() {
                let _ = obj.batch_execute("ROLLBACK").await;
            }
            r // the connection goes back to the pool as `obj` drops, inside the operation's time
        }
    }
}

/// Another persistent client's connection, as open makes it, with its backend pid.
async fn open_client(cfg: &Config) -> Res<(Client, JoinHandle<()>, Option<i64>)> {
    let (client, conn) = cfg.connect(NoTls).await.map_err(pg::fail)?;
    let task = tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("abworker-rust: connection: {e}");
        }
    });
    let msgs = client.simple_query(pg::OPEN_INFO_SQL).await.map_err(pg::fail)?;
    let (pid, _, iso) = pg::open_info(&msgs);
    if !iso {
        client.batch_execute("SET DateStyle = ISO").await.map_err(pg::fail)?;
    }
    Ok((client, task, pid))
}

/// What every client task shares, made once before the barrier.
struct Shared {
    st: Arc<Step>,
    cfg: Config,
    iso: bool,
    sql: String,
    params: Vec<PgParam>,
    cols: Vec<Col>,
    /// batch=copy: the COPY statement, the rows as COPY text, each row's offset
    copy: Option<(String, Bytes, Vec<usize>)>,
}

/// One client: a task that owns what it uses (its `Via`, given back at the end) and runs
/// `run_client!`.
fn spawn_client(sh: Arc<Shared>, mut via: Via, mut cl: ClientLoop) -> JoinHandle<(Res<ClientLoop>, Via)> {
    tokio::spawn(async move {
        let sh = &*sh;
        let st = &*sh.st;
        let mut e = Exec { sql: &sh.sql, refs: sh.params.iter().map(|p| p as P).collect(), cols: sh.cols.clone(), stmt: None };
        let mut cp = sh.copy.as_ref().map(|(sql, data, offsets)| Copy {
            sql: sql.clone(),
            data: data.clone(),
            offsets: offsets.clone(),
            stmt: None,
        });
        let mut sink = Sink::new(false);
        let r = async {
            run_client!(async &mut cl, j, op(&mut via, &sh.cfg, sh.iso, st, &mut e, cp.as_mut(), j, &mut sink).await);
            Ok::<(), Fail>(())
        }
        .await;
        drop(e); // the client's statements are closed (Close + Sync sent) before its connection goes back
        drop(cp);
        if let Via::Own(c) = &via {
            if r.is_err() {
                let _ = c.batch_execute("ROLLBACK").await;
            } else if st.commit_every > 0 {
                let _ = c.batch_execute("COMMIT").await; // a group the duration cut short (untimed)
            }
        }
        cl.ncols = sink.ncols;
        (r.map(|_| cl), via)
    })
}

/// The clients of a loaded step, one task each, on the worker's runtime. `session` is the
/// connection from open (client 0's when persistent); it is given back, unless a task that
/// held it died.
async fn run_load(
    session: Client,
    pid: Option<i64>,
    cfg: Config,
    iso: bool,
    copy: bool,
    st: Arc<Step>,
    load: &Load,
) -> (Res<Loaded>, Option<Client>) {
    let shared = async {
        let cols = if st.mode == Mode::Literal { literal_cols(&session, &st).await? } else { Vec::new() };
        let copy = if copy && st.kind == Kind::Batch {
            let cp = copy_data(&st)?;
            Some((cp.sql, cp.data, cp.offsets))
        } else {
            None
        };
        let sql = protocol::dollar_markers(&st.sql, &st.marks);
        let params = pg::params(&st);
        Ok::<_, Fail>(Arc::new(Shared { st: st.clone(), cfg, iso, sql, params, cols, copy }))
    }
    .await;
    let shared = match shared {
        Ok(s) => s,
        Err(e) => return (Err(e), Some(session)),
    };
    let (cfg, clients) = (&shared.cfg, load.clients);
    let mut extra = Vec::new();
    let mut pool_ = None;
    let ready = match load.policy {
        Policy::Persistent => try_join_all((1..clients).map(|_| open_client(cfg))).await.map(|x| extra = x),
        Policy::PerRequest => Ok(()),
        Policy::Pooled => pool(cfg, iso, load.pool_size).await.map(|p| pool_ = Some(p)),
    };
    if let Err(e) = ready {
        return (Err(e), Some(session));
    }
    let server_pids: Vec<i64> =
        if load.policy == Policy::Persistent { pid.into_iter().chain(extra.iter().filter_map(|x| x.2)).collect() } else { Vec::new() };
    let mut session = Some(session);
    let mut conn_tasks = Vec::new();
    let vias: Vec<Via> = match &pool_ {
        Some(p) => (0..clients).map(|_| Via::Pool(p.clone())).collect(),
        None if load.policy == Policy::PerRequest => (0..clients).map(|_| Via::PerRequest).collect(),
        None => {
            let mut v = vec![Via::Own(session.take().unwrap())];
            for (c, task, _) in extra {
                v.push(Via::Own(c));
                conn_tasks.push(task);
            }
            v
        }
    };
    let before = rusage();
    let handles: Vec<_> =
        vias.into_iter().enumerate().map(|(k, via)| spawn_client(shared.clone(), via, load.client(k, st.nops))).collect();
    let joined = join_all(handles).await;
    let after = rusage();
    let mut results = Vec::with_capacity(clients);
    for (k, j) in joined.into_iter().enumerate() {
        match j {
            Ok((r, via)) => {
                results.push(r);
                if let Via::Own(c) = via {
                    if k == 0 {
                        session = Some(c);
                    } // the others drop here: their connections send Terminate and end
                }
            }
            Err(e) => results.push(Err(Fail::internal(format!("client task {k}: {e}")))),
        }
    }
    for task in conn_tasks {
        let _ = task.await;
    }
    drop(pool_);
    if let Some(c) = &session {
        // the step's statements were dropped (Close + Sync sent): wait for the server's answer
        let _ = c.check_connection().await;
    }
    let r = results.into_iter().collect::<Res<Vec<_>>>().map(|clients| Loaded {
        clients,
        reads: st.reads(),
        user_ns: after.0 - before.0,
        sys_ns: after.1 - before.1,
        server_pids,
    });
    (r, session)
}

fn batch_style(copy: bool) -> &'static str {
    if copy {
        "COPY t (cols) FROM STDIN (text format; the COPY statement prepared once, in the first group) inside a transaction per group, the group's rows as one CopyData"
    } else {
        "a transaction per group (Client::transaction: BEGIN awaited), one Transaction::execute of the prepared statement (prepared once, in the first group) per row, all rows' futures joined with try_join_all so tokio-postgres pipelines them on the connection, then COMMIT awaited"
    }
}
