//! Steps under load (protocol/PROTOCOL.md, "Steps under load"), as the Python reference
//! (src/accessbench/pyworker/load.py, src/accessbench/protocol/{histogram,schedule}.py):
//! the load fields of a step, the latency histogram, the arrival schedule and how a client
//! waits. The loop each client runs is the host's (`host::client_loop`): by count or by
//! duration, closed loop or open loop at a rate, every latency into the client's own
//! histogram, all clients starting at the wall-clock barrier `start_at_unix_ns`.
//!
//! Closed loop: operation i's latency runs from the end of operation i−1 to its own end, as
//! in the plain loop. Open loop: from operation i's *intended* start to its end, so a stall
//! that delays later operations shows in their latency (no coordinated omission); one that
//! starts more than `late_ns` after its intended time counts as late, one that would start
//! more than `skip_ns` late is skipped (pgbench -R --latency-limit). Uniform arrivals are
//! dealt to the clients in turn, after the worker's `phase_ns`; an open loop by duration
//! lasts its duration: a client starts no operation whose intended start is at or after it,
//! then waits, idle and untimed, until it has passed; a client still behind schedule when it
//! has passed stops too and counts the arrivals due before it that it never started as
//! skipped (n + skipped = the intended starts inside the duration).

use crate::protocol::SplitMix64;
use crate::step::{now_ns, truthy, Fail, Res};
use serde_json::{json, Map, Value};

// ---- the histogram ----------------------------------------------------------------------------

/// Values under 256 ns have a bucket each; above, 128 buckets per power of two.
const MANTISSA_BITS: u32 = 8;
const SUB: u64 = 1 << (MANTISSA_BITS - 1);
const EXACT: u64 = 1 << MANTISSA_BITS;
/// From 2⁴⁰ ns (18 minutes) on, values count in the overflow bucket.
const LIMIT: u64 = 1 << 40;
/// Every bucket below LIMIT: (40 − 8 + 1) · 128 + 256, so recording is an array increment.
const NBUCKETS: usize = ((40 - MANTISSA_BITS as usize + 1) << (MANTISSA_BITS - 1)) + EXACT as usize;

/// The bucket of a value under LIMIT, with integer operations only (every language files a
/// value in the same bucket): v itself under 256, else (L − 8) · 128 + (v >> (L − 8)) with L
/// the bit length of v — its top eight bits.
#[inline]
pub fn bucket(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let shift = (64 - v.leading_zeros()) - MANTISSA_BITS;
    (shift as u64 * SUB + (v >> shift)) as usize
}

/// Every latency of a client, within 0.8%, in bounded memory: a fixed array of counts,
/// allocated and touched before the clock, so recording allocates nothing.
pub struct Histogram {
    counts: Vec<u64>,
    overflow: u64,
    min: u64, // u64::MAX while empty
    max: u64,
    sum: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Histogram {
        let mut counts = vec![0u64; NBUCKETS];
        for c in counts.iter_mut() {
            *c = std::hint::black_box(0); // the pages are the process's before the loop
        }
        Histogram { counts, overflow: 0, min: u64::MAX, max: 0, sum: 0 }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        if v >= LIMIT {
            self.overflow += 1;
        } else {
            self.counts[bucket(v)] += 1;
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum = self.sum.saturating_add(v);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.overflow += other.overflow;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum = self.sum.saturating_add(other.sum);
    }

    /// The wire form: `{"buckets": [[bucket, count], …] (ascending), "overflow", "min",
    /// "max", "sum"}`.
    pub fn to_json(&self) -> Value {
        let buckets: Vec<Value> =
            self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(b, &c)| json!([b, c])).collect();
        let min = if self.min == u64::MAX { 0 } else { self.min };
        json!({"buckets": buckets, "overflow": self.overflow, "min": min, "max": self.max, "sum": self.sum})
    }
}

// ---- the arrival schedule ----------------------------------------------------------------------

/// Intended start offsets of an open-loop client, in ns from its start: uniform arrivals
/// evenly spaced, Poisson arrivals with exponential gaps −ln(1 − u) · 10⁹ / rate, u from the
/// top 53 bits of splitmix64. The offsets accumulate in a double and are truncated toward
/// zero, exactly as schedule.py does, so every language makes the same ones.
pub struct Schedule {
    mean_gap_ns: f64,
    poisson: bool,
    rng: SplitMix64,
    at: f64,
}

