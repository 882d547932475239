// Records, at build time, the versions the worker reports in `hello`: the crates as resolved
// in Cargo.lock and the compiler that built it. And generates the Diesel layers' schema:
// `table!` definitions (with an entity, an insertable row and a changeset per table) from the
// tables of the built-in suites (src/accessbench/suites/*.toml) and of the conformance
// script, so that a new built-in suite needs no code change; and SeaORM's entities
// (DeriveEntityModel) from the same tables.
use std::fmt::Write as _;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
    // Every locked crate as ABW_V_<NAME> (upper case, '-' as '_'), the first version listed
    // where a crate is locked twice: a driver's crate needs no line here.
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    for (krate, version) in locked_versions(&lock) {
        let var = format!("ABW_V_{}", krate.to_uppercase().replace('-', "_"));
        if seen.insert(var.clone()) {
            println!("cargo:rustc-env={var}={version}");
        }
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc (unknown version)".into());
    println!("cargo:rustc-env=ABW_RUSTC={version}");

    // the layers' schema, for a build that has them (not a driver version's: Cargo.toml)
    if std::env::var_os("CARGO_FEATURE_ALL_METHODS").is_some() {
        let tables = suite_tables();
        let out = std::env::var("OUT_DIR").expect("OUT_DIR");
        let write = |name: &str, text: String| std::fs::write(format!("{out}/{name}"), text).expect("write generated schema");
        write("diesel_schema.rs", diesel_schema(&tables));
        write("seaorm_entities.rs", seaorm_entities(&tables));
    }
}

fn locked_versions(lock: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = lock.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        if let Some(name) = line.strip_prefix("name = ") {
            if let Some(v) = lines.peek().and_then(|l| l.strip_prefix("version = ")) {
                out.push((name.trim_matches('"').to_string(), v.trim_matches('"').to_string()));
            }
        }
    }
    out
}

// ---- the suites' tables ---------------------------------------------------------------------

/// A table of a built-in suite: its columns (name, SQL type as the suite declares it), key
/// and references (column, the table and column it references).
struct Table {
    name: String,
    columns: Vec<(String, String)>,
    key: Vec<String>,
    refs: Vec<(String, String, String)>,
}

/// Names the generated code cannot take as they are: Rust keywords, and what `table!` itself
/// defines in a table's module.
const RESERVED: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let",
    "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
    "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do",
    "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen", "table", "star",
    "all_columns", "columns", "dsl", "SqlType", "is_nullable", "Row", "New", "Changes", "row", "new",
    "changes",
];

fn ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !RESERVED.contains(&s)
}

/// Every table of the built-in suites and of the conformance script, `like = "x"` resolved
/// within its file. A table the generated code cannot declare (no primary key: a Diesel
/// table needs one; a name that is not a plain lower-case identifier; more
/// than 32 columns; or a name two files define differently) is left out: the layers then run
/// its statements through their raw-SQL APIs.
fn suite_tables() -> Vec<Table> {
    // ../../src/accessbench from the crate; ABW_ACCESSBENCH names it for a build of a copy of
    // the crate's manifest elsewhere (a driver version's: src/accessbench/methods/versions.py)
    println!("cargo:rerun-if-env-changed=ABW_ACCESSBENCH");
    let root = std::env::var("ABW_ACCESSBENCH").unwrap_or_else(|_| "../../src/accessbench".into());
    let root = std::path::Path::new(&root);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("suites"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect())
        .unwrap_or_default();
    files.sort();
    files.push(root.join("conformance/script.toml"));
    println!("cargo:rerun-if-changed={}", root.join("suites").display());
    let mut all: Vec<Table> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let doc: toml::Table = match text.parse() {
            Ok(d) => d,
            Err(e) => {
                println!("cargo:warning=skipping {}: {e}", file.display());
                continue;
            }
        };
        // a suite whose every step is a page of the web tier (TechEmpower's tests, S5's pages)
        // is run by tier methods only: no layer of this worker reads its tables
        let steps: Vec<&toml::Value> = doc.get("steps").and_then(|v| v.as_array()).into_iter().flatten().collect();
        if !steps.is_empty() && steps.iter().all(|s| s.get("kind").and_then(|k| k.as_str()) == Some("page")) {
            continue;
        }
        let mut here: Vec<Table> = Vec::new();
        for t in doc.get("tables").and_then(|v| v.as_array()).into_iter().flatten() {
            let Some(name) = t.get("name").and_then(|v| v.as_str()) else { continue };
            let model = t.get("like").and_then(|v| v.as_str()).and_then(|l| here.iter().find(|x| x.name == l));
            let columns: Vec<(String, String)> = match t.get("columns").and_then(|v| v.as_array()) {
                Some(cols) => cols
                    .iter()
                    .filter_map(|c| Some((c.get("name")?.as_str()?.to_string(), c.get("type")?.as_str()?.to_string())))
                    .collect(),
                None => model.map(|m| m.columns.clone()).unwrap_or_default(),
            };
            let refs: Vec<(String, String, String)> = match t.get("columns").and_then(|v| v.as_array()) {
                Some(cols) => cols
                    .iter()
                    .filter_map(|c| {
                        let (table, column) = c.get("references")?.as_str()?.split_once('.')?;
                        Some((c.get("name")?.as_str()?.to_string(), table.to_string(), column.to_string()))
                    })
                    .collect(),
                None => model.map(|m| m.refs.clone()).unwrap_or_default(),
            };
            let key: Vec<String> = match t.get("primary_key").and_then(|v| v.as_array()) {
                Some(k) => k.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                None if t.get("columns").is_none() => model.map(|m| m.key.clone()).unwrap_or_default(),
                None => Vec::new(),
            };
            here.push(Table { name: name.to_string(), columns, key, refs });
        }
        for t in here {
            let fits = ident(&t.name)
                && !t.key.is_empty()
                && t.columns.len() <= 32
                && t.columns.iter().all(|(c, ty)| ident(c) && c != &t.name && sql_type(ty).is_some())
                && t.key.iter().all(|k| t.columns.iter().any(|(c, _)| c == k));
            match all.iter().position(|x| x.name == t.name) {
                Some(i) if all[i].columns != t.columns || all[i].key != t.key || all[i].refs != t.refs => {
                    all.remove(i);
                    refused.push(t.name.clone());
                }
                Some(_) => {}
                None if fits && !refused.contains(&t.name) => all.push(t),
                None => {}
            }
        }
    }
    all
}

/// The kind of a suite SQL type (`varchar(40)` → "text"), or None for one the schema does not map.
fn sql_type(t: &str) -> Option<&'static str> {
    let base = t.split('(').next().unwrap_or("").trim();
    Some(match base {
        "smallint" => "smallint",
        "integer" => "integer",
        "bigint" => "bigint",
        "boolean" => "boolean",
        "double" => "double",
        "real" => "real",
        "text" | "char" | "varchar" => "text",
        "date" => "date",
        "timestamp" => "timestamp",
        "bytes" => "bytes",
        "numeric" => "numeric",
        _ => return None,
    })
}

// ---- Diesel ---------------------------------------------------------------------------------------

