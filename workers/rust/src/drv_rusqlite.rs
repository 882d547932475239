//! rust-rusqlite: rusqlite with its `bundled` SQLite (compiled into the worker), in process.
//! No settings.

use crate::protocol::{self, Gv, Sink, Val};
use crate::step::{now_ns, Endpoint, Fail, Kind, Mode, Outcome, Res, Step};
use crate::{run_ops, Driver, Hello, Opened};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ffi, params_from_iter, Connection, OpenFlags, Statement, ToSql};
use std::time::Duration;

const BUSY_TIMEOUT_MS: u64 = 5000;

pub struct Rusqlite {
    conn: Option<Connection>,
}

impl Rusqlite {
    pub fn new(settings: &[(String, String)]) -> Result<Self, String> {
        if let Some((k, v)) = settings.first() {
            return Err(format!("rust-rusqlite has no setting {k}={v}"));
        }
        Ok(Rusqlite { conn: None })
    }
}

/// rusqlite's default open flags: READ_WRITE | CREATE | NO_MUTEX | URI.
fn flags() -> OpenFlags {
    OpenFlags::default()
}

fn code_name(code: i32) -> Option<&'static str> {
    Some(match code {
        ffi::SQLITE_CONSTRAINT_PRIMARYKEY => "SQLITE_CONSTRAINT_PRIMARYKEY",
        ffi::SQLITE_CONSTRAINT_UNIQUE => "SQLITE_CONSTRAINT_UNIQUE",
        ffi::SQLITE_CONSTRAINT_NOTNULL => "SQLITE_CONSTRAINT_NOTNULL",
        ffi::SQLITE_CONSTRAINT_CHECK => "SQLITE_CONSTRAINT_CHECK",
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => "SQLITE_CONSTRAINT_FOREIGNKEY",
        ffi::SQLITE_BUSY_SNAPSHOT => "SQLITE_BUSY_SNAPSHOT",
        _ => match code & 0xff {
            ffi::SQLITE_ERROR => "SQLITE_ERROR",
            ffi::SQLITE_INTERNAL => "SQLITE_INTERNAL",
            ffi::SQLITE_PERM => "SQLITE_PERM",
            ffi::SQLITE_ABORT => "SQLITE_ABORT",
            ffi::SQLITE_BUSY => "SQLITE_BUSY",
            ffi::SQLITE_LOCKED => "SQLITE_LOCKED",
            ffi::SQLITE_NOMEM => "SQLITE_NOMEM",
            ffi::SQLITE_READONLY => "SQLITE_READONLY",
            ffi::SQLITE_INTERRUPT => "SQLITE_INTERRUPT",
            ffi::SQLITE_IOERR => "SQLITE_IOERR",
            ffi::SQLITE_CORRUPT => "SQLITE_CORRUPT",
            ffi::SQLITE_FULL => "SQLITE_FULL",
            ffi::SQLITE_CANTOPEN => "SQLITE_CANTOPEN",
            ffi::SQLITE_SCHEMA => "SQLITE_SCHEMA",
            ffi::SQLITE_TOOBIG => "SQLITE_TOOBIG",
            ffi::SQLITE_CONSTRAINT => "SQLITE_CONSTRAINT",
            ffi::SQLITE_MISMATCH => "SQLITE_MISMATCH",
            ffi::SQLITE_MISUSE => "SQLITE_MISUSE",
            ffi::SQLITE_RANGE => "SQLITE_RANGE",
            _ => return None,
        },
    })
}

fn fail(e: rusqlite::Error) -> Fail {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => Fail::db(
            msg.clone().unwrap_or_else(|| f.to_string()),
            code_name(f.extended_code).map(str::to_string),
        ),
        _ => Fail::db(e.to_string(), None),
    }
}

/// A parameter as rusqlite binds it: integers, doubles, text (timestamps as the ISO text
/// the target stores), NULL; borrowed, so binding copies nothing before SQLite does.
enum P {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
}

