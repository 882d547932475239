//! rust-tokio-postgres: tokio-postgres on a current-thread tokio runtime (async tasks; the
//! connection future is a task on the same thread).
//!
//! Settings: `batch=pipeline|copy` (default `pipeline`).

use crate::pg::{self, Col, PgParam};
use crate::protocol::{self, Sink};
use crate::step::{now_ns, Endpoint, Fail, Kind, Mode, Outcome, Res, Step};
use crate::{run_ops, Driver, Hello, Opened};
use bytes::Bytes;
use futures_util::future::try_join_all;
use futures_util::SinkExt;
use std::pin::pin;
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
        Ok(TokioPostgres { copy, rt, client: None, task: None, cfg: None, pid: None })
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
            let sql = protocol::copy_statement(&st.sql, st.nparams).map_err(Fail::unsupported)?;
            let mut data = Vec::new();
            let mut offsets = Vec::with_capacity(st.n + 1);
            for r in 0..st.n {
                offsets.push(data.len());
                protocol::copy_row(st.row(r), &mut data);
            }
            offsets.push(data.len());
            let mut cp = Copy { sql, data: Bytes::from(data), offsets, stmt: None };
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
        ];
        s.push(("batch", if self.copy { "copy".into() } else { "pipeline".into() }));
        Hello {
            driver: "tokio-postgres",
            driver_version: env!("ABW_V_TOKIO_POSTGRES").into(),
            dbms: &["postgresql"],
            batch: batch_style(self.copy).into(),
            concurrency: "async tasks (tokio current-thread runtime, one connection)",
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
}

fn batch_style(copy: bool) -> &'static str {
    if copy {
        "COPY t (cols) FROM STDIN (text format; the COPY statement prepared once, in the first group) inside a transaction per group, the group's rows as one CopyData"
    } else {
        "a transaction per group (Client::transaction: BEGIN awaited), one Transaction::execute of the prepared statement (prepared once, in the first group) per row, all rows' futures joined with try_join_all so tokio-postgres pipelines them on the connection, then COMMIT awaited"
    }
}
