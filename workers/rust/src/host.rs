//! The host: what every driver's step runs in. It owns the timed loop (the monotonic clock,
//! the latency buffer, getrusage), the verification pass and its sink, commit_every's
//! groups, the connection policies (persistent, per-request, pooled) and the steps under
//! load (the clients, the barrier, the open-loop schedule, the histograms). A driver
//! supplies operations: a `Method` (how to connect, what a step needs, its pool, how its
//! clients run at once) and a `Client` (one client's operations on its connection).
//!
//! The loops are written once, as async functions generic over the driver's `Client`; each
//! step's loop is driven to its end once by the driver's executor: a current-thread tokio
//! runtime for the async drivers (their operations run on it as they always have), a trivial
//! `block_on` for the synchronous ones (their operations are plain code in an `async fn`:
//! every await is ready at once, so the whole loop runs in one poll).

use crate::load::{ClientLoop, Load, Loaded, Pause, Policy};
use crate::protocol::Sink;
use crate::step::{latency_buffer, now_ns, rusage, Endpoint, Fail, Outcome, Res, Step, Timed};
use crate::{Hello, Opened};
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use tokio::runtime::Runtime;

/// What the untimed query at open says about the server.
pub struct Described {
    pub server_pid: Option<i64>,
    pub server_version: Option<String>,
}

/// One client of a step (the session's, or one of a loaded step's clients): its connection,
/// as the step's policy gives it, and what the step keeps on it (statements). Made by
/// `Method::client` before the clock; dropped after the step (its statements with it).
#[allow(async_fn_in_trait)]
pub trait Client {
    /// Operation i of the step (i indexes its generated arguments; a batch group for a batch
    /// step): returns the rows it read or changed. Every value it reads goes to `sink`
    /// (hashed when verifying).
    async fn op(&mut self, i: usize, sink: &mut Sink) -> Res<i64>;
    /// commit_every: BEGIN before the first operation of a group (inside its time)
    async fn tx_begin(&mut self) -> Res<()>;
    /// commit_every: COMMIT after the last operation of a group (inside its time)
    async fn tx_commit(&mut self) -> Res<()>;
    /// After a failed operation: leave no transaction open on the connection it holds.
    async fn recover(&mut self);
    /// per-request: make the operation's connection as open does (inside its time)
    async fn connect(&mut self) -> Res<()> {
        Err(Fail::unsupported("this driver has no per-request connections"))
    }
    /// per-request: close it (inside the operation's time)
    async fn disconnect(&mut self) -> Res<()> {
        Ok(())
    }
    /// pooled: borrow a connection from the step's pool (inside the operation's time)
    async fn borrow(&mut self) -> Res<()> {
        Err(Fail::unsupported("this driver has no pool"))
    }
    /// pooled: give it back (inside the operation's time)
    fn give_back(&mut self) {}
    /// After the step, on a connection of its own: release what the step made there.
    async fn end(&mut self) {}
}

/// Where a client's connection comes from, as the step's policy says.
pub enum Link<'c, M: Method> {
    /// its own for the whole step (persistent)
    Own(&'c mut M::Conn),
    /// one made and closed inside every operation's time
    PerRequest,
    /// one borrowed from the step's pool for every operation
    Pool(&'c M::Pool),
}

/// A client's connection as its policy holds it: its own (persistent), the one made for the
/// current operation (per-request), or the one borrowed for it (pooled, `L`).
pub struct Slot<'c, M: Method, L> {
    pub link: Link<'c, M>,
    pub made: Option<M::Conn>,
    pub lent: Option<L>,
}

impl<'c, M: Method, L> Slot<'c, M, L> {
    pub fn new(link: Link<'c, M>) -> Self {
        Slot { link, made: None, lent: None }
    }

