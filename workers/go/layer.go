package main

import (
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Layer methods (go-gorm+…, go-sqlx+…): a library above a database/sql driver this worker
// also measures bare, on the same steps, so that each layer cell pairs with its driver's.
// What a step's statement does comes with the step as its shape (PROTOCOL.md, `shape`; worked
// out by the runner, parsed with the step in step.go): the layer uses its own API for it and
// never parses SQL. The pieces here are the layers' common ones: what a layer asks of the
// shape, the entity types made from the suite's tables, and reading an entity's fields as the
// driver under the layer reads the columns.

// modeLister is a driver that does not have every mode (a layer that binds every value
// has no literal mode): hello lists these.
type modeLister interface {
	modes() []string
}

// mapped: the shape is of a table of the suite, which an entity can be made for.
func (sh *shape) mapped() bool { return sh != nil && len(sh.tableColumns) > 0 }

// byKey: the where is exactly the table's primary key (a get by key).
func (sh *shape) byKey() bool {
	if len(sh.key) == 0 || len(sh.where) != len(sh.key) {
		return false
	}
	for _, k := range sh.key {
		found := false
		for _, w := range sh.where {
			found = found || w == k
		}
		if !found {
			return false
		}
	}
	return true
}

// distinctWhere: no column is compared twice (the layers' conditions are keyed by column).
func (sh *shape) distinctWhere() bool {
	seen := map[string]bool{}
	for _, w := range sh.where {
		if seen[w] {
			return false
		}
		seen[w] = true
	}
	return true
}

// ---- entities -------------------------------------------------------------------------------

// entity is the Go type made for a table of the suite: a struct with one field per column, of
// the database/sql type the bare driver scans that column into (sql.NullInt64 for integers,
// sql.NullString for text and numeric, sql.NullTime for timestamps and dates, …), so that a
// value read through the layer is the value the driver reads. Tags name the column for GORM
// (`gorm:"column:…"`, primaryKey with autoIncrement off: the suite's keys are given, not
// generated) and for sqlx (`db:"…"`).
type entity struct {
	typ    reflect.Type
	index  map[string]int              // column → field index
	read   []func(reflect.Value) value // per field: its value as the driver's decoding gives it
	dbms   string
	fields []string // column per field
	table  string   // the table it was made for (the first, for a type tables alike share)

	rel     int     // the has-many field's index (a load step's entity), -1 for none
	relName string  // its name, the association's
	child   *entity // its element type
}

// entities: one type per table shape (columns, types and key) and DBMS, made when a step
// first needs it and kept for the worker's life (GORM and sqlx cache their own reflection of
// it by type).
var (
	entitiesMu sync.Mutex
	entities   = map[string]*entity{}
)

func entityFor(sh *shape, dbms string) (*entity, error) {
	return entityOf(&tableDef{name: sh.table, columns: sh.tableColumns, types: sh.tableTypes, key: sh.key}, dbms, nil, false)
}

// relation is a has-many field of an entity (a load step's, layer.go's GORM use): its name,
// the child entity, the child's column referencing the parent and the referenced column.
type relation struct {
	name          string
	child         *entity
	column, refTo string
}

// entityOf makes (or finds) the entity type of a table. One type per column set (tables
// alike share it), but for own (a load step's, for GORM): the table's own type (its name in a
// tag: GORM keeps one schema, with its table name, per type), and with a relation, its
// has-many field last: `gorm:"foreignKey:<child column>;references:<column>"`,
// a slice of the child entity, as a GORM user declares a has-many association.
func entityOf(t *tableDef, dbms string, rel *relation, own bool) (*entity, error) {
	id := dbms + "|" + strings.Join(t.columns, ",") + "|" + strings.Join(t.types, ",") + "|" + strings.Join(t.key, ",")
	if own {
		id += "|" + t.name
	}
	if rel != nil {
		id += "|" + rel.name + "|" + rel.child.typ.String()
	}
	entitiesMu.Lock()
	defer entitiesMu.Unlock()
	if e, ok := entities[id]; ok {
		return e, nil
	}
	e := &entity{index: map[string]int{}, dbms: dbms, table: t.name, rel: -1}
	fields := make([]reflect.StructField, len(t.columns), len(t.columns)+1)
	for k, col := range t.columns {
		typ, read, err := columnType(t.types[k], dbms)
		if err != nil {
			return nil, fmt.Errorf("table %s, column %s: %w", t.name, col, err)
		}
		tag := "column:" + col
		for _, kc := range t.key {
			if kc == col {
				tag += ";primaryKey;autoIncrement:false"
			}
		}
		extra := ""
		if own && k == 0 {
			extra = ` table:"` + t.name + `"` // the table's own type (GORM's schema is per type)
		}
		fields[k] = reflect.StructField{Name: "F" + strconv.Itoa(k), Type: typ,
			Tag: reflect.StructTag(`gorm:"` + tag + `" db:"` + col + `"` + extra)}
		e.index[col] = k
		e.read = append(e.read, read)
		e.fields = append(e.fields, col)
	}
	if rel != nil {
		e.rel, e.relName, e.child = len(fields), rel.name, rel.child
		fields = append(fields, reflect.StructField{Name: rel.name, Type: reflect.SliceOf(rel.child.typ),
			Tag: reflect.StructTag(`gorm:"foreignKey:` + rel.column + `;references:` + rel.refTo + `" db:"-"`)})
	}
	e.typ = reflect.StructOf(fields)
	entities[id] = e
	return e, nil
}

// relationName: the has-many field's name for a child table, as Go exports it ("posts" →
// "Posts"), made a valid exported identifier whatever the table's name.
func relationName(table string) string {
	var b strings.Builder
	for k, r := range table {
		switch {
		case k == 0 && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case k == 0 && !(r >= 'A' && r <= 'Z'):
			b.WriteString("T")
			fallthrough
		case r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		default:
			b.WriteString("_")
		}
	}
	return b.String()
}

// loadEntities: the entity of each table of a load step, parents first, each (but the last)
// with its has-many field of the next (GORM's associations); plain entities when relations
// is false (sqlx, which has none).
func loadEntities(a *assoc, dbms string, relations bool) ([]*entity, error) {
	tables := []*tableDef{a.parent}
	for k := range a.levels {
		tables = append(tables, &a.levels[k].tableDef)
	}
	out := make([]*entity, len(tables))
	for k := len(tables) - 1; k >= 0; k-- {
		var rel *relation
		if relations && k+1 < len(tables) {
			lv := &a.levels[k]
			rel = &relation{name: relationName(lv.name), child: out[k+1], column: lv.column, refTo: lv.parentColumn}
		}
		e, err := entityOf(tables[k], dbms, rel, relations)
		if err != nil {
			return nil, err
		}
		out[k] = e
	}
	return out, nil
}

// ---- result rows of joins and aggregates ----------------------------------------------------

// result is the row type of a select whose rows are not one table's entities (a join, an
// aggregate, a group): one field per item, in order, typed as the bare driver decodes that
// result column (a column's type from its table; an aggregate's as the DBMS types it), so
// that its values checksum as the driver's.
type result struct {
	*entity
	aliases []string // per item: a name no other item has (GORM's Select … AS, Scan's mapping)
	names   []string // per item: the result column's name as the statement gives it ("" unknown)
	byName  bool     // every name known and distinct: a row mapper can map by name (sqlx)
}

func resultFor(sh *shape, dbms string) (*result, error) {
	r := &result{byName: true}
	specs := &tableDef{name: sh.table}
	used := map[string]bool{}
	for _, it := range sh.items {
		var typ, name, alias string
		if it.fn == "" {
			t, ok := sh.tables[it.table]
			if !ok || t.index(it.column) < 0 {
				return nil, fmt.Errorf("column %s.%s is not of a table of the suite", it.table, it.column)
			}
			typ, name = t.types[t.index(it.column)], it.column
			alias = name
			if used[alias] {
				alias = it.table + "_" + it.column
			}
		} else {
			var colType string
			if it.column != "" {
				t, ok := sh.tables[it.table]
				if !ok || t.index(it.column) < 0 {
					return nil, fmt.Errorf("column %s.%s is not of a table of the suite", it.table, it.column)
				}
				colType = t.types[t.index(it.column)]
			}
			var err error
			if typ, err = aggregateType(it.fn, colType, dbms); err != nil {
				return nil, err
			}
			name, alias = it.as, it.as // unnamed: PostgreSQL says "count", MariaDB "count(*)"
			if alias == "" {
				alias = it.fn
				if used[alias] && it.column != "" {
					alias = it.fn + "_" + it.column
				}
			}
		}
		for base, n := alias, 2; used[alias]; n++ {
			alias = base + "_" + strconv.Itoa(n)
		}
		r.byName = r.byName && name != "" && !used[name]
		used[alias], used[name] = true, true
		r.aliases, r.names = append(r.aliases, alias), append(r.names, name)
		specs.columns, specs.types = append(specs.columns, alias), append(specs.types, typ)
	}
	e, err := entityOf(specs, dbms, nil, false)
	if err != nil {
		return nil, err
	}
	// db tags: the names the statement gives (a row mapper by name); gorm tags: the aliases
	fields := make([]reflect.StructField, e.typ.NumField())
	for k := range fields {
		f := e.typ.Field(k)
		dbTag := r.names[k]
		if !r.byName || dbTag == "" {
			dbTag = "-"
		}
		fields[k] = reflect.StructField{Name: f.Name, Type: f.Type,
			Tag: reflect.StructTag(`gorm:"column:` + r.aliases[k] + `" db:"` + dbTag + `"`)}
	}
	r.entity = &entity{typ: reflect.StructOf(fields), index: e.index, read: e.read, dbms: dbms, fields: e.fields, rel: -1}
	return r, nil
}

// aggregateType: the SQL type of an aggregate's result as the DBMS types it (as the bare
// driver then decodes it): count is a bigint; min and max the column's type; sum of integers a
// bigint on PostgreSQL (numeric of a bigint) and a DECIMAL on MariaDB; avg of integers a
// numeric (DECIMAL); sum and avg of numeric a numeric; of floating point a double (PostgreSQL's
// sum of real: real).
func aggregateType(fn, colType, dbms string) (string, error) {
	base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(colType)), "(")
	switch fn {
	case "count":
		return "bigint", nil
	case "min", "max":
		return colType, nil
	case "sum", "avg":
		switch base {
		case "smallint", "integer":
			if fn == "sum" && dbms != "mariadb" {
				return "bigint", nil
			}
			return "numeric", nil
		case "bigint", "numeric":
			return "numeric", nil
		case "real":
			if fn == "sum" && dbms != "mariadb" {
				return "real", nil
			}
			return "double", nil
		case "double":
			return "double", nil
		}
	}
	return "", fmt.Errorf("no result type for %s(%s)", fn, colType)
}