impl Schedule {
    pub fn new(rate_per_s: f64, poisson: bool, seed: u64) -> Res<Schedule> {
        if !(rate_per_s > 0.0 && rate_per_s.is_finite()) {
            return Err(Fail::protocol(format!("rate must be positive, not {rate_per_s}")));
        }
        Ok(Schedule { mean_gap_ns: 1e9 / rate_per_s, poisson, rng: SplitMix64::new(seed), at: 0.0 })
    }

    /// The offset of the next operation (the first is 0).
    #[inline]
    pub fn next(&mut self) -> u64 {
        let offset = self.at;
        let gap = if self.poisson { -(1.0 - self.rng.unit()).ln() * self.mean_gap_ns } else { self.mean_gap_ns };
        self.at += gap;
        offset as u64
    }
}

pub fn parse_arrival(v: Option<&Value>) -> Res<bool> {
    match v {
        None | Some(Value::Null) => Ok(true),
        Some(Value::String(s)) if s == "poisson" => Ok(true),
        Some(Value::String(s)) if s == "uniform" => Ok(false),
        Some(other) => Err(Fail::protocol(format!("unknown arrival {other} (poisson or uniform)"))),
    }
}

// ---- the load fields of a step -------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Policy {
    /// each client keeps its own connection for the whole trial
    Persistent,
    /// connect, prepare what the operation needs, run it, disconnect: all inside its time
    PerRequest,
    /// the driver's usual pool, shared by the clients: borrow, run, return inside its time
    Pooled,
}

/// What a step message asks for beyond the plain loop.
pub struct Load {
    pub clients: usize,
    pub duration_ns: Option<u64>,
    /// all clients together, per second
    pub rate: Option<f64>,
    pub poisson: bool,
    pub seed: u64,
    /// uniform: this worker's first intended start
    pub phase_ns: u64,
    pub late_ns: u64,
    pub skip_ns: Option<u64>,
    pub start_at_unix_ns: Option<u64>,
    pub policy: Policy,
    pub pool_size: usize,
}

fn uint(msg: &Value, key: &str) -> Res<Option<u64>> {
    match msg.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => crate::protocol::json_int(v)
            .map(|i| Some(i as u64))
            .ok_or_else(|| Fail::protocol(format!("field '{key}' must be an integer"))),
    }
}

fn number(msg: &Value, key: &str) -> Res<Option<f64>> {
    match msg.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| Fail::protocol(format!("field '{key}' must be a number"))),
    }
}

impl Load {
    /// The load fields of a step message, or None when it has none (the plain loop). A step
    /// is loaded when it asks for a histogram, several clients, a duration, a rate or a
    /// connection policy other than persistent.
    pub fn parse(msg: &Value) -> Res<Option<Load>> {
        let clients = match uint(msg, "clients")? {
            None => 1,
            Some(c) if (1..=100_000).contains(&c) => c as usize,
            Some(c) => return Err(Fail::protocol(format!("clients = {}: want at least 1", c as i64))),
        };
        let policy = match msg.get("policy").and_then(Value::as_str) {
            None | Some("persistent") => Policy::Persistent,
            Some("per-request") => Policy::PerRequest,
            Some("pooled") => Policy::Pooled,
            Some(p) => return Err(Fail::unsupported(format!("connection policy '{p}' is not built (persistent, per-request, pooled)"))),
        };
        let duration_ns = match number(msg, "duration_ms")? {
            Some(ms) if ms > 0.0 => Some((ms * 1e6) as u64),
            _ => None,
        };
        let rate = match number(msg, "rate")? {
            Some(r) if r != 0.0 => Some(r),
            _ => None,
        };
        let loaded = truthy(msg.get("histogram")) || clients != 1 || duration_ns.is_some() || rate.is_some() || policy != Policy::Persistent;
        if !loaded {
            return Ok(None);
        }
        let pool_size = match uint(msg, "pool_size")? {
            None => clients,
            Some(p) if (1..=100_000).contains(&p) => p as usize,
            Some(p) => return Err(Fail::protocol(format!("pool_size = {}: want at least 1", p as i64))),
        };
        let phase_ns = match uint(msg, "phase_ns")? {
            None => 0,
            Some(p) if (p as i64) >= 0 => p,
            Some(p) => return Err(Fail::protocol(format!("phase_ns = {}: want at least 0", p as i64))),
        };
        let load = Load {
            clients,
            duration_ns,
            rate,
            poisson: parse_arrival(msg.get("arrival"))?,
            seed: uint(msg, "schedule_seed")?.unwrap_or(0),
            phase_ns,
            late_ns: uint(msg, "late_ns")?.unwrap_or(1_000_000),
            skip_ns: uint(msg, "skip_ns")?.filter(|&s| s > 0),
            start_at_unix_ns: uint(msg, "start_at_unix_ns")?.filter(|&s| s > 0),
            policy,
            pool_size,
        };
        if let Some(r) = load.rate {
            Schedule::new(r / clients as f64, load.poisson, 0)?; // a bad rate is said before anything runs
        }
        Ok(Some(load))
    }