    /// The connection the current operation runs on (`own` and `lent` reach the driver's
    /// connection type inside either kind).
    #[inline]
    pub fn get<T: ?Sized>(&mut self, own: fn(&mut M::Conn) -> &mut T, lent: fn(&mut L) -> &mut T) -> Res<&mut T> {
        match (&mut self.link, &mut self.made, &mut self.lent) {
            (Link::Own(c), _, _) => Ok(own(c)),
            (_, Some(c), _) => Ok(own(c)),
            (_, _, Some(l)) => Ok(lent(l)),
            _ => Err(Fail::internal("an operation without a connection")),
        }
    }

    /// The step's pool (pooled).
    pub fn pool(&self) -> Res<&'c M::Pool> {
        match self.link {
            Link::Pool(p) => Ok(p),
            _ => Err(Fail::internal("a pooled operation without a pool")),
        }
    }
}

/// What a client is made from: the connection settings, the step and its plan.
pub struct Ctx<'c, M: Method> {
    pub cfg: &'c M::Config,
    pub plan: &'c M::Plan,
    pub st: &'c Step,
}

/// An access method: how to connect, what a step needs, its pool, and how its clients run.
#[allow(async_fn_in_trait)]
pub trait Method: Sized + 'static {
    /// how to connect (from the endpoint, with what open learnt) and the method's settings
    type Config: Clone + Send + Sync + 'static;
    /// one connection
    type Conn: Send + 'static;
    /// what a step needs, made once before the clock and shared by its clients
    type Plan: Send + Sync + 'static;
    /// the pool of a pooled step
    type Pool: Send + Sync + 'static;
    /// one client of a step
    type Client<'c>: Client
    where
        Self: 'c;
    /// how a client of a loaded step waits (the barrier, an open loop's intended starts):
    /// `TaskPause` for a driver with `TASKS`, `ThreadPause` for the others
    type Pause: Pause;

    fn hello(&self) -> Hello;
    /// `capabilities.modes`: the exec modes it has (and `record` where it reads records
    /// without SQL: MariaDB's HANDLER); a step in another mode is answered `unsupported`.
    fn modes(&self) -> &'static [&'static str] {
        &["literal", "extended", "prepared"]
    }
    fn config(&self, ep: &Endpoint) -> Res<Self::Config>;
    /// The driver's executor. true: an async driver, whose every step runs on a
    /// current-thread tokio runtime the host makes for it, and whose clients under load are
    /// tokio tasks on that runtime (`spawn`). false: a synchronous driver, whose steps run
    /// in a trivial `block_on` and whose clients under load are OS threads.
    const TASKS: bool = false;
    /// Tasks only: spawns one client's job on the runtime. Written in each async driver,
    /// where the compiler sees that its futures are Send: `tokio::spawn(job.run())`.
    fn spawn(_job: Job<Self>) -> tokio::task::JoinHandle<Ended<Self>> {
        unreachable!("a driver whose clients are threads spawns no tasks")
    }

    /// Connects (startup, authentication): what open times as `connect_ns`.
    async fn connect(cfg: &Self::Config) -> Res<Self::Conn>;
    /// Readies a connection just made (untimed at open; per request inside the operation's
    /// time): what the driver does on every new connection.
    async fn ready(_cfg: &Self::Config, _c: &mut Self::Conn) -> Res<()> {
        Ok(())
    }
    /// The untimed query at open (and for each other persistent client of a loaded step):
    /// the backend, the version, and what the connections need (recorded in `cfg`).
    async fn describe(cfg: &mut Self::Config, c: &mut Self::Conn) -> Res<Described>;
    async fn close(c: Self::Conn);
    /// The backends of the other connections a connection of the method holds beside its
    /// own (a layer that keeps one connection per statement mode): reported with each step,
    /// so that the runner reads the CPU of every backend that may serve it.
    fn side_pids(_c: &Self::Conn) -> Vec<i64> {
        Vec::new()
    }
    /// What the step needs, made before the clock on the session's connection.
    async fn plan(cfg: &Self::Config, c: &mut Self::Conn, st: &Step) -> Res<Self::Plan>;
    /// A layer's plan that runs the statement through its raw-SQL API rather than its
    /// builder: `Some("raw")`, answered with the step (PROTOCOL.md, step: `api`).
    fn api(_plan: &Self::Plan) -> Option<&'static str> {
        None
    }
    /// The step's pool, filled before the clock.
    async fn pool(_cfg: &Self::Config, _plan: &Self::Plan, _st: &Step, _size: usize) -> Res<Self::Pool> {
        Err(Fail::unsupported("this driver has no pool"))
    }
    async fn close_pool(_p: Self::Pool) {}
    /// One client of the step on its connection; what it prepares here is untimed.
    async fn client<'c>(ctx: Ctx<'c, Self>, link: Link<'c, Self>) -> Res<Self::Client<'c>>;
    /// After the step, on the session's connection (untimed): wait until what the step
    /// closed has been answered.
    async fn release(_c: &mut Self::Conn) {}
}

