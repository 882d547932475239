//! rust-tokio-postgres: tokio-postgres on a current-thread tokio runtime (async tasks; the
//! connection future is a task on the same thread). Under load: one tokio task per client
//! on that runtime; pooled = deadpool-postgres.
//!
//! Settings: `batch=pipeline|copy` (default `pipeline`); `scan=copy-binary|copy-text`: a scan
//! read by `COPY (query) TO STDOUT` in that format, each row decoded as it arrives (binary:
//! `BinaryCopyOutStream`; text: each line unescaped and parsed), the result's types described
//! before the clock.

use crate::host::{Client, Ctx, Described, Ended, Job, Link, Method, Slot};
use crate::load::TaskPause;
use crate::pg::{self, Calls, Ops, P};
use crate::protocol::{self, Sink};
use crate::step::{Endpoint, Fail, Kind, Mode, Res, Step};
use crate::Hello;
use bytes::Bytes;
use deadpool_postgres::{ManagerConfig, Object, QueueMode, RecyclingMethod};
use futures_util::future::try_join_all;
use futures_util::{SinkExt, StreamExt};
use std::pin::pin;
use tokio::task::JoinHandle;
use tokio_postgres::binary_copy::BinaryCopyOutStream;
use tokio_postgres::types::Type;
use tokio_postgres::{Config, Connection, Row, SimpleQueryMessage, Socket, Statement, ToStatement};

pub struct TokioPostgres {
    copy: bool,
    copy_out: Option<&'static str>, // scan=copy-binary|copy-text: the COPY format
}

impl TokioPostgres {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        let (mut copy, mut copy_out) = (false, None);
        for (k, v) in settings {
            match (k.as_str(), v.as_str()) {
                ("batch", "pipeline") => copy = false,
                ("batch", "copy") => copy = true,
                ("scan", "copy-binary") => copy_out = Some("binary"),
                ("scan", "copy-text") => copy_out = Some("text"),
                _ => return Err(format!("rust-tokio-postgres has no setting {k}={v} (batch=pipeline|copy, scan=copy-binary|copy-text)")),
            }
        }
        Ok(TokioPostgres { copy, copy_out })
    }
}

#[derive(Clone)]
pub struct Cfg {
    pg: Config,
    /// the connector (pg::tls): built once at open, cloned into every connect
    tls: pg::Tls,
    /// the server's default DateStyle is ISO (else every connection sets it, as open does)
    iso: bool,
    copy: bool,
    copy_out: Option<&'static str>,
}

/// A connection: the client, and its Connection future (a task once the connection is ready).
pub struct Conn {
    client: tokio_postgres::Client,
    conn: Option<Connection<Socket, pg::TlsStream>>,
    task: Option<JoinHandle<Result<(), tokio_postgres::Error>>>,
}

