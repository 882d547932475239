//! A step as the drivers see it (parsed, parameters generated before any clock), the
//! endpoint, errors, the clocks, and what a step's pass produced (its loops are the host's).

use crate::protocol::{self, Dialect, Gen, Gv, Sink, Ty};
use serde_json::{json, Map, Value};

/// An error answer: kind (`db`, `unsupported`, `protocol`, `internal`), message, sqlstate.
#[derive(Debug)]
pub struct Fail {
    pub kind: &'static str,
    pub message: String,
    pub sqlstate: Option<String>,
}

impl Fail {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Fail {
        Fail { kind, message: message.into(), sqlstate: None }
    }
    pub fn db(message: impl Into<String>, sqlstate: Option<String>) -> Fail {
        Fail { kind: "db", message: message.into(), sqlstate }
    }
    pub fn protocol(message: impl Into<String>) -> Fail {
        Fail::new("protocol", message)
    }
    pub fn unsupported(message: impl Into<String>) -> Fail {
        Fail::new("unsupported", message)
    }
    pub fn internal(message: impl Into<String>) -> Fail {
        Fail::new("internal", message)
    }
}

pub type Res<T> = Result<T, Fail>;

/// What `open` was given.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub dbms: String,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub database: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub schema: Option<String>,
    /// the server must refuse writes on every connection (PROTOCOL.md, open: `read_only`)
    pub read_only: bool,
    /// TLS, in libpq's words for both DBMSs (PROTOCOL.md, open): disable, prefer (also when
    /// absent: the driver's own default), require, verify-ca, verify-full
    pub sslmode: String,
    /// the certificate authority's PEM file (with require, verify-ca, verify-full)
    pub sslrootcert: Option<String>,
    /// a pinned TLS version: the driver's minimum and maximum both set to it
    pub tls_version: Option<TlsVersion>,
    /// sslnegotiation=direct (PostgreSQL 17+): TLS from the first byte, no SSLRequest
    pub direct: bool,
    /// MariaDB: the protocol's compression (CLIENT_COMPRESS, zlib)
    pub compress: bool,
    pub file: Option<String>,
    /// MariaDB: a unix socket file (connect through it rather than host and port)
    pub socket: Option<String>,
}

/// The TLS version an endpoint pins (`tls_version`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum TlsVersion {
    V12,
    V13,
}

impl TlsVersion {
    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::V12 => "TLSv1.2",
            TlsVersion::V13 => "TLSv1.3",
        }
    }
}

