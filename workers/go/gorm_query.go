package main

import (
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"
)

// GORM's chain for a shape richer than the plain form, and its associations for a load step.
//
// GORM's query API takes SQL fragments: Where("id > ?", x), Or(…), Order("id desc"),
// Joins("LEFT JOIN posts ON …"), Select("post_id, count(*) AS count"), Group("post_id"),
// gorm.Expr("qty + ?", x). Its users write those fragments in their code; here they are
// written once per step, before the clock, from the shape (names quoted as the DBMS quotes
// them, so that each is read as spelled), and the chain is called in each operation with the
// operation's values bound, as a GORM user's code calls it:
//
//	db.Table(t).Where("id > ?", x).Order("id").Limit(100).Find(&entities)
//	db.Table(t).Select([]string{"id", "name"}).Where("id > ?", x).Order("id").Limit(10).Find(&entities)
//	db.Table(t).Where(db.Where("hair IS NULL").Or("name LIKE ?", p)).Where("id IN ?", ids).Find(&entities)
//	db.Table(t).Select("users.id, …, posts.id AS posts_id, …").Joins("LEFT JOIN posts ON …").Where(…).Scan(&rows)
//	db.Table(t).Select("post_id, count(*) AS count, max(id) AS max").Where(…).Group("post_id").Order("post_id").Scan(&rows)
//	db.Table(t).Where(…).Update("qty", gorm.Expr("qty + ?", x))
//	db.Table(t).Where(…).Delete(&entity)
//
// No fragment is taken from the step's SQL text: the worker never parses SQL.

// gormQuery is a step's chain: its fragments and where each value comes from.
type gormQuery struct {
	table   string
	selects string   // Select(…) for a join, aggregate or group (Scan into rows)
	columns []string // Select([]string{…}) of a read of some of the entity's columns (Find); neither: whole entities
	joins   []string
	where   *gormCond // nil: none
	groups  []string  // Group(…), one per column
	orders  []string  // Order(…), one per column
	limit   *operand
	offset  *operand
	sets    []gormSet // update
}

// gormCond: a condition fragment with its operands, or a group (and, or) of them.
type gormCond struct {
	frag    string
	args    []operand
	list    bool // IN ?: the operands bound as one slice, which GORM expands to (?, ?, …)
	and, or []*gormCond
}

// gormSet: one column of an update and its value, or (expr) gorm.Expr("c + ?", value).
type gormSet struct {
	column string
	expr   string
	arg    operand
}

// gormQueryOf writes the chain's fragments from the shape; res is the row type of a join,
// aggregate or group (its aliases name the result columns for Scan); columns, a read of some
// of the entity's columns (gormSelect), nil for whole entities.
func gormQueryOf(sh *shape, res *result, columns []string, dbms string) (*gormQuery, error) {
	q := &gormQuery{table: sh.table, columns: columns, limit: sh.limit, offset: sh.offset}
	qualified := len(sh.joins) > 0
	name := func(c colRef) string {
		if qualified {
			return quoteName(c.table, dbms) + "." + quoteName(c.column, dbms)
		}
		return quoteName(c.column, dbms)
	}
	if res != nil {
		parts := make([]string, len(sh.items))
		for k, it := range sh.items {
			var expr string
			switch {
			case it.fn == "":
				expr = name(it.colRef)
			case it.column == "":
				expr = it.fn + "(*)"
			default:
				expr = it.fn + "(" + name(it.colRef) + ")"
			}
			if it.fn != "" || res.aliases[k] != it.column {
				expr += " AS " + quoteName(res.aliases[k], dbms)
			}
			parts[k] = expr
		}
		q.selects = strings.Join(parts, ", ")
	}
	for _, j := range sh.joins {
		kind := "JOIN "
		if j.left {
			kind = "LEFT JOIN "
		}
		q.joins = append(q.joins, kind+quoteName(j.table, dbms)+" ON "+name(j.on[1])+" = "+name(j.on[0]))
	}
	if sh.filter != nil {
		w, err := gormCondOf(sh.filter, name)
		if err != nil {
			return nil, err
		}
		q.where = w
	}
	for _, g := range sh.group {
		if qualified { // Group quotes a name itself (table.column: each part)
			q.groups = append(q.groups, g.table+"."+g.column)
		} else {
			q.groups = append(q.groups, g.column)
		}
	}
	for _, o := range sh.order {
		frag := name(o.colRef)
		if o.desc {
			frag += " DESC"
		}
		q.orders = append(q.orders, frag)
	}
	for _, a := range sh.set {
		s := gormSet{column: a.column, arg: a.arg}
		switch a.op {
		case "=":
		case "+":
			s.expr = quoteName(a.column, dbms) + " + ?"
		default:
			return nil, fmt.Errorf("no GORM form for SET %s %s", a.column, a.op)
		}
		q.sets = append(q.sets, s)
	}
	return q, nil
}