impl Calls for tokio_postgres::Client {
    async fn simple_query(&mut self, sql: &str) -> Result<Vec<SimpleQueryMessage>, tokio_postgres::Error> {
        tokio_postgres::Client::simple_query(self, sql).await
    }
    async fn query<T: ?Sized + ToStatement + Sync>(&mut self, q: &T, p: &[P<'_>]) -> Result<Vec<Row>, tokio_postgres::Error> {
        tokio_postgres::Client::query(self, q, p).await
    }
    async fn execute<T: ?Sized + ToStatement + Sync>(&mut self, q: &T, p: &[P<'_>]) -> Result<u64, tokio_postgres::Error> {
        tokio_postgres::Client::execute(self, q, p).await
    }
    async fn prepare(&mut self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        tokio_postgres::Client::prepare(self, sql).await
    }
    async fn batch_execute(&mut self, sql: &str) -> Result<(), tokio_postgres::Error> {
        tokio_postgres::Client::batch_execute(self, sql).await
    }
    async fn check_connection(&mut self) -> Result<(), tokio_postgres::Error> {
        tokio_postgres::Client::check_connection(self).await
    }
}

/// batch=copy: the COPY statement (the table and columns of the step's insert shape) and
/// every row as COPY text, made before the clock.
pub struct Copy {
    sql: String,
    data: Bytes,
    offsets: Vec<usize>,
}

fn copy_data(st: &Step) -> Res<Copy> {
    let sql = format!("COPY {} FROM STDIN", st.insert_target("batch=copy")?);
    let mut data = Vec::new();
    let mut offsets = Vec::with_capacity(st.n + 1);
    for r in 0..st.n {
        offsets.push(data.len());
        protocol::copy_row(st.row(r), &mut data);
    }
    offsets.push(data.len());
    Ok(Copy { sql, data: Bytes::from(data), offsets })
}

pub struct Plan {
    pg: pg::Plan,
    copy: Option<Copy>,
    copy_out: Option<CopyOut>,
}

/// scan=copy-binary: the COPY statement and the result's column types, described before the
/// clock (an application knows its result's types).
pub struct CopyOut {
    sql: String,
    binary: bool,
    types: Vec<Type>,
    cols: Vec<pg::Col>,
}

/// A scan by COPY: `Client::copy_out` (tokio-postgres prepares the COPY, as its scan
/// prepares its query), each row decoded as it arrives by its column's type.
async fn scan_copy(c: &mut tokio_postgres::Client, cp: &CopyOut, sink: &mut Sink) -> Res<i64> {
    let stream = c.copy_out(cp.sql.as_str()).await.map_err(pg::fail)?;
    if !cp.binary {
        return copy_text_rows(stream, &cp.cols, sink).await;
    }
    let mut rows = pin!(BinaryCopyOutStream::new(stream, &cp.types));
    let mut n = 0;
    while let Some(row) = rows.next().await {
        pg::decode_row(&row.map_err(pg::fail)?, &cp.cols, sink).map_err(pg::fail)?;
        n += 1;
    }
    Ok(n)
}

/// One connection opened and closed: connect (startup, authentication), then drop the
/// client and drive the connection until it has sent Terminate and closed the socket.
async fn connect_once(cfg: &Config, tls: &pg::Tls) -> Res<i64> {
    let (client, conn) = cfg.connect(tls.clone()).await.map_err(pg::fail)?;
    drop(client);
    conn.await.map_err(pg::fail)?;
    Ok(0)
}

/// A batch group: a transaction (BEGIN awaited), one execute of the prepared statement per
/// row, all issued at once as concurrent futures (tokio-postgres pipelines them on the one
/// connection), then COMMIT awaited.
async fn batch_pipeline(c: &mut tokio_postgres::Client, ops: &mut Ops<'_>, g: usize) -> Res<i64> {
    let tx = c.transaction().await.map_err(pg::fail)?;
    if ops.stmt.is_none() {
        ops.stmt = Some(tx.prepare(ops.sql).await.map_err(pg::fail)?);
    }
    let s = ops.stmt.as_ref().unwrap();
    let rows = ops.st.group(g);
    let n = rows.len() as i64;
    try_join_all(rows.map(|r| tx.execute(s, ops.row(r)))).await.map_err(pg::fail)?;
    tx.commit().await.map_err(pg::fail)?;
    Ok(n)
}

/// A batch group with batch=copy: BEGIN, `COPY t (cols) FROM STDIN` (prepared once, in the
/// first group) with the group's rows as one CopyData in text format, COMMIT.
async fn batch_copy(c: &mut tokio_postgres::Client, st: &Step, g: usize, cp: &Copy, stmt: &mut Option<Statement>) -> Res<i64> {
    let tx = c.transaction().await.map_err(pg::fail)?;
    if stmt.is_none() {
        *stmt = Some(tx.prepare(&cp.sql).await.map_err(pg::fail)?);
    }
    let rows = st.group(g);
    let data = cp.data.slice(cp.offsets[rows.start]..cp.offsets[rows.end]);
    let mut sink = pin!(tx.copy_in::<_, Bytes>(stmt.as_ref().unwrap()).await.map_err(pg::fail)?);
    sink.send(data).await.map_err(pg::fail)?;
    let n = sink.as_mut().finish().await.map_err(pg::fail)?;
    tx.commit().await.map_err(pg::fail)?;
    Ok(n as i64)
}

fn pool_fail(e: deadpool_postgres::PoolError) -> Fail {
    match e {
        deadpool_postgres::PoolError::Backend(e) => pg::fail(e),
        e => Fail::db(format!("deadpool-postgres: {e}"), None),
    }
}

pub struct TpClient<'c> {
    cfg: &'c Cfg,
    ops: Ops<'c>,
    copy: Option<&'c Copy>,
    copy_out: Option<&'c CopyOut>,
    copy_stmt: Option<Statement>,
    slot: Slot<'c, TokioPostgres, Object>,
}

/// COPY text: one line per CopyData, its fields split on tabs (\\N is NULL), unescaped into
/// one buffer and parsed as a simple query's text values are.
async fn copy_text_rows(stream: tokio_postgres::CopyOutStream, cols: &[pg::Col], sink: &mut Sink) -> Res<i64> {
    let mut stream = pin!(stream);
    let (mut text, mut spans) = (Vec::<u8>::new(), Vec::<Option<(usize, usize)>>::new());
    let mut n = 0;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(pg::fail)?;
        let line = chunk.strip_suffix(b"\n").unwrap_or(&chunk);
        text.clear();
        spans.clear();
        for field in line.split(|&b| b == b'\t') {
            if field == b"\\N" {
                spans.push(None);
                continue;
            }
            let start = text.len();
            let mut escaped = false;
            for &b in field {
                if escaped {
                    text.push(match b {
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'v' => 11,
                        other => other,
                    });
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else {
                    text.push(b);
                }
            }
            spans.push(Some((start, text.len())));
        }
        let all = std::str::from_utf8(&text).map_err(|e| Fail::db(format!("COPY text is not UTF-8: {e}"), None))?;
        pg::decode_text(spans.len(), |i| Ok(spans[i].map(|(a, b)| &all[a..b])), cols, sink)?;
        n += 1;
    }
    Ok(n)
}

impl TpClient<'_> {
    fn conn(&mut self) -> Res<&mut tokio_postgres::Client> {
        self.slot.get(|c| &mut c.client, |o| &mut **o)
    }
}