fn s(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Endpoint {
    /// Whether the endpoint asks for TLS at all (require, verify-ca, verify-full).
    pub fn tls_required(&self) -> bool {
        matches!(self.sslmode.as_str(), "require" | "verify-ca" | "verify-full")
    }

    pub fn parse(v: &Value) -> Res<Endpoint> {
        if !v.is_object() {
            return Err(Fail::protocol("open needs an endpoint object"));
        }
        let port = match v.get("port") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => Some(p.parse().map_err(|_| Fail::protocol("endpoint port is not a number"))?),
            Some(p) => Some(
                protocol::json_int(p)
                    .and_then(|p| u16::try_from(p).ok())
                    .ok_or_else(|| Fail::protocol("endpoint port is not a port number"))?,
            ),
        };
        Ok(Endpoint {
            dbms: s(v, "dbms").unwrap_or_default(),
            host: s(v, "host"),
            port,
            database: s(v, "database"),
            user: s(v, "user"),
            password: s(v, "password").filter(|p| !p.is_empty()),
            schema: s(v, "schema").filter(|p| !p.is_empty()),
            read_only: v.get("read_only").and_then(Value::as_bool).unwrap_or(false),
            sslmode: match s(v, "sslmode").filter(|m| !m.is_empty()) {
                None => "prefer".into(),
                Some(m) if ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(&m.as_str()) => m,
                Some(m) => return Err(Fail::protocol(format!("endpoint sslmode {m:?}: expected disable, prefer, require, verify-ca or verify-full"))),
            },
            sslrootcert: s(v, "sslrootcert").filter(|p| !p.is_empty()),
            tls_version: match s(v, "tls_version").as_deref() {
                None | Some("") => None,
                Some("TLSv1.2") => Some(TlsVersion::V12),
                Some("TLSv1.3") => Some(TlsVersion::V13),
                Some(other) => return Err(Fail::unsupported(format!("tls_version {other}: this worker pins TLSv1.2 or TLSv1.3 only"))),
            },
            direct: match s(v, "sslnegotiation").as_deref() {
                None | Some("") | Some("postgres") => false,
                Some("direct") => true,
                Some(other) => return Err(Fail::protocol(format!("endpoint sslnegotiation {other:?}: expected postgres or direct"))),
            },
            compress: v.get("compress").and_then(Value::as_bool).unwrap_or(false),
            file: s(v, "file"),
            socket: s(v, "socket").filter(|p| !p.is_empty()),
        })
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Kind {
    Connect,
    Scan,
    Exec,
    Batch,
    /// a parent table's rows with their children and grandchildren (`load`)
    Load,
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Mode {
    Literal,
    Extended,
    Prepared,
    /// record-level access (MariaDB's HANDLER): a scan or a keyed exec, with `record`
    Record,
}

/// The answer of a driver without record-level access to a `record` step (main.rs answers
/// it before any driver is asked; this is the drivers' own word, should one reach them).
pub fn no_record() -> Fail {
    Fail::unsupported("record-level access (mode record) is MariaDB's HANDLER, which this driver does not have")
}

/// What a `record` step reads: every record of `table` (a scan), or those whose `index` key
/// equals the step's params (an exec).
#[derive(Clone, Debug)]
pub struct Record {
    pub table: String,
    pub index: Option<String>,
}

/// What the step's statement does, as the runner worked it out (protocol: `shape`, sent
/// with every step that has `sql`; None for a statement of no shape): a layer plans its calls
/// from it, a driver's batch that writes otherwise than the statement (COPY, a multi-row
/// VALUES) takes its table and columns from it. No worker parses SQL.
#[derive(Clone, Debug)]
pub struct Shape {
    /// select, insert, update or delete
    pub kind: String,
    pub table: String,
    /// read (select: when every result column is one of `table`'s, else empty), written
    /// (insert) or set (update), in the order of the markers
    pub columns: Vec<String>,
    /// the plain form: compared for equality with a marker, ANDed, after `columns` in the
    /// markers' order; None when the statement is richer (read `filter` and the rest then)
    pub where_: Option<Vec<String>>,
    /// what the shape uses (PROTOCOL.md, Shapes: `select`, `get`, `compare`, `order` …); the
    /// runner never sends a layer a feature its hello does not map
    #[allow(dead_code)]
    pub features: Vec<String>,
    /// the WHERE as a tree (select, update, delete), None without one
    pub filter: Option<Cond>,
    /// select: each result column
    pub items: Vec<Item>,
    /// select: `SELECT *` (`items` then lists every column of `table`)
    #[allow(dead_code)]
    pub star: bool,
    pub joins: Vec<Join>,
    pub group: Vec<ColRef>,
    pub order: Vec<Order>,
    pub limit: Option<Operand>,
    pub offset: Option<Operand>,
    /// update: each assignment
    pub set: Vec<Assign>,
    /// for a table of the suite: all its columns, their SQL types as the suite declares
    /// them, and its primary key
    pub table_columns: Option<Vec<String>>,
    pub table_types: Option<Vec<String>>,
    pub key: Option<Vec<String>>,
    /// every table of the suite the shape names, as an ORM maps an entity from it
    pub tables: Vec<TableInfo>,
}

/// A column of a table, by the table's name.
#[derive(Clone, Debug, PartialEq)]
pub struct ColRef {
    pub table: String,
    pub column: String,
}

/// An operand: the i-th marker's value (`params[i]`), or a literal of the statement.
#[derive(Clone, Debug)]
pub enum Operand {
    Param(usize),
    Value(Gv),
}

impl Operand {
    /// Its value in an operation whose parameters are `row`.
    #[inline]
    pub fn of<'a>(&'a self, row: &'a [Gv]) -> &'a Gv {
        match self {
            Operand::Param(i) => row.get(*i).unwrap_or(&Gv::Null),
            Operand::Value(v) => v,
        }
    }
}

/// A comparison operator of a condition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Between,
    In,
    IsNull,
    IsNotNull,
    Like,
}

/// A WHERE clause as a tree.
#[derive(Clone, Debug)]
pub enum Cond {
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Cmp { op: Op, column: ColRef, args: Vec<Operand> },
}

/// An aggregate function of a select item.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Agg {
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

impl Agg {
    pub fn name(self) -> &'static str {
        match self {
            Agg::Count => "count",
            Agg::Sum => "sum",
            Agg::Min => "min",
            Agg::Max => "max",
            Agg::Avg => "avg",
        }
    }
}

/// A result column of a select: a column, or an aggregate (`count(*)`: no column).
#[derive(Clone, Debug)]
pub enum Item {
    Col(ColRef),
    Agg { f: Agg, column: Option<ColRef> },
}

#[derive(Clone, Debug)]
pub struct Join {
    /// false: an inner join; true: a left join
    pub left: bool,
    pub table: String,
    /// `a = b`: `a` a column of a table before it, `b` of the joined table
    pub on: (ColRef, ColRef),
}

#[derive(Clone, Debug)]
pub struct Order {
    pub column: ColRef,
    pub desc: bool,
}

/// An assignment of an update: `column = arg`, or with `add` `column = column + arg`.
#[derive(Clone, Debug)]
pub struct Assign {
    pub column: String,
    pub add: bool,
    pub arg: Operand,
}

/// A table of the suite as the shape gives it: its columns, their types, its key and its
/// references (column → the table and column it references).
#[derive(Clone, Debug)]
pub struct TableInfo {
    pub name: String,
    pub columns: Vec<String>,
    pub types: Vec<String>,
    pub key: Vec<String>,
    pub references: Vec<(String, ColRef)>,
}

/// A literal of a shape (a JSON number, string or boolean) as a generated value: an integer,
/// a float, text or a boolean; a layer converts it to its column's type as it does a
/// parameter.
fn literal_gv(v: &Value) -> Gv {
    match v {
        Value::Bool(b) => Gv::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Gv::Int(i),
            None => Gv::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(t) => Gv::Text(t.clone()),
        _ => Gv::Null,
    }
}

impl Shape {
    fn parse(v: Option<&Value>) -> Res<Option<Shape>> {
        let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(None) };
        let bad = |what: &str| Fail::protocol(format!("shape: {what}"));
        let names_of = |x: Option<&Value>, key: &str| -> Res<Option<Vec<String>>> {
            match x {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| x.as_str().map(str::to_string).ok_or_else(|| bad(&format!("{key} must be a list of names"))))
                    .collect::<Res<Vec<_>>>()
                    .map(Some),
                Some(_) => Err(bad(&format!("{key} must be a list of names"))),
            }
        };
        let names = |key: &str| names_of(v.get(key), key);
        let col = |c: &Value| -> Res<ColRef> {
            Ok(ColRef {
                table: s(c, "table").ok_or_else(|| bad("a column needs a table"))?,
                column: s(c, "column").ok_or_else(|| bad("a column needs a column"))?,
            })
        };
        let operand = |o: &Value| -> Res<Operand> {
            if let Some(p) = o.get("param") {
                return protocol::json_int(p).filter(|p| *p >= 0).map(|p| Operand::Param(p as usize)).ok_or_else(|| bad("param must be an index"));
            }
            match o.get("value") {
                Some(x) => Ok(Operand::Value(literal_gv(x))),
                None => Err(bad("an operand is {\"param\": i} or {\"value\": v}")),
            }
        };
        let opt_operand = |key: &str| -> Res<Option<Operand>> {
            match v.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(o) => operand(o).map(Some),
            }
        };
        let list = |key: &str| -> &[Value] { v.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]) };
        fn cond(c: &Value, col: &dyn Fn(&Value) -> Res<ColRef>, operand: &dyn Fn(&Value) -> Res<Operand>) -> Res<Cond> {
            let bad = |what: &str| Fail::protocol(format!("shape: {what}"));
            for (key, and) in [("and", true), ("or", false)] {
                if let Some(terms) = c.get(key) {
                    let terms = terms.as_array().ok_or_else(|| bad("and/or take a list"))?;
                    let t = terms.iter().map(|t| cond(t, col, operand)).collect::<Res<Vec<_>>>()?;
                    return Ok(if and { Cond::And(t) } else { Cond::Or(t) });
                }
            }
            let op = match c.get("op").and_then(Value::as_str) {
                Some("=") => Op::Eq,
                Some("<>") => Op::Ne,
                Some("<") => Op::Lt,
                Some("<=") => Op::Le,
                Some(">") => Op::Gt,
                Some(">=") => Op::Ge,
                Some("between") => Op::Between,
                Some("in") => Op::In,
                Some("is null") => Op::IsNull,
                Some("is not null") => Op::IsNotNull,
                Some("like") => Op::Like,
                other => return Err(bad(&format!("unknown operator {other:?}"))),
            };
            let args = c.get("args").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            Ok(Cond::Cmp {
                op,
                column: col(c.get("column").ok_or_else(|| bad("a comparison needs a column"))?)?,
                args: args.iter().map(operand).collect::<Res<Vec<_>>>()?,
            })
        }
        let filter = match v.get("filter") {
            None | Some(Value::Null) => None,
            Some(f) => Some(cond(f, &col, &operand)?),
        };
        let items = list("items")
            .iter()
            .map(|it| -> Res<Item> {
                match it.get("fn").and_then(Value::as_str) {
                    None => col(it).map(Item::Col),
                    Some(f) => Ok(Item::Agg {
                        f: match f {
                            "count" => Agg::Count,
                            "sum" => Agg::Sum,
                            "min" => Agg::Min,
                            "max" => Agg::Max,
                            "avg" => Agg::Avg,
                            other => return Err(bad(&format!("unknown aggregate {other}"))),
                        },
                        column: match it.get("column") {
                            None | Some(Value::Null) => None,
                            Some(_) => Some(col(it)?),
                        },
                    }),
                }
            })
            .collect::<Res<Vec<_>>>()?;
        let joins = list("joins")
            .iter()
            .map(|j| -> Res<Join> {
                let on = j.get("on").and_then(Value::as_array).filter(|o| o.len() == 2).ok_or_else(|| bad("a join's on is [a, b]"))?;
                Ok(Join {
                    left: j.get("type").and_then(Value::as_str) == Some("left"),
                    table: s(j, "table").ok_or_else(|| bad("a join needs a table"))?,
                    on: (col(&on[0])?, col(&on[1])?),
                })
            })
            .collect::<Res<Vec<_>>>()?;
        let group = list("group").iter().map(col).collect::<Res<Vec<_>>>()?;
        let order = list("order")
            .iter()
            .map(|o| Ok(Order { column: col(o)?, desc: o.get("desc").and_then(Value::as_bool).unwrap_or(false) }))
            .collect::<Res<Vec<_>>>()?;
        let set = list("set")
            .iter()
            .map(|a| -> Res<Assign> {
                Ok(Assign {
                    column: s(a, "column").ok_or_else(|| bad("an assignment needs a column"))?,
                    add: a.get("op").and_then(Value::as_str) == Some("+"),
                    arg: operand(a.get("arg").ok_or_else(|| bad("an assignment needs an arg"))?)?,
                })
            })
            .collect::<Res<Vec<_>>>()?;
        let mut tables = Vec::new();
        if let Some(Value::Object(m)) = v.get("tables") {
            for (name, t) in m {
                let mut references = Vec::new();
                if let Some(Value::Object(r)) = t.get("references") {
                    for (c, target) in r {
                        references.push((c.clone(), col(target)?));
                    }
                }
                tables.push(TableInfo {
                    name: name.clone(),
                    columns: names_of(t.get("columns"), "columns")?.unwrap_or_default(),
                    types: names_of(t.get("types"), "types")?.unwrap_or_default(),
                    key: names_of(t.get("key"), "key")?.unwrap_or_default(),
                    references,
                });
            }
        }
        Ok(Some(Shape {
            kind: s(v, "kind").ok_or_else(|| bad("a shape needs a kind"))?,
            table: s(v, "table").ok_or_else(|| bad("a shape needs a table"))?,
            columns: names("columns")?.unwrap_or_default(),
            where_: names("where")?,
            features: names("features")?.unwrap_or_default(),
            filter,
            items,
            star: v.get("star").and_then(Value::as_bool).unwrap_or(false),
            joins,
            group,
            order,
            limit: opt_operand("limit")?,
            offset: opt_operand("offset")?,
            set,
            table_columns: names("table_columns")?,
            table_types: names("table_types")?,
            key: names("key")?,
            tables,
        }))
    }

    /// The table of the suite named `name`, as the shape gives it.
    pub fn table_info(&self, name: &str) -> Option<&TableInfo> {
        self.tables.iter().find(|t| t.name == name)
    }
}

