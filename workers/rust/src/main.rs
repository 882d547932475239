//! abworker-rust: the Rust worker of accessbench (protocol/PROTOCOL.md, version 1).
//!
//! parse message → dispatch on op / step kind → timed loop → answer. One JSON object per
//! line each way; stdout carries nothing else (fd 1 is pointed at stderr, the log, and the
//! protocol is written to a private copy of the original stdout).

// A driver version's build has rust-tokio-postgres only (Cargo.toml, all-methods): what the
// others share and it does not use is dead there, and said once here rather than per item.
#![cfg_attr(not(feature = "all-methods"), allow(dead_code, unused_imports))]

mod assoc;
#[cfg(feature = "all-methods")]
mod drv_diesel;
#[cfg(feature = "all-methods")]
mod drv_mysql;
#[cfg(feature = "all-methods")]
mod drv_postgres;
#[cfg(feature = "all-methods")]
mod drv_rusqlite;
#[cfg(feature = "all-methods")]
mod drv_seaorm;
#[cfg(feature = "all-methods")]
mod drv_sqlx;
mod drv_tokio_postgres;
mod host;
mod load;
mod pg;
mod protocol;
mod step;

use host::{Driver, Host};
use load::{Load, Policy};
use protocol::{Dialect, Gen};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::sync::Arc;
use step::{Endpoint, Fail, Res, Step};

const PROTOCOL_VERSION: i64 = 1;

/// What `hello` reports about a driver.
pub struct Hello {
    pub driver: &'static str,
    pub driver_version: String,
    pub dbms: &'static [&'static str],
    pub batch: String,
    pub concurrency: &'static str,
    /// the connection policies of steps under load
    pub policies: &'static [&'static str],
    /// `capabilities.sqlstate`: None when every database error carries the DBMS's SQLSTATE;
    /// Some("by kind") for a layer that names only some kinds of error (Diesel)
    pub sqlstate: Option<&'static str>,
    pub settings: Vec<(String, String)>,
    /// whether it runs `load` steps (PROTOCOL.md, Loading associations)
    pub load: bool,
    /// a layer's `capabilities.shapes`: the features it maps through its own API and why
    /// not the others (None for a driver)
    pub shapes: Option<Value>,
}

pub struct Opened {
    pub connect_ns: u64,
    pub server_pid: Option<i64>,
    pub server_version: Option<String>,
}

/// A driver's constructor: the method's settings (`key=value` after the `/`) → its host.
type Make = fn(&[(String, String)]) -> Result<Box<dyn Driver>, String>;

