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
}

// entities: one type per table shape (columns, types and key) and DBMS, made when a step
// first needs it and kept for the worker's life (GORM and sqlx cache their own reflection of
// it by type).
var (
	entitiesMu sync.Mutex
	entities   = map[string]*entity{}
)

func entityFor(sh *shape, dbms string) (*entity, error) {
	id := dbms + "|" + strings.Join(sh.tableColumns, ",") + "|" + strings.Join(sh.tableTypes, ",") + "|" + strings.Join(sh.key, ",")
	entitiesMu.Lock()
	defer entitiesMu.Unlock()
	if e, ok := entities[id]; ok {
		return e, nil
	}
	e := &entity{index: map[string]int{}, dbms: dbms}
	fields := make([]reflect.StructField, len(sh.tableColumns))
	for k, col := range sh.tableColumns {
		typ, read, err := columnType(sh.tableTypes[k], dbms)
		if err != nil {
			return nil, fmt.Errorf("table %s, column %s: %w", sh.table, col, err)
		}
		tag := "column:" + col
		for _, kc := range sh.key {
			if kc == col {
				tag += ";primaryKey;autoIncrement:false"
			}
		}
		fields[k] = reflect.StructField{Name: "F" + strconv.Itoa(k), Type: typ,
			Tag: reflect.StructTag(`gorm:"` + tag + `" db:"` + col + `"`)}
		e.index[col] = k
		e.read = append(e.read, read)
		e.fields = append(e.fields, col)
	}
	e.typ = reflect.StructOf(fields)
	entities[id] = e
	return e, nil
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
	layerVerify   = "every value read from the entity's field (or, for a statement of no plain shape, from the scanned destinations), converted to the protocol's values as the bare driver's decoding does"
)
