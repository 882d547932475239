package main

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Loading associations (PROTOCOL.md, `kind: "load"`): a parent table's rows (the step's sql)
// with their children in the first level's table, the children's in the next, and so on, each
// level referencing the key of the one above. A layer loads through its relations (GORM's
// associations) or, without any (sqlx), with its own calls; a driver runs what a programmer
// writes by hand, the statements the message carries, through the one implementation below
// (handLoad), which each driver supplies a way to run a bound statement to (assocSource).
//
// One operation is one whole load; rows counts the entities read (parents + children + …),
// each kept once; verification checksums every entity as a row of its table's columns.

// assoc is the step's `load`.
type assoc struct {
	strategy string // lazy, joined, selectin
	levels   []assocLevel
	joined   string // one statement reading everything (the parents' params)
	parent   *tableDef
	refAt    int // the column of the parents that levels[0] references
}

type assocLevel struct {
	tableDef
	column       string // its column referencing the level above
	parentColumn string // the referenced column of the level above
	one          string // its rows of one parent: one '?'
	in           [2]string
	refAt        int   // the column of this level's rows the next level references (-1: last level)
	keyAt        []int // its key's columns
}

// parseAssoc reads a load step's `load` against its parents' shape.
func parseAssoc(v any, sh *shape) (*assoc, *failure) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fail("protocol", "a load step needs load: {strategy, levels, joined}")
	}
	a := &assoc{}
	a.strategy, _ = m["strategy"].(string)
	a.joined, _ = m["joined"].(string)
	switch a.strategy {
	case "lazy", "joined", "selectin":
	default:
		return nil, fail("protocol", "unknown load strategy '%s' (lazy, joined, selectin)", a.strategy)
	}
	if sh == nil || sh.kind != "select" || len(sh.tableColumns) == 0 {
		return nil, fail("protocol", "a load step's sql selects the parents from a table of the suite: its shape names the table")
	}
	a.parent = sh.mainTable()
	above := a.parent
	for k, x := range list(m["levels"]) {
		l, _ := x.(map[string]any)
		lv := assocLevel{tableDef: tableDef{columns: strs(l["table_columns"]), types: strs(l["table_types"]), key: strs(l["key"])}}
		lv.name, _ = l["table"].(string)
		lv.column, _ = l["column"].(string)
		lv.parentColumn, _ = l["parent_column"].(string)
		lv.one, _ = l["one"].(string)
		in := strs(l["in"])
		if len(in) != 2 || lv.name == "" || lv.one == "" || len(lv.columns) != len(lv.types) || len(lv.key) == 0 {
			return nil, fail("protocol", "load.levels[%d] needs table, column, parent_column, table_columns, table_types, key, one and in [head, tail]", k)
		}
		lv.in = [2]string{in[0], in[1]}
		ref := above.index(lv.parentColumn)
		if ref < 0 || lv.index(lv.column) < 0 {
			return nil, fail("protocol", "load.levels[%d]: %s.%s references %s.%s, which is not a column of the level above", k, lv.name, lv.column, above.name, lv.parentColumn)
		}
		if k == 0 {
			a.refAt = ref
		} else {
			a.levels[k-1].refAt = ref
		}
		lv.refAt = -1
		for _, kc := range lv.key {
			lv.keyAt = append(lv.keyAt, lv.index(kc))
		}
		lv.references = map[string]colRef{lv.column: {above.name, lv.parentColumn}}
		a.levels = append(a.levels, lv)
		above = &a.levels[k].tableDef
	}
	if len(a.levels) == 0 {
		return nil, fail("protocol", "a load step needs at least one level")
	}
	if len(a.parent.key) == 0 {
		return nil, fail("protocol", "the parents' table %s has no key to keep its entities once by", a.parent.name)
	}
	return a, nil
}

// ---- the hand-written strategies (drivers) --------------------------------------------------

// handLoadSetting: a driver's load steps (hello's settings, "load"); query names its call.
func handLoadSetting(query string) string {
	return "the strategies a programmer writes by hand, the statements the step carries, each bound (" + query + ", the extended mode) and read to the end before the next is sent (one connection): lazy: the parents' statement, then per parent its children's (`one`), per child its children's, depth first as nested loops; selectin: the parents' statement, then per level one `in` statement whose IN list holds the markers of the keys the level above read (none when it read no rows); joined: the one joined statement, each row split by the tables' column counts, each entity kept the first time its key is seen (a map per table), none where the key is NULL. Every entity is decoded as the driver's scans decode; statements of verification passes counted by the shared code (assoc.go)"
}

