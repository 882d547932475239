package main

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The step's shape (PROTOCOL.md, Shapes): what its statement does, worked out by the runner
// (src/accessbench/suite/shape.py) so that a layer builds it through its own API; no worker
// parses SQL. The plain form (columns, where: ANDed `column = ?`) is what the layers mapped
// first; the rest (filter tree, items, joins, group, order, page, set) is read for everything
// richer. Drivers read only an insert's table and columns (copyTarget).

// shape is the message's `shape`.
type shape struct {
	kind         string // select, insert, update, delete
	table        string
	columns      []string
	where        []string // the plain form; nil when plain is false
	plain        bool     // `where` was not null: the statement is ANDed `column = ?` terms at most
	tableColumns []string // empty for a table the suite does not declare
	tableTypes   []string
	key          []string

	features []string
	filter   *cond // nil: no WHERE
	items    []item
	star     bool
	joins    []join
	group    []colRef
	order    []orderBy
	limit    *operand
	offset   *operand
	set      []assignment
	tables   map[string]*tableDef // every table of the suite the shape names
}

// colRef is a column of a table, by the table's name (an alias in the statement resolved).
type colRef struct{ table, column string }

// operand is a marker (params[param]) or a literal (a JSON number, string or boolean).
type operand struct {
	param   int
	literal any // when isParam is false: int64, float64, string or bool
	isParam bool
}

// cond is a WHERE as a tree: and / or of terms, or one comparison.
type cond struct {
	and, or []*cond
	op      string // =, <>, <, <=, >, >=, between, in, is null, is not null, like
	column  colRef
	args    []operand
}

// item is one result column of a select: a column, or an aggregate (fn) of one (count(*): no column).
type item struct {
	fn string // "" for a column; count, sum, min, max, avg
	colRef
	as string // the alias the statement gives an aggregate, or ""
}

type join struct {
	left  bool // LEFT JOIN; else inner
	table string
	on    [2]colRef // a column of a table before it, equal to a column of the joined table
}

type orderBy struct {
	colRef
	desc bool
}

// assignment is one `column = arg` (op "=") or `column = column + arg` (op "+") of an update.
type assignment struct {
	column, op string
	arg        operand
}

// tableDef is a table of the suite: every column, its SQL type, the primary key and the
// columns referencing other tables.
type tableDef struct {
	name       string
	columns    []string
	types      []string
	key        []string
	references map[string]colRef
}

func (t *tableDef) index(column string) int {
	for k, c := range t.columns {
		if c == column {
			return k
		}
	}
	return -1
}