    /// One client's loop state: client k (0-based) of `clients`, cycling through `count`
    /// operations' arguments; open loop at rate / clients, seeded schedule_seed + k. Uniform
    /// arrivals are evenly spaced at `rate` from `phase_ns` and dealt to the clients in turn:
    /// client k's stream starts k / rate later (not C at once). Poisson streams need no phase.
    pub fn client(&self, k: usize, count: usize) -> ClientLoop {
        let schedule = self.rate.map(|r| {
            Schedule::new(r / self.clients as f64, self.poisson, self.seed.wrapping_add(k as u64)).expect("rate checked at parse")
        });
        let phase_ns = match self.rate {
            Some(r) if !self.poisson => (self.phase_ns as f64 + k as f64 * 1e9 / r) as u64,
            _ => 0,
        };
        ClientLoop {
            count,
            duration_ns: self.duration_ns,
            schedule,
            phase_ns,
            late_ns: self.late_ns,
            skip_ns: self.skip_ns,
            start_at_unix_ns: self.start_at_unix_ns,
            hist: Histogram::new(),
            n: 0,
            rows: 0,
            late: 0,
            skipped: 0,
            first_op_ns: 0,
            start_ns: 0,
            elapsed_ns: 0,
            ncols: 0,
        }
    }

    /// What a driver cannot do under a policy other than persistent, said before anything runs.
    pub fn check(&self, st: &crate::step::Step) -> Res<()> {
        if self.policy == Policy::Persistent {
            return Ok(());
        }
        if st.kind == crate::step::Kind::Connect {
            return Err(Fail::unsupported("a connect step opens its own connections: it runs with the persistent policy only"));
        }
        if st.commit_every > 0 {
            return Err(Fail::unsupported(
                "commit_every groups operations in one transaction, which cannot span the connections of a per-request or pooled step",
            ));
        }
        Ok(())
    }
}

// ---- one client's loop ----------------------------------------------------------------------------

/// One client's loop: what it was asked (count, duration, schedule, barrier) and what it
/// measured. Made before the barrier, so the loop itself allocates nothing.
pub struct ClientLoop {
    pub count: usize,
    pub duration_ns: Option<u64>,
    pub schedule: Option<Schedule>,
    /// added to every intended start (uniform: phase_ns + k / rate)
    pub phase_ns: u64,
    pub late_ns: u64,
    pub skip_ns: Option<u64>,
    pub start_at_unix_ns: Option<u64>,
    pub hist: Histogram,
    pub n: u64,
    pub rows: i64,
    pub late: u64,
    pub skipped: u64,
    pub first_op_ns: u64,
    /// its monotonic start (just after the barrier) and how long it ran
    pub start_ns: u64,
    pub elapsed_ns: u64,
    /// columns of the last result read (for `values`)
    pub ncols: usize,
}

/// How long before an intended start a client stops sleeping and spins: a sleep overshoots
/// by tens of µs, which would otherwise count as the client's own lateness.
pub const SPIN_NS: u64 = 100_000;

/// CLOCK_REALTIME in nanoseconds since 1970 (the barrier is a wall-clock instant, so that
/// separate processes agree on it).
pub fn unix_now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How a client of a loaded step waits: for the barrier, for an open loop's intended
/// start, and idle once its arrivals are over.
#[allow(async_fn_in_trait)]
pub trait Pause: Sized {
    fn new() -> Res<Self>;
    /// The barrier: return when the wall clock reaches `at`.
    async fn until_unix(&self, at: u64);
    /// An open-loop client ahead of schedule: return at `deadline` (monotonic).
    async fn until(&self, deadline: u64);
    /// An open-loop client whose arrivals are over: wait, without spinning, until `deadline`.
    async fn idle_until(&self, deadline: u64);
}

/// How a client on its own thread waits: sleep (nanosleep), then spin the last 100 µs.
pub struct ThreadPause;

impl Pause for ThreadPause {
    fn new() -> Res<ThreadPause> {
        Ok(ThreadPause)
    }