/// A column's Diesel SQL type and Rust type on each backend: the type its values are read as,
/// which is how the driver under Diesel reads them (so that the checksums agree): on
/// MariaDB a BOOLEAN is TINYINT(1), an integer; on SQLite every integer is a 64-bit integer,
/// dates and timestamps are TEXT (as the target declares them), and a NUMERIC value is
/// whatever storage class SQLite gave it.
fn diesel_type(backend: &str, t: &str) -> (&'static str, &'static str) {
    let base = sql_type(t).unwrap_or("text");
    match (backend, base) {
        ("sqlite", "smallint" | "integer" | "bigint" | "boolean") => ("BigInt", "i64"),
        ("sqlite", "double" | "real") => ("Double", "f64"),
        ("sqlite", "date" | "timestamp" | "text") => ("Text", "String"),
        ("sqlite", "bytes") => ("Binary", "Vec<u8>"),
        ("sqlite", "numeric") => ("crate::drv_diesel::StoredNumeric", "crate::drv_diesel::Stored"),
        ("mysql", "boolean") => ("TinyInt", "i8"),
        ("mysql", "timestamp") => ("Datetime", "chrono::NaiveDateTime"),
        (_, "smallint") => ("SmallInt", "i16"),
        (_, "integer") => ("Integer", "i32"),
        (_, "bigint") => ("BigInt", "i64"),
        (_, "boolean") => ("Bool", "bool"),
        (_, "double") => ("Double", "f64"),
        (_, "real") => ("Float", "f32"),
        (_, "date") => ("Date", "chrono::NaiveDate"),
        (_, "timestamp") => ("Timestamp", "chrono::NaiveDateTime"),
        (_, "bytes") => ("Binary", "Vec<u8>"),
        (_, "numeric") => ("Numeric", "rust_decimal::Decimal"),
        _ => ("Text", "String"),
    }
}

fn strs(items: impl Iterator<Item = String>) -> String {
    let quoted: Vec<String> = items.map(|s| format!("{s:?}")).collect();
    format!("&[{}]", quoted.join(", "))
}

/// What Diesel's SQL types allow: `sum`/`avg` (Foldable), `min`/`max` (SqlOrd), `+` (an
/// update's increment).
fn foldable(st: &str) -> bool {
    matches!(st, "SmallInt" | "Integer" | "BigInt" | "Float" | "Double" | "Numeric")
}

fn orderable(st: &str) -> bool {
    matches!(st, "SmallInt" | "Integer" | "BigInt" | "Float" | "Double" | "Text" | "Date" | "Time" | "Timestamp" | "Datetime")
}

/// A reference Diesel can join and associate over (`joinable!`, `belongs_to`): a column of
/// `child` referencing the one-column primary key of another compiled table, of the same
/// Diesel SQL type; the first such column per pair of tables (Diesel allows one).
struct Rel {
    child: usize,
    fk: String,
    parent: usize,
}

fn relations(tables: &[Table], backend: &str) -> Vec<Rel> {
    let mut out: Vec<Rel> = Vec::new();
    for (ci, t) in tables.iter().enumerate() {
        for (fk, ptable, pcol) in &t.refs {
            let Some(pi) = tables.iter().position(|x| &x.name == ptable) else { continue };
            let p = &tables[pi];
            if pi == ci || p.key.len() != 1 || &p.key[0] != pcol {
                continue;
            }
            let ty = |t: &Table, c: &str| t.columns.iter().find(|x| x.0 == c).map(|x| diesel_type(backend, &x.1).0);
            if ty(t, fk).is_none() || ty(t, fk) != ty(p, pcol) || !hashable(diesel_type(backend, &p.columns.iter().find(|x| &x.0 == pcol).unwrap().1).1) {
                continue;
            }
            if out.iter().any(|r| (r.child == ci && r.parent == pi) || (r.child == pi && r.parent == ci)) {
                continue;
            }
            out.push(Rel { child: ci, fk: fk.clone(), parent: pi });
        }
    }
    out
}

/// A Rust type that can be a key of a HashSet (and an Identifiable's id).
fn hashable(rt: &str) -> bool {
    !matches!(rt, "f32" | "f64" | "crate::drv_diesel::Stored")
}

