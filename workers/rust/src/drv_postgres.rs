//! rust-postgres: the synchronous `postgres` crate (a blocking API over tokio-postgres: each
//! connection owns a current-thread tokio runtime that every call blocks on, on the
//! calling thread). No settings. Under load: one OS thread per client; pooled = r2d2 with
//! r2d2_postgres's manager.

use crate::host::{self, Client, Ctx, Described, Link, Method, Slot, R2D2_TIMEOUT_S};
use crate::load::ThreadPause;
use crate::pg::{self, Calls, Ops, P};
use crate::protocol::Sink;
use crate::step::{Endpoint, Fail, Kind, Res, Step};
use crate::Hello;
use postgres::{Config, Row, SimpleQueryMessage, Statement, ToStatement};
use r2d2::PooledConnection;
use r2d2_postgres::PostgresConnectionManager;


pub struct Postgres;

impl Postgres {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        if let Some((k, v)) = settings.first() {
            return Err(format!("rust-postgres has no setting {k}={v}"));
        }
        Ok(Postgres)
    }
}

#[derive(Clone)]
pub struct Cfg {
    pg: Config,
    /// the connector (pg::tls): built once at open, cloned into every connect
    tls: pg::Tls,
    /// the server's default DateStyle is ISO (else every connection sets it, as open does)
    iso: bool,
}

impl Calls for postgres::Client {
    async fn simple_query(&mut self, sql: &str) -> Result<Vec<SimpleQueryMessage>, postgres::Error> {
        postgres::Client::simple_query(self, sql)
    }
    async fn query<T: ?Sized + ToStatement + Sync>(&mut self, q: &T, p: &[P<'_>]) -> Result<Vec<Row>, postgres::Error> {
        postgres::Client::query(self, q, p)
    }
    async fn execute<T: ?Sized + ToStatement + Sync>(&mut self, q: &T, p: &[P<'_>]) -> Result<u64, postgres::Error> {
        postgres::Client::execute(self, q, p)
    }
    async fn prepare(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        postgres::Client::prepare(self, sql)
    }
    async fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        postgres::Client::batch_execute(self, sql)
    }
    async fn check_connection(&mut self) -> Result<(), postgres::Error> {
        postgres::Client::check_connection(self)
    }
}

fn connect_once(cfg: &Config, tls: &pg::Tls) -> Res<i64> {
    let client = cfg.connect(tls.clone()).map_err(pg::fail)?;
    client.close().map_err(pg::fail)?;
    Ok(0)
}

/// A batch group: Client::transaction (BEGIN), one Transaction::execute of the prepared
/// statement (prepared in the first group) per row, each a round trip, then COMMIT.
fn batch_group(c: &mut postgres::Client, ops: &mut Ops<'_>, g: usize) -> Res<i64> {
    let mut tx = c.transaction().map_err(pg::fail)?;
    if ops.stmt.is_none() {
        ops.stmt = Some(tx.prepare(ops.sql).map_err(pg::fail)?);
    }
    let s = ops.stmt.as_ref().unwrap();
    let rows = ops.st.group(g);
    let n = rows.len() as i64;
    for r in rows {
        tx.execute(s, ops.row(r)).map_err(pg::fail)?;
    }
    tx.commit().map_err(pg::fail)?;
    Ok(n)
}

/// A pooled connection with the statement the step prepared on it: r2d2 keeps nothing per
/// connection and the postgres crate has no statement cache, so the connection carries it,
/// and the prepared mode prepares once per connection (on its first use), as the statement
/// caches of deadpool-postgres and sqlx do.
pub struct PooledPg {
    client: postgres::Client,
    stmt: Option<Statement>,
}

/// r2d2_postgres's manager, making `PooledPg`s (and setting DateStyle where open had to).
pub struct Manager {
    inner: PostgresConnectionManager<pg::Tls>,
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

pub struct PgClient<'c> {
    cfg: &'c Cfg,
    ops: Ops<'c>,
    slot: Slot<'c, Postgres, PooledConnection<Manager>>,
}

impl PgClient<'_> {
    fn conn(&mut self) -> Res<&mut postgres::Client> {
        self.slot.get(|c| c, |pc| &mut pc.client)
    }
}