// parseShape reads the message's shape; nil for null, or for one that names no table.
func parseShape(v any) *shape {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	sh := &shape{columns: strs(m["columns"]), tableColumns: strs(m["table_columns"]),
		tableTypes: strs(m["table_types"]), key: strs(m["key"]), features: strs(m["features"])}
	if w, ok := m["where"].([]any); ok {
		sh.plain, sh.where = true, strs(w)
	}
	sh.kind, _ = m["kind"].(string)
	sh.table, _ = m["table"].(string)
	if sh.table == "" || len(sh.tableTypes) != len(sh.tableColumns) {
		return nil
	}
	sh.filter = parseCond(m["filter"])
	for _, x := range list(m["items"]) {
		it, _ := x.(map[string]any)
		fn, _ := it["fn"].(string)
		as, _ := it["as"].(string)
		sh.items = append(sh.items, item{fn: fn, colRef: parseCol(it), as: as})
	}
	sh.star, _ = m["star"].(bool)
	for _, x := range list(m["joins"]) {
		j, _ := x.(map[string]any)
		typ, _ := j["type"].(string)
		table, _ := j["table"].(string)
		on := list(j["on"])
		if len(on) != 2 {
			return nil
		}
		sh.joins = append(sh.joins, join{left: typ == "left", table: table, on: [2]colRef{parseCol(on[0]), parseCol(on[1])}})
	}
	for _, x := range list(m["group"]) {
		sh.group = append(sh.group, parseCol(x))
	}
	for _, x := range list(m["order"]) {
		o, _ := x.(map[string]any)
		desc, _ := o["desc"].(bool)
		sh.order = append(sh.order, orderBy{colRef: parseCol(o), desc: desc})
	}
	sh.limit, sh.offset = parseOperand(m["limit"]), parseOperand(m["offset"])
	for _, x := range list(m["set"]) {
		a, _ := x.(map[string]any)
		column, _ := a["column"].(string)
		op, _ := a["op"].(string)
		arg := parseOperand(a["arg"])
		if arg == nil {
			return nil
		}
		sh.set = append(sh.set, assignment{column: column, op: op, arg: *arg})
	}
	if tables, ok := m["tables"].(map[string]any); ok {
		sh.tables = map[string]*tableDef{}
		for name, x := range tables {
			t, _ := x.(map[string]any)
			def := &tableDef{name: name, columns: strs(t["columns"]), types: strs(t["types"]), key: strs(t["key"]),
				references: map[string]colRef{}}
			if refs, ok := t["references"].(map[string]any); ok {
				for c, r := range refs {
					def.references[c] = parseCol(r)
				}
			}
			if len(def.columns) == len(def.types) {
				sh.tables[name] = def
			}
		}
	}
	return sh
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func strs(v any) []string {
	l := list(v)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func parseCol(v any) colRef {
	m, _ := v.(map[string]any)
	t, _ := m["table"].(string)
	c, _ := m["column"].(string)
	return colRef{t, c}
}

// parseOperand: {"param": i} or {"value": v}; nil for null.
func parseOperand(v any) *operand {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if p, ok := m["param"]; ok {
		n, err := toInt64(p)
		if err != nil {
			return nil
		}
		return &operand{param: int(n), isParam: true}
	}
	switch x := m["value"].(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return &operand{literal: n}
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return &operand{literal: f}
	case string, bool:
		return &operand{literal: x}
	}
	return nil
}

func parseCond(v any) *cond {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	c := &cond{}
	switch {
	case m["and"] != nil:
		for _, x := range list(m["and"]) {
			c.and = append(c.and, parseCond(x))
		}
	case m["or"] != nil:
		for _, x := range list(m["or"]) {
			c.or = append(c.or, parseCond(x))
		}
	default:
		c.op, _ = m["op"].(string)
		c.column = parseCol(m["column"])
		for _, x := range list(m["args"]) {
			if o := parseOperand(x); o != nil {
				c.args = append(c.args, *o)
			}
		}
	}
	return c
}

// value of an operand for operation args (the driver's bound parameters).
func (o operand) value(args []any) any {
	if o.isParam {
		return args[o.param]
	}
	return o.literal
}

// has: the shape uses feature f.
func (sh *shape) has(f string) bool {
	for _, x := range sh.features {
		if x == f {
			return true
		}
	}
	return false
}

// aggregated: some item is an aggregate.
func (sh *shape) aggregated() bool {
	for _, it := range sh.items {
		if it.fn != "" {
			return true
		}
	}
	return false
}

// entityRead: a select whose rows are the main table's entities: columns of that table only,
// no join, aggregate or group (its rows are read as whole entities, each column from its field).
func (sh *shape) entityRead() bool {
	if sh.kind != "select" || len(sh.joins) > 0 || len(sh.group) > 0 || sh.aggregated() || len(sh.items) == 0 {
		return false
	}
	for _, it := range sh.items {
		if it.table != sh.table {
			return false
		}
	}
	return len(sh.columns) == len(sh.items)
}

// mainTable: the shape's own table as a tableDef (from table_columns, table_types, key, and
// its references when `tables` has them).
func (sh *shape) mainTable() *tableDef {
	if t, ok := sh.tables[sh.table]; ok {
		return t
	}
	return &tableDef{name: sh.table, columns: sh.tableColumns, types: sh.tableTypes, key: sh.key}
}

// quoteName quotes a name the shape gives as the DBMS quotes names (backticks on MariaDB,
// double quotes elsewhere), so that it is read as spelled.
func quoteName(name, dbms string) string {
	q := `"`
	if dbms == "mariadb" {
		q = "`"
	}
	return q + strings.ReplaceAll(name, q, q+q) + q
}