/// A trivial executor for synchronous drivers: their futures never wait, so the first poll
/// completes them.
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

// ---- the loops ---------------------------------------------------------------------------------

/// Operation i with commit_every's BEGIN before the first operation of a group and COMMIT
/// after its last (or after the step's last operation), all inside the operation's time.
#[inline]
async fn grouped<C: Client>(c: &mut C, st: &Step, i: usize, sink: &mut Sink) -> Res<i64> {
    if st.begins(i) {
        c.tx_begin().await?;
    }
    let n = c.op(i, sink).await?;
    if st.commits(i) {
        c.tx_commit().await?;
    }
    Ok(n)
}

/// Operation i under the step's connection policy: per request inside a connection made
/// and closed for it, pooled on a connection borrowed for it (all inside its time).
#[inline]
async fn under<C: Client>(c: &mut C, policy: Policy, st: &Step, i: usize, sink: &mut Sink) -> Res<i64> {
    match policy {
        Policy::Persistent => grouped(c, st, i, sink).await,
        Policy::PerRequest => {
            c.connect().await?;
            let r = c.op(i, sink).await;
            let closed = c.disconnect().await;
            let n = r?;
            closed?;
            Ok(n)
        }
        Policy::Pooled => {
            c.borrow().await?;
            let r = c.op(i, sink).await;
            if r.is_err() {
                c.recover().await; // rolled back before the connection goes back to the pool
            }
            c.give_back();
            r
        }
    }
}

/// The verification pass: untimed except for its first operation (the cold start), every
/// row hashed into the sink (and the first `dump` rows written out as typed values).
async fn verify_pass<C: Client>(c: &mut C, policy: Policy, st: &Step) -> Res<Outcome> {
    let mut sink = Sink::new(true).dumping(st.dump);
    let mut rows = 0i64;
    let start = now_ns();
    let mut first = 0u64;
    for i in 0..st.nops {
        let count = under(c, policy, st, i, &mut sink).await?;
        if i == 0 {
            first = now_ns() - start;
        }
        rows += count;
    }
    Ok(Outcome { n: st.nops, rows, first_ns: first, reads: st.reads(), sink, timed: None, api: None })
}

/// The timed pass: the monotonic clock read once before the loop and once after each
/// operation, getrusage around the loop, the latency buffer allocated and touched before.
async fn timed_pass<C: Client>(c: &mut C, st: &Step) -> Res<Outcome> {
    let nops = st.nops;
    let mut sink = Sink::new(false);
    let mut rows = 0i64;
    let mut lat = latency_buffer(nops);
    let before = rusage();
    let start = now_ns();
    let mut prev = start;
    for (i, latency) in lat.iter_mut().enumerate() {
        let count = grouped(c, st, i, &mut sink).await?;
        let now = now_ns();
        *latency = now - prev;
        prev = now;
        rows += count;
    }
    let after = rusage();
    Ok(Outcome {
        n: nops,
        rows,
        first_ns: lat.first().copied().unwrap_or(0),
        reads: st.reads(),
        sink,
        timed: Some(Timed { elapsed_ns: prev - start, user_ns: after.0 - before.0, sys_ns: after.1 - before.1, lat }),
        api: None,
    })
}