impl Client for TpClient<'_> {
    async fn op(&mut self, i: usize, sink: &mut Sink) -> Res<i64> {
        let st = self.ops.st;
        if st.kind == Kind::Connect {
            return connect_once(&self.cfg.pg, &self.cfg.tls).await;
        }
        let c = self.slot.get(|c| &mut c.client, |o| &mut **o)?;
        match (st.kind, self.copy) {
            (Kind::Scan, _) if self.copy_out.is_some() => scan_copy(c, self.copy_out.unwrap(), sink).await,
            (Kind::Scan, _) => self.ops.scan(c, sink).await,
            (Kind::Batch, Some(cp)) => batch_copy(c, st, i, cp, &mut self.copy_stmt).await,
            (Kind::Batch, None) => batch_pipeline(c, &mut self.ops, i).await,
            (Kind::Load, _) => self.ops.load(c, i, sink).await,
            _ => self.ops.exec(c, i, sink).await,
        }
    }

    async fn tx_begin(&mut self) -> Res<()> {
        self.conn()?.batch_execute("BEGIN").await.map_err(pg::fail)
    }

    async fn tx_commit(&mut self) -> Res<()> {
        self.conn()?.batch_execute("COMMIT").await.map_err(pg::fail)
    }

    async fn recover(&mut self) {
        if let Ok(c) = self.conn() {
            // leave no transaction open (a warning only when none is)
            let _ = c.batch_execute("ROLLBACK").await;
        }
    }

    async fn connect(&mut self) -> Res<()> {
        let mut c = TokioPostgres::connect(self.cfg).await?;
        TokioPostgres::ready(self.cfg, &mut c).await?;
        self.slot.made = Some(c);
        Ok(())
    }

    async fn disconnect(&mut self) -> Res<()> {
        // a statement lives and dies with its connection
        (self.ops.stmt, self.copy_stmt) = (None, None);
        let Some(Conn { client, task, .. }) = self.slot.made.take() else { return Ok(()) };
        drop(client);
        match task {
            Some(task) => task.await.map_err(|e| Fail::internal(format!("connection task: {e}")))?.map_err(pg::fail),
            None => Ok(()),
        }
    }

    async fn borrow(&mut self) -> Res<()> {
        let obj = self.slot.pool()?.get().await.map_err(pool_fail)?;
        // this connection's statement, from deadpool-postgres's statement cache
        let st = self.ops.st;
        match (st.kind, self.copy) {
            (Kind::Batch, Some(cp)) => self.copy_stmt = Some(obj.prepare_cached(&cp.sql).await.map_err(pg::fail)?),
            (Kind::Batch, None) => self.ops.stmt = Some(obj.prepare_cached(self.ops.sql).await.map_err(pg::fail)?),
            (Kind::Exec, _) if st.mode == Mode::Prepared => {
                self.ops.stmt = Some(obj.prepare_cached(self.ops.sql).await.map_err(pg::fail)?)
            }
            _ => {}
        }
        self.slot.lent = Some(obj);
        Ok(())
    }

    fn give_back(&mut self) {
        (self.ops.stmt, self.copy_stmt) = (None, None);
        self.slot.lent = None; // back into the pool as the Object drops, inside the operation's time
    }
}

