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

    let tables = suite_tables();
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let write = |name: &str, text: String| std::fs::write(format!("{out}/{name}"), text).expect("write generated schema");
    write("diesel_schema.rs", diesel_schema(&tables));
    write("seaorm_entities.rs", seaorm_entities(&tables));
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

/// A table of a built-in suite: its columns (name, SQL type as the suite declares it) and key.
struct Table {
    name: String,
    columns: Vec<(String, String)>,
    key: Vec<String>,
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
    let root = std::path::Path::new("../../src/accessbench");
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
            let key: Vec<String> = match t.get("primary_key").and_then(|v| v.as_array()) {
                Some(k) => k.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                None if t.get("columns").is_none() => model.map(|m| m.key.clone()).unwrap_or_default(),
                None => Vec::new(),
            };
            here.push(Table { name: name.to_string(), columns, key });
        }
        for t in here {
            let fits = ident(&t.name)
                && !t.key.is_empty()
                && t.columns.len() <= 32
                && t.columns.iter().all(|(c, ty)| ident(c) && c != &t.name && sql_type(ty).is_some())
                && t.key.iter().all(|k| t.columns.iter().any(|(c, _)| c == k));
            match all.iter().position(|x| x.name == t.name) {
                Some(i) if all[i].columns != t.columns || all[i].key != t.key => {
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

/// One module per backend (`pg`, `mysql`, `sqlite`), each with, per table: `table!`, the
/// entity (`Queryable`), the row to insert (`Insertable`, a NULL bound as NULL), the
/// changeset of its other columns (`AsChangeset`, a column left out when not set), and its
/// `TableOps`: the operations of a step, written out so that each is a concrete Diesel query.
fn diesel_schema(tables: &[Table]) -> String {
    let mut s = String::from("// generated by build.rs from the built-in suites: do not edit\n");
    for (backend, db, conn) in [("pg", "Pg", "PgConnection"), ("mysql", "Mysql", "MysqlConnection"), ("sqlite", "Sqlite", "SqliteConnection")] {
        let _ = writeln!(s, "pub mod {backend} {{");
        let _ = writeln!(s, "#![allow(non_camel_case_types, unused_imports, clippy::all)]");
        let _ = writeln!(s, "use diesel::prelude::*;\nuse diesel::sql_types::{{Bool, Nullable}};\nuse diesel::{conn} as Conn;\ntype Db = diesel::{backend}::{db};");
        let _ = writeln!(s, "use crate::drv_diesel::{{cv, fail, Put, TableOps, Rows}};\nuse crate::protocol::{{Gv, Sink}};\nuse crate::step::{{Fail, Res}};\n");
        let mut list = Vec::new();
        for t in tables {
            let n = &t.name;
            let key_ty: Vec<&str> = t.key.iter().map(|k| diesel_type(backend, &t.columns.iter().find(|c| &c.0 == k).unwrap().1).1).collect();
            let nullable = |c: &str| !t.key.iter().any(|k| k == c);
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
            let _ = writeln!(s, "    #[derive(Queryable)]\n    #[diesel(table_name = {n})]\n    pub struct Row {{");
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
            // emit
            let _ = writeln!(s, "    impl Row {{\n        pub fn emit(&self, out: &[usize], sink: &mut Sink) {{\n            sink.begin_row();\n            for &k in out {{\n                match k {{");
            for (i, (c, _)) in t.columns.iter().enumerate() {
                let _ = writeln!(s, "                    {i} => self.{c}.put(sink),");
            }
            let _ = writeln!(s, "                    _ => {{}}\n                }}\n            }}\n            sink.end_row(out.len());\n        }}\n    }}");
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
            // the predicate of a where clause
            let _ = writeln!(
                s,
                "fn pred_{n}(filt: &[(usize, &Gv)]) -> Res<Box<dyn BoxableExpression<{n}::table, Db, SqlType = Nullable<Bool>>>> {{\n    let mut p: Option<Box<dyn BoxableExpression<{n}::table, Db, SqlType = Nullable<Bool>>>> = None;\n    for &(col, v) in filt {{\n        let e: Box<dyn BoxableExpression<{n}::table, Db, SqlType = Nullable<Bool>>> = match col {{"
            );
            for (i, (c, ty)) in t.columns.iter().enumerate() {
                let _ = writeln!(s, "            {i} => Box::new({n}::{c}.eq(cv::<{}>(v)?).nullable()),", field(c, ty));
            }
            let _ = writeln!(
                s,
                "            _ => return Err(Fail::internal(\"no such column\")),\n        }};\n        p = Some(match p {{ None => e, Some(q) => Box::new(q.and(e)) }});\n    }}\n    p.ok_or_else(|| Fail::internal(\"an empty where clause\"))\n}}"
            );
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
                "    fn select(&self, c: &mut Conn, filt: &[(usize, &Gv)], out: &[usize], sink: &mut Sink) -> Res<i64> {{\n        let rows: Vec<e_{n}::Row> = if filt.is_empty() {{ {n}::table.load(c) }} else {{ {n}::table.filter(pred_{n}(filt)?).load(c) }}.map_err(fail)?;\n        for r in &rows {{ r.emit(out, sink); }}\n        Ok(rows.len() as i64)\n    }}"
            );
            let _ = writeln!(
                s,
                "    fn rows(&self, cols: &[Option<usize>], vals: &[Gv], np: usize) -> Res<Rows> {{\n        let n = if np == 0 {{ 0 }} else {{ vals.len() / np }};\n        let rows = (0..n).map(|i| e_{n}::new_row(cols, &vals[i * np..(i + 1) * np])).collect::<Res<Vec<_>>>()?;\n        Ok(Box::new(rows))\n    }}"
            );
            let _ = writeln!(
                s,
                "    fn insert(&self, c: &mut Conn, rows: &Rows, r: std::ops::Range<usize>) -> Res<i64> {{\n        let rows = rows.downcast_ref::<Vec<e_{n}::New>>().ok_or_else(|| Fail::internal(\"rows of another table\"))?;\n        let n = if r.len() == 1 {{ diesel::insert_into({n}::table).values(&rows[r.start]).execute(c) }} else {{ diesel::insert_into({n}::table).values(&rows[r]).execute(c) }};\n        n.map(|n| n as i64).map_err(fail)\n    }}"
            );
            if others.is_empty() {
                let _ = writeln!(s, "    fn changes(&self, _cols: &[Option<usize>], _vals: &[Gv], _np: usize) -> Res<Rows> {{ Err(Fail::unsupported(\"table {n} has no column but its key to set\")) }}");
                let _ = writeln!(s, "    fn update(&self, _c: &mut Conn, _ch: &Rows, _i: usize, _key: Option<&[&Gv]>, _filt: &[(usize, &Gv)]) -> Res<i64> {{ Err(Fail::unsupported(\"table {n} has no column but its key to set\")) }}");
            } else {
                let _ = writeln!(
                    s,
                    "    fn changes(&self, cols: &[Option<usize>], vals: &[Gv], np: usize) -> Res<Rows> {{\n        let n = if np == 0 {{ 0 }} else {{ vals.len() / np }};\n        let rows = (0..n).map(|i| e_{n}::changes(cols, &vals[i * np..(i + 1) * np])).collect::<Res<Vec<_>>>()?;\n        Ok(Box::new(rows))\n    }}"
                );
                let _ = writeln!(
                    s,
                    "    fn update(&self, c: &mut Conn, ch: &Rows, i: usize, key: Option<&[&Gv]>, filt: &[(usize, &Gv)]) -> Res<i64> {{\n        let ch = ch.downcast_ref::<Vec<e_{n}::Changes>>().ok_or_else(|| Fail::internal(\"changes of another table\"))?;\n        let n = match key {{\n            Some(key) => diesel::update({n}::table.find({key_expr})).set(&ch[i]).execute(c),\n            None => diesel::update({n}::table.filter(pred_{n}(filt)?)).set(&ch[i]).execute(c),\n        }};\n        n.map(|n| n as i64).map_err(fail)\n    }}"
                );
            }
            let _ = writeln!(
                s,
                "    fn delete(&self, c: &mut Conn, key: Option<&[&Gv]>, filt: &[(usize, &Gv)]) -> Res<i64> {{\n        let n = match key {{\n            Some(key) => diesel::delete({n}::table.find({key_expr})).execute(c),\n            None if filt.is_empty() => diesel::delete({n}::table).execute(c),\n            None => diesel::delete({n}::table.filter(pred_{n}(filt)?)).execute(c),\n        }};\n        n.map(|n| n as i64).map_err(fail)\n    }}"
            );
            let _ = writeln!(s, "}}");
            list.push(n.clone());
        }
        let _ = writeln!(s, "/// The tables compiled in, by name.\npub fn table(name: &str) -> Option<&'static dyn TableOps<Conn>> {{\n    match name {{");
        for n in &list {
            let _ = writeln!(s, "        {n:?} => Some(&Ops_{n}),");
        }
        let _ = writeln!(s, "        _ => None,\n    }}\n}}\n/// Their names.\npub const TABLES: &[&str] = {};", strs(list.iter().cloned()));
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
    for t in tables {
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
        let _ = writeln!(s, "}}\n#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]\npub enum Relation {{}}\nimpl ActiveModelBehavior for ActiveModel {{}}");
        let _ = writeln!(s, "impl crate::drv_seaorm::Table for Entity {{");
        let _ = writeln!(s, "    const COLUMNS: &'static [&'static str] = {};", strs(t.columns.iter().map(|c| c.0.clone())));
        let _ = writeln!(s, "    const TYPES: &'static [&'static str] = {};", strs(t.columns.iter().map(|c| c.1.clone())));
        let _ = writeln!(s, "    const KEY: &'static [&'static str] = {};", strs(t.key.iter().cloned()));
        let _ = writeln!(s, "    fn emit(m: &Model, out: &[usize], sink: &mut Sink) {{\n        sink.begin_row();\n        for &k in out {{\n            match k {{");
        for (i, (c, _)) in t.columns.iter().enumerate() {
            let _ = writeln!(s, "                {i} => m.{c}.put(sink),");
        }
        let _ = writeln!(s, "                _ => {{}}\n            }}\n        }}\n        sink.end_row(out.len());\n    }}");
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
    s
}