/// One level of a `load` step (PROTOCOL.md, Loading associations): a table whose `column`
/// references `parent_column` of the level above, its entity, and the drivers' statements.
#[derive(Clone, Debug)]
pub struct Level {
    pub table: String,
    pub column: String,
    pub parent_column: String,
    pub table_columns: Vec<String>,
    pub table_types: Vec<String>,
    pub key: Vec<String>,
    /// the level's rows of one parent (one `?`)
    pub one: String,
    /// the rows of many parents: `head` + the markers joined by `, ` + `tail`
    pub in_: (String, String),
}

/// Loading strategy of a `load` step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Strategy {
    Lazy,
    Joined,
    Selectin,
}

/// A `load` step's association: how, the levels below the parents, the joined statement.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    pub strategy: Strategy,
    pub levels: Vec<Level>,
    pub joined: String,
}

impl LoadSpec {
    fn parse(v: Option<&Value>) -> Res<Option<LoadSpec>> {
        let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(None) };
        let bad = |what: &str| Fail::protocol(format!("load: {what}"));
        let names = |x: &Value, key: &str| -> Res<Vec<String>> {
            x.get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| bad(&format!("{key} must be a list")))?
                .iter()
                .map(|n| n.as_str().map(str::to_string).ok_or_else(|| bad(&format!("{key} must be a list of names"))))
                .collect()
        };
        let strategy = match v.get("strategy").and_then(Value::as_str) {
            Some("lazy") => Strategy::Lazy,
            Some("joined") => Strategy::Joined,
            Some("selectin") => Strategy::Selectin,
            other => return Err(bad(&format!("unknown strategy {other:?}"))),
        };
        let levels = v
            .get("levels")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("levels must be a list"))?
            .iter()
            .map(|l| -> Res<Level> {
                let in_ = l.get("in").and_then(Value::as_array).filter(|a| a.len() == 2).ok_or_else(|| bad("a level's in is [head, tail]"))?;
                let text = |x: &Value| x.as_str().map(str::to_string).ok_or_else(|| bad("statements are text"));
                Ok(Level {
                    table: s(l, "table").ok_or_else(|| bad("a level needs a table"))?,
                    column: s(l, "column").ok_or_else(|| bad("a level needs a column"))?,
                    parent_column: s(l, "parent_column").ok_or_else(|| bad("a level needs a parent_column"))?,
                    table_columns: names(l, "table_columns")?,
                    table_types: names(l, "table_types")?,
                    key: names(l, "key")?,
                    one: s(l, "one").ok_or_else(|| bad("a level needs one"))?,
                    in_: (text(&in_[0])?, text(&in_[1])?),
                })
            })
            .collect::<Res<Vec<_>>>()?;
        Ok(Some(LoadSpec { strategy, levels, joined: s(v, "joined").ok_or_else(|| bad("load needs joined"))? }))
    }
}

