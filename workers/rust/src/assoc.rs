//! Loading associations by hand (PROTOCOL.md, Loading associations): what a driver's
//! programmer writes for a `load` step, written once for every driver of the worker. A driver
//! supplies one operation, `Fetch::fetch` — run a statement with bound parameters (its
//! extended mode) and decode its rows into a sink, as its exec steps do — and this module
//! runs the strategy the step asks for with it:
//!
//! - `lazy`: the parents' statement, then the level's `one` statement per distinct value of
//!   the referenced column among the rows of the level above (children per parent, then
//!   grandchildren per child: the N+1 pattern);
//! - `selectin`: the parents' statement, then per level one `in` statement over those
//!   distinct values (`head` + the markers joined by `, ` + `tail`; none when the level
//!   above read no rows);
//! - `joined`: the `joined` statement once, each row split by the levels' column counts.
//!
//! One operation is one whole load. Each entity is kept once (by its table's key; a joined
//! row's level whose key is NULL has none) and handed to the step's sink as a row of its
//! table's columns, so that every strategy checksums alike; the operation's rows are the
//! entities. Every statement sent is counted in the sink (`statements`).

use crate::protocol::{dollar_markers, markers, Cell, Gv, Sink, Ty};
use crate::step::{Fail, LoadSpec, Res, Step, Strategy};
use std::collections::HashSet;
use std::fmt::Write as _;

/// How a driver writes a statement's markers: `?` (MariaDB, SQLite) or `$n` (PostgreSQL).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Markers {
    Question,
    Dollar,
}

/// A driver's one operation for a load: `sql` with `params` bound (its extended mode; each
/// of its type in `types`, a NULL too), every row decoded into `rows` (a keeping sink) as the
/// driver decodes the rows of an exec step.
#[allow(async_fn_in_trait)]
pub trait Fetch {
    async fn fetch(&mut self, sql: &str, params: &[Gv], types: &[Ty], rows: &mut Sink) -> Res<()>;
}

/// The type a key read is bound as: its value's.
fn ty_of(v: &Gv) -> Ty {
    match v {
        Gv::Bool(_) => Ty::Bool,
        Gv::Int(_) => Ty::Int,
        Gv::Float(_) => Ty::Float,
        Gv::Dec(_) => Ty::Decimal,
        Gv::Date(_) => Ty::Date,
        Gv::Ts(_) => Ty::Timestamp,
        Gv::Bytes(_) => Ty::Bytes,
        Gv::Null | Gv::Text(_) => Ty::Text,
    }
}

/// A level as the load works with it: its statements in the driver's markers, its entity's
/// width and key, the column of the level above it references.
struct Lvl {
    one: String,
    head: String,
    tail: String,
    width: usize,
    key: Vec<usize>,
    /// the referenced column's position in the level above's rows
    above: usize,
}

/// What a load step needs, made before the clock from its message.
pub struct LoadPlan {
    strategy: Strategy,
    dollar: bool,
    parents: String,
    joined: String,
    /// the parents' parameters' types
    types: Vec<Ty>,
    width: usize,
    key: Vec<usize>,
    levels: Vec<Lvl>,
}

fn positions(names: &[String], of: &[String], what: &str) -> Res<Vec<usize>> {
    of.iter()
        .map(|k| names.iter().position(|c| c == k).ok_or_else(|| Fail::protocol(format!("load: {what} names a column {k} its table does not have"))))
        .collect()
}

impl LoadPlan {
    pub fn new(st: &Step, m: Markers) -> Res<LoadPlan> {
        let spec: &LoadSpec = st.load.as_ref().ok_or_else(|| Fail::protocol("a load step needs load"))?;
        let shape = st.shape.as_ref().ok_or_else(|| Fail::protocol("a load step needs the parents' shape"))?;
        let (pcols, pkey) = match (&shape.table_columns, &shape.key) {
            (Some(c), Some(k)) if !k.is_empty() => (c.clone(), k.clone()),
            _ => return Err(Fail::protocol("a load step's shape needs the parent table's columns and key")),
        };
        let conv = |sql: &str| match m {
            Markers::Dollar => dollar_markers(sql, &markers(sql)),
            Markers::Question => sql.to_string(),
        };
        let mut above_cols = pcols.clone();
        let mut levels = Vec::new();
        for l in &spec.levels {
            if l.key.is_empty() {
                return Err(Fail::protocol(format!("load: table {} has no key", l.table)));
            }
            levels.push(Lvl {
                one: conv(&l.one),
                head: l.in_.0.clone(),
                tail: l.in_.1.clone(),
                width: l.table_columns.len(),
                key: positions(&l.table_columns, &l.key, "a level's key")?,
                above: positions(&above_cols, std::slice::from_ref(&l.parent_column), "a level's parent_column")?[0],
            });
            above_cols = l.table_columns.clone();
        }
        Ok(LoadPlan {
            strategy: spec.strategy,
            dollar: m == Markers::Dollar,
            parents: conv(&st.sql),
            joined: conv(&spec.joined),
            types: st.types.clone(),
            width: pcols.len(),
            key: positions(&pcols, &pkey, "the parents' key")?,
            levels,
        })
    }