    async fn until_unix(&self, at: u64) {
        loop {
            let now = unix_now_ns();
            if now >= at {
                return;
            }
            if at - now > SPIN_NS {
                std::thread::sleep(std::time::Duration::from_nanos(at - now - SPIN_NS));
            }
        }
    }

    async fn until(&self, deadline: u64) {
        let now = now_ns();
        if deadline > now + SPIN_NS {
            std::thread::sleep(std::time::Duration::from_nanos(deadline - now - SPIN_NS));
        }
        while now_ns() < deadline {
            std::hint::spin_loop();
        }
    }

    async fn idle_until(&self, deadline: u64) {
        let now = now_ns();
        if deadline > now {
            std::thread::sleep(std::time::Duration::from_nanos(deadline - now));
        }
    }
}

/// How a client task waits: a timerfd of its own (CLOCK_MONOTONIC, absolute deadlines)
/// registered with tokio's reactor, so the runtime's epoll wakes when it fires, then
/// yield_now (the other tasks keep running) for the last 100 µs. tokio's own timer rounds
/// to whole milliseconds, which would make a client up to ~1 ms late or, sleeping 1 ms
/// short, spin a millisecond per operation on the one runtime thread.
pub struct TaskPause {
    fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>,
}

impl Pause for TaskPause {
    fn new() -> Res<TaskPause> {
        use std::os::fd::FromRawFd;
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(Fail::internal(format!("timerfd_create: {}", std::io::Error::last_os_error())));
        }
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        // safe: the AsyncFd owns the OwnedFd, so the descriptor stays open and the same
        let fd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
            .map_err(|e| Fail::internal(format!("timerfd with tokio: {e}")))?;
        Ok(TaskPause { fd })
    }

    async fn until_unix(&self, at: u64) {
        let now = unix_now_ns();
        if at > now + SPIN_NS {
            self.sleep_until(now_ns() + (at - now - SPIN_NS)).await;
        }
        while unix_now_ns() < at {
            tokio::task::yield_now().await;
        }
    }

    async fn until(&self, deadline: u64) {
        if deadline > now_ns() + SPIN_NS {
            self.sleep_until(deadline - SPIN_NS).await;
        }
        while now_ns() < deadline {
            tokio::task::yield_now().await;
        }
    }

    async fn idle_until(&self, deadline: u64) {
        if deadline > now_ns() {
            self.sleep_until(deadline).await;
        }
    }
}

impl TaskPause {
    /// Sleep in the reactor until the monotonic clock reaches `deadline`.
    async fn sleep_until(&self, deadline: u64) {
        use std::os::fd::AsRawFd;
        let fd = self.fd.get_ref().as_raw_fd();
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (deadline / 1_000_000_000) as _, tv_nsec: (deadline % 1_000_000_000) as _ },
        };
        if unsafe { libc::timerfd_settime(fd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) } != 0 {
            return; // cannot happen with a valid deadline; the caller's spin still waits
        }
        loop {
            let Ok(mut guard) = self.fd.readable().await else { return };
            let mut expirations = 0u64;
            let n = unsafe { libc::read(fd, &mut expirations as *mut u64 as *mut libc::c_void, 8) };
            if n == 8 {
                return;
            }
            guard.clear_ready(); // EAGAIN: not fired yet
        }
    }

}

// ---- the answer -------------------------------------------------------------------------------------

/// What the clients of a loaded step measured, merged into one answer: counts add up, the
/// trial runs from the common start to the last client's end, one histogram.
pub struct Loaded {
    pub clients: Vec<ClientLoop>,
    pub reads: bool,
    /// the whole process's CPU while the clients ran (getrusage)
    pub user_ns: u64,
    pub sys_ns: u64,
    /// the backends of the persistent connections, where the driver gives them
    pub server_pids: Vec<i64>,
    /// `"raw"`: a layer ran the statement through its raw-SQL API
    pub api: Option<&'static str>,
}