/// One step, with everything made before the clock: `values` holds n rows × nparams
/// generated values, `types` each parameter's type; `texts` the inlined statements of a literal step (of a `record` exec,
/// each operation's key values as literals, comma-separated).
pub struct Step {
    pub kind: Kind,
    pub mode: Mode,
    pub sql: String,
    pub marks: Vec<usize>,
    pub n: usize,
    pub batch: usize,
    pub nops: usize,
    pub commit_every: usize,
    pub fetch: bool,
    pub verify: bool,
    /// with `verify`: the first `dump` rows read are answered too, as typed values (0: none)
    pub dump: usize,
    pub latency_file: Option<String>,
    pub nparams: usize,
    pub values: Vec<Gv>,
    pub types: Vec<Ty>,
    pub texts: Vec<String>,
    pub record: Option<Record>,
    /// what the statement does
    pub shape: Option<Shape>,
    /// a `load` step's association
    pub load: Option<LoadSpec>,
}

fn int_field(msg: &Value, key: &str, dflt: i64) -> Res<i64> {
    match msg.get(key) {
        None | Some(Value::Null) => Ok(dflt),
        Some(Value::String(t)) => t.parse().map_err(|_| Fail::protocol(format!("field '{key}' must be an integer"))),
        Some(v) => protocol::json_int(v).ok_or_else(|| Fail::protocol(format!("field '{key}' must be an integer"))),
    }
}