impl Method for TokioPostgres {
    type Config = Cfg;
    type Conn = Conn;
    type Plan = Plan;
    type Pool = deadpool_postgres::Pool;
    type Client<'c> = TpClient<'c>;
    type Pause = TaskPause;

    fn hello(&self) -> Hello {
        let mut s = vec![
            ("runtime", "tokio current-thread runtime (one thread); the Connection future is a task spawned on it".into()),
            ("tls", pg::TLS_SETTING.into()),
            ("search_path", "options=-c search_path=<schema> in the startup packet".into()),
            ("read_only", pg::READ_ONLY_SETTING.into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, as simple queries)".into()),
            ("literal", "Client::simple_query of the text with values inlined: simple query protocol, text results, each value parsed by its column type (chrono/rust_decimal/std parsers); the column types are learnt before the clock by preparing the first text once (Parse+Describe+Sync, then Close)".into()),
            ("extended", "Client::query/execute(&str, params): tokio-postgres prepares a named statement every call (Parse+Describe+Sync, one round trip), then Bind+Execute+Sync (a second round trip), then sends Close+Sync when the statement drops (its reply is read behind the next request); parameters binary, typed as the server inferred them; results binary".into()),
            ("prepared", "Client::prepare once (inside the first operation's time), then query/execute(&Statement, params): Bind+Execute+Sync, one round trip; the statement is closed after the step (untimed)".into()),
            ("parameters", pg::PARAMETERS.into()),
            ("scan", "Client::query(sql, &[]): as extended (prepare + execute + close of a named statement), binary results, whole result buffered (Vec<Row>)".into()),
            ("decoding", "Row::try_get by column type: int2/int4/int8/oid → i16/i32/i64/u32, float4 → f32 then its shortest text parsed as f64 (as a text-format driver sees it), float8 → f64, numeric → rust_decimal::Decimal (scale kept), bool, text types → &str, timestamp → chrono::NaiveDateTime → µs, timestamptz → DateTime<Utc>, date → NaiveDate → days, time → NaiveTime → µs, bytea → &[u8]".into()),
            ("statement cache", "none (tokio-postgres has none)".into()),
            ("tcp", "TCP_NODELAY on; TCP keepalives on (tokio-postgres default, idle 2 h)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread".into()),
            ("under load", "C clients = C tokio tasks, all on the worker's current-thread runtime (one OS thread for every client and every connection's I/O); persistent: client 0 uses the connection from open, the others each open their own (at once, with the open query for its backend pid) before the barrier, untimed, and close it after the trial; each task waits for start_at_unix_ns on the wall clock, then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate); a task ahead of schedule sleeps on a timerfd of its own registered with tokio's reactor (tokio's timer has 1 ms granularity) until 100 µs before the intended start, then spins with yield_now (the other tasks keep running) until it; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the task then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; a prepared statement is prepared per client, in its first operation; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("load", crate::assoc::LOAD_SETTING.into()),
            ("per-request", "Config::connect(the connector of tls) with the Connection future spawned as a task, the step's statement prepared on it when the mode needs one, the operation, then the statement and client dropped and the connection task awaited (Terminate sent, socket closed): all inside the operation's time".into()),
            ("pool", format!("deadpool-postgres {} (deadpool {}): Manager::from_config(config, the connector of tls, ManagerConfig {{ recycling_method: Fast }}) (a check-out only looks at Client::is_closed, no query); Pool::builder(manager).max_size(pool_size), queue_mode Fifo, no wait/create/recycle timeouts; filled before the barrier by checking out pool_size connections at once and returning them; each operation: Pool::get, the step's statement from ClientWrapper::prepare_cached when the mode (or a batch) needs one (deadpool-postgres's per-connection statement cache: prepared once per connection, on its first use, inside that operation's time), the operation, the Object dropped back into the pool; the pool dropped after the trial (deadpool aborts the connections' tasks)", env!("ABW_V_DEADPOOL_POSTGRES"), env!("ABW_V_DEADPOOL"))),
        ];
        s.push(("batch", if self.copy { "copy".into() } else { "pipeline".into() }));
        if let Some(format) = self.copy_out {
            let why = format!("unsupported: rust-tokio-postgres/scan=copy-{format} measures scans; its statements are rust-tokio-postgres's");
            for key in ["literal", "extended", "prepared"] {
                if let Some(entry) = s.iter_mut().find(|(k, _)| *k == key) {
                    entry.1 = why.clone();
                }
            }
            if let Some(entry) = s.iter_mut().find(|(k, _)| *k == "scan") {
                entry.1 = format!("Client::copy_out of COPY (query) TO STDOUT (FORMAT {format}) (tokio-postgres prepares the COPY on every call, as its scan prepares its query), each row decoded as it arrives ({}) by the result's types, described before the clock by preparing the query once; statements with parameters that read rows: unsupported (COPY takes none)", if format == "binary" { "BinaryCopyOutStream" } else { "each line split on tabs, unescaped, every value parsed as a simple query's are" });
            }
        }
        Hello {
            driver: "tokio-postgres",
            driver_version: env!("ABW_V_TOKIO_POSTGRES").into(),
            dbms: &["postgresql"],
            batch: batch_style(self.copy).into(),
            concurrency: "async tasks (one tokio task per client, all on the worker's current-thread runtime)",
            policies: &["persistent", "per-request", "pooled"],
            sqlstate: None,
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            // a scan variant's statements are rust-tokio-postgres's
            load: self.copy_out.is_none(),
            shapes: None,
        }
    }

    /// A scan variant's statements are rust-tokio-postgres's own.
    fn modes(&self) -> &'static [&'static str] {
        if self.copy_out.is_some() {
            &[]
        } else {
            &["literal", "extended", "prepared"]
        }
    }