/// One module per backend (`pg`, `mysql`, `sqlite`), each with, per table: `table!`, the
/// entity (`Queryable`, `Identifiable`, and `Associations` with a `belongs_to` per reference
/// it can take), the row to insert (`Insertable`, a NULL bound as NULL), the changeset of its
/// other columns (`AsChangeset`, a column left out when not set), the comparisons of a
/// condition on each column and the ordering by each (generic over the query source, so that
/// the table alone and every join it takes part in share them), and its `TableOps`: the
/// operations of a step, written out so that each is a concrete Diesel query. Then, per
/// reference, `joinable!` (and `allow_tables_to_appear_in_same_query!` for every pair of
/// tables related through references), the four joins over it (`JoinOps`: inner and left,
/// either table first), and the association chains a load walks (`ChainOps`: a parent with
/// its children, and their children).
fn diesel_schema(tables: &[Table]) -> String {
    let mut s = String::from("// generated by build.rs from the built-in suites: do not edit\n");
    for (backend, db, conn) in [("pg", "Pg", "PgConnection"), ("mysql", "Mysql", "MysqlConnection"), ("sqlite", "Sqlite", "SqliteConnection")] {
        let _ = writeln!(s, "pub mod {backend} {{");
        let _ = writeln!(s, "#![allow(non_camel_case_types, unused_imports, clippy::all)]");
        let _ = writeln!(s, "use diesel::prelude::*;\nuse diesel::sql_types::{{Bool, Nullable}};\nuse diesel::{conn} as Conn;\ntype Db = diesel::{backend}::{db};");
        let _ = writeln!(s, "use crate::drv_diesel::{{cv, fail, raw_rows_hinted, AggItem, ChainOps, DynCol, Grouping, Items, JoinOps, OrderBy, Put, Query, RCond, RawRow, TableOps, Rows, Within}};\nuse crate::protocol::{{Gv, Sink, Val}};\nuse crate::step::{{Agg, Fail, Op, Res, Strategy}};\nuse std::collections::HashSet;\n");
        // the conditions: built on columns taken by their SQL type (DynCol: each column's own
        // expression, `.nullable()`, boxed), so that a comparison's type is its SQL type's, not
        // its column's (one `ops_<k>` per SQL and Rust type); a comparison is nullable, IS [NOT]
        // NULL is not; AND and OR combine them; the tree is attached to a query on any source
        // the runner's shape names (Within), the ordering likewise (OrderBy)
        let _ = writeln!(s, r#"pub type PredN = Box<dyn BoxableExpression<(), Db, SqlType = Nullable<Bool>>>;
pub type PredB = Box<dyn BoxableExpression<(), Db, SqlType = Bool>>;
/// A condition, boxed as Diesel builds one at run time.
pub enum Pred {{ B(PredB), N(PredN) }}
fn combine(a: Pred, b: Pred, or: bool) -> Pred {{
    match (a, b, or) {{
        (Pred::B(a), Pred::B(b), false) => Pred::B(Box::new(a.and(b))),
        (Pred::B(a), Pred::B(b), true) => Pred::B(Box::new(a.or(b))),
        (Pred::B(a), Pred::N(b), false) => Pred::N(Box::new(a.and(b))),
        (Pred::B(a), Pred::N(b), true) => Pred::N(Box::new(a.or(b))),
        (Pred::N(a), Pred::B(b), false) => Pred::N(Box::new(a.and(b))),
        (Pred::N(a), Pred::B(b), true) => Pred::N(Box::new(a.or(b))),
        (Pred::N(a), Pred::N(b), false) => Pred::N(Box::new(a.and(b))),
        (Pred::N(a), Pred::N(b), true) => Pred::N(Box::new(a.or(b))),
    }}
}}
/// The condition tree as boxed expressions: `a.and(b)`, `a.or(b)`, and each comparison from
/// `term` (side: the table of the query it is on, col: its column).
pub fn tree(f: &RCond, row: &[Gv], term: &dyn Fn(u8, usize, Op, &[&Gv]) -> Res<Pred>) -> Res<Pred> {{
    Ok(match f {{
        RCond::And(ts) | RCond::Or(ts) => {{
            let or = matches!(f, RCond::Or(_));
            let mut it = ts.iter();
            let mut p = tree(it.next().ok_or_else(|| Fail::protocol("an empty and/or"))?, row, term)?;
            for t in it {{
                p = combine(p, tree(t, row, term)?, or);
            }}
            p
        }}
        RCond::Cmp {{ side, col, op, args }} => {{
            let a: Vec<&Gv> = args.iter().map(|o| o.of(row)).collect();
            term(*side, *col, *op, &a)?
        }}
    }})
}}
/// `query.filter(condition)`: the query's condition tree, on its source.
macro_rules! filtered {{
    ($b:expr, $q:expr, $row:expr, $term:expr) => {{{{
        let b = $b;
        match &$q.filter {{
            None => b,
            Some(f) => b.filter(within(tree(f, $row, $term)?)),
        }}
    }}}};
}}
/// `query.then_order_by(column.asc() | .desc())` for each of the query's orderings.
macro_rules! ordered {{
    ($b:expr, $q:expr, $ord:expr) => {{{{
        let mut b = $b;
        for &(s, k, d) in &$q.order {{
            b = diesel::QueryDsl::then_order_by(b, OrderBy::new($ord(s, k, d)?));
        }}
        b
    }}}};
}}
/// The condition as a query's filter.
fn within<QS>(p: Pred) -> Within<Db, QS> {{
    match p {{
        Pred::B(p) => Within::new(p),
        Pred::N(p) => Within::new(p),
    }}
}}
fn int_of(v: &Gv) -> Res<i64> {{
    cv::<i64>(v)
}}"#);
        // the comparisons of each SQL type (and the Rust type its values convert to)
        let mut ops: Vec<(String, String, bool)> = Vec::new();
        for t in tables {
            for (_, ty) in &t.columns {
                let (st, rt) = diesel_type(backend, ty);
                let k = (st.to_string(), rt.to_string(), st == "Text");
                if !ops.contains(&k) {
                    ops.push(k);
                }
            }
        }
        for (k, (st, rt, text)) in ops.iter().enumerate() {
            let _ = writeln!(s, "/// A comparison on a column of SQL type {st} (its values as {rt}).\nfn ops_{k}(c: DynCol<Db, Nullable<{}>>, op: Op, a: &[&Gv]) -> Res<Pred> {{\n    Ok(crate::cmp!(c, {rt}, op, a, {text}))\n}}", if st.contains("::") { st.to_string() } else { format!("diesel::sql_types::{st}") });
        }
        let ops_of = |st: &str, rt: &str| ops.iter().position(|(a, b, _)| a == st && b == rt).unwrap();
        let rels = relations(tables, backend);
        let mut list = Vec::new();
        for (ti, t) in tables.iter().enumerate() {
            let n = &t.name;
            let key_ty: Vec<&str> = t.key.iter().map(|k| diesel_type(backend, &t.columns.iter().find(|c| &c.0 == k).unwrap().1).1).collect();
            let nullable = |c: &str| !t.key.iter().any(|k| k == c);
            let ident = key_ty.iter().all(|k| hashable(k));
            let parents: Vec<&Rel> = rels.iter().filter(|r| r.child == ti).collect();
            // table!
            let _ = writeln!(s, "diesel::table! {{\n    use diesel::sql_types::*;\n    {n} ({}) {{", t.key.join(", "));
            for (c, ty) in &t.columns {
                let st = diesel_type(backend, ty).0;
                let st = if nullable(c) { format!("Nullable<{st}>") } else { st.to_string() };
                let _ = writeln!(s, "        {c} -> {st},");
            }
            let _ = writeln!(s, "    }}\n}}");
            let field = |c: &str, ty: &str| {
                let rt = diesel_type(backend, ty).1;
                if nullable(c) { format!("Option<{rt}>") } else { rt.to_string() }
            };
            let _ = writeln!(s, "pub mod e_{n} {{\n    use super::*;");
            let derives = match (ident, parents.is_empty()) {
                (false, _) => "Queryable",
                (true, true) => "Queryable, Identifiable",
                (true, false) => "Queryable, Identifiable, Associations",
            };
            let _ = writeln!(s, "    #[derive({derives})]\n    #[diesel(table_name = {n}, primary_key({}))]", t.key.join(", "));
            if ident {
                for r in &parents {
                    let _ = writeln!(s, "    #[diesel(belongs_to(super::e_{}::Row, foreign_key = {}))]", tables[r.parent].name, r.fk);
                }
            }
            let _ = writeln!(s, "    pub struct Row {{");
            for (c, ty) in &t.columns {
                let _ = writeln!(s, "        pub {c}: {},", field(c, ty));
            }
            let _ = writeln!(s, "    }}");
            let _ = writeln!(s, "    #[derive(Insertable)]\n    #[diesel(table_name = {n}, treat_none_as_default_value = false)]\n    pub struct New {{");
            for (c, ty) in &t.columns {
                let _ = writeln!(s, "        pub {c}: {},", field(c, ty));
            }
            let _ = writeln!(s, "    }}");
            let others: Vec<&(String, String)> = t.columns.iter().filter(|(c, _)| nullable(c)).collect();
            if !others.is_empty() {
                let _ = writeln!(s, "    #[derive(AsChangeset)]\n    #[diesel(table_name = {n}, primary_key({}))]\n    pub struct Changes {{", t.key.join(", "));
                for (c, ty) in &others {
                    let _ = writeln!(s, "        pub {c}: Option<{}>,", field(c, ty));
                }
                let _ = writeln!(s, "    }}");
            }
            // emit, put, key
            let _ = writeln!(s, "    impl Row {{\n        pub fn emit(&self, out: &[usize], sink: &mut Sink) {{\n            sink.begin_row();\n            for &k in out {{\n                self.put(k, sink);\n            }}\n            sink.end_row(out.len());\n        }}");
            let _ = writeln!(s, "        /// The whole entity as a row of its table's columns.\n        pub fn emit_all(&self, sink: &mut Sink) {{\n            sink.begin_row();");
            for (c, _) in &t.columns {
                let _ = writeln!(s, "            self.{c}.put(sink);");
            }
            let _ = writeln!(s, "            sink.end_row({});\n        }}", t.columns.len());
            let _ = writeln!(s, "        pub fn put(&self, k: usize, sink: &mut Sink) {{\n            match k {{");
            for (i, (c, _)) in t.columns.iter().enumerate() {
                let _ = writeln!(s, "                {i} => self.{c}.put(sink),");
            }
            let _ = writeln!(s, "                _ => {{}}\n            }}\n        }}");
            if ident {
                let kt = if t.key.len() == 1 { key_ty[0].to_string() } else { format!("({})", key_ty.join(", ")) };
                let kv = if t.key.len() == 1 { format!("self.{}.clone()", t.key[0]) } else { format!("({})", t.key.iter().map(|k| format!("self.{k}.clone()")).collect::<Vec<_>>().join(", ")) };
                let _ = writeln!(s, "        pub fn key(&self) -> {kt} {{\n            {kv}\n        }}");
            }
            let _ = writeln!(s, "    }}");
            // new rows
            let _ = writeln!(s, "    pub fn new_row(cols: &[Option<usize>], vals: &[Gv]) -> Res<New> {{\n        Ok(New {{");
            for (i, (c, _)) in t.columns.iter().enumerate() {
                let _ = writeln!(s, "            {c}: cv(cols[{i}].map_or(&Gv::Null, |p| &vals[p]))?,");
            }
            let _ = writeln!(s, "        }})\n    }}");
            if !others.is_empty() {
                let _ = writeln!(s, "    pub fn changes(cols: &[Option<usize>], vals: &[Gv]) -> Res<Changes> {{\n        Ok(Changes {{");
                for (c, _) in &others {
                    let i = t.columns.iter().position(|x| &x.0 == c).unwrap();
                    let _ = writeln!(s, "            {c}: match cols[{i}] {{ Some(p) => Some(cv(&vals[p])?), None => None }},");
                }
                let _ = writeln!(s, "        }})\n    }}");
            }
            let _ = writeln!(s, "}}");
            // the comparisons of a condition, and the orderings; these, the aggregates and the
            // GROUP BY take each column as a DynCol (its own expression boxed, typed by its SQL
            // type): `asc`, `count`, `max` … are then compiled once per SQL type, not once per
            // column of every table (the same SQL, one more indirect call as it is written)
            let _ = writeln!(s, "/// A comparison on a column of {n} (the column `.nullable()`, taken by its SQL type).\npub fn term_{n}(col: usize, op: Op, a: &[&Gv]) -> Res<Pred> {{\n    match col {{");
            for (i, (c, ty)) in t.columns.iter().enumerate() {
                let (st, rt) = diesel_type(backend, ty);
                let _ = writeln!(s, "        {i} => ops_{}(DynCol::new({n}::{c}.nullable()), op, a),", ops_of(st, rt));
            }
            let _ = writeln!(s, "        _ => Err(Fail::internal(\"no such column\")),\n    }}\n}}");
            let _ = writeln!(s, "/// `column.asc()` / `column.desc()` of a column of {n}.\npub fn ord_{n}(col: usize, desc: bool) -> Res<Box<dyn diesel::query_builder::QueryFragment<Db> + Send>> {{\n    Ok(match (col, desc) {{");
            for (i, (c, _)) in t.columns.iter().enumerate() {
                let _ = writeln!(s, "        ({i}, false) => Box::new(DynCol::new({n}::{c}).asc()),\n        ({i}, true) => Box::new(DynCol::new({n}::{c}).desc()),");
            }
            let _ = writeln!(s, "        _ => return Err(Fail::internal(\"no such column\")),\n    }})\n}}");
            // a select of entities: filter, order, limit, offset
            let _ = writeln!(
                s,
                "/// `table.into_boxed()`, `.filter(condition)`, `.then_order_by(..)`, `.limit(n)`, `.offset(m)`, `.load::<Entity>`.\npub fn select_{n}(c: &mut Conn, q: &Query, row: &[Gv]) -> Res<Vec<e_{n}::Row>> {{\n    let mut b = {n}::table.into_boxed();\n    b = filtered!(b, q, row, &|_, k, op, a| term_{n}(k, op, a));\n    b = ordered!(b, q, |_, k, d| ord_{n}(k, d));\n    if let Some(l) = &q.limit {{\n        b = b.limit(int_of(l.of(row))?);\n    }}\n    if let Some(o) = &q.offset {{\n        b = b.offset(int_of(o.of(row))?);\n    }}\n    b.load(c).map_err(fail)\n}}"
            );
            // aggregates: a dynamic select clause
            let _ = writeln!(s, "fn items_{n}(q: &Query) -> Res<Items<Db, {n}::table>> {{\n    let mut it = Items::new();\n    for x in &q.items {{\n        match *x {{");
            for (i, (c, ty)) in t.columns.iter().enumerate() {
                let st = diesel_type(backend, ty).0;
                let _ = writeln!(s, "            AggItem::Col({i}) => it.add(DynCol::new({n}::{c})),\n            AggItem::Agg(Agg::Count, {i}) => it.add(diesel::dsl::count(DynCol::new({n}::{c}))),");
                if foldable(st) {
                    let _ = writeln!(s, "            AggItem::Agg(Agg::Sum, {i}) => it.add(diesel::dsl::sum(DynCol::new({n}::{c}))),\n            AggItem::Agg(Agg::Avg, {i}) => it.add(diesel::dsl::avg(DynCol::new({n}::{c}))),");
                }
                if orderable(st) {
                    let _ = writeln!(s, "            AggItem::Agg(Agg::Min, {i}) => it.add(diesel::dsl::min(DynCol::new({n}::{c}))),\n            AggItem::Agg(Agg::Max, {i}) => it.add(diesel::dsl::max(DynCol::new({n}::{c}))),");
                }
            }
            let _ = writeln!(s, "            AggItem::CountStar => it.add(diesel::dsl::count_star()),\n            AggItem::Agg(f, k) => return Err(Fail::unsupported(format!(\"Diesel has no {{}} of column {{}} of {n}: its SQL type lacks the trait the function needs (Foldable for sum and avg, SqlOrd for min and max)\", f.name(), k))),\n            AggItem::Col(_) => return Err(Fail::internal(\"no such column\")),\n        }}\n    }}\n    Ok(it)\n}}");
            let agg_body = |src: &str| {
                format!("{{\n            let mut b = {src}.select(it).into_boxed();\n            b = filtered!(b, q, row, &|_, k, op, a| term_{n}(k, op, a));\n            b = ordered!(b, q, |_, k, d| ord_{n}(k, d));\n            if let Some(l) = &q.limit {{\n                b = b.limit(int_of(l.of(row))?);\n            }}\n            if let Some(o) = &q.offset {{\n                b = b.offset(int_of(o.of(row))?);\n            }}\n            b.load(c).map_err(fail)?\n        }}")
            };
            let _ = writeln!(s, "/// `table.group_by(column).select(items).into_boxed()` (the items a dynamic select clause: columns, `count_star()`, `count`, `sum`, `avg`, `min`, `max`; the column a dynamic group by), filtered, ordered and paged as a select.\npub fn agg_{n}(c: &mut Conn, q: &Query, row: &[Gv], sink: &mut Sink) -> Res<i64> {{\n    let it = items_{n}(q)?;\n    let rows: Vec<RawRow> = match q.group {{\n        None => {},\n        Some(g) => {{\n            let g: Grouping<Db, {n}::table> = match g {{", agg_body(&format!("{n}::table")));
            for (i, (c, _)) in t.columns.iter().enumerate() {
                let _ = writeln!(s, "                {i} => Grouping::new(DynCol::new({n}::{c})),");
            }
            let _ = writeln!(s, "                _ => return Err(Fail::internal(\"no such column\")),\n            }};\n            {}\n        }}\n    }};\n    raw_rows_hinted(rows, &q.bytes, sink)\n}}", agg_body(&format!("{n}::table.group_by(g)")));
            // the key
            let key_expr = if t.key.len() == 1 {
                format!("cv::<{}>(key[0])?", key_ty[0])
            } else {
                let parts: Vec<String> = key_ty.iter().enumerate().map(|(i, ty)| format!("cv::<{ty}>(key[{i}])?")).collect();
                format!("({})", parts.join(", "))
            };
            let _ = writeln!(s, "pub struct Ops_{n};\nimpl TableOps<Conn> for Ops_{n} {{");
            let _ = writeln!(s, "    fn columns(&self) -> &'static [&'static str] {{ {} }}", strs(t.columns.iter().map(|c| c.0.clone())));
            let _ = writeln!(s, "    fn types(&self) -> &'static [&'static str] {{ {} }}", strs(t.columns.iter().map(|c| c.1.clone())));
            let _ = writeln!(s, "    fn key(&self) -> &'static [&'static str] {{ {} }}", strs(t.key.iter().cloned()));
            let _ = writeln!(
                s,
                "    fn get(&self, c: &mut Conn, key: &[&Gv], out: &[usize], sink: &mut Sink) -> Res<i64> {{\n        let found = {n}::table.find({key_expr}).first::<e_{n}::Row>(c).optional().map_err(fail)?;\n        Ok(match found {{ Some(r) => {{ r.emit(out, sink); 1 }} None => 0 }})\n    }}"
            );
            let _ = writeln!(
                s,
                "    fn scan(&self, c: &mut Conn, out: &[usize], sink: &mut Sink) -> Res<i64> {{\n        let rows: Vec<e_{n}::Row> = {n}::table.load(c).map_err(fail)?;\n        for r in &rows {{ r.emit(out, sink); }}\n        Ok(rows.len() as i64)\n    }}"
            );
            let _ = writeln!(
                s,
                "    fn query(&self, c: &mut Conn, q: &Query, row: &[Gv], sink: &mut Sink) -> Res<i64> {{\n        let rows = select_{n}(c, q, row)?;\n        let out: Vec<usize> = q.out.iter().map(|o| o.1).collect();\n        for r in &rows {{ r.emit(&out, sink); }}\n        Ok(rows.len() as i64)\n    }}"
            );
            let _ = writeln!(s, "    fn aggregate(&self, c: &mut Conn, q: &Query, row: &[Gv], sink: &mut Sink) -> Res<i64> {{\n        agg_{n}(c, q, row, sink)\n    }}");
            let _ = writeln!(
                s,
                "    fn rows(&self, cols: &[Option<usize>], vals: &[Gv], np: usize) -> Res<Rows> {{\n        let n = if np == 0 {{ 0 }} else {{ vals.len() / np }};\n        let rows = (0..n).map(|i| e_{n}::new_row(cols, &vals[i * np..(i + 1) * np])).collect::<Res<Vec<_>>>()?;\n        Ok(Box::new(rows))\n    }}"
            );
            let _ = writeln!(
                s,
                "    fn insert(&self, c: &mut Conn, rows: &Rows, r: std::ops::Range<usize>) -> Res<i64> {{\n        let rows = rows.downcast_ref::<Vec<e_{n}::New>>().ok_or_else(|| Fail::internal(\"rows of another table\"))?;\n        let n = if r.len() == 1 {{ diesel::insert_into({n}::table).values(&rows[r.start]).execute(c) }} else {{ diesel::insert_into({n}::table).values(&rows[r]).execute(c) }};\n        n.map(|n| n as i64).map_err(fail)\n    }}"
            );
            // a statement whose WHERE is the condition when there is one: the statement's
            // `into_boxed()` (Diesel's way to add a filter conditionally, one type either way)
            let filtered = |stmt: &str| {
                format!("{{\n            let mut b = {stmt}.into_boxed();\n            if let Some(p) = f.map(|f| tree(f, row, &|_, k, op, a| term_{n}(k, op, a))).transpose()? {{\n                b = b.filter(within(p));\n            }}\n            b.execute(c)\n        }}")
            };
            if others.is_empty() {
                let no = format!("Err(Fail::unsupported(\"table {n} has no column but its key to set\"))");
                let _ = writeln!(s, "    fn changes(&self, _cols: &[Option<usize>], _vals: &[Gv], _np: usize) -> Res<Rows> {{ {no} }}");
                let _ = writeln!(s, "    fn update(&self, _c: &mut Conn, _ch: &Rows, _i: usize, _key: &[&Gv]) -> Res<i64> {{ {no} }}");
                let _ = writeln!(s, "    fn update_where(&self, _c: &mut Conn, _ch: &Rows, _i: usize, _f: Option<&RCond>, _row: &[Gv]) -> Res<i64> {{ {no} }}");
            } else {
                let _ = writeln!(
                    s,
                    "    fn changes(&self, cols: &[Option<usize>], vals: &[Gv], np: usize) -> Res<Rows> {{\n        let n = if np == 0 {{ 0 }} else {{ vals.len() / np }};\n        let rows = (0..n).map(|i| e_{n}::changes(cols, &vals[i * np..(i + 1) * np])).collect::<Res<Vec<_>>>()?;\n        Ok(Box::new(rows))\n    }}"
                );
                let _ = writeln!(
                    s,
                    "    fn update(&self, c: &mut Conn, ch: &Rows, i: usize, key: &[&Gv]) -> Res<i64> {{\n        let ch = ch.downcast_ref::<Vec<e_{n}::Changes>>().ok_or_else(|| Fail::internal(\"changes of another table\"))?;\n        let n = diesel::update({n}::table.find({key_expr})).set(&ch[i]).execute(c);\n        n.map(|n| n as i64).map_err(fail)\n    }}"
                );
                let _ = writeln!(
                    s,
                    "    fn update_where(&self, c: &mut Conn, ch: &Rows, i: usize, f: Option<&RCond>, row: &[Gv]) -> Res<i64> {{\n        let ch = ch.downcast_ref::<Vec<e_{n}::Changes>>().ok_or_else(|| Fail::internal(\"changes of another table\"))?;\n        let n = {};\n        n.map(|n| n as i64).map_err(fail)\n    }}",
                    filtered(&format!("diesel::update({n}::table).set(&ch[i])"))
                );
            }
            // increments
            let addable: Vec<(usize, &String, &str, &str)> = t
                .columns
                .iter()
                .enumerate()
                .filter_map(|(i, (c, ty))| {
                    let (st, rt) = diesel_type(backend, ty);
                    (nullable(c) && foldable(st)).then_some((i, c, st, rt))
                })
                .collect();
            let no_add = "Err(Fail::unsupported(\"Diesel adds to a numeric column that is not the key (its SQL type's Add): this one is not\"))";
            if addable.is_empty() {
                let _ = writeln!(s, "    fn increment(&self, _c: &mut Conn, _col: usize, _v: &Gv, _f: Option<&RCond>, _row: &[Gv]) -> Res<i64> {{\n        {no_add}\n    }}");
            } else {
                let _ = writeln!(s, "    fn increment(&self, c: &mut Conn, col: usize, v: &Gv, f: Option<&RCond>, row: &[Gv]) -> Res<i64> {{\n        let n: diesel::QueryResult<usize> = match col {{");
                for (i, c, _, rt) in &addable {
                    let _ = writeln!(s, "            {i} => {{\n                let v = cv::<Option<{rt}>>(v)?;\n                {}\n            }}", filtered(&format!("diesel::update({n}::table).set({n}::{c}.eq({n}::{c} + v))")));
                }
                let _ = writeln!(s, "            _ => return {no_add},\n        }};\n        n.map(|n| n as i64).map_err(fail)\n    }}");
            }
            let _ = writeln!(
                s,
                "    fn delete(&self, c: &mut Conn, key: &[&Gv]) -> Res<i64> {{\n        let n = diesel::delete({n}::table.find({key_expr})).execute(c);\n        n.map(|n| n as i64).map_err(fail)\n    }}"
            );
            let _ = writeln!(
                s,
                "    fn delete_where(&self, c: &mut Conn, f: Option<&RCond>, row: &[Gv]) -> Res<i64> {{\n        let n = {};\n        n.map(|n| n as i64).map_err(fail)\n    }}",
                filtered(&format!("diesel::delete({n}::table)"))
            );
            let _ = writeln!(s, "}}");
            list.push(n.clone());
        }
        // references: joinable!, the tables that may appear together, the joins
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut comp: Vec<usize> = (0..tables.len()).collect();
        fn root(comp: &mut Vec<usize>, mut i: usize) -> usize {
            while comp[i] != i {
                comp[i] = comp[comp[i]];
                i = comp[i];
            }
            i
        }
        for r in &rels {
            let _ = writeln!(s, "diesel::joinable!({} -> {} ({}));", tables[r.child].name, tables[r.parent].name, r.fk);
            let (a, b) = (root(&mut comp, r.child), root(&mut comp, r.parent));
            comp[a] = b;
        }
        for i in 0..tables.len() {
            for j in i + 1..tables.len() {
                if rels.iter().any(|r| r.child == i || r.parent == i) && root(&mut comp, i) == root(&mut comp, j) {
                    pairs.push((i, j));
                }
            }
        }
        for (i, j) in &pairs {
            let _ = writeln!(s, "diesel::allow_tables_to_appear_in_same_query!({}, {});", tables[*i].name, tables[*j].name);
        }
        let mut joins = Vec::new();
        for r in &rels {
            let (ch, pa) = (&tables[r.child], &tables[r.parent]);
            if !hashable(diesel_type(backend, &pa.columns.iter().find(|c| c.0 == pa.key[0]).unwrap().1).1) {
                continue;
            }
            for (from, to) in [(pa, ch), (ch, pa)] {
                for left in [false, true] {
                    let kind = if left { "left" } else { "inner" };
                    let name = format!("J_{}_{}_{kind}", from.name, to.name);
                    let (f, t2) = (&from.name, &to.name);
                    let second = if left { format!("Option<e_{t2}::Row>") } else { format!("e_{t2}::Row") };
                    let put2 = if left { "match y { Some(y) => y.put(k, sink), None => sink.val(Val::Null) }" } else { "y.put(k, sink)" };
                    let _ = writeln!(s, "pub struct {name};\nimpl JoinOps<Conn> for {name} {{");
                    let _ = writeln!(s, "    fn on(&self) -> [&'static str; 4] {{ [{:?}, {:?}, {:?}, {:?}] }}", ch.name, r.fk, pa.name, pa.key[0]);
                    let _ = writeln!(
                        s,
                        "    /// `{f}::table.{kind}_join({t2}::table)` over `joinable!`, boxed, filtered, ordered and paged as a select; `.load::<(Entity, {})>`.\n    fn query(&self, c: &mut Conn, q: &Query, row: &[Gv], sink: &mut Sink) -> Res<i64> {{\n        let mut b = {f}::table.{kind}_join({t2}::table).into_boxed();\n        b = filtered!(b, q, row, &|s, k, op, a| if s == 0 {{ term_{f}(k, op, a) }} else {{ term_{t2}(k, op, a) }});\n        b = ordered!(b, q, |s, k, d| if s == 0 {{ ord_{f}(k, d) }} else {{ ord_{t2}(k, d) }});\n        if let Some(l) = &q.limit {{\n            b = b.limit(int_of(l.of(row))?);\n        }}\n        if let Some(o) = &q.offset {{\n            b = b.offset(int_of(o.of(row))?);\n        }}\n        let rows: Vec<(e_{f}::Row, {second})> = b.load(c).map_err(fail)?;\n        for (x, y) in &rows {{\n            sink.begin_row();\n            for &(s, k) in &q.out {{\n                if s == 0 {{ x.put(k, sink) }} else {{ {put2} }}\n            }}\n            sink.end_row(q.out.len());\n        }}\n        Ok(rows.len() as i64)\n    }}\n}}",
                        if left { format!("Option<{t2}>") } else { t2.to_string() }
                    );
                    joins.push((f.clone(), t2.clone(), left, name));
                }
            }
        }
        // association chains: a parent with its children (and theirs)
        let mut chains: Vec<(Vec<usize>, String)> = Vec::new();
        for r1 in &rels {
            let ok = |i: usize| tables[i].key.iter().all(|k| hashable(diesel_type(backend, &tables[i].columns.iter().find(|c| &c.0 == k).unwrap().1).1));
            if !ok(r1.parent) || !ok(r1.child) {
                continue;
            }
            chains.push((vec![r1.parent, r1.child], String::new()));
            for r2 in rels.iter().filter(|r2| r2.parent == r1.child && r2.child != r1.parent && ok(r2.child)) {
                chains.push((vec![r1.parent, r1.child, r2.child], String::new()));
            }
        }
        for (tt, name) in chains.iter_mut() {
            let ns: Vec<&str> = tt.iter().map(|&i| tables[i].name.as_str()).collect();
            *name = format!("C_{}", ns.join("_"));
            let fks: Vec<String> = tt.windows(2).map(|w| rels.iter().find(|r| r.parent == w[0] && r.child == w[1]).unwrap().fk.clone()).collect();
            let p = ns[0];
            let _ = writeln!(s, "pub struct {name};\nimpl ChainOps<Conn> for {name} {{");
            let _ = writeln!(s, "    fn levels(&self) -> &'static [(&'static str, &'static str)] {{ &[{}] }}", ns[1..].iter().zip(&fks).map(|(t, f)| format!("({t:?}, {f:?})")).collect::<Vec<_>>().join(", "));
            let _ = writeln!(s, "    fn tables(&self) -> Vec<&'static dyn TableOps<Conn>> {{ vec![{}] }}", ns.iter().map(|t| format!("&Ops_{t}")).collect::<Vec<_>>().join(", "));
            let _ = writeln!(s, "    fn load(&self, c: &mut Conn, strategy: Strategy, q: &Query, row: &[Gv], sink: &mut Sink) -> Res<i64> {{\n        let mut n = 0i64;\n        match strategy {{");
            if ns.len() == 2 {
                let ch = ns[1];
                // joined
                let _ = writeln!(s, "            Strategy::Joined => {{\n                // {p}.left_join({ch}): one query, the tuples grouped by hand (each entity once, by its key)\n                let mut b = {p}::table.left_join({ch}::table).into_boxed();\n                b = filtered!(b, q, row, &|_, k, op, a| term_{p}(k, op, a));\n                b = ordered!(b, q, |_, k, d| ord_{p}(k, d));\n                let rows: Vec<(e_{p}::Row, Option<e_{ch}::Row>)> = b.load(c).map_err(fail)?;\n                let (mut s0, mut s1) = (HashSet::new(), HashSet::new());\n                for (x, y) in &rows {{\n                    if s0.insert(x.key()) {{ x.emit_all(sink); n += 1; }}\n                    if let Some(y) = y {{ if s1.insert(y.key()) {{ y.emit_all(sink); n += 1; }} }}\n                }}\n            }}");
                let _ = writeln!(s, "            Strategy::Selectin => {{\n                // Child::belonging_to(&parents).load, grouped_by(&parents): Diesel's eager loading\n                let ps = select_{p}(c, q, row)?;\n                let cs: Vec<e_{ch}::Row> = e_{ch}::Row::belonging_to(&ps).load(c).map_err(fail)?;\n                let grouped = cs.grouped_by(&ps);\n                for (x, ys) in ps.iter().zip(&grouped) {{\n                    x.emit_all(sink);\n                    n += 1;\n                    for y in ys {{ y.emit_all(sink); n += 1; }}\n                }}\n            }}");
                let _ = writeln!(s, "            Strategy::Lazy => {{\n                // per parent Child::belonging_to(&parent).load: N+1\n                let ps = select_{p}(c, q, row)?;\n                for x in &ps {{\n                    x.emit_all(sink);\n                    n += 1;\n                    let ys: Vec<e_{ch}::Row> = e_{ch}::Row::belonging_to(x).load(c).map_err(fail)?;\n                    for y in &ys {{ y.emit_all(sink); n += 1; }}\n                }}\n            }}");
            } else {
                let (ch, gc) = (ns[1], ns[2]);
                let _ = writeln!(s, "            Strategy::Joined => {{\n                // {p}.left_join({ch}.left_join({gc})): one query, the tuples grouped by hand (each entity once, by its key)\n                let mut b = {p}::table.left_join({ch}::table.left_join({gc}::table)).into_boxed();\n                b = filtered!(b, q, row, &|_, k, op, a| term_{p}(k, op, a));\n                b = ordered!(b, q, |_, k, d| ord_{p}(k, d));\n                let rows: Vec<(e_{p}::Row, Option<(e_{ch}::Row, Option<e_{gc}::Row>)>)> = b.load(c).map_err(fail)?;\n                let (mut s0, mut s1, mut s2) = (HashSet::new(), HashSet::new(), HashSet::new());\n                for (x, rest) in &rows {{\n                    if s0.insert(x.key()) {{ x.emit_all(sink); n += 1; }}\n                    if let Some((y, z)) = rest {{\n                        if s1.insert(y.key()) {{ y.emit_all(sink); n += 1; }}\n                        if let Some(z) = z {{ if s2.insert(z.key()) {{ z.emit_all(sink); n += 1; }} }}\n                    }}\n                }}\n            }}");
                let _ = writeln!(s, "            Strategy::Selectin => {{\n                // belonging_to(&parents) per level, grouped_by: Diesel's eager loading\n                let ps = select_{p}(c, q, row)?;\n                let cs: Vec<e_{ch}::Row> = e_{ch}::Row::belonging_to(&ps).load(c).map_err(fail)?;\n                let gs: Vec<e_{gc}::Row> = e_{gc}::Row::belonging_to(&cs).load(c).map_err(fail)?;\n                let gs = gs.grouped_by(&cs);\n                let tree = cs.into_iter().zip(gs).grouped_by(&ps);\n                for (x, ys) in ps.iter().zip(&tree) {{\n                    x.emit_all(sink);\n                    n += 1;\n                    for (y, zs) in ys {{\n                        y.emit_all(sink);\n                        n += 1;\n                        for z in zs {{ z.emit_all(sink); n += 1; }}\n                    }}\n                }}\n            }}");
                let _ = writeln!(s, "            Strategy::Lazy => {{\n                // per parent, then per child, belonging_to(&one).load: N+1\n                let ps = select_{p}(c, q, row)?;\n                for x in &ps {{\n                    x.emit_all(sink);\n                    n += 1;\n                    let ys: Vec<e_{ch}::Row> = e_{ch}::Row::belonging_to(x).load(c).map_err(fail)?;\n                    for y in &ys {{\n                        y.emit_all(sink);\n                        n += 1;\n                        let zs: Vec<e_{gc}::Row> = e_{gc}::Row::belonging_to(y).load(c).map_err(fail)?;\n                        for z in &zs {{ z.emit_all(sink); n += 1; }}\n                    }}\n                }}\n            }}");
            }
            let _ = writeln!(s, "        }}\n        Ok(n)\n    }}\n}}");
        }
        let _ = writeln!(s, "/// The tables compiled in, by name.\npub fn table(name: &str) -> Option<&'static dyn TableOps<Conn>> {{\n    match name {{");
        for n in &list {
            let _ = writeln!(s, "        {n:?} => Some(&Ops_{n}),");
        }
        let _ = writeln!(s, "        _ => None,\n    }}\n}}\n/// Their names.\npub const TABLES: &[&str] = {};", strs(list.iter().cloned()));
        let _ = writeln!(s, "/// The joins over a reference, by the tables' names (the first the FROM table) and kind.\npub fn join(from: &str, to: &str, left: bool) -> Option<&'static dyn JoinOps<Conn>> {{\n    match (from, to, left) {{");
        for (f, t2, left, name) in &joins {
            let _ = writeln!(s, "        ({f:?}, {t2:?}, {left}) => Some(&{name}),");
        }
        let _ = writeln!(s, "        _ => None,\n    }}\n}}");
        let _ = writeln!(s, "/// The association chains, by the parent's table and each level's.\npub fn chain(tables: &[&str]) -> Option<&'static dyn ChainOps<Conn>> {{\n    match tables {{");
        for (tt, name) in &chains {
            let ns: Vec<String> = tt.iter().map(|&i| format!("{:?}", tables[i].name)).collect();
            let _ = writeln!(s, "        [{}] => Some(&{name}),", ns.join(", "));
        }
        let _ = writeln!(s, "        _ => None,\n    }}\n}}");
        let _ = writeln!(s, "/// The references joined and associated, in words.\npub const RELATIONS: &[&str] = {};", strs(rels.iter().map(|r| format!("{}.{} -> {}", tables[r.child].name, r.fk, tables[r.parent].name))));
        let _ = writeln!(s, "}}");
    }
    s
}

// ---- SeaORM ---------------------------------------------------------------------------------------

/// A column's Rust type in a SeaORM model on PostgreSQL: the type rust-sqlx decodes the
/// column's values into (SeaORM reads every field through sqlx's `Decode` of that type), so
/// that the checksums agree; NUMERIC is the worker's `Numeric` (rust_decimal's `Decimal`, the
/// scale of a zero kept as rust-sqlx keeps it).
fn seaorm_type(t: &str) -> &'static str {
    match sql_type(t).unwrap_or("text") {
        "smallint" => "i16",
        "integer" => "i32",
        "bigint" => "i64",
        "boolean" => "bool",
        "double" => "f64",
        "real" => "f32",
        "date" => "NaiveDate",
        "timestamp" => "NaiveDateTime",
        "bytes" => "Vec<u8>",
        "numeric" => "Numeric",
        _ => "String",
    }
}