// assocSource is what a driver supplies to the hand-written strategies: one statement run in
// its extended mode (bound parameters), its rows read to the end and decoded as the driver's
// scans decode them. row is called once per row, get(c) reading column c's value; result names
// the statement's result shape (0: the parents, 1…: a level's rows, len(levels)+1: the joined
// rows), so that the driver keeps one set of typed destinations per shape.
type assocSource interface {
	assocQuery(result int, text string, args []any, row func(get func(c int) value)) error
}

// handLoad is a driver's load step: the message's statements in the driver's markers, made
// once when the step begins (the IN lists' markers, whose number depends on the rows read,
// are joined inside each operation, as a programmer's code joins them).
type handLoad struct {
	a      *assoc
	dollar bool     // $n markers (PostgreSQL drivers), else '?'
	parent string   // the parents' statement
	one    []string // per level
	joined string
	seen   []map[any]struct{} // joined: the entities kept, by key, per table
}

func newHandLoad(st *step, dollar bool) *handLoad {
	h := &handLoad{a: st.assoc, dollar: dollar, parent: convertMarkers(st.sql, dollar), joined: convertMarkers(st.assoc.joined, dollar)}
	for _, lv := range st.assoc.levels {
		h.one = append(h.one, convertMarkers(lv.one, dollar))
	}
	return h
}

// run is one load: parents, then children by the strategy; the rows are the entities read.
// In a verification pass (sk) every entity is checksummed and every statement counted.
func (h *handLoad) run(src assocSource, args []any, sk *sink) (int64, error) {
	switch h.a.strategy {
	case "joined":
		return h.loadJoined(src, args, sk)
	case "selectin":
		return h.loadSelectin(src, args, sk)
	}
	return h.loadLazy(src, args, sk)
}

// reader is the row callback of one level: the entity counted (and checksummed), and the
// value the next level references kept.
func (h *handLoad) reader(n *int64, width, refAt int, refs *[]value, sk *sink) func(get func(int) value) {
	var row []value
	if sk != nil {
		row = make([]value, width)
	}
	return func(get func(int) value) {
		*n++
		if sk != nil {
			for c := range row {
				row[c] = get(c)
			}
			sk.add(row)
		}
		if refAt >= 0 {
			if v := get(refAt); v.kind != 'N' {
				*refs = append(*refs, v)
			}
		}
	}
}