pub(crate) fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

impl Step {
    /// Parses a `step` message and generates its parameters (and literal texts).
    pub fn parse(msg: &Value, dialect: Dialect) -> Res<Step> {
        let kind = match msg.get("kind").and_then(Value::as_str) {
            Some("connect") => Kind::Connect,
            Some("scan") => Kind::Scan,
            Some("exec") => Kind::Exec,
            Some("batch") => Kind::Batch,
            Some("load") => Kind::Load,
            Some(k) => return Err(Fail::protocol(format!("unknown step kind '{k}'"))),
            None => return Err(Fail::protocol("a step needs a kind")),
        };
        let n = int_field(msg, "iterations", -1)?;
        if n < 0 {
            return Err(Fail::protocol("a step needs iterations >= 0"));
        }
        let n = n as usize;
        let mut commit_every = int_field(msg, "commit_every", 0)?;
        if kind != Kind::Exec || commit_every < 0 {
            commit_every = 0;
        }
        let batch = int_field(msg, "batch", 0)?;
        if kind == Kind::Batch && batch < 1 {
            return Err(Fail::protocol("a batch step needs batch >= 1"));
        }
        let batch = batch.max(0) as usize;
        let fetch = matches!(kind, Kind::Scan | Kind::Load) || (kind == Kind::Exec && truthy(msg.get("fetch")));
        let sql = match kind {
            Kind::Connect => String::new(),
            _ => msg
                .get("sql")
                .and_then(Value::as_str)
                .ok_or_else(|| Fail::protocol("a step needs sql"))?
                .to_string(),
        };
        let mode = match (kind, msg.get("mode").and_then(Value::as_str)) {
            (Kind::Exec | Kind::Scan, Some("record")) => Mode::Record,
            (Kind::Exec, Some("literal")) => Mode::Literal,
            (Kind::Exec, Some("extended")) => Mode::Extended,
            (Kind::Exec, Some("prepared")) => Mode::Prepared,
            (Kind::Exec, Some(m)) => return Err(Fail::protocol(format!("unknown mode '{m}'"))),
            (Kind::Exec, None) => return Err(Fail::protocol("an exec step needs a mode")),
            _ => Mode::Extended,
        };
        let record = if mode == Mode::Record {
            let r = msg.get("record").ok_or_else(|| Fail::protocol("a record step needs record"))?;
            let table = s(r, "table").ok_or_else(|| Fail::protocol("record needs a table"))?;
            let index = s(r, "index");
            if kind == Kind::Exec && index.is_none() {
                return Err(Fail::protocol("a record exec step needs record.index (a keyed read)"));
            }
            Some(Record { table, index })
        } else {
            None
        };
        let marks = if kind == Kind::Connect { Vec::new() } else { protocol::markers(&sql) };
        let empty = Vec::new();
        let specs = msg.get("params").and_then(Value::as_array).unwrap_or(&empty);
        let mut values = Vec::new();
        let mut types = Vec::new();
        let mut texts = Vec::new();
        let nparams = marks.len();
        match kind {
            Kind::Exec | Kind::Batch | Kind::Load => {
                if specs.len() != nparams {
                    return Err(Fail::protocol(format!("{} markers but {} params", nparams, specs.len())));
                }
                let mut gens = specs.iter().map(Gen::new).collect::<Result<Vec<_>, _>>().map_err(Fail::protocol)?;
                types = gens.iter().map(Gen::ty).collect();
                values.reserve(n * nparams);
                for i in 0..n {
                    for g in gens.iter_mut() {
                        values.push(g.next(i as i64));
                    }
                }
                if kind == Kind::Exec && mode == Mode::Literal {
                    texts = (0..n)
                        .map(|i| protocol::inline(&sql, &marks, &values[i * nparams..(i + 1) * nparams], dialect))
                        .collect();
                } else if kind == Kind::Exec && mode == Mode::Record {
                    // the key, as literals: HANDLER … READ index = (…)
                    texts = (0..n)
                        .map(|i| {
                            let mut key = String::new();
                            for (k, v) in values[i * nparams..(i + 1) * nparams].iter().enumerate() {
                                if k > 0 {
                                    key.push_str(", ");
                                }
                                protocol::literal(v, dialect, &mut key);
                            }
                            key
                        })
                        .collect();
                }
            }
            Kind::Scan if nparams > 0 => {
                return Err(Fail::protocol(format!(
                    "a scan runs one query without params, but the sql has {nparams} markers"
                )))
            }
            _ => {}
        }
        let nops = if kind == Kind::Batch { n.div_ceil(batch) } else { n };
        Ok(Step {
            kind,
            mode,
            sql,
            marks,
            n,
            batch,
            nops,
            commit_every: commit_every as usize,
            fetch,
            verify: truthy(msg.get("verify")),
            dump: int_field(msg, "dump", 0)?.max(0) as usize,
            latency_file: msg.get("latency_file").and_then(Value::as_str).map(str::to_string),
            nparams,
            values,
            types,
            texts,
            record,
            shape: Shape::parse(msg.get("shape"))?,
            load: match kind {
                Kind::Load => Some(LoadSpec::parse(msg.get("load"))?.ok_or_else(|| Fail::protocol("a load step needs load"))?),
                _ => None,
            },
        })
    }