/// The registry: every method this worker has, by name. `make_driver`, hello's `methods` and
/// the text of an unknown method all come from it.
const REGISTRY: &[(&str, Make)] = &[
    ("rust-tokio-postgres", |s| Ok(Box::new(Host::new(drv_tokio_postgres::TokioPostgres::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-postgres", |s| Ok(Box::new(Host::new(drv_postgres::Postgres::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-sqlx", |s| Ok(Box::new(Host::new(drv_sqlx::Sqlx::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-rusqlite", |s| Ok(Box::new(Host::new(drv_rusqlite::Rusqlite::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-mysql", |s| Ok(Box::new(Host::new(drv_mysql::Mysql::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-diesel+libpq", |s| Ok(Box::new(Host::new(drv_diesel::Diesel::<drv_diesel::PgBe>::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-diesel+libmariadb", |s| Ok(Box::new(Host::new(drv_diesel::Diesel::<drv_diesel::MyBe>::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-diesel+sqlite", |s| Ok(Box::new(Host::new(drv_diesel::Diesel::<drv_diesel::LiteBe>::new(s)?)?))),
    #[cfg(feature = "all-methods")]
    ("rust-seaorm+sqlx", |s| Ok(Box::new(Host::new(drv_seaorm::SeaOrm::new(s)?)?))),
];

/// The methods of the registry, as a list for people.
fn known() -> String {
    REGISTRY.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

/// The methods of the registry, sorted, each once: hello's `methods`.
fn methods() -> Vec<&'static str> {
    let mut names: Vec<&str> = REGISTRY.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn make_driver(method: &str) -> Result<Box<dyn Driver>, String> {
    let (named, rest) = method.split_once('/').unwrap_or((method, ""));
    // METHOD@VERSION: its driver at another version than the pinned one, for which this
    // program was built again (src/accessbench/methods/versions.py); a build with any other
    // version of the driver refuses the name rather than measure one version under another's
    let (base, version) = named.split_once('@').unwrap_or((named, ""));
    let mut settings = Vec::new();
    for kv in rest.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("{method}: setting '{kv}' is not key=value"))?;
        settings.push((k.to_string(), v.to_string()));
    }
    match REGISTRY.iter().find(|(name, _)| *name == base) {
        Some((_, make)) => {
            let driver = make(&settings).map_err(|e| format!("{method}: {e}"))?;
            let built = driver.hello().driver_version;
            if !version.is_empty() && built.split(' ').next() != Some(version) {
                return Err(format!("{method}: this abworker-rust is built with {base}'s driver at {built}, not {version}"));
            }
            Ok(driver)
        }
        None => Err(format!("unknown method '{base}' (abworker-rust knows {})", known())),
    }
}

/// A step message, checked: what runs, and how.
struct StepCall {
    st: Step,
    load: Option<Load>,
}

struct Session {
    method: String,
    driver: Option<Box<dyn Driver>>,
    unsupported: Option<String>,
    endpoint: Option<Endpoint>,
}

impl Session {
    fn driver(&mut self) -> &mut dyn Driver {
        self.driver.as_deref_mut().expect("driver")
    }

    fn handle(&mut self, op: &str, msg: &Value) -> Res<Map<String, Value>> {
        if let Some(why) = &self.unsupported {
            return Err(Fail::unsupported(why.clone()));
        }
        match op {
            "hello" => Ok(self.on_hello()),
            "open" => self.on_open(msg),
            "step" => {
                let call = self.parse_step(msg)?;
                self.run_step(call)
            }
            "close" | "bye" => {
                self.on_close();
                Ok(Map::new())
            }
            "generate" => on_generate(msg),
            "checksum" => on_checksum(msg),
            "histogram" => load::on_histogram(msg),
            "schedule" => load::on_schedule(msg),
            other => Err(Fail::protocol(format!("unknown op '{other}'"))),
        }
    }

    fn on_hello(&mut self) -> Map<String, Value> {
        let h = self.driver().hello();
        let modes = self.driver().modes();
        let settings: Map<String, Value> = h.settings.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        let a = json!({
            "protocol": PROTOCOL_VERSION,
            "name": self.method,
            "language": "rust",
            "runtime": env!("ABW_RUSTC"),
            "driver": h.driver,
            "driver_version": h.driver_version,
            "methods": methods(),
            "settings": settings,
            "capabilities": {
                "dbms": h.dbms,
                "kinds": if h.load { json!(["connect", "scan", "exec", "batch", "load"]) } else { json!(["connect", "scan", "exec", "batch"]) },
                "modes": modes,
                "batch": h.batch,
                "concurrency": h.concurrency,
                // steps under load: clients, duration, open loop at a rate, histograms, and the
                // connection policies built for this driver
                "load": {"policies": h.policies},
            },
        });
        let mut a = a;
        if let Some(kind) = h.sqlstate {
            a["capabilities"]["sqlstate"] = json!(kind);
        }
        if let Some(shapes) = h.shapes {
            a["capabilities"]["shapes"] = shapes;
        }
        a.as_object().cloned().unwrap_or_default()
    }

    fn on_open(&mut self, msg: &Value) -> Res<Map<String, Value>> {
        let ep = Endpoint::parse(msg.get("endpoint").unwrap_or(&Value::Null))?;
        let dbms = self.driver().hello().dbms;
        if !dbms.contains(&ep.dbms.as_str()) {
            return Err(Fail::unsupported(format!("{} does not reach dbms '{}'", self.method, ep.dbms)));
        }
        if self.endpoint.take().is_some() {
            self.driver().close(); // a second open replaces the first connection
        }
        let o = self.driver().open(&ep)?;
        self.endpoint = Some(ep);
        let mut a = Map::new();
        a.insert("connect_ns".into(), json!(o.connect_ns));
        if let Some(pid) = o.server_pid {
            a.insert("server_pid".into(), json!(pid));
        }
        if let Some(v) = o.server_version {
            a.insert("server_version".into(), json!(v));
        }
        Ok(a)
    }

    fn on_close(&mut self) {
        if self.endpoint.take().is_some() {
            self.driver().close();
        }
    }

    /// The step message → a `Step` with its parameters generated, and its load fields: every
    /// protocol error (and what the driver or the policy cannot do) is answered here, before
    /// anything runs.
    fn parse_step(&mut self, msg: &Value) -> Res<StepCall> {
        let ep = self.endpoint.as_ref().ok_or_else(|| Fail::protocol("step before open"))?;
        let dialect = match ep.dbms.as_str() {
            "sqlite" => Dialect::SQLite,
            "mariadb" => Dialect::MariaDB,
            _ => Dialect::PostgreSQL,
        };
        let st = Step::parse(msg, dialect)?;
        if st.kind == step::Kind::Load && !self.driver().hello().load {
            return Err(Fail::unsupported(format!("{} has no load steps", self.method)));
        }
        if st.mode == step::Mode::Record && !self.driver().modes().contains(&"record") {
            return Err(Fail::unsupported(format!("{} has no record-level access (mode record)", self.method)));
        }
        let load = Load::parse(msg)?;
        if let Some(l) = &load {
            if !st.verify || l.policy != Policy::Persistent {
                l.check(&st)?;
            }
        }
        Ok(StepCall { st, load })
    }

    /// Runs a checked step: under load, or the plain loop (verification stays one client's
    /// plain pass, its connection as the step's policy says).
    fn run_step(&mut self, call: StepCall) -> Res<Map<String, Value>> {
        let StepCall { st, load } = call;
        let log = |e: &Fail| eprintln!("abworker-rust: step failed ({}): {}", e.kind, e.message);
        let out = match &load {
            Some(l) if !st.verify => {
                let st = Arc::new(st);
                return Ok(self.driver().load(&st, l).inspect_err(log)?.answer());
            }
            Some(l) => self.driver().step(&st, l.policy, l.pool_size),
            None => self.driver().step(&st, Policy::Persistent, 0),
        }
        .inspect_err(log)?;
        out.answer(st.latency_file.as_deref(), &self.driver().server_pids())
    }
}

fn on_generate(msg: &Value) -> Res<Map<String, Value>> {
    let count = msg.get("count").and_then(protocol::json_int).unwrap_or(0).max(0);
    let mut g = Gen::new(msg.get("spec").unwrap_or(&Value::Null)).map_err(Fail::protocol)?;
    let values: Vec<Value> = (0..count).map(|i| g.next(i).to_json()).collect();
    let mut a = Map::new();
    a.insert("values".into(), Value::Array(values));
    Ok(a)
}

fn on_checksum(msg: &Value) -> Res<Map<String, Value>> {
    let rows = msg.get("rows").and_then(Value::as_array).ok_or_else(|| Fail::protocol("checksum needs rows"))?;
    let mut sum = 0u64;
    let mut scratch = String::new();
    for row in rows {
        let row = row.as_array().ok_or_else(|| Fail::protocol("a row is a list"))?;
        let mut h = protocol::FNV_OFFSET;
        for v in row {
            h = protocol::hash_typed(h, v, &mut scratch).map_err(Fail::protocol)?;
        }
        sum = sum.wrapping_add(h);
    }
    let mut a = Map::new();
    a.insert("checksum".into(), json!(format!("{sum:016x}")));
    a.insert("rows".into(), json!(rows.len()));
    Ok(a)
}

fn error_answer(e: &Fail) -> Value {
    // one line, as the other workers do
    let first = e.message.trim().lines().next().unwrap_or("").trim_end().to_string();
    let mut err = Map::new();
    err.insert("kind".into(), json!(e.kind));
    err.insert("message".into(), json!(if first.is_empty() { e.kind.to_string() } else { first }));
    if let Some(s) = &e.sqlstate {
        err.insert("sqlstate".into(), json!(s));
    }
    json!({"ok": false, "error": err})
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".into()
    }
}

fn main() {
    // stdout belongs to the protocol: keep a private copy of it and send everything else
    // anything prints to stderr, the worker's log.
    let out_fd = unsafe { libc::dup(1) };
    if out_fd < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        eprintln!("abworker-rust: cannot set up stdout");
        std::process::exit(2);
    }
    let mut out = std::io::BufWriter::new(unsafe { std::fs::File::from_raw_fd(out_fd) });
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: abworker-rust METHOD[/key=value,...]  ({})", known());
        std::process::exit(2);
    }
    let method = args[1].clone();
    let (driver, unsupported) = match make_driver(&method) {
        Ok(d) => (Some(d), None),
        Err(why) => {
            eprintln!("abworker-rust: {why}");
            (None, Some(why))
        }
    };
    let mut session = Session { method, driver, unsupported, endpoint: None };

    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut raw = Vec::new();
    loop {
        raw.clear();
        match input.read_until(b'\n', &mut raw) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("abworker-rust: stdin: {e}");
                break;
            }
        }
        let line = String::from_utf8_lossy(&raw);
        if line.trim().is_empty() {
            continue;
        }
        let (answer, bye) = match serde_json::from_str::<Value>(&line) {
            Err(e) => (error_answer(&Fail::protocol(format!("not a JSON object: {e}"))), false),
            Ok(msg) if !msg.is_object() => (error_answer(&Fail::protocol("not a JSON object")), false),
            Ok(msg) => match msg.get("op").and_then(Value::as_str) {
                None => (error_answer(&Fail::protocol("a message needs an op")), false),
                Some(op) => {
                    let bye = op == "bye";
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.handle(op, &msg)));
                    let answer = match r {
                        Ok(Ok(mut fields)) => {
                            let mut a = Map::new();
                            a.insert("ok".into(), Value::Bool(true));
                            a.append(&mut fields);
                            Value::Object(a)
                        }
                        Ok(Err(e)) => error_answer(&e),
                        Err(p) => error_answer(&Fail::internal(format!("panic: {}", panic_text(&*p)))),
                    };
                    (answer, bye)
                }
            },
        };
        let text = serde_json::to_string(&answer).unwrap_or_else(|_| {
            "{\"ok\": false, \"error\": {\"kind\": \"internal\", \"message\": \"unencodable answer\"}}".into()
        });
        if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
            break;
        }
        if bye {
            break;
        }
    }
    if session.driver.is_some() {
        session.on_close();
    }
    drop(session);
    std::process::exit(0);
}