/// One client's loop under load: it waits (untimed) for the barrier, then reads the
/// monotonic clock once before the loop and once after each operation; with a schedule,
/// each operation waits for its intended start and its latency counts from there, and by
/// duration (open or closed) the loop runs while the previous operation ended before the
/// end: an open-loop client starts no operation whose intended start is at or after the
/// end, then waits (untimed) for the end, its elapsed running to then; one still behind
/// schedule when the end has passed counts the arrivals due before the end that it never
/// started as skipped. Returns whether a commit_every group is still open.
async fn client_loop<C: Client, P: Pause>(
    c: &mut C,
    pause: &P,
    cl: &mut ClientLoop,
    policy: Policy,
    st: &Step,
    sink: &mut Sink,
) -> Res<bool> {
    if let Some(at) = cl.start_at_unix_ns {
        pause.until_unix(at).await;
    }
    let start = now_ns();
    let mut prev = start;
    let stop = cl.duration_ns.map(|d| start + d);
    let count = cl.count as u64;
    let phase = cl.phase_ns;
    let mut i: u64 = 0;
    let mut open_group = false;
    while count > 0 && stop.map_or(i < count, |s| prev < s) {
        let j = (i % count) as usize;
        let intended = cl.schedule.as_mut().map(|s| start + phase + s.next());
        let latency;
        if let Some(intended) = intended {
            if stop.is_some_and(|s| intended >= s) {
                break; // the arrivals are over; the trial is not
            }
            let now = now_ns();
            if now < intended {
                pause.until(intended).await;
            } else if cl.skip_ns.is_some_and(|s| now - intended > s) {
                cl.skipped += 1;
                i += 1;
                continue;
            } else if now - intended > cl.late_ns {
                cl.late += 1;
            }
            let rows = under(c, policy, st, j, sink).await?;
            let now = now_ns();
            latency = now - intended;
            cl.rows += rows;
            prev = now;
        } else {
            let rows = under(c, policy, st, j, sink).await?;
            let now = now_ns();
            latency = now - prev;
            cl.rows += rows;
            prev = now;
        }
        open_group = st.commit_every > 0 && !st.commits(j);
        cl.hist.record(latency);
        if i == cl.skipped {
            cl.first_op_ns = latency; // the client's first operation that ran
        }
        i += 1;
    }
    if let Some(s) = stop.filter(|_| cl.schedule.is_some()) {
        if prev < s {
            // an open loop lasts its duration (PROTOCOL.md): idle, untimed, until it has passed
            pause.idle_until(s).await;
            prev = s;
        } else if let Some(sched) = cl.schedule.as_mut() {
            // behind schedule at the end: the arrivals due before it that never started
            while start + phase + sched.next() < s {
                cl.skipped += 1;
                i += 1;
            }
        }
    }
    cl.n = i - cl.skipped;
    cl.start_ns = start;
    cl.elapsed_ns = prev - start;
    Ok(open_group)
}

// ---- a loaded step's clients --------------------------------------------------------------------

/// A connection as a loaded step's client holds it, owned (so that a task can hold it).
pub enum Held<M: Method> {
    Own(M::Conn),
    PerRequest,
    Pool(Arc<M::Pool>),
}

/// One client of a loaded step, with everything it uses: made before the barrier, run on a
/// thread or a task of its own (`run`), its connection given back at the end. It owns
/// what it uses, so that a task (which must be 'static) can hold it.
pub struct Job<M: Method> {
    cfg: Arc<M::Config>,
    plan: Arc<M::Plan>,
    st: Arc<Step>,
    held: Held<M>,
    cl: ClientLoop,
    policy: Policy,
}

/// What a client measured, and its own connection back.
pub struct Ended<M: Method> {
    result: Res<ClientLoop>,
    conn: Option<M::Conn>,
}