    /// `t (cols)` of the rows the statement inserts, from its shape, for a batch variant
    /// (`what`: `batch=copy` …) that writes them otherwise than the statement; or why it
    /// cannot (`unsupported`).
    pub fn insert_target(&self, what: &str) -> Res<String> {
        let why = match &self.shape {
            None => "it has no plain shape (its shape is null)".to_string(),
            Some(s) if s.kind != "insert" => format!("it is not an insert (its shape's kind is {})", s.kind),
            Some(s) if s.columns.is_empty() => "it names no column list".to_string(),
            Some(s) if s.columns.len() != self.nparams => {
                format!("its shape's columns ({}) are not as many as its parameters ({})", s.columns.len(), self.nparams)
            }
            Some(s) => return Ok(protocol::table_columns(&s.table, &s.columns)),
        };
        Err(Fail::unsupported(format!("{what} writes only INSERT INTO t (cols) VALUES (?, …) statements: {why}")))
    }

    /// Operation i reads rows (a scan, or an exec with `fetch`).
    pub fn reads(&self) -> bool {
        self.fetch && matches!(self.kind, Kind::Scan | Kind::Exec | Kind::Load)
    }

    /// The parameters of row i.
    #[inline]
    pub fn row(&self, i: usize) -> &[Gv] {
        &self.values[i * self.nparams..(i + 1) * self.nparams]
    }