var (
	tNullInt    = reflect.TypeFor[sql.NullInt64]()
	tNullFloat  = reflect.TypeFor[sql.NullFloat64]()
	tNullBool   = reflect.TypeFor[sql.NullBool]()
	tNullString = reflect.TypeFor[sql.NullString]()
	tNullTime   = reflect.TypeFor[sql.NullTime]()
	tNullBytes  = reflect.TypeFor[sql.Null[[]byte]]()
)

// columnType is a suite SQL type's field type and how its value is read, as the bare
// driver's decoding reads that column on the DBMS (pgSQLPlan, mysqlDriver.plan): on
// MariaDB a BOOLEAN is TINYINT(1), an integer to the driver, and real is FLOAT.
func columnType(sqlType, dbms string) (reflect.Type, func(reflect.Value) value, error) {
	base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(sqlType)), "(")
	switch base {
	case "smallint", "integer", "bigint":
		return tNullInt, readInt, nil
	case "boolean":
		if dbms == "mariadb" {
			return tNullInt, readInt, nil
		}
		return tNullBool, func(f reflect.Value) value {
			v := f.Addr().Interface().(*sql.NullBool)
			if !v.Valid {
				return nullValue
			}
			return boolValue(v.Bool)
		}, nil
	case "double", "real":
		single := base == "real"
		return tNullFloat, func(f reflect.Value) value {
			v := f.Addr().Interface().(*sql.NullFloat64)
			switch {
			case !v.Valid:
				return nullValue
			case single:
				return floatValue(float4AsDouble(float32(v.Float64)))
			}
			return floatValue(v.Float64)
		}, nil
	case "numeric":
		return tNullString, func(f reflect.Value) value {
			v := f.Addr().Interface().(*sql.NullString)
			if !v.Valid {
				return nullValue
			}
			return decimalValue(v.String)
		}, nil
	case "text", "char", "varchar":
		return tNullString, func(f reflect.Value) value {
			v := f.Addr().Interface().(*sql.NullString)
			if !v.Valid {
				return nullValue
			}
			return textValue(v.String)
		}, nil
	case "timestamp":
		return tNullTime, func(f reflect.Value) value {
			v := f.Addr().Interface().(*sql.NullTime)
			if !v.Valid {
				return nullValue
			}
			return timestampValue(v.Time.UnixMicro())
		}, nil
	case "date":
		return tNullTime, func(f reflect.Value) value {
			v := f.Addr().Interface().(*sql.NullTime)
			if !v.Valid {
				return nullValue
			}
			return dateValue(unixDays(v.Time))
		}, nil
	case "bytes":
		return tNullBytes, func(f reflect.Value) value {
			v := f.Addr().Interface().(*sql.Null[[]byte])
			if !v.Valid {
				return nullValue
			}
			return bytesValue(v.V)
		}, nil
	}
	return nil, nil, fmt.Errorf("no entity field type for SQL type %q", sqlType)
}