// lazy: the parents' statement, then for each parent its children by `one`, and for each child
// its children, depth first, as nested loops over the rows read (each result read to the end
// before the next statement: one connection).
func (h *handLoad) loadLazy(src assocSource, args []any, sk *sink) (int64, error) {
	var n int64
	var refs []value
	if err := h.query(src, 0, h.parent, args, h.reader(&n, len(h.a.parent.columns), h.a.refAt, &refs, sk), sk); err != nil {
		return 0, err
	}
	var children func(level int, of value) error
	children = func(level int, of value) error {
		lv := &h.a.levels[level]
		var next []value
		if err := h.query(src, level+1, h.one[level], []any{valueArg(of)}, h.reader(&n, len(lv.columns), lv.refAt, &next, sk), sk); err != nil {
			return err
		}
		for _, v := range next {
			if err := children(level+1, v); err != nil {
				return err
			}
		}
		return nil
	}
	for _, v := range refs {
		if err := children(0, v); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// selectin: the parents' statement, then per level one `in` statement over the values the
// level above references (its primary key: distinct, never NULL), none when it read no rows.
func (h *handLoad) loadSelectin(src assocSource, args []any, sk *sink) (int64, error) {
	var n int64
	var refs []value
	if err := h.query(src, 0, h.parent, args, h.reader(&n, len(h.a.parent.columns), h.a.refAt, &refs, sk), sk); err != nil {
		return 0, err
	}
	for level := range h.a.levels {
		if len(refs) == 0 {
			break
		}
		lv := &h.a.levels[level]
		var b strings.Builder
		b.WriteString(lv.in[0])
		in := make([]any, len(refs))
		for k, v := range refs {
			if k > 0 {
				b.WriteString(", ")
			}
			if h.dollar {
				b.WriteString("$" + strconv.Itoa(k+1))
			} else {
				b.WriteByte('?')
			}
			in[k] = valueArg(v)
		}
		b.WriteString(lv.in[1])
		var next []value
		if err := h.query(src, level+1, b.String(), in, h.reader(&n, len(lv.columns), lv.refAt, &next, sk), sk); err != nil {
			return 0, err
		}
		refs = next
	}
	return n, nil
}

// joined: the one statement, each row split by the tables' column counts; an entity is kept
// the first time its key is seen (a parent comes once per child, a child once per grandchild),
// none where the key is NULL (a LEFT JOIN that found nothing).
func (h *handLoad) loadJoined(src assocSource, args []any, sk *sink) (int64, error) {
	tables := make([]*tableDef, 0, len(h.a.levels)+1)
	keys := make([][]int, 0, len(h.a.levels)+1)
	tables, keys = append(tables, h.a.parent), append(keys, keyColumns(h.a.parent))
	for k := range h.a.levels {
		tables, keys = append(tables, &h.a.levels[k].tableDef), append(keys, h.a.levels[k].keyAt)
	}
	if h.seen == nil {
		h.seen = make([]map[any]struct{}, len(tables))
	}
	for k := range h.seen { // the entities of this operation
		if h.seen[k] == nil {
			h.seen[k] = map[any]struct{}{}
		}
		clear(h.seen[k])
	}
	var n int64
	var row []value
	err := h.query(src, len(h.a.levels)+1, h.joined, args, func(get func(int) value) {
		at := 0
		for t, table := range tables {
			key, null := entityKey(get, at, keys[t])
			if null {
				break // no entity here, nor below it
			}
			if _, dup := h.seen[t][key]; !dup {
				h.seen[t][key] = struct{}{}
				n++
				if sk != nil {
					row = row[:0]
					for c := range table.columns {
						row = append(row, get(at+c))
					}
					sk.add(row)
				}
			}
			at += len(table.columns)
		}
	}, sk)
	return n, err
}

// query runs one statement through the driver, counted in a verification pass.
func (h *handLoad) query(src assocSource, result int, text string, args []any, row func(func(int) value), sk *sink) error {
	if sk != nil {
		sk.sent(1)
	}
	return src.assocQuery(result, text, args, row)
}

func keyColumns(t *tableDef) []int {
	out := make([]int, 0, len(t.key))
	for _, k := range t.key {
		out = append(out, t.index(k))
	}
	return out
}

// entityKey: an entity's key as a map key (a one-column key as its value, else the values'
// text joined); null when a key column is NULL.
func entityKey(get func(int) value, at int, keyAt []int) (any, bool) {
	if len(keyAt) == 1 {
		v := get(at + keyAt[0])
		return v.mapKey(), v.kind == 'N'
	}
	var b strings.Builder
	for _, k := range keyAt {
		v := get(at + k)
		if v.kind == 'N' {
			return nil, true
		}
		mk := v.mapKey()
		b.WriteByte(mk.kind)
		b.WriteString(strconv.FormatInt(mk.n, 10))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(len(mk.s)))
		b.WriteByte(':')
		b.WriteString(mk.s)
	}
	return b.String(), false
}

// valueKey is a value as a comparable map key.
type valueKey struct {
	kind byte
	n    int64
	s    string
}

func (v value) mapKey() valueKey {
	if v.kind == 'X' {
		return valueKey{kind: 'X', s: string(v.x)}
	}
	return valueKey{v.kind, v.n, v.s}
}

// valueArg: a value read, bound as the next statement's argument (the key of the level
// above), as database/sql and pgx take it.
func valueArg(v value) any {
	if v.kind == 'F' {
		return math.Float64frombits(uint64(v.n))
	}
	switch v.kind {
	case 'I':
		return v.n
	case 'B':
		return v.n != 0
	case 'D', 'S':
		return v.s
	case 'X':
		return v.x
	case 'T':
		return time.UnixMicro(v.n).UTC()
	case 'd':
		return time.Unix(v.n*86400, 0).UTC()
	}
	return nil
}
