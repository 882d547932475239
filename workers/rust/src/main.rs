//! abworker-rust: the Rust worker of accessbench (protocol/PROTOCOL.md, version 1).
//!
//! parse message → dispatch on op / step kind → timed loop → answer. One JSON object per
//! line each way; stdout carries nothing else (fd 1 is pointed at stderr, the log, and the
//! protocol is written to a private copy of the original stdout).

mod drv_mysql;
mod drv_postgres;
mod drv_rusqlite;
mod drv_sqlx;
mod drv_tokio_postgres;
mod load;
mod pg;
mod protocol;
mod step;

use load::{Load, Loaded, Policy};
use protocol::{Dialect, Gen};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::sync::Arc;
use step::{Endpoint, Fail, Outcome, Res, Step};

const PROTOCOL_VERSION: i64 = 1;
const METHODS: &str = "rust-tokio-postgres, rust-postgres, rust-sqlx, rust-rusqlite, rust-mysql";

/// What `hello` reports about a driver.
pub struct Hello {
    pub driver: &'static str,
    pub driver_version: String,
    pub dbms: &'static [&'static str],
    pub batch: String,
    pub concurrency: &'static str,
    /// the connection policies of steps under load
    pub policies: &'static [&'static str],
    pub settings: Vec<(String, String)>,
}

pub struct Opened {
    pub connect_ns: u64,
    pub server_pid: Option<i64>,
    pub server_version: Option<String>,
}

/// One module per driver implements this. `step` runs the whole step (its loop is
/// `run_ops!`), leaves the connection usable after an error (rolls back) and releases what
/// the step made (statements) before it returns.
pub trait Driver {
    fn hello(&self) -> Hello;
    /// `capabilities.modes`: the exec modes it has (and `record` where it reads records
    /// without SQL: MariaDB's HANDLER); a step in another mode is answered `unsupported`.
    fn modes(&self) -> &'static [&'static str] {
        &["literal", "extended", "prepared"]
    }
    fn open(&mut self, ep: &Endpoint) -> Res<Opened>;
    fn close(&mut self);
    fn step(&mut self, st: &Step, ep: &Endpoint) -> Res<Outcome>;
    fn server_pid(&self) -> Option<i64>;
    /// A step under load: `load.clients` clients at once, each running `run_client!` with its
    /// connection as `load.policy` says; the same cleanup as `step` after it.
    fn load(&mut self, st: &Arc<Step>, ep: &Endpoint, load: &Load) -> Res<Loaded>;
    /// The verification pass (`run_ops!`, one client) of a per-request or pooled step, each
    /// operation getting its connection as the policy says.
    fn verify_under(&mut self, st: &Step, ep: &Endpoint, load: &Load) -> Res<Outcome>;
}

fn make_driver(method: &str) -> Result<Box<dyn Driver>, String> {
    let (base, rest) = method.split_once('/').unwrap_or((method, ""));
    let mut settings = Vec::new();
    for kv in rest.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("{method}: setting '{kv}' is not key=value"))?;
        settings.push((k.to_string(), v.to_string()));
    }
    let with_name = |e: String| format!("{method}: {e}");
    Ok(match base {
        "rust-tokio-postgres" => Box::new(drv_tokio_postgres::TokioPostgres::new(&settings).map_err(with_name)?),
        "rust-postgres" => Box::new(drv_postgres::Postgres::new(&settings).map_err(with_name)?),
        "rust-sqlx" => Box::new(drv_sqlx::Sqlx::new(&settings).map_err(with_name)?),
        "rust-rusqlite" => Box::new(drv_rusqlite::Rusqlite::new(&settings).map_err(with_name)?),
        "rust-mysql" => Box::new(drv_mysql::Mysql::new(&settings).map_err(with_name)?),
        _ => return Err(format!("unknown method '{base}' (abworker-rust knows {METHODS})")),
    })
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
            "step" => self.on_step(msg),
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
            "settings": settings,
            "capabilities": {
                "dbms": h.dbms,
                "kinds": ["connect", "scan", "exec", "batch"],
                "modes": modes,
                "batch": h.batch,
                "concurrency": h.concurrency,
                // steps under load: clients, duration, open loop at a rate, histograms, and the
                // connection policies built for this driver
                "load": {"policies": h.policies},
            },
        });
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

    fn on_step(&mut self, msg: &Value) -> Res<Map<String, Value>> {
        let ep = self.endpoint.clone().ok_or_else(|| Fail::protocol("step before open"))?;
        let dialect = match ep.dbms.as_str() {
            "sqlite" => Dialect::SQLite,
            "mariadb" => Dialect::MariaDB,
            _ => Dialect::PostgreSQL,
        };
        let st = Step::parse(msg, dialect)?;
        if st.mode == step::Mode::Record && !self.driver().modes().contains(&"record") {
            return Err(Fail::unsupported(format!("{} has no record-level access (mode record)", self.method)));
        }
        let load = Load::parse(msg)?;
        let log = |e: &Fail| eprintln!("abworker-rust: step failed ({}): {}", e.kind, e.message);
        let out = match &load {
            Some(l) if !st.verify => {
                l.check(&st)?;
                let st = Arc::new(st);
                return Ok(self.driver().load(&st, &ep, l).inspect_err(log)?.answer());
            }
            // verification stays one client's plain pass, with the step's policy
            Some(l) if l.policy != Policy::Persistent => {
                l.check(&st)?;
                self.driver().verify_under(&st, &ep, l)
            }
            _ => self.driver().step(&st, &ep),
        }
        .inspect_err(log)?;
        let mut a = Map::new();
        a.insert("n".into(), json!(out.n));
        a.insert("rows".into(), json!(out.rows));
        match &out.timed {
            None => {
                let values = if out.reads { out.rows * out.sink.width as i64 } else { 0 };
                a.insert("values".into(), json!(values));
                a.insert("checksum".into(), json!(out.sink.hex()));
                a.insert("first_op_ns".into(), json!(out.first_ns));
            }
            Some(t) => {
                if let Some(path) = &st.latency_file {
                    let mut bytes = Vec::with_capacity(t.lat.len() * 8);
                    for x in &t.lat {
                        bytes.extend_from_slice(&x.to_le_bytes());
                    }
                    std::fs::write(path, bytes).map_err(|e| Fail::internal(format!("latency_file {path}: {e}")))?;
                }
                a.insert("elapsed_ns".into(), json!(t.elapsed_ns));
                if out.reads && out.sink.ncols > 0 {
                    a.insert("values".into(), json!(out.rows * out.sink.ncols as i64));
                }
                a.insert("user_ns".into(), json!(t.user_ns));
                a.insert("sys_ns".into(), json!(t.sys_ns));
                a.insert("first_op_ns".into(), json!(out.first_ns));
                if let Some(pid) = self.driver().server_pid() {
                    a.insert("server_pids".into(), json!([pid]));
                }
            }
        }
        Ok(a)
    }
}

fn on_generate(msg: &Value) -> Res<Map<String, Value>> {
    let count = msg.get("count").and_then(protocol::json_int).unwrap_or(0).max(0);
    let mut g = Gen::new(msg.get("spec").unwrap_or(&Value::Null)).map_err(Fail::protocol)?;
    let values: Vec<Value> = (0..count).map(|i| g.next_json(i)).collect();
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
        eprintln!("usage: abworker-rust METHOD[/key=value,...]  ({METHODS})");
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
