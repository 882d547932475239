//! rust-postgres: the synchronous `postgres` crate (a blocking API over tokio-postgres: each
//! connection owns a current-thread tokio runtime that every call blocks on, on the
//! calling thread). No settings.

use crate::pg::{self, Col, PgParam};
use crate::protocol::{self, Sink};
use crate::step::{now_ns, Endpoint, Fail, Kind, Mode, Outcome, Res, Step};
use crate::{run_ops, Driver, Hello, Opened};
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Statement};

pub struct Postgres {
    client: Option<Client>,
    cfg: Option<Config>,
    pid: Option<i64>,
}

impl Postgres {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        if let Some((k, v)) = settings.first() {
            return Err(format!("rust-postgres has no setting {k}={v}"));
        }
        Ok(Postgres { client: None, cfg: None, pid: None })
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
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread".into()),
        ];
        Hello {
            driver: "postgres",
            driver_version: format!("{} (tokio-postgres {})", env!("ABW_V_POSTGRES"), env!("ABW_V_TOKIO_POSTGRES")),
            dbms: &["postgresql"],
            batch: "a transaction per group (Client::transaction), one Transaction::execute of the prepared statement (prepared once, in the first group) per row, each awaited in turn (the blocking API cannot pipeline), then COMMIT".into(),
            concurrency: "threads (blocking API; one connection on the calling thread)",
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
}