/// One module per table (`t_<name>`), each an entity as SeaORM's users write one: a `Model`
/// deriving `DeriveEntityModel` (the key's fields `primary_key, auto_increment = false`, the
/// other fields `Option`s: non-key columns may hold NULL), an empty `Relation`, the default
/// `ActiveModelBehavior`, and the worker's `Table` (names, types, key, a model's fields into
/// the sink, a generated value as a field's `Value`); then `Tbl` (one variant per table) and
/// `with_entity!`, which runs an expression with `E` the step's entity.
fn seaorm_entities(tables: &[Table]) -> String {
    let mut s = String::from("// generated by build.rs from the built-in suites: do not edit\n");
    let rels = sea_relations(tables);
    for (ti, t) in tables.iter().enumerate() {
        let n = &t.name;
        let is_key = |c: &str| t.key.iter().any(|k| k == c);
        let field = |c: &str, ty: &str| if is_key(c) { seaorm_type(ty).to_string() } else { format!("Option<{}>", seaorm_type(ty)) };
        let _ = writeln!(s, "pub mod t_{n} {{\n#![allow(clippy::all, unused_imports)]\nuse sea_orm::entity::prelude::*;\nuse chrono::{{NaiveDate, NaiveDateTime}};\nuse crate::drv_seaorm::Numeric;\nuse crate::drv_diesel::{{cv, Put}};\nuse crate::protocol::{{Gv, Sink}};\nuse crate::step::{{Fail, Res}};");
        let _ = writeln!(s, "#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]\n#[sea_orm(table_name = {n:?})]\npub struct Model {{");
        for (c, ty) in &t.columns {
            if is_key(c) {
                let _ = writeln!(s, "    #[sea_orm(primary_key, auto_increment = false)]");
            }
            let _ = writeln!(s, "    pub {c}: {},", field(c, ty));
        }
        // the relations: belongs_to per reference it holds, has_many per reference to it
        let _ = writeln!(s, "}}\n#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]\npub enum Relation {{");
        let mut related = Vec::new();
        for r in rels.iter().filter(|r| r.child == ti) {
            let p = &tables[r.parent];
            let _ = writeln!(s, "    #[sea_orm(belongs_to = \"super::t_{}::Entity\", from = \"Column::{}\", to = \"super::t_{}::Column::{}\")]\n    {},", p.name, camel(&r.fk), p.name, camel(&p.key[0]), camel(&p.name));
            related.push(p.name.clone());
        }
        for r in rels.iter().filter(|r| r.parent == ti) {
            let c = &tables[r.child];
            let _ = writeln!(s, "    #[sea_orm(has_many = \"super::t_{}::Entity\")]\n    {},", c.name, camel(&c.name));
            related.push(c.name.clone());
        }
        let _ = writeln!(s, "}}");
        for o in &related {
            let _ = writeln!(s, "impl Related<super::t_{o}::Entity> for Entity {{\n    fn to() -> RelationDef {{\n        Relation::{}.def()\n    }}\n}}", camel(o));
        }
        let _ = writeln!(s, "impl ActiveModelBehavior for ActiveModel {{}}");
        let _ = writeln!(s, "impl crate::drv_seaorm::Table for Entity {{");
        let _ = writeln!(s, "    const COLUMNS: &'static [&'static str] = {};", strs(t.columns.iter().map(|c| c.0.clone())));
        let _ = writeln!(s, "    const TYPES: &'static [&'static str] = {};", strs(t.columns.iter().map(|c| c.1.clone())));
        let _ = writeln!(s, "    const KEY: &'static [&'static str] = {};", strs(t.key.iter().cloned()));
        let _ = writeln!(s, "    fn emit(m: &Model, out: &[usize], sink: &mut Sink) {{\n        sink.begin_row();\n        for &k in out {{\n            match k {{");
        for (i, (c, _)) in t.columns.iter().enumerate() {
            let _ = writeln!(s, "                {i} => m.{c}.put(sink),");
        }
        let _ = writeln!(s, "                _ => {{}}\n            }}\n        }}\n        sink.end_row(out.len());\n    }}");
        let _ = writeln!(s, "    fn put(m: &Model, k: usize, sink: &mut Sink) {{\n        match k {{");
        for (i, (c, _)) in t.columns.iter().enumerate() {
            let _ = writeln!(s, "            {i} => m.{c}.put(sink),");
        }
        let _ = writeln!(s, "            _ => {{}}\n        }}\n    }}");
        let _ = writeln!(s, "    fn value(k: usize, v: &Gv) -> Res<Value> {{\n        Ok(match k {{");
        for (i, (c, ty)) in t.columns.iter().enumerate() {
            let _ = writeln!(s, "            {i} => cv::<{}>(v)?.into(),", field(c, ty));
        }
        let _ = writeln!(s, "            _ => return Err(Fail::internal(\"no such column\")),\n        }})\n    }}\n}}\n}}");
    }
    let _ = writeln!(s, "/// The tables compiled in.\n#[allow(non_camel_case_types)]\n#[derive(Clone, Copy, Debug)]\npub enum Tbl {{");
    for t in tables {
        let _ = writeln!(s, "    {},", t.name);
    }
    let _ = writeln!(s, "}}\n/// A table compiled in, by name.\npub fn table(name: &str) -> Option<Tbl> {{\n    match name {{");
    for t in tables {
        let _ = writeln!(s, "        {:?} => Some(Tbl::{}),", t.name, t.name);
    }
    let _ = writeln!(s, "        _ => None,\n    }}\n}}\n/// Their names.\npub const TABLES: &[&str] = {};", strs(tables.iter().map(|t| t.name.clone())));
    let _ = writeln!(s, "/// Runs `$body` with `$E` the entity of table `$t`.\nmacro_rules! with_entity {{\n    ($t:expr, $E:ident => $body:expr) => {{\n        match $t {{");
    for t in tables {
        let _ = writeln!(s, "            $crate::drv_seaorm::entities::Tbl::{0} => {{ type $E = $crate::drv_seaorm::entities::t_{0}::Entity; $body }}", t.name);
    }
    let _ = writeln!(s, "        }}\n    }};\n}}\npub(crate) use with_entity;");
    // the pairs of related entities (a join, both orders) and the chains a load walks
    let _ = writeln!(s, "/// Runs `$body` with `$A`, `$B` the entities of two related tables (`Related` both ways), else `$none`.\nmacro_rules! with_related {{\n    ($a:expr, $b:expr, $A:ident, $B:ident => $body:expr, $none:expr) => {{\n        match ($a, $b) {{");
    for r in &rels {
        for (x, y) in [(r.parent, r.child), (r.child, r.parent)] {
            let (x, y) = (&tables[x].name, &tables[y].name);
            let _ = writeln!(s, "            ($crate::drv_seaorm::entities::Tbl::{x}, $crate::drv_seaorm::entities::Tbl::{y}) => {{ #[allow(dead_code)] type $A = $crate::drv_seaorm::entities::t_{x}::Entity; #[allow(dead_code)] type $B = $crate::drv_seaorm::entities::t_{y}::Entity; $body }}");
        }
    }
    let _ = writeln!(s, "            _ => $none,\n        }}\n    }};\n}}\npub(crate) use with_related;");
    let _ = writeln!(s, "/// Runs `$body` with `$P`, `$C` a parent's entity and its children's (has_many), else `$none`.\nmacro_rules! with_chain2 {{\n    ($p:expr, $c:expr, $P:ident, $C:ident => $body:expr, $none:expr) => {{\n        match ($p, $c) {{");
    for r in &rels {
        let (x, y) = (&tables[r.parent].name, &tables[r.child].name);
        let _ = writeln!(s, "            ($crate::drv_seaorm::entities::Tbl::{x}, $crate::drv_seaorm::entities::Tbl::{y}) => {{ #[allow(dead_code)] type $P = $crate::drv_seaorm::entities::t_{x}::Entity; #[allow(dead_code)] type $C = $crate::drv_seaorm::entities::t_{y}::Entity; $body }}");
    }
    let _ = writeln!(s, "            _ => $none,\n        }}\n    }};\n}}\npub(crate) use with_chain2;");
    let _ = writeln!(s, "/// Runs `$body` with `$P`, `$C`, `$G` a parent's entity, its children's and theirs, else `$none`.\nmacro_rules! with_chain3 {{\n    ($p:expr, $c:expr, $g:expr, $P:ident, $C:ident, $G:ident => $body:expr, $none:expr) => {{\n        match ($p, $c, $g) {{");
    for r1 in &rels {
        for r2 in rels.iter().filter(|r2| r2.parent == r1.child && r2.child != r1.parent) {
            let (x, y, z) = (&tables[r1.parent].name, &tables[r1.child].name, &tables[r2.child].name);
            let _ = writeln!(s, "            ($crate::drv_seaorm::entities::Tbl::{x}, $crate::drv_seaorm::entities::Tbl::{y}, $crate::drv_seaorm::entities::Tbl::{z}) => {{ #[allow(dead_code)] type $P = $crate::drv_seaorm::entities::t_{x}::Entity; #[allow(dead_code)] type $C = $crate::drv_seaorm::entities::t_{y}::Entity; #[allow(dead_code)] type $G = $crate::drv_seaorm::entities::t_{z}::Entity; $body }}");
        }
    }
    let _ = writeln!(s, "            _ => $none,\n        }}\n    }};\n}}\npub(crate) use with_chain3;");
    let _ = writeln!(s, "/// The relations, in words.\npub const RELATIONS: &[&str] = {};", strs(rels.iter().map(|r| format!("{}.{} -> {}", tables[r.child].name, r.fk, tables[r.parent].name))));
    s
}