    /// The rows of batch group g.
    #[inline]
    pub fn group(&self, g: usize) -> std::ops::Range<usize> {
        let first = g * self.batch;
        first..(first + self.batch).min(self.n)
    }

    /// `commit_every`: BEGIN before operation i.
    #[inline]
    pub fn begins(&self, i: usize) -> bool {
        self.commit_every > 0 && i.is_multiple_of(self.commit_every)
    }

    /// `commit_every`: COMMIT after operation i.
    #[inline]
    pub fn commits(&self, i: usize) -> bool {
        self.commit_every > 0 && ((i + 1).is_multiple_of(self.commit_every) || i + 1 == self.nops)
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the clock every worker uses).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// (user, sys) CPU of the whole process in nanoseconds, from getrusage(RUSAGE_SELF).
pub fn rusage() -> (u64, u64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

/// What a step's loop produced.
pub struct Outcome {
    pub n: usize,
    pub rows: i64,
    pub first_ns: u64,
    pub reads: bool,
    pub sink: Sink,
    pub timed: Option<Timed>,
    /// `"raw"` when a layer ran the statement through its raw-SQL API (PROTOCOL.md, step)
    pub api: Option<&'static str>,
}

impl Outcome {
    /// The answer of a plain step: the verification answer (checksum, the cold start), or
    /// the timed one (its latencies written to `latency_file` first).
    pub fn answer(mut self, latency_file: Option<&str>, server_pids: &[i64]) -> Res<Map<String, Value>> {
        let mut a = Map::new();
        a.insert("n".into(), json!(self.n));
        a.insert("rows".into(), json!(self.rows));
        if let Some(api) = self.api {
            a.insert("api".into(), json!(api));
        }
        match &self.timed {
            None => {
                let values = if self.reads { self.rows * self.sink.width as i64 } else { 0 };
                a.insert("values".into(), json!(values));
                a.insert("checksum".into(), json!(self.sink.hex()));
                a.insert("first_op_ns".into(), json!(self.first_ns));
                if let Some(dump) = self.sink.take_dump().filter(|_| self.reads) {
                    a.insert("dump".into(), dump);
                }
                if let Some(n) = self.sink.statements {
                    a.insert("statements".into(), json!(n));
                }
            }
            Some(t) => {
                if let Some(path) = latency_file {
                    let mut bytes = Vec::with_capacity(t.lat.len() * 8);
                    for x in &t.lat {
                        bytes.extend_from_slice(&x.to_le_bytes());
                    }
                    std::fs::write(path, bytes).map_err(|e| Fail::internal(format!("latency_file {path}: {e}")))?;
                }
                a.insert("elapsed_ns".into(), json!(t.elapsed_ns));
                if self.reads && self.sink.ncols > 0 {
                    a.insert("values".into(), json!(self.rows * self.sink.ncols as i64));
                }
                a.insert("user_ns".into(), json!(t.user_ns));
                a.insert("sys_ns".into(), json!(t.sys_ns));
                a.insert("first_op_ns".into(), json!(self.first_ns));
                if !server_pids.is_empty() {
                    a.insert("server_pids".into(), json!(server_pids));
                }
            }
        }
        Ok(a)
    }
}

pub struct Timed {
    pub elapsed_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub lat: Vec<u64>,
}

/// The latency buffer of a timed pass, allocated and touched before the clock.
pub fn latency_buffer(n: usize) -> Vec<u64> {
    let mut lat = vec![0u64; n];
    for x in lat.iter_mut() {
        *x = std::hint::black_box(u64::MAX);
    }
    lat
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(sql: &str, shape: Value) -> Step {
        let params: Vec<Value> = protocol::markers(sql).iter().map(|_| json!({"kind": "seq"})).collect();
        let msg = json!({"kind": "batch", "iterations": 2, "batch": 2, "sql": sql, "params": params, "shape": shape});
        Step::parse(&msg, Dialect::PostgreSQL).unwrap()
    }

    #[test]
    fn insert_target() {
        let st = batch(
            "INSERT INTO conf_new (id, grp) VALUES (?, ?)",
            json!({"kind": "insert", "table": "conf_new", "columns": ["id", "grp"], "where": [],
                   "table_columns": ["id", "grp", "label"], "table_types": ["integer", "integer", "text"], "key": ["id"]}),
        );
        assert_eq!(format!("COPY {} FROM STDIN", st.insert_target("batch=copy").unwrap()), "COPY \"conf_new\" (\"id\", \"grp\") FROM STDIN");
        let why = |st: Step| st.insert_target("batch=values").unwrap_err();
        let f = why(batch("INSERT INTO t SELECT ?", Value::Null));
        assert_eq!(f.kind, "unsupported");
        assert_eq!(f.message, "batch=values writes only INSERT INTO t (cols) VALUES (?, …) statements: it has no plain shape (its shape is null)");
        let f = why(batch("UPDATE t SET a = ?", json!({"kind": "update", "table": "t", "columns": ["a"], "where": []})));
        assert!(f.message.ends_with("it is not an insert (its shape's kind is update)"), "{}", f.message);
        let f = why(batch("INSERT INTO t (a, b) VALUES (?, ?)", json!({"kind": "insert", "table": "t", "columns": ["a"], "where": []})));
        assert!(f.message.ends_with("its shape's columns (1) are not as many as its parameters (2)"), "{}", f.message);
    }
}