impl Client for PgClient<'_> {
    async fn op(&mut self, i: usize, sink: &mut Sink) -> Res<i64> {
        let st = self.ops.st;
        if st.kind == Kind::Connect {
            return connect_once(&self.cfg.pg, &self.cfg.tls);
        }
        let c = self.slot.get(|c| c, |pc| &mut pc.client)?;
        match st.kind {
            Kind::Scan => self.ops.scan(c, sink).await,
            Kind::Batch => batch_group(c, &mut self.ops, i),
            Kind::Load => self.ops.load(c, i, sink).await,
            _ => self.ops.exec(c, i, sink).await,
        }
    }

    async fn tx_begin(&mut self) -> Res<()> {
        self.conn()?.batch_execute("BEGIN").map_err(pg::fail)
    }

    async fn tx_commit(&mut self) -> Res<()> {
        self.conn()?.batch_execute("COMMIT").map_err(pg::fail)
    }

    async fn recover(&mut self) {
        if let Ok(c) = self.conn() {
            let _ = c.batch_execute("ROLLBACK");
        }
    }

    async fn connect(&mut self) -> Res<()> {
        let mut c = Postgres::connect(self.cfg).await?;
        Postgres::ready(self.cfg, &mut c).await?;
        self.slot.made = Some(c);
        Ok(())
    }

    async fn disconnect(&mut self) -> Res<()> {
        self.ops.stmt = None; // a statement lives and dies with its connection
        match self.slot.made.take() {
            Some(c) => c.close().map_err(pg::fail),
            None => Ok(()),
        }
    }

    async fn borrow(&mut self) -> Res<()> {
        let mut pc = self.slot.pool()?.get().map_err(|e| Fail::db(format!("r2d2 pool: {e}"), None))?;
        std::mem::swap(&mut self.ops.stmt, &mut pc.stmt); // this connection's statement, if any
        self.slot.lent = Some(pc);
        Ok(())
    }

    fn give_back(&mut self) {
        if let Some(mut pc) = self.slot.lent.take() {
            std::mem::swap(&mut self.ops.stmt, &mut pc.stmt);
        } // the connection goes back to the pool as it drops, inside the operation's time
    }
}

impl Method for Postgres {
    type Config = Cfg;
    type Conn = postgres::Client;
    type Plan = pg::Plan;
    type Pool = r2d2::Pool<Manager>;
    type Client<'c> = PgClient<'c>;
    type Pause = ThreadPause;