func readInt(f reflect.Value) value {
	v := f.Addr().Interface().(*sql.NullInt64)
	if !v.Valid {
		return nullValue
	}
	return intValue(v.Int64)
}

// newRow: a new entity value (addressable), its fields NULL.
func (e *entity) newRow() reflect.Value { return reflect.New(e.typ).Elem() }

// fill sets an entity's columns from generated values (before the clock), each through its
// field's sql.Scanner from the value as database/sql carries it (sqlArg), as a row read
// would set it; a boolean for a MariaDB BOOLEAN (an integer field) is 1/0.
func (e *entity) fill(row reflect.Value, columns []string, params []param) error {
	for k, col := range columns {
		i, ok := e.index[col]
		if !ok {
			return fmt.Errorf("column %s is not in the table", col)
		}
		arg := sqlArg(params[k])
		if b, isBool := arg.(bool); isBool && row.Field(i).Type() == tNullInt {
			arg = int64(0)
			if b {
				arg = int64(1)
			}
		}
		if err := row.Field(i).Addr().Interface().(sql.Scanner).Scan(arg); err != nil {
			return fmt.Errorf("column %s: %w", col, err)
		}
	}
	return nil
}

// reader: the values of columns read from an entity, in order, into a sink (verification).
type reader struct {
	fields []int
	read   []func(reflect.Value) value
	row    []value
}