    fn config(&self, ep: &Endpoint) -> Res<Cfg> {
        let (pg, tls) = pg::config(ep)?;
        Ok(Cfg { pg, tls, iso: true, copy: self.copy, copy_out: self.copy_out })
    }

    const TASKS: bool = true;

    fn spawn(job: Job<Self>) -> JoinHandle<Ended<Self>> {
        tokio::spawn(job.run())
    }

    async fn connect(cfg: &Cfg) -> Res<Conn> {
        let (client, conn) = cfg.pg.connect(cfg.tls.clone()).await.map_err(pg::fail)?;
        Ok(Conn { client, conn: Some(conn), task: None })
    }

    /// The Connection future becomes a task on the runtime; DateStyle set where the server's
    /// default is not ISO.
    async fn ready(cfg: &Cfg, c: &mut Conn) -> Res<()> {
        c.task = c.conn.take().map(tokio::spawn);
        if !cfg.iso {
            c.client.batch_execute("SET DateStyle = ISO").await.map_err(pg::fail)?;
        }
        Ok(())
    }

    async fn describe(cfg: &mut Cfg, c: &mut Conn) -> Res<Described> {
        pg::describe(&mut c.client, &mut cfg.iso).await
    }

    /// Drop the client (Terminate) and wait for the connection's task to end.
    async fn close(c: Conn) {
        drop(c.client);
        if let Some(Ok(Err(e))) = match c.task {
            Some(t) => Some(t.await),
            None => None,
        } {
            eprintln!("abworker-rust: connection: {e}");
        }
    }