impl ToSql for P {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            P::Null => ValueRef::Null,
            P::Int(i) => ValueRef::Integer(*i),
            P::Float(f) => ValueRef::Real(*f),
            P::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

fn adapt(values: &[Gv]) -> Vec<P> {
    values
        .iter()
        .map(|v| match v {
            Gv::Null => P::Null,
            Gv::Bool(b) => P::Int(*b as i64),
            Gv::Int(i) => P::Int(*i),
            Gv::Float(f) => P::Float(*f),
            Gv::Text(s) => P::Text(s.clone()),
            Gv::Ts(us) => P::Text(protocol::format_ts(*us, false)),
        })
        .collect()
}

/// Steps `stmt` with `params` to the end: every row decoded by its values' storage classes
/// (ValueRef) when `reads`, else the rows changed.
fn run_stmt(stmt: &mut Statement<'_>, params: &[P], reads: bool, sink: &mut Sink) -> Res<i64> {
    if !reads {
        let changed = stmt.execute(params_from_iter(params.iter())).map_err(fail)?;
        return Ok(if stmt.readonly() { 0 } else { changed as i64 });
    }
    let ncols = stmt.column_count();
    let mut rows = stmt.query(params_from_iter(params.iter())).map_err(fail)?;
    let mut count = 0i64;
    while let Some(row) = rows.next().map_err(fail)? {
        sink.begin_row();
        for c in 0..ncols {
            match row.get_ref(c).map_err(fail)? {
                ValueRef::Null => sink.val(Val::Null),
                ValueRef::Integer(i) => sink.val(Val::Int(i)),
                ValueRef::Real(f) => sink.val(Val::Float(f)),
                ValueRef::Text(t) => {
                    sink.val(Val::Text(std::str::from_utf8(t).map_err(|e| Fail::db(format!("text column {c}: {e}"), None))?))
                }
                ValueRef::Blob(b) => sink.val(Val::Bytes(b)),
            }
        }
        sink.end_row(ncols);
        count += 1;
    }
    sink.ncols = ncols;
    Ok(count)
}

fn connect_once(file: &str) -> Res<i64> {
    let c = Connection::open_with_flags(file, flags()).map_err(fail)?;
    c.close().map_err(|(_, e)| fail(e))?;
    Ok(0)
}

fn run(conn: &Connection, st: &Step, file: &str) -> Res<Outcome> {
    // BEGIN and COMMIT, prepared once per step (before the clock)
    let mut begin = conn.prepare("BEGIN").map_err(fail)?;
    let mut commit = conn.prepare("COMMIT").map_err(fail)?;
    let reads = st.reads();
    Ok(match st.kind {
        Kind::Connect => run_ops!(st, sink, i, connect_once(file)),
        Kind::Scan => run_ops!(st, sink, i, {
            let mut stmt = conn.prepare(&st.sql).map_err(fail)?;
            run_stmt(&mut stmt, &[], true, &mut sink)
        }),
        Kind::Exec => {
            let params = adapt(&st.values);
            let np = st.nparams;
            let mut prepared: Option<Statement> = None;
            run_ops!(st, sink, i, {
                let r: Res<i64> = (|| {
                    if st.begins(i) {
                        begin.execute([]).map_err(fail)?;
                    }
                    let p = &params[i * np..(i + 1) * np];
                    let count = match st.mode {
                        Mode::Literal => {
                            let mut stmt = conn.prepare(&st.texts[i]).map_err(fail)?;
                            run_stmt(&mut stmt, &[], reads, &mut sink)?
                        }
                        Mode::Extended => {
                            let mut stmt = conn.prepare(&st.sql).map_err(fail)?;
                            run_stmt(&mut stmt, p, reads, &mut sink)?
                        }
                        Mode::Prepared => {
                            if prepared.is_none() {
                                // parsed once, inside the first operation's time
                                prepared = Some(conn.prepare(&st.sql).map_err(fail)?);
                            }
                            run_stmt(prepared.as_mut().unwrap(), p, reads, &mut sink)?
                        }
                    };
                    if st.commits(i) {
                        commit.execute([]).map_err(fail)?;
                    }
                    Ok(count)
                })();
                r
            })
        }
        Kind::Batch => {
            let params = adapt(&st.values);
            let np = st.nparams;
            let mut prepared: Option<Statement> = None;
            run_ops!(st, sink, i, {
                let r: Res<i64> = (|| {
                    begin.execute([]).map_err(fail)?;
                    if prepared.is_none() {
                        prepared = Some(conn.prepare(&st.sql).map_err(fail)?);
                    }
                    let stmt = prepared.as_mut().unwrap();
                    let rows = st.group(i);
                    let n = rows.len() as i64;
                    for r in rows {
                        stmt.execute(params_from_iter(params[r * np..(r + 1) * np].iter())).map_err(fail)?;
                    }
                    commit.execute([]).map_err(fail)?;
                    Ok(n)
                })();
                r
            })
        }
    })
}

impl Driver for Rusqlite {
    fn hello(&self) -> Hello {
        let s: Vec<(&str, String)> = vec![
            ("sqlite", format!("{} bundled by libsqlite3-sys {} (compiled into the worker with its flags, among them SQLITE_DEFAULT_FOREIGN_KEYS=1, SQLITE_ENABLE_STAT4, SQLITE_THREADSAFE=1), not the system library", rusqlite::version(), env!("ABW_V_LIBSQLITE3_SYS"))),
            ("open", format!("Connection::open_with_flags(file, READ_WRITE|CREATE|NO_MUTEX|URI: rusqlite's defaults), extended result codes on, busy timeout {BUSY_TIMEOUT_MS} ms (rusqlite's default, set explicitly)")),
            ("foreign_keys", "PRAGMA foreign_keys = OFF at open (the bundled build turns them on by default; OFF is SQLite's standard default, as c-sqlite and py-sqlite3 get)".into()),
            ("statement cache", "prepare_cached is not used and its cache capacity is set to 0".into()),
            ("autocommit", "yes (BEGIN/COMMIT explicit, each prepared once per step before the clock)".into()),
            ("literal", "Connection::prepare of the text with values inlined + step + finalize, every operation".into()),
            ("extended", "Connection::prepare + bind + step + finalize (drop), every operation".into()),
            ("prepared", "Connection::prepare once (inside the first operation's time), then query/execute on the same Statement (rebinds every parameter; reset after each use); finalized after the step".into()),
            ("scan", "prepare, step every row, finalize".into()),
            ("decoding", "Row::get_ref → ValueRef by each value's storage class: Integer → i64, Real → f64, Text → &str (UTF-8 checked), Blob → &[u8], Null".into()),
            ("parameters", "i64, f64, text borrowed (ToSqlOutput::Borrowed); timestamps as ISO text (as the target stores them)".into()),
            ("rows changed", "Statement::execute (sqlite3_changes)".into()),
            ("cpu", "getrusage(RUSAGE_SELF): the whole process, which runs on one thread".into()),
        ];
        Hello {
            driver: "rusqlite",
            driver_version: format!("{} (SQLite {} bundled)", env!("ABW_V_RUSQLITE"), rusqlite::version()),
            dbms: &["sqlite"],
            batch: "BEGIN, one prepared Statement (prepared once, in the first group) executed per row, COMMIT".into(),
            concurrency: "none (one connection, one thread per worker)",
            settings: s.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    fn open(&mut self, ep: &Endpoint) -> Res<Opened> {
        let file = ep.file.as_deref().ok_or_else(|| Fail::protocol("the sqlite endpoint needs a file"))?;
        let start = now_ns();
        let conn = Connection::open_with_flags(file, flags()).map_err(fail)?;
        let connect_ns = now_ns() - start;
        conn.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS)).map_err(fail)?;
        conn.set_prepared_statement_cache_capacity(0);
        conn.execute_batch("PRAGMA foreign_keys = OFF").map_err(fail)?;
        self.conn = Some(conn);
        Ok(Opened { connect_ns, server_pid: None, server_version: Some(rusqlite::version().to_string()) })
    }

    fn close(&mut self) {
        if let Some(c) = self.conn.take() {
            if let Err((_, e)) = c.close() {
                eprintln!("abworker-rust: close: {e}");
            }
        }
    }

    fn step(&mut self, st: &Step, ep: &Endpoint) -> Res<Outcome> {
        let conn = self.conn.as_ref().ok_or_else(|| Fail::protocol("step before open"))?;
        let file = ep.file.clone().unwrap_or_default();
        let r = run(conn, st, &file); // every statement of the step is finalized when it returns
        if r.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        r
    }

    fn server_pid(&self) -> Option<i64> {
        None
    }
}