func (e *entity) reader(columns []string) (*reader, error) {
	r := &reader{row: make([]value, len(columns))}
	for _, col := range columns {
		i, ok := e.index[col]
		if !ok {
			return nil, fmt.Errorf("column %s is not in the table", col)
		}
		r.fields = append(r.fields, i)
		r.read = append(r.read, e.read[i])
	}
	return r, nil
}

// add reads one entity's columns into the sink.
func (r *reader) add(sk *sink, row reflect.Value) {
	for c, i := range r.fields {
		r.row[c] = r.read[c](row.Field(i))
	}
	sk.add(r.row)
}

// addAll reads every entity of a slice.
func (r *reader) addAll(sk *sink, rows reflect.Value) {
	for k := 0; k < rows.Len(); k++ {
		r.add(sk, rows.Index(k))
	}
}

// The layers' common settings.
const (
	layerEntities = "one Go struct type per table of the suite, made with reflect.StructOf when a step first needs it from the shape's table_columns, table_types and key (tables known only at run time, so no generated code; the layer's reflection of it is cached by type as for any struct); each field the database/sql type go-%s scans the column into (smallint/integer/bigint → sql.NullInt64, double/real → sql.NullFloat64, numeric → sql.NullString, boolean → %s, char/varchar/text → sql.NullString, timestamp/date → sql.NullTime, bytes → sql.Null[[]byte]), so that every value is read as the bare driver reads it"
	layerVerify   = "every value read from the entity's field (a join's or an aggregate's from its row type's field; a statement of no shape from the scanned destinations), converted to the protocol's values as the bare driver's decoding does; a load's entities each once, parents, children, grandchildren, every column of its table"
)

// shapeFeatures: every feature a shape can use (PROTOCOL.md, Shapes; suite/shape.py's
// FEATURES), for a layer's hello to map or answer unsupported.
var shapeFeatures = []string{"select", "get", "where", "star", "compare", "between", "in", "null", "like", "or",
	"join", "left-join", "aggregate", "group", "order", "limit", "offset", "insert", "update", "increment",
	"delete", "load-lazy", "load-joined", "load-selectin"}

// shapesExcept: capabilities.shapes of a layer that maps every feature but those of why.
func shapesExcept(why map[string]string) object {
	maps := []string{}
	unsupported := object{}
	for _, f := range shapeFeatures {
		if reason, ok := why[f]; ok {
			unsupported = append(unsupported, kv{f, reason})
		} else {
			maps = append(maps, f)
		}
	}
	return object{{"maps", maps}, {"unsupported", unsupported}}
}