func gormCondOf(c *cond, name func(colRef) string) (*gormCond, error) {
	out := &gormCond{}
	for _, sub := range c.and {
		s, err := gormCondOf(sub, name)
		if err != nil {
			return nil, err
		}
		out.and = append(out.and, s)
	}
	for _, sub := range c.or {
		s, err := gormCondOf(sub, name)
		if err != nil {
			return nil, err
		}
		out.or = append(out.or, s)
	}
	if c.and != nil || c.or != nil {
		return out, nil
	}
	col := name(c.column)
	out.args = c.args
	switch c.op {
	case "=", "<>", "<", "<=", ">", ">=":
		out.frag = col + " " + c.op + " ?"
	case "between":
		out.frag = col + " BETWEEN ? AND ?"
	case "in":
		out.frag, out.list = col+" IN ?", true
	case "is null":
		out.frag = col + " IS NULL"
	case "is not null":
		out.frag = col + " IS NOT NULL"
	case "like":
		out.frag = col + " LIKE ?"
	default:
		return nil, fmt.Errorf("no GORM condition for operator %q", c.op)
	}
	return out, nil
}

// values: the condition's operands for one operation (IN: one slice).
func (c *gormCond) values(args []any) []any {
	vals := make([]any, len(c.args))
	for k, a := range c.args {
		vals[k] = a.value(args)
	}
	if c.list {
		return []any{vals}
	}
	return vals
}

// chain builds the step's query on g for one operation's values.
func (d *gormDriver) chain(g *gorm.DB, q *gormQuery, args []any) *gorm.DB {
	tx := g.Table(q.table)
	switch {
	case q.selects != "":
		tx = tx.Select(q.selects)
	case q.columns != nil:
		tx = tx.Select(q.columns)
	}
	for _, j := range q.joins {
		tx = tx.Joins(j)
	}
	if q.where != nil {
		tx = d.where(tx, q.where, args)
	}
	for _, gr := range q.groups {
		tx = tx.Group(gr)
	}
	for _, o := range q.orders {
		tx = tx.Order(o)
	}
	if q.limit != nil {
		tx = tx.Limit(asInt(q.limit.value(args)))
	}
	if q.offset != nil {
		tx = tx.Offset(asInt(q.offset.value(args)))
	}
	return tx
}

// where ANDs a condition onto the chain: a fragment by Where, an AND group term by term, an
// OR group as GORM's group condition, Where(db.Where(a).Or(b)).
func (d *gormDriver) where(tx *gorm.DB, c *gormCond, args []any) *gorm.DB {
	switch {
	case c.and != nil:
		for _, sub := range c.and {
			tx = d.where(tx, sub, args)
		}
		return tx
	case c.or != nil:
		return tx.Where(d.group(c, args))
	}
	return tx.Where(c.frag, c.values(args)...)
}

// group is a condition as a group on a new chain of the root *gorm.DB (GORM's "Group
// Conditions": db.Where(db.Where("a = ?", 1).Or("b = ?", 2))).
func (d *gormDriver) group(c *gormCond, args []any) *gorm.DB {
	g := d.g
	if c.or == nil {
		for _, sub := range c.and {
			g = g.Where(d.term(sub, args))
		}
		return g
	}
	for k, sub := range c.or {
		if sub.frag != "" {
			if k == 0 {
				g = g.Where(sub.frag, sub.values(args)...)
			} else {
				g = g.Or(sub.frag, sub.values(args)...)
			}
			continue
		}
		if k == 0 {
			g = g.Where(d.group(sub, args))
		} else {
			g = g.Or(d.group(sub, args))
		}
	}
	return g
}

// term is a condition as one argument of Where/Or: a group (an AND inside a group is its own).
func (d *gormDriver) term(c *gormCond, args []any) *gorm.DB {
	if c.frag != "" {
		return d.g.Where(c.frag, c.values(args)...)
	}
	return d.group(c, args)
}

func asInt(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case int:
		return x
	case float64:
		return int(x)
	case int32:
		return int(x)
	}
	return 0
}

// runRich runs one operation of a rich shape: Find of whole entities, Scan of rows, Update(s)
// or Delete on the chain.
func (d *gormDriver) runRich(st *step, g *gorm.DB, i int, sk *sink) (int64, error) {
	sh, q := st.shape, d.q
	var args []any
	if i < len(d.args) {
		args = d.args[i]
	}
	tx := d.chain(g, q, args)
	switch sh.kind {
	case "select":
		if d.res != nil {
			rows := reflect.New(reflect.SliceOf(d.res.typ))
			if err := tx.Scan(rows.Interface()).Error; err != nil {
				return 0, err
			}
			if sk != nil {
				d.rd.addAll(sk, rows.Elem())
			}
			return int64(rows.Elem().Len()), nil
		}
		rows := reflect.New(reflect.SliceOf(d.ent.typ))
		if err := tx.Find(rows.Interface()).Error; err != nil {
			return 0, err
		}
		if sk != nil {
			d.rd.addAll(sk, rows.Elem())
		}
		return int64(rows.Elem().Len()), nil
	case "update":
		if q.where == nil {
			tx = tx.Session(&gorm.Session{AllowGlobalUpdate: true})
		}
		var res *gorm.DB
		if len(q.sets) == 1 {
			res = tx.Update(q.sets[0].column, q.sets[0].value(args))
		} else {
			m := make(map[string]any, len(q.sets))
			for _, s := range q.sets {
				m[s.column] = s.value(args)
			}
			res = tx.Updates(m)
		}
		return res.RowsAffected, res.Error
	case "delete":
		if q.where == nil {
			tx = tx.Session(&gorm.Session{AllowGlobalUpdate: true})
		}
		res := tx.Delete(reflect.New(d.ent.typ).Interface())
		return res.RowsAffected, res.Error
	}
	return 0, fail("internal", "unknown shape kind %q", sh.kind)
}