impl Loaded {
    pub fn answer(&self) -> Map<String, Value> {
        let cs = &self.clients;
        let n: u64 = cs.iter().map(|c| c.n).sum();
        let rows: i64 = cs.iter().map(|c| c.rows).sum();
        let start = cs.iter().map(|c| c.start_ns).min().unwrap_or(0);
        let end = cs.iter().map(|c| c.start_ns + c.elapsed_ns).max().unwrap_or(0);
        let mut hist = Histogram::new();
        for c in cs {
            hist.merge(&c.hist);
        }
        let per_client: Vec<Value> = cs.iter().map(|c| json!({"n": c.n, "elapsed_ns": c.elapsed_ns})).collect();
        let mut a = Map::new();
        a.insert("n".into(), json!(n));
        a.insert("elapsed_ns".into(), json!(end - start));
        a.insert("rows".into(), json!(rows));
        if let Some(ncols) = cs.iter().map(|c| c.ncols).find(|&w| w > 0).filter(|_| self.reads) {
            a.insert("values".into(), json!(rows * ncols as i64));
        }
        a.insert("user_ns".into(), json!(self.user_ns));
        a.insert("sys_ns".into(), json!(self.sys_ns));
        a.insert("first_op_ns".into(), json!(cs.first().map_or(0, |c| c.first_op_ns)));
        a.insert("histogram".into(), hist.to_json());
        a.insert("late".into(), json!(cs.iter().map(|c| c.late).sum::<u64>()));
        a.insert("skipped".into(), json!(cs.iter().map(|c| c.skipped).sum::<u64>()));
        a.insert("clients".into(), json!(cs.len()));
        a.insert("per_client".into(), Value::Array(per_client));
        if !self.server_pids.is_empty() {
            a.insert("server_pids".into(), json!(self.server_pids));
        }
        if let Some(api) = self.api {
            a.insert("api".into(), json!(api));
        }
        a
    }
}

// ---- the conformance ops ------------------------------------------------------------------------------

/// `{"op": "histogram", "values": [ns, …]}`: the values recorded into a histogram.
pub fn on_histogram(msg: &Value) -> Res<Map<String, Value>> {
    let values = msg.get("values").and_then(Value::as_array).ok_or_else(|| Fail::protocol("histogram needs values"))?;
    let mut h = Histogram::new();
    for v in values {
        let ns = v.as_u64().ok_or_else(|| Fail::protocol(format!("histogram value {v} is not a count of ns")))?;
        h.record(ns);
    }
    let mut a = Map::new();
    a.insert("histogram".into(), h.to_json());
    Ok(a)
}

/// `{"op": "schedule", "rate", "arrival", "seed": "16 hex digits", "count"}`: the first
/// `count` intended start offsets.
pub fn on_schedule(msg: &Value) -> Res<Map<String, Value>> {
    let rate = number(msg, "rate")?.ok_or_else(|| Fail::protocol("schedule needs a rate"))?;
    let seed = match msg.get("seed") {
        Some(Value::String(hex)) => {
            u64::from_str_radix(hex, 16).map_err(|_| Fail::protocol(format!("seed '{hex}' is not 16 hex digits")))?
        }
        None | Some(Value::Null) => 0,
        Some(v) => crate::protocol::json_int(v).ok_or_else(|| Fail::protocol("seed is 16 hex digits"))? as u64,
    };
    let count = uint(msg, "count")?.unwrap_or(0) as usize;
    let mut s = Schedule::new(rate, parse_arrival(msg.get("arrival"))?, seed)?;
    let offsets: Vec<Value> = (0..count).map(|_| json!(s.next())).collect();
    let mut a = Map::new();
    a.insert("offsets".into(), Value::Array(offsets));
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(NBUCKETS, 4480);
        assert_eq!(bucket(255), 255);
        assert_eq!(bucket(256), 256);
        assert_eq!(bucket(511), 383);
        assert_eq!(bucket(512), 384);
        assert_eq!(bucket(LIMIT - 1), 4351);
    }

    #[test]
    fn vectors() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../protocol/vectors/load.json")).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        for case in v["buckets"].as_array().unwrap() {
            let value = case["value"].as_u64().unwrap();
            if value < LIMIT {
                assert_eq!(bucket(value) as u64, case["bucket"].as_u64().unwrap(), "{case}");
            }
        }
        let got = on_histogram(&json!({"values": v["histogram"]["values"]})).unwrap();
        assert_eq!(got["histogram"], v["histogram"]["wire"]);
        for case in v["schedules"].as_array().unwrap() {
            let want = case["offsets"].as_array().unwrap();
            let msg = json!({"rate": case["rate"], "arrival": case["arrival"], "seed": case["seed"], "count": want.len()});
            let got = on_schedule(&msg).unwrap();
            for (g, w) in got["offsets"].as_array().unwrap().iter().zip(want) {
                assert!((g.as_i64().unwrap() - w.as_i64().unwrap()).abs() <= 1000, "{case}: {g} vs {w}");
            }
        }
    }
}