    async fn plan(cfg: &Cfg, c: &mut Conn, st: &Step) -> Res<Plan> {
        let copy = if cfg.copy && st.kind == Kind::Batch { Some(copy_data(st)?) } else { None };
        if cfg.copy_out.is_some() && st.kind == Kind::Exec && st.reads() {
            return Err(Fail::unsupported(
                "rust-tokio-postgres/scan=copy-… reads whole results by COPY in scans; a statement that reads rows runs on rust-tokio-postgres",
            ));
        }
        let copy_out = if let (Some(format), Kind::Scan) = (cfg.copy_out, st.kind) {
            let stmt = c.client.prepare(&st.sql).await.map_err(pg::fail)?;
            let types: Vec<Type> = stmt.columns().iter().map(|col| col.type_().clone()).collect();
            drop(stmt); // sends Close + Sync
            c.client.check_connection().await.map_err(pg::fail)?; // and waits for it, before the clock
            let cols = types.iter().map(pg::col_of).collect();
            Some(CopyOut { sql: format!("COPY ({}) TO STDOUT (FORMAT {format})", st.sql), binary: format == "binary", types, cols })
        } else {
            None
        };
        Ok(Plan { pg: pg::plan(&mut c.client, st).await?, copy, copy_out })
    }

    /// The step's pool (settings pinned: see `hello`), filled before the barrier: deadpool
    /// opens connections on demand, so all pool_size are checked out at once, then returned.
    async fn pool(cfg: &Cfg, _plan: &Plan, _st: &Step, size: usize) -> Res<deadpool_postgres::Pool> {
        let manager = deadpool_postgres::Manager::from_config(
            cfg.pg.clone(),
            cfg.tls.clone(),
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(size)
            .queue_mode(QueueMode::Fifo)
            .build()
            .map_err(|e| Fail::internal(format!("deadpool-postgres: {e}")))?;
        let objects = try_join_all((0..size).map(|_| pool.get())).await.map_err(pool_fail)?;
        if !cfg.iso {
            for o in &objects {
                o.batch_execute("SET DateStyle = ISO").await.map_err(pg::fail)?;
            }
        }
        drop(objects);
        Ok(pool)
    }

    async fn client<'c>(ctx: Ctx<'c, Self>, link: Link<'c, Self>) -> Res<TpClient<'c>> {
        Ok(TpClient {
            cfg: ctx.cfg,
            ops: Ops::new(&ctx.plan.pg, ctx.st),
            copy: ctx.plan.copy.as_ref(),
            copy_out: ctx.plan.copy_out.as_ref(),
            copy_stmt: None,
            slot: Slot::new(link),
        })
    }

    /// The step's statements were dropped (Close + Sync sent): wait until the server has
    /// answered, so that nothing of this step runs inside the next one's clock.
    async fn release(c: &mut Conn) {
        let _ = c.client.check_connection().await;
    }
}

fn batch_style(copy: bool) -> &'static str {
    if copy {
        "COPY t (cols) FROM STDIN (text format: booleans t/f, floats as their shortest round-trip text, decimals plain, dates and timestamps ISO, bytea as \\x… hex with its backslash doubled; the COPY statement prepared once, in the first group) inside a transaction per group, the group's rows as one CopyData"
    } else {
        "a transaction per group (Client::transaction: BEGIN awaited), one Transaction::execute of the prepared statement (prepared once, in the first group) per row, all rows' futures joined with try_join_all so tokio-postgres pipelines them on the connection, then COMMIT awaited"
    }
}