// value: the column's new value, or gorm.Expr("c + ?", value) for an increment.
func (s gormSet) value(args []any) any {
	if s.expr != "" {
		return gorm.Expr(s.expr, s.arg.value(args))
	}
	return s.arg.value(args)
}

// ---- load steps: associations -----------------------------------------------------------------

// gormLoad: a load step's entities, parents first, each with its has-many association to the
// next (reflect.StructOf fields tagged `gorm:"foreignKey:user_id;references:id"`), and the
// parents' chain.
type gormLoad struct {
	ents     []*entity
	readers  []*reader // every column of each table, in order
	preload  string    // "Posts.Comments": the associations' path
	q        *gormQuery
	strategy string // lazy, selectin
}

const gormNoJoined = "GORM's Joins(\"Association\") loads belongs-to and has-one associations only (its documentation: Joins Preloading works with one-to-one relations); a has-many association (a parent's children) cannot be loaded by JOIN through GORM"

func (d *gormDriver) beginLoad(st *step) error {
	a := st.assoc
	if a.strategy == "joined" {
		return unsupported("%s", gormNoJoined)
	}
	ents, err := loadEntities(a, d.dbmsName, true)
	if err != nil {
		return unsupported("%v", err)
	}
	ld := &gormLoad{ents: ents, strategy: a.strategy}
	for _, e := range ents {
		r, err := e.reader(e.fields)
		if err != nil {
			return unsupported("%v", err)
		}
		ld.readers = append(ld.readers, r)
	}
	names := make([]string, 0, len(ents)-1)
	for _, e := range ents[:len(ents)-1] {
		names = append(names, e.relName)
	}
	ld.preload = strings.Join(names, ".")
	if ld.q, err = gormQueryOf(st.shape, nil, nil, d.dbmsName); err != nil {
		return unsupported("%v", err)
	}
	d.ld = ld
	if d.g != nil {
		return ld.name(d.g)
	}
	return nil
}

// name gives each entity's schema its table. A GORM user names a model's table by its type's
// name (the NamingStrategy) or a TableName method; a type made by reflect.StructOf has neither,
// so the table is set on the schema GORM parses for it (once per *gorm.DB, whose sessions
// share the parsed schemas), the parents' and, through their associations, the children's —
// what Preload and Association query.
func (ld *gormLoad) name(g *gorm.DB) error {
	stmt := &gorm.Statement{DB: g}
	if err := stmt.Parse(reflect.New(ld.ents[0].typ).Interface()); err != nil {
		return err
	}
	sch := stmt.Schema
	for k, e := range ld.ents {
		sch.Table = e.table
		if k+1 < len(ld.ents) {
			rel := sch.Relationships.Relations[e.relName]
			if rel == nil {
				return fmt.Errorf("GORM found no association %s on %s", e.relName, e.table)
			}
			sch = rel.FieldSchema
		}
	}
	return nil
}

// load is one load: the parents by the chain's Find, their associations by the strategy —
// selectin: Preload("Posts.Comments") on the same Find (a query per level with the keys
// read: WHERE user_id IN (…)); lazy: GORM has no lazy loading, so each parent's association
// is read when touched, db.Model(&parent).Association("Posts").Find(&parent.Posts), and each
// child's likewise (the N+1 queries) — then every entity read (and checksummed) once.
func (d *gormDriver) load(g *gorm.DB, args []any, sk *sink) (int64, error) {
	ld := d.ld
	parents := reflect.New(reflect.SliceOf(ld.ents[0].typ))
	tx := d.chain(g, ld.q, args)
	if ld.strategy == "selectin" {
		tx = tx.Preload(ld.preload)
	}
	if err := tx.Find(parents.Interface()).Error; err != nil {
		return 0, err
	}
	var n int64
	var walk func(level int, rows reflect.Value) error
	walk = func(level int, rows reflect.Value) error {
		e := ld.ents[level]
		for k := 0; k < rows.Len(); k++ {
			row := rows.Index(k)
			n++
			if sk != nil {
				ld.readers[level].add(sk, row)
			}
			if e.rel < 0 {
				continue
			}
			children := row.Field(e.rel)
			if ld.strategy == "lazy" {
				if err := g.Model(row.Addr().Interface()).Association(e.relName).Find(children.Addr().Interface()); err != nil {
					return err
				}
			}
			if err := walk(level+1, children); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(0, parents.Elem()); err != nil {
		return 0, err
	}
	return n, nil
}