    /// A level's `in` statement over `n` values.
    fn in_text(&self, l: &Lvl, n: usize) -> String {
        let mut s = String::with_capacity(l.head.len() + l.tail.len() + n * 4);
        s.push_str(&l.head);
        for k in 0..n {
            if k > 0 {
                s.push_str(", ");
            }
            if self.dollar {
                let _ = write!(s, "${}", k + 1);
            } else {
                s.push('?');
            }
        }
        s.push_str(&l.tail);
        s
    }
}

/// One statement's rows, each `width` values, owned.
async fn rows_of<F: Fetch>(f: &mut F, sql: &str, params: &[Gv], types: &[Ty], sink: &mut Sink) -> Res<Vec<Vec<Cell>>> {
    let mut kept = Sink::keeping();
    f.fetch(sql, params, types, &mut kept).await?;
    sink.sent(1);
    let w = kept.ncols;
    if kept.rows == 0 || w == 0 {
        return Ok(Vec::new());
    }
    let mut cells = std::mem::take(&mut kept.cells).into_iter();
    Ok((0..kept.rows).map(|_| cells.by_ref().take(w).collect()).collect())
}

/// The entities of one level, each kept once by its key (a NULL key: none).
struct Kept {
    seen: HashSet<Vec<Cell>>,
}

impl Kept {
    fn new() -> Self {
        Kept { seen: HashSet::new() }
    }

    /// Whether `row` is an entity not kept yet (handed to the sink if so).
    fn keep(&mut self, row: &[Cell], key: &[usize], sink: &mut Sink) -> bool {
        let k: Vec<Cell> = key.iter().map(|&i| row[i].clone()).collect();
        if k.iter().all(|c| *c == Cell::Null) || !self.seen.insert(k) {
            return false;
        }
        sink.begin_row();
        for c in row {
            sink.val(c.val());
        }
        sink.end_row(row.len());
        true
    }
}

/// The distinct non-NULL values of column `at` of `rows`, in the order first read.
fn distinct(rows: &[Vec<Cell>], at: usize) -> Vec<Gv> {
    let mut seen = HashSet::new();
    rows.iter().filter(|r| r[at] != Cell::Null && seen.insert(&r[at])).map(|r| r[at].gv()).collect()
}

/// One load: the parents (`params` bound to their statement) with every level below, by the
/// plan's strategy. Returns the entities kept.
pub async fn load<F: Fetch>(f: &mut F, plan: &LoadPlan, params: &[Gv], sink: &mut Sink) -> Res<i64> {
    let mut count = 0i64;
    if plan.strategy == Strategy::Joined {
        let rows = rows_of(f, &plan.joined, params, &plan.types, sink).await?;
        let mut kept: Vec<Kept> = (0..=plan.levels.len()).map(|_| Kept::new()).collect();
        let want = plan.width + plan.levels.iter().map(|l| l.width).sum::<usize>();
        for r in &rows {
            if r.len() != want {
                return Err(Fail::internal(format!("a joined row of {} values, want {want}", r.len())));
            }
            let mut at = 0;
            for (k, (w, key)) in std::iter::once((plan.width, &plan.key)).chain(plan.levels.iter().map(|l| (l.width, &l.key))).enumerate() {
                count += kept[k].keep(&r[at..at + w], key, sink) as i64;
                at += w;
            }
        }
        return Ok(count);
    }
    let mut above = Vec::new();
    let mut kept = Kept::new();
    for r in rows_of(f, &plan.parents, params, &plan.types, sink).await? {
        if kept.keep(&r, &plan.key, sink) {
            above.push(r);
        }
    }
    count += above.len() as i64;
    for l in &plan.levels {
        let keys = distinct(&above, l.above);
        let types: Vec<Ty> = keys.iter().map(ty_of).collect();
        let mut kept = Kept::new();
        let mut next = Vec::new();
        let mut take = |rows: Vec<Vec<Cell>>, next: &mut Vec<Vec<Cell>>, sink: &mut Sink| {
            for r in rows {
                if kept.keep(&r, &l.key, sink) {
                    next.push(r);
                }
            }
        };
        match plan.strategy {
            Strategy::Lazy => {
                for (k, t) in keys.iter().zip(&types) {
                    let rows = rows_of(f, &l.one, std::slice::from_ref(k), std::slice::from_ref(t), sink).await?;
                    take(rows, &mut next, sink);
                }
            }
            _ if keys.is_empty() => {}
            _ => {
                let rows = rows_of(f, &plan.in_text(l, keys.len()), &keys, &types, sink).await?;
                take(rows, &mut next, sink);
            }
        }
        count += next.len() as i64;
        above = next;
    }
    Ok(count)
}

/// `settings["load"]` of a driver, in words.
pub const LOAD_SETTING: &str = "load steps as a programmer writes them by hand, one implementation for every driver of the worker (src/assoc.rs) over the driver's bound statement (its extended mode) and its row decoding: lazy = the parents' statement, then the level's one statement per distinct referenced value of the level above (N+1: per parent, then per child); selectin = the parents' statement, then per level one IN statement (the markers joined by ', ') over the level above's distinct values; joined = the message's joined statement once, each row split by the levels' column counts; each entity kept once by its key (a HashSet per level; a joined row's level whose key is NULL has none), handed to the sink as a row of its table's columns; rows = entities; statements counted by the worker as it sends them";