    fn hello(&self) -> Hello {
        let s: Vec<(&str, String)> = vec![
            ("runtime", "blocking calls; the crate drives each connection on its own current-thread tokio runtime, on the calling thread".into()),
            ("tls", pg::TLS_SETTING.into()),
            ("search_path", "options=-c search_path=<schema> in the startup packet".into()),
            ("read_only", pg::READ_ONLY_SETTING.into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, as simple queries)".into()),
            ("literal", "Client::simple_query of the text with values inlined: simple query protocol, text results, each value parsed by its column type; the column types are learnt before the clock by preparing the first text once (then closed)".into()),
            ("extended", "Client::query/execute(&str, params): a named statement prepared every call (Parse+Describe+Sync, one round trip), Bind+Execute+Sync (a second), Close+Sync sent when it drops (read behind the next request); parameters binary, typed as the server inferred them; results binary".into()),
            ("prepared", "Client::prepare once (inside the first operation's time), then query/execute(&Statement, params): one round trip each; closed after the step (untimed)".into()),
            ("parameters", pg::PARAMETERS.into()),
            ("scan", "Client::query(sql, &[]): as extended, binary results, whole result buffered (Vec<Row>)".into()),
            ("decoding", "as rust-tokio-postgres: Row::try_get by column type (i16/i32/i64, f32 via its shortest text → f64, f64, rust_decimal::Decimal, bool, &str, chrono NaiveDateTime/NaiveDate/NaiveTime → µs/days/µs, &[u8])".into()),
            ("statement cache", "none (the crate has none)".into()),
            ("tcp", "TCP_NODELAY on; TCP keepalives on (tokio-postgres default, idle 2 h)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread (under load: every client's thread)".into()),
            ("under load", "C clients = C OS threads (std::thread::scope), each blocking on its own connection; persistent: client 0 uses the connection from open, the others each open their own (in parallel, with the open query for its backend pid) before the barrier, untimed, and close it after the trial; each thread waits for start_at_unix_ns on the wall clock (sleep, then spin the last 100 µs), then reads CLOCK_MONOTONIC; open loop: uniform arrivals dealt to the clients in turn (client k's stream starts at phase_ns + k / rate), sleep until 100 µs before the intended start, then spin; by duration the loop runs while the previous operation ended before the end: no operation starts at or after the end, the client then sleeps (untimed) until it, and one still behind schedule at the end stops there and counts the arrivals due before it that it never started as skipped; a prepared statement is prepared per client, in its first operation; latencies into a per-client fixed-array histogram, merged after the trial".into()),
            ("load", crate::assoc::LOAD_SETTING.into()),
            ("per-request", "Config::connect(the connector of tls) (its own current-thread tokio runtime, startup, authentication), the step's statement prepared on it when the mode needs one, the operation, Client::close (Terminate, waits for the connection to end): all inside the operation's time".into()),
            ("pool", format!("r2d2 {} with r2d2_postgres {}'s PostgresConnectionManager(config, the connector of tls), wrapped so that each pooled connection keeps the step's prepared statement (prepared once per connection, on its first use, inside that operation's time: the postgres crate has no statement cache); Pool::builder().max_size(pool_size).min_idle(Some(pool_size)): build() waits until all pool_size connections are open, before the barrier; test_on_check_out(false) (no is_valid query per check-out), max_lifetime(None), idle_timeout(None), connection_timeout({R2D2_TIMEOUT_S} s); each operation: Pool::get, the operation, the PooledConnection dropped back (has_broken = Client::is_closed); the pool dropped after the trial", env!("ABW_V_R2D2"), env!("ABW_V_R2D2_POSTGRES"))),
        ];
        Hello {
            driver: "postgres",
            driver_version: format!("{} (tokio-postgres {})", env!("ABW_V_POSTGRES"), env!("ABW_V_TOKIO_POSTGRES")),
            dbms: &["postgresql"],
            batch: "a transaction per group (Client::transaction), one Transaction::execute of the prepared statement (prepared once, in the first group) per row, each awaited in turn (the blocking API cannot pipeline), then COMMIT".into(),
            concurrency: "threads (one OS thread per client, each blocking on its own connection)",
            policies: &["persistent", "per-request", "pooled"],
            sqlstate: None,
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            load: true,
            shapes: None,
        }
    }

    fn config(&self, ep: &Endpoint) -> Res<Cfg> {
        let (pg, tls) = pg::config(ep)?;
        Ok(Cfg { pg: pg.into(), tls, iso: true })
    }

    async fn connect(cfg: &Cfg) -> Res<postgres::Client> {
        cfg.pg.connect(cfg.tls.clone()).map_err(pg::fail)
    }

    /// DateStyle set where the server's default is not ISO, as open does.
    async fn ready(cfg: &Cfg, c: &mut postgres::Client) -> Res<()> {
        if !cfg.iso {
            c.batch_execute("SET DateStyle = ISO").map_err(pg::fail)?;
        }
        Ok(())
    }

    async fn describe(cfg: &mut Cfg, c: &mut postgres::Client) -> Res<Described> {
        pg::describe(c, &mut cfg.iso).await
    }

    async fn close(c: postgres::Client) {
        if let Err(e) = c.close() {
            eprintln!("abworker-rust: close: {e}");
        }
    }

    async fn plan(_cfg: &Cfg, c: &mut postgres::Client, st: &Step) -> Res<pg::Plan> {
        pg::plan(c, st).await
    }

    /// The step's pool, filled before the barrier (settings pinned: see `hello`).
    async fn pool(cfg: &Cfg, _plan: &pg::Plan, _st: &Step, size: usize) -> Res<r2d2::Pool<Manager>> {
        host::r2d2_pool(Manager { inner: PostgresConnectionManager::new(cfg.pg.clone(), cfg.tls.clone()), iso: cfg.iso }, size)
    }

    async fn client<'c>(ctx: Ctx<'c, Self>, link: Link<'c, Self>) -> Res<PgClient<'c>> {
        Ok(PgClient { cfg: ctx.cfg, ops: Ops::new(ctx.plan, ctx.st), slot: Slot::new(link) })
    }

    /// The statements closed at the end of the step: wait for the server's answer.
    async fn release(c: &mut postgres::Client) {
        let _ = c.check_connection();
    }
}