/// `user_id` → `UserId`: a column's (or table's) name as DeriveEntityModel names its variant.
fn camel(name: &str) -> String {
    name.split('_').filter(|p| !p.is_empty()).map(|p| {
        let mut c = p.chars();
        match c.next() {
            Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
            None => String::new(),
        }
    }).collect()
}

/// The references SeaORM relates (`belongs_to` / `has_many`): as Diesel's, a column referencing
/// the one-column key of another compiled table, of the same Rust type, one per pair of tables.
fn sea_relations(tables: &[Table]) -> Vec<Rel> {
    let mut out: Vec<Rel> = Vec::new();
    for (ci, t) in tables.iter().enumerate() {
        for (fk, ptable, pcol) in &t.refs {
            let Some(pi) = tables.iter().position(|x| &x.name == ptable) else { continue };
            let p = &tables[pi];
            if pi == ci || p.key.len() != 1 || &p.key[0] != pcol {
                continue;
            }
            let ty = |t: &Table, c: &str| t.columns.iter().find(|x| x.0 == c).map(|x| seaorm_type(&x.1));
            if ty(t, fk).is_none() || ty(t, fk) != ty(p, pcol) || matches!(ty(p, pcol), Some("f32" | "f64")) {
                continue;
            }
            if out.iter().any(|r| (r.child == ci && r.parent == pi) || (r.child == pi && r.parent == ci)) {
                continue;
            }
            out.push(Rel { child: ci, fk: fk.clone(), parent: pi });
        }
    }
    out
}