impl<M: Method> Job<M> {
    /// The client: made (its statements, untimed), its loop, then on its own connection
    /// the rollback after an error or the COMMIT of a group the duration cut short (untimed).
    pub async fn run(self) -> Ended<M> {
        let Job { cfg, plan, st, mut held, mut cl, policy } = self;
        let result = async {
            let pause = M::Pause::new()?;
            let link = match &mut held {
                Held::Own(c) => Link::Own(c),
                Held::PerRequest => Link::PerRequest,
                Held::Pool(p) => Link::Pool(&**p),
            };
            let mut c = M::client(Ctx { cfg: &cfg, plan: &plan, st: &st }, link).await?;
            let mut sink = Sink::new(false);
            let r = client_loop(&mut c, &pause, &mut cl, policy, &st, &mut sink).await;
            match r {
                Err(_) => c.recover().await,
                Ok(true) => {
                    let _ = c.tx_commit().await;
                }
                Ok(false) => {}
            }
            c.end().await;
            cl.ncols = sink.ncols;
            r.map(|_| ())
        }
        .await;
        let conn = match held {
            Held::Own(c) => Some(c),
            _ => None,
        };
        Ended { result: result.map(|_| cl), conn }
    }
}

// ---- the session's driver ----------------------------------------------------------------------

/// A method as the session sees it (main.rs): one per worker process.
pub trait Driver {
    fn hello(&self) -> Hello;
    fn modes(&self) -> &'static [&'static str];
    fn open(&mut self, ep: &Endpoint) -> Res<Opened>;
    fn close(&mut self);
    /// The backends serving the session: its connection's, and those of the other
    /// connections it holds (`Method::side_pids`).
    fn server_pids(&self) -> Vec<i64>;
    /// A plain step: the timed pass, or the verification pass (one client, its connection
    /// as `policy` says).
    fn step(&mut self, st: &Step, policy: Policy, pool_size: usize) -> Res<Outcome>;
    /// A step under load: `load.clients` clients at once.
    fn load(&mut self, st: &Arc<Step>, load: &Load) -> Res<Loaded>;
}

/// CPU time in ns: (user, sys).
type Cpu = (u64, u64);

/// The host of one method: its executor, the session's connection and what open learnt.
pub struct Host<M: Method> {
    m: M,
    /// the current-thread runtime of an async driver (`Method::TASKS`)
    rt: Option<Runtime>,
    cfg: Option<Arc<M::Config>>,
    conn: Option<M::Conn>,
    ep: Option<Endpoint>,
    pid: Option<i64>,
}

impl<M: Method> Host<M> {
    pub fn new(m: M) -> Result<Host<M>, String> {
        let rt = match M::TASKS {
            true => Some(tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?),
            false => None,
        };
        Ok(Host { m, rt, cfg: None, conn: None, ep: None, pid: None })
    }

    /// Runs a future to its end on the driver's executor: once per step, the whole loop.
    fn block_on<F: Future>(rt: &Option<Runtime>, f: F) -> F::Output {
        match rt {
            Some(rt) => rt.block_on(f),
            None => block_on(f),
        }
    }

    /// What open made: the connection settings and the session's connection.
    fn opened<'a>(cfg: &Option<Arc<M::Config>>, conn: &'a mut Option<M::Conn>) -> Res<(Arc<M::Config>, &'a mut M::Conn)> {
        match (cfg, conn.as_mut()) {
            (Some(cfg), Some(conn)) => Ok((cfg.clone(), conn)),
            _ => Err(Fail::protocol("step before open")),
        }
    }

    /// The other persistent clients' connections, opened at once before the barrier
    /// (untimed), each with its backend.
    fn connect_clients(&self, cfg: &M::Config, n: usize) -> Res<Vec<(M::Conn, Option<i64>)>> {
        let one = || async {
            let mut cfg = cfg.clone();
            let mut c = M::connect(&cfg).await?;
            M::ready(&cfg, &mut c).await?;
            let d = M::describe(&mut cfg, &mut c).await?;
            Ok((c, d.server_pid))
        };
        match &self.rt {
            Some(rt) => rt.block_on(futures_util::future::try_join_all((0..n).map(|_| one()))),
            None => std::thread::scope(|s| {
                let handles: Vec<_> = (0..n).map(|_| s.spawn(|| block_on(one()))).collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Fail::internal("a client thread panicked")))).collect()
            }),
        }
    }

    /// After a loaded step's clients (untimed): the session's connection back from client 0
    /// (or opened again if its client died with it), the other clients' connections closed,
    /// the pool closed, what the step closed answered. Returns what each client measured.
    fn wind_up(&mut self, ended: Vec<Ended<M>>, pool: Option<Arc<M::Pool>>) -> Vec<Res<ClientLoop>> {
        let mut results = Vec::with_capacity(ended.len());
        let mut others = Vec::new();
        for (k, e) in ended.into_iter().enumerate() {
            results.push(e.result);
            match e.conn {
                Some(c) if k == 0 => self.conn = Some(c),
                Some(c) => others.push(c),
                None => {}
            }
        }
        Self::block_on(&self.rt, async {
            for c in others {
                M::close(c).await; // each sends its Terminate / COM_QUIT
            }
            if let Some(p) = pool.and_then(Arc::into_inner) {
                M::close_pool(p).await;
            }
        });
        match self.conn.as_mut() {
            Some(c) => Self::block_on(&self.rt, M::release(c)),
            None => {
                let ep = self.ep.clone().expect("opened");
                if let Err(e) = self.open(&ep) {
                    eprintln!("abworker-rust: reopen after a failed loaded step: {}", e.message);
                }
            }
        }
        results
    }

    /// Every job at once; the CPU of the whole process (user, sys) while they ran.
    fn run_jobs(&self, jobs: Vec<Job<M>>) -> (Vec<Ended<M>>, Cpu) {
        let lost = |why: String| Ended::<M> { result: Err(Fail::internal(why)), conn: None };
        match &self.rt {
            Some(rt) => rt.block_on(async {
                let before = rusage();
                let handles: Vec<_> = jobs.into_iter().map(M::spawn).collect();
                let joined = futures_util::future::join_all(handles).await;
                let after = rusage();
                let ended =
                    joined.into_iter().enumerate().map(|(k, j)| j.unwrap_or_else(|e| lost(format!("client task {k}: {e}")))).collect();
                (ended, (after.0 - before.0, after.1 - before.1))
            }),
            None => {
                let before = rusage();
                let ended = std::thread::scope(|s| {
                    let handles: Vec<_> = jobs
                        .into_iter()
                        .map(|job| {
                            let run = move || block_on(job.run());
                            s.spawn(run)
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap_or_else(|_| lost("a client thread panicked".into()))).collect()
                });
                let after = rusage();
                (ended, (after.0 - before.0, after.1 - before.1))
            }
        }
    }
}

impl<M: Method> Driver for Host<M> {
    fn hello(&self) -> Hello {
        self.m.hello()
    }

    fn modes(&self) -> &'static [&'static str] {
        self.m.modes()
    }

    fn open(&mut self, ep: &Endpoint) -> Res<Opened> {
        let mut cfg = self.m.config(ep)?;
        let start = now_ns();
        let mut conn = Self::block_on(&self.rt, M::connect(&cfg))?;
        let connect_ns = now_ns() - start;
        let d = Self::block_on(&self.rt, async {
            M::ready(&cfg, &mut conn).await?;
            M::describe(&mut cfg, &mut conn).await
        })?;
        self.cfg = Some(Arc::new(cfg));
        self.conn = Some(conn);
        self.ep = Some(ep.clone());
        self.pid = d.server_pid;
        Ok(Opened { connect_ns, server_pid: d.server_pid, server_version: d.server_version })
    }

    fn close(&mut self) {
        if let Some(c) = self.conn.take() {
            Self::block_on(&self.rt, M::close(c));
        }
        self.pid = None;
    }

    fn server_pids(&self) -> Vec<i64> {
        let side = self.conn.as_ref().map(M::side_pids).unwrap_or_default();
        self.pid.into_iter().chain(side).collect()
    }

    fn step(&mut self, st: &Step, policy: Policy, pool_size: usize) -> Res<Outcome> {
        let (cfg, conn) = Self::opened(&self.cfg, &mut self.conn)?;
        Self::block_on(&self.rt, async {
            let plan = M::plan(&cfg, conn, st).await?;
            let pool = match policy {
                Policy::Pooled => Some(M::pool(&cfg, &plan, st, pool_size).await?),
                _ => None,
            };
            let r = async {
                let link = match &pool {
                    Some(p) => Link::Pool(p),
                    None if policy == Policy::PerRequest => Link::PerRequest,
                    None => Link::Own(&mut *conn),
                };
                let mut c = M::client(Ctx { cfg: &cfg, plan: &plan, st }, link).await?;
                let r = if st.verify { verify_pass(&mut c, policy, st).await } else { timed_pass(&mut c, st).await };
                if r.is_err() {
                    c.recover().await;
                }
                c.end().await;
                r
            }
            .await;
            if let Some(p) = pool {
                M::close_pool(p).await;
            }
            M::release(conn).await;
            r.map(|o| Outcome { api: M::api(&plan), ..o })
        })
    }

    fn load(&mut self, st: &Arc<Step>, load: &Load) -> Res<Loaded> {
        let plan = {
            let (cfg, conn) = Self::opened(&self.cfg, &mut self.conn)?;
            Self::block_on(&self.rt, M::plan(&cfg, conn, st))?
        };
        let (plan, cfg) = (Arc::new(plan), self.cfg.clone().expect("opened"));
        let (mut extra, mut pool) = (Vec::new(), None);
        match load.policy {
            Policy::Persistent => extra = self.connect_clients(&cfg, load.clients - 1)?,
            Policy::PerRequest => {}
            Policy::Pooled => pool = Some(Arc::new(Self::block_on(&self.rt, M::pool(&cfg, &plan, st, load.pool_size))?)),
        }
        let mut server_pids = Vec::new();
        if load.policy == Policy::Persistent {
            server_pids = self.server_pids();
            server_pids.extend(extra.iter().flat_map(|x| x.1.into_iter().chain(M::side_pids(&x.0))));
        }
        let session = self.conn.take().expect("opened");
        let mut own = std::iter::once(session).chain(extra.into_iter().map(|x| x.0));
        let jobs: Vec<Job<M>> = (0..load.clients)
            .map(|k| Job {
                cfg: cfg.clone(),
                plan: plan.clone(),
                st: st.clone(),
                held: match &pool {
                    Some(p) => Held::Pool(p.clone()),
                    None if load.policy == Policy::PerRequest => Held::PerRequest,
                    None => Held::Own(own.next().expect("a connection per client")),
                },
                cl: load.client(k, st.nops),
                policy: load.policy,
            })
            .collect();
        // per-request and pooled: the session's connection waits for the step's end
        self.conn = own.next();
        let (ended, (user_ns, sys_ns)) = self.run_jobs(jobs);
        let results = self.wind_up(ended, pool);
        let clients = results.into_iter().collect::<Res<Vec<_>>>()?;
        Ok(Loaded { clients, reads: st.reads(), user_ns, sys_ns, server_pids, api: M::api(&plan) })
    }
}

// ---- r2d2 -------------------------------------------------------------------------------------

/// r2d2's own default, pinned: how long Pool::build and Pool::get wait for a connection.
pub const R2D2_TIMEOUT_S: u64 = 30;

/// An r2d2 pool of a pooled step (rust-postgres, rust-rusqlite), filled before the barrier:
/// max_size = min_idle = size (build() waits until all are open), no test on check-out, no
/// lifetime or idle limits.
pub fn r2d2_pool<C: r2d2::ManageConnection>(manager: C, size: usize) -> Res<r2d2::Pool<C>> {
    r2d2::Pool::builder()
        .max_size(size as u32)
        .min_idle(Some(size as u32))
        .test_on_check_out(false)
        .max_lifetime(None)
        .idle_timeout(None)
        .connection_timeout(std::time::Duration::from_secs(R2D2_TIMEOUT_S))
        .build(manager)
        .map_err(|e| Fail::db(format!("r2d2 pool: {e}"), None))
}
