package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/jmoiron/sqlx"
)

// go-sqlx+pgx-stdlib, go-sqlx+mysql: jmoiron/sqlx, a row mapper, over the *sql.DB of a
// database/sql method this worker measures bare (go-pgx-stdlib, go-mysql), opened exactly as
// that method opens it and wrapped with sqlx.NewDb, so that the pair of cells differs by
// sqlx's own work: mapping columns to struct fields by reflection, compiling named queries.
//
// sqlx runs the SQL its users write. A read of a table of the suite is Get(&entity, sql,
// args...) when its where is the primary key, else Select(&[]entity, sql, args...); an insert
// is NamedExec of `INSERT … VALUES (:col, …)` with the entity, an update or delete NamedExec
// of its named form with a map of the values, a batch one multi-row NamedExec of the group's
// entities in a transaction; a statement of no plain shape is Queryx + SliceScan, or Exec.
// sqlx binds nothing itself (it hands the SQL and values to database/sql), so the literal
// mode is the user's SQL text run as it is.

type sqlxDriver struct {
	sqlDriver
	under    layerUnder
	base     string // the bare method's name
	bindName string // sqlx's driver name for its bind type: pgx ($n), mysql (?)
	dbmsName string

	x    *sqlx.DB // over d.db
	xFor *sql.DB
	xtx  *sqlx.Tx // the open transaction (commit_every)

	// per step
	ent    *entity
	rd     *reader
	named  string // a write's named statement, made from the shape
	nargs  []any  // per operation: the entity (insert) or the map of values (update, delete)
	groups []any  // batch: each group's slice of entities
	xs     *sqlx.Stmt
	ns     *sqlx.NamedStmt
	types  []string // raw reads: the columns' database type names
	row    []value
	res    *result   // a select of a join, an aggregate or a group: its row type
	raw    bool      // a statement of no shape: Queryx + SliceScan, no row type
	ld     *sqlxLoad // a load step
}

func newSqlxPgxDriver() dbDriver {
	d := &sqlxDriver{under: &pgxStdlibDriver{}, base: "go-pgx-stdlib", bindName: "pgx", dbmsName: "postgresql"}
	d.m = d.under
	return d
}

func newSqlxMysqlDriver() dbDriver {
	d := &sqlxDriver{under: &mysqlDriver{}, base: "go-mysql", bindName: "mysql", dbmsName: "mariadb"}
	d.m = d.under
	return d
}

func (d *sqlxDriver) driverName() string {
	return "github.com/jmoiron/sqlx over " + d.under.driverName()
}

func (d *sqlxDriver) driverVersion() string {
	return fmt.Sprintf("%s (%s %s)", moduleVersion("github.com/jmoiron/sqlx"), d.under.driverName(), d.under.driverVersion())
}

func (d *sqlxDriver) dbms() []string { return d.under.dbms() }

func (d *sqlxDriver) batchStyle() string {
	return "per group Beginx, one NamedExec of INSERT … VALUES (:col, …) with the group's slice of entities (sqlx expands it into one multi-row INSERT … VALUES (…), (…)), Commit"
}

func (d *sqlxDriver) settings() map[string]string {
	boolean := "sql.NullBool"
	driverSettings := "go-pgx-stdlib's, unchanged: stdlib.GetConnector of its pgx ConnConfig (DefaultQueryExecMode = QueryExecModeExec, StatementCacheCapacity = 0, DescriptionCacheCapacity = 0, search_path in the startup packet, OptionShouldPing false), sql.OpenDB, the pool pinned to one connection; wrapped with sqlx.NewDb(db, \"pgx\") ($n bind variables)"
	literal := "the SQL text with the values inlined, run as it is: Get/Select(&dest, text, pgx.QueryExecModeSimpleProtocol) and Exec(text, pgx.QueryExecModeSimpleProtocol), as go-pgx-stdlib's literal: the simple query protocol, text results"
	extended := "Get/Select/NamedExec/Exec on the *sqlx.DB: DB.QueryContext/ExecContext(sql, args...) under QueryExecModeExec, as go-pgx-stdlib's extended (the unnamed statement, one round trip); NamedExec compiles its named query into $n form on every call"
	prepared := "Preparex (reads, and statements of no plain shape) or PrepareNamed (named writes) once, inside the first operation (a named pgx statement), then Stmt.Get/Select/Queryx/Exec or NamedStmt.Exec; in a transaction Tx.Stmtx/Tx.NamedStmt of it; closed after the step (untimed)"
	scan := "Select(&[]entity, sql, pgx.QueryExecModeSimpleProtocol) (a statement of no plain shape: Queryx), as go-pgx-stdlib's scan: the simple query protocol, text results"
	if d.dbmsName == "mariadb" {
		boolean = "sql.NullInt64 (BOOLEAN is TINYINT(1), an integer to the driver)"
		driverSettings = "go-mysql's, unchanged: mysql.NewConnector of its Config (interpolateParams=false, parseTime=true, loc=UTC, clientFoundRows=true, collation=utf8mb4_bin, checkConnLiveness=false, maxAllowedPacket=64 MiB), sql.OpenDB, the pool pinned to one connection; wrapped with sqlx.NewDb(db, \"mysql\") (? bind variables)"
		literal = "the SQL text with the values inlined (backslashes doubled), run as it is: Get/Select(&dest, text) and Exec(text) without arguments, one COM_QUERY each, as go-mysql's literal"
		extended = "Get/Select/NamedExec/Exec on the *sqlx.DB: interpolateParams is off, so database/sql prepares, executes and closes every statement (COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_STMT_CLOSE), as go-mysql's extended; NamedExec compiles its named query into ? form on every call"
		prepared = "Preparex (reads, and statements of no plain shape) or PrepareNamed (named writes) once, inside the first operation (COM_STMT_PREPARE), then Stmt.Get/Select/Queryx/Exec or NamedStmt.Exec (COM_STMT_EXECUTE); in a transaction Tx.Stmtx/Tx.NamedStmt of it; closed after the step (untimed)"
		scan = "Select(&[]entity, sql) (a statement of no plain shape: Queryx), a COM_QUERY, as go-mysql's scan"
	}
	under := d.under.settings()
	settings := map[string]string{
		"tls":          d.base + "'s, through the *sql.DB it opens (the layer has no TLS setting of its own): " + under["tls"],
		"layer":        "github.com/jmoiron/sqlx " + moduleVersion("github.com/jmoiron/sqlx") + " over " + d.base,
		"driver":       driverSettings,
		"mapper":       "sqlx's default: struct fields by their `db` tag (strings.ToLower otherwise), the reflection cached per type; Unsafe off (a column with no field is an error)",
		"entities":     fmt.Sprintf(layerEntities, d.base[3:], boolean),
		"reads":        "the step's own SQL (sqlx's API is SQL text and a row mapper: it runs the SQL its users write, whatever its shape), its rows mapped into entities when they are one table's columns: Get(&entity, sql, args...) when the where is the table's primary key, else Select(&[]entity, sql, args...); each value read from the entity's field. A join, an aggregate or a GROUP BY: rows of a struct type made (reflect.StructOf) from the shape's items, one field per result column typed as the bare driver decodes it (an aggregate as the DBMS types it), read with Select(&[]row, sql, args...) by the db tags when the statement names every result column once, else with Queryx and Rows.Scan into the struct's fields in order (mapping by name would need aliases the statement does not have: a join's two id columns, an aggregate PostgreSQL names count and MariaDB count(*)). A statement of no shape: Queryx(sql, args...) and SliceScan per row, each value converted by its column's database type as the bare driver decodes it; its answers carry \"api\": \"raw\"",
		"writes":       "insert: NamedExec(`INSERT INTO t (cols) VALUES (:col, …)`, &entity); update and delete of equalities: NamedExec of the statement's named form (`UPDATE t SET c = :c WHERE k = :w_k`, made from the shape) with a map of the values; a richer update or delete (a range, an increment) and a statement of no shape: Exec(sql, args...)",
		"shapes":       "every feature: sqlx runs the statement's own text, and maps its rows into the step's struct (an entity, or a row type of the shape's items)",
		"load":         "sqlx has no relations: the strategies written by hand with sqlx's calls, the statements the step carries, rebound by sqlx.Rebind; lazy: Select(&users, …), then per user Select(&posts, `… WHERE user_id = ?`, user.ID), per post Select(&comments, …); selectin: Select(&users, …), then per level sqlx.In(`… WHERE user_id IN (?)`, keys) (sqlx's own IN-list helper), Rebind, Select(&posts, query, args...); joined: one Queryx of the joined statement, each row Rows.Scan by position into one new entity per table (its columns repeat names), each entity kept the first time its key is seen",
		"counting":     "statements of verification passes, counted by the worker: sqlx has no hook, and every Get, Select, Queryx, Exec and NamedExec the worker calls sends one statement (the prepared mode's Preparex not counted); batch and commit_every steps answer none",
		"values":       "an update's or delete's values bound as the bare driver binds them (" + d.base + "'s parameters); an inserted entity's fields are set from the generated values through their sql.Scanner and bound as those sql.Null* (driver.Valuer) values",
		"session":      "no cache of rows or entities: every read goes to the server",
		"transactions": "commit_every: Beginx / Tx.Commit (BEGIN/COMMIT); a statement to be prepared is prepared before the transaction begins (one pooled connection)",
		"literal":      literal,
		"extended":     extended,
		"prepared":     prepared,
		"scan":         scan,
		"connect step": "per operation: sqlx.NewDb(sql.OpenDB(connector)) + Ping (what sqlx.Connect does) + Close",
		"pooled":       sqlPooled + "; each client wraps the shared *sql.DB with sqlx.NewDb; prepared: each client's Preparex/PrepareNamed on the shared pool",
		"per-request":  sqlPerRequest,
		"verification": layerVerify,
	}
	settings["read_only"] = d.base + "'s, through the *sql.DB it opens: " + under["read_only"]
	if c, ok := under["compress"]; ok {
		settings["compress"] = d.base + "'s: " + c
	}
	return settings
}

func (d *sqlxDriver) wrap() {
	d.x, d.xFor = sqlx.NewDb(d.db, d.bindName), d.db
}

func (d *sqlxDriver) open(ep endpoint) error {
	if err := d.sqlDriver.open(ep); err != nil {
		return err
	}
	d.wrap()
	return nil
}

func (d *sqlxDriver) begin(st *step) error {
	d.ent, d.rd, d.named, d.nargs, d.groups, d.xs, d.ns, d.types = nil, nil, "", nil, nil, nil, nil, nil
	d.res, d.raw, d.ld = nil, false, nil
	if err := d.sqlDriver.begin(st); err != nil {
		return err
	}
	sh := st.shape
	if st.kind == kLoad {
		return d.beginLoad(st)
	}
	if st.kind == kConnect {
		return nil
	}
	if !sh.mapped() {
		if st.kind == kBatch {
			return unsupported("an sqlx batch is one NamedExec of a slice of entities, and this statement is not an insert into a table of the suite")
		}
		d.raw = true // no shape: rows of no known type (SliceScan), no struct to map them into
		return nil
	}
	if st.kind == kBatch && sh.kind != "insert" {
		return unsupported("an sqlx batch is one NamedExec of a slice of entities, and this statement is not an insert")
	}
	ent, err := entityFor(sh, d.dbmsName)
	if err != nil {
		return unsupported("%v", err)
	}
	d.ent = ent
	switch sh.kind {
	case "select":
		if !sh.entityRead() { // a join, an aggregate, a group: rows of its own struct type
			if d.res, err = resultFor(sh, d.dbmsName); err != nil {
				fmt.Fprintf(os.Stderr, "abworker-go: %v: rows read with SliceScan\n", err)
				d.ent, d.raw = nil, true
				return nil
			}
			d.ent = nil
			d.rd, _ = d.res.reader(d.res.fields)
			st.ncols = len(sh.items)
			return nil
		}
		if d.rd, err = ent.reader(sh.columns); err != nil {
			return unsupported("%v", err)
		}
		st.ncols = len(sh.columns)
	case "insert":
		d.named = "INSERT INTO " + sh.table + " (" + strings.Join(sh.columns, ", ") + ") VALUES (:" + strings.Join(sh.columns, ", :") + ")"
		if st.mode == mLiteral {
			return nil
		}
		n := len(st.params)
		rows := reflect.MakeSlice(reflect.SliceOf(ent.typ), n, n)
		for i, p := range st.params {
			if err := ent.fill(rows.Index(i), sh.columns, p); err != nil {
				return unsupported("%v", err)
			}
		}
		if st.kind == kBatch {
			for g := 0; g < st.nops; g++ {
				first, last := st.group(g)
				d.groups = append(d.groups, rows.Slice(first, last).Interface())
			}
			return nil
		}
		d.nargs = make([]any, n)
		for i := range d.nargs {
			d.nargs[i] = rows.Index(i).Addr().Interface()
		}
	case "update", "delete":
		if st.mode == mLiteral || !sh.plain {
			// a richer update or delete (a range, an increment): the step's own statement by
			// Exec, as an sqlx user runs a statement with no struct to bind
			return nil
		}
		// the named form: SET c = :c …, WHERE k = :w_k … (names of its own for the where, so
		// that a column both set and compared takes both values)
		names := make([]string, 0, len(sh.columns)+len(sh.where))
		var b strings.Builder
		if sh.kind == "update" {
			b.WriteString("UPDATE " + sh.table + " SET ")
			for k, c := range sh.columns {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(c + " = :" + c)
				names = append(names, c)
			}
		} else {
			b.WriteString("DELETE FROM " + sh.table)
		}
		for k, c := range sh.where {
			if k == 0 {
				b.WriteString(" WHERE ")
			} else {
				b.WriteString(" AND ")
			}
			b.WriteString(c + " = :w_" + c)
			names = append(names, "w_"+c)
		}
		d.named = b.String()
		d.nargs = make([]any, len(d.args))
		for i, args := range d.args {
			m := make(map[string]any, len(names))
			for k, name := range names {
				m[name] = args[k]
			}
			d.nargs[i] = m
		}
	}
	return nil
}

// args: operation i's arguments in the step's mode (literal: none but the driver's switch to
// the simple protocol) and its SQL text.
func (d *sqlxDriver) argsOf(st *step, i int) (string, []any) {
	switch {
	case st.kind == kScan:
		return d.sqlArg, d.m.simpleArgs()
	case st.mode == mLiteral:
		return st.texts[i], d.m.simpleArgs()
	}
	return d.sqlArg, d.args[i]
}

// prepareNow prepares the step's statement (inside the first operation's time, or before a
// commit_every transaction): PrepareNamed for a named write, Preparex otherwise.
func (d *sqlxDriver) prepareNow(st *step) error {
	if d.xs != nil || d.ns != nil {
		return nil
	}
	var err error
	if d.named != "" {
		d.ns, err = d.x.PrepareNamed(d.named)
	} else {
		d.xs, err = d.x.Preparex(d.sqlArg)
	}
	return err
}

// queryer: what Get/Select/Queryx run on: the transaction or the DB, or the prepared
// statement (bound to the transaction when one is open).
type sqlxQueryer interface {
	Get(dest any, args ...any) error
	Select(dest any, args ...any) error
	Queryx(args ...any) (*sqlx.Rows, error)
	Exec(args ...any) (sql.Result, error)
}

// direct runs a text with its arguments on the transaction or the DB.
type sqlxDirect struct {
	q interface {
		sqlx.Queryer
		sqlx.Execer
	}
	text string
}

func (s sqlxDirect) Get(dest any, args ...any) error { return sqlx.Get(s.q, dest, s.text, args...) }
func (s sqlxDirect) Select(dest any, args ...any) error {
	return sqlx.Select(s.q, dest, s.text, args...)
}
func (s sqlxDirect) Queryx(args ...any) (*sqlx.Rows, error) {
	return s.q.Queryx(s.text, args...)
}
func (s sqlxDirect) Exec(args ...any) (sql.Result, error) { return s.q.Exec(s.text, args...) }

func (d *sqlxDriver) queryer(st *step, text string) (sqlxQueryer, error) {
	if st.kind == kExec && st.mode == mPrepared {
		if err := d.prepareNow(st); err != nil {
			return nil, err
		}
		if d.xtx != nil {
			return d.xtx.Stmtx(d.xs), nil
		}
		return d.xs, nil
	}
	if d.xtx != nil {
		return sqlxDirect{d.xtx, text}, nil
	}
	return sqlxDirect{d.x, text}, nil
}

// op is one operation; in a verification pass every statement it sends is counted (sqlx has
// no hook of its own: each Get, Select, Queryx, Exec and NamedExec the worker calls sends one;
// a load counts its own), but for batches and commit_every groups (BEGIN and COMMIT besides).
func (d *sqlxDriver) op(st *step, i int, sk *sink) (int64, error) {
	if sk != nil && st.kind != kConnect && st.kind != kBatch && st.kind != kLoad && st.commitEvery == 0 {
		sk.sent(1)
	}
	switch st.kind {
	case kConnect:
		db, err := d.m.openDB(d.ep)
		if err != nil {
			return 0, err
		}
		x := sqlx.NewDb(db, d.bindName)
		err = x.Ping()
		if cerr := x.Close(); err == nil {
			err = cerr
		}
		return 0, err
	case kLoad:
		return d.load(d.args[i], sk)
	case kBatch:
		first, last := st.group(i)
		tx, err := d.x.Beginx()
		if err != nil {
			return 0, err
		}
		if _, err := tx.NamedExec(d.named, d.groups[i]); err != nil {
			tx.Rollback()
			return 0, err
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
		return int64(last - first), nil
	}
	text, args := d.argsOf(st, i)
	sh := st.shape
	// named writes (insert, update, delete of a table of the suite), but in literal mode
	if d.named != "" && st.mode != mLiteral {
		var res sql.Result
		var err error
		switch {
		case st.mode == mPrepared:
			if err = d.prepareNow(st); err != nil {
				return 0, err
			}
			ns := d.ns
			if d.xtx != nil {
				ns = d.xtx.NamedStmt(d.ns)
			}
			res, err = ns.Exec(d.nargs[i])
		case d.xtx != nil:
			res, err = d.xtx.NamedExec(d.named, d.nargs[i])
		default:
			res, err = d.x.NamedExec(d.named, d.nargs[i])
		}
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	q, err := d.queryer(st, text)
	if err != nil {
		return 0, err
	}
	if d.ent != nil && sh.kind == "select" {
		if st.kind == kExec && sh.byKey() {
			row := reflect.New(d.ent.typ)
			err := q.Get(row.Interface(), args...)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, nil
			} else if err != nil {
				return 0, err
			}
			if sk != nil {
				d.rd.add(sk, row.Elem())
			}
			return 1, nil
		}
		rows := reflect.New(reflect.SliceOf(d.ent.typ))
		if err := q.Select(rows.Interface(), args...); err != nil {
			return 0, err
		}
		if sk != nil {
			d.rd.addAll(sk, rows.Elem())
		}
		return int64(rows.Elem().Len()), nil
	}
	if !st.fetch {
		res, err := q.Exec(args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	if d.res != nil {
		return d.readResult(q, args, sk)
	}
	rows, err := q.Queryx(args...)
	if err != nil {
		return 0, err
	}
	return d.readSlices(st, rows, sk)
}

// readSlices reads a statement of no plain shape: SliceScan per row, each value converted by
// its column's database type as the bare driver's decoding reads that column.
func (d *sqlxDriver) readSlices(st *step, rows *sqlx.Rows, sk *sink) (int64, error) {
	if d.types == nil {
		cts, err := rows.ColumnTypes()
		if err != nil {
			rows.Close()
			return 0, err
		}
		for _, ct := range cts {
			d.types = append(d.types, ct.DatabaseTypeName())
		}
		d.row = make([]value, len(cts))
	}
	var n int64
	for rows.Next() {
		vals, err := rows.SliceScan()
		if err != nil {
			rows.Close()
			return 0, err
		}
		if sk != nil {
			for c, v := range vals {
				d.row[c] = columnValue(d.dbmsName, d.types[c], v)
			}
			sk.add(d.row)
		}
		n++
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	st.ncols = len(d.types)
	return n, nil
}

// columnValue: a value database/sql gave as `any` (the driver's driver.Value, []byte copied),
// read as the bare driver's decoding (pgSQLPlan, mysqlDriver.plan) reads its column type.
func columnValue(dbms, dbType string, v any) value {
	if v == nil {
		return nullValue
	}
	text := func() string {
		switch x := v.(type) {
		case string:
			return x
		case []byte:
			return string(x)
		}
		return fmt.Sprint(v)
	}
	if dbms == "mariadb" {
		switch dbType {
		case "FLOAT":
			if f, ok := v.(float64); ok {
				return floatValue(float4AsDouble(float32(f)))
			}
		case "DECIMAL":
			return decimalValue(text())
		case "DATE":
			if t, ok := v.(interface{ Unix() int64 }); ok {
				return dateValue(int32(floorDiv(t.Unix(), 86400)))
			}
		case "TIME":
			return timeValue(parseClock(text()))
		case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY", "BIT", "GEOMETRY":
			if b, ok := v.([]byte); ok {
				return bytesValue(b)
			}
		default:
			if b, ok := v.([]byte); ok { // text types come as bytes
				return textValue(string(b))
			}
		}
		return anyValue(v)
	}
	switch dbType {
	case "FLOAT4":
		if f, ok := v.(float64); ok {
			return floatValue(float4AsDouble(float32(f)))
		}
	case "NUMERIC":
		return decimalValue(text())
	case "DATE":
		if t, ok := v.(interface{ Unix() int64 }); ok {
			return dateValue(int32(floorDiv(t.Unix(), 86400)))
		}
	case "TIME":
		return timeValue(parseClock(text()))
	case "BYTEA":
		if b, ok := v.([]byte); ok {
			return bytesValue(b)
		}
	case "INT2", "INT4", "INT8", "OID", "FLOAT8", "BOOL", "TIMESTAMP", "TIMESTAMPTZ":
	default:
		return textValue(text())
	}
	return anyValue(v)
}

func (d *sqlxDriver) txBegin(st *step) error {
	if st.kind == kExec && st.mode == mPrepared { // before the transaction takes the one connection
		if err := d.prepareNow(st); err != nil {
			return err
		}
	}
	tx, err := d.x.Beginx()
	if err != nil {
		return err
	}
	d.xtx = tx
	return nil
}

func (d *sqlxDriver) txCommit(st *step) error {
	err := d.xtx.Commit()
	d.xtx = nil
	return err
}

func (d *sqlxDriver) recover(st *step) {
	if d.xtx != nil {
		if err := d.xtx.Rollback(); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: rollback:", err)
		}
		d.xtx = nil
	}
	d.sqlDriver.recover(st)
}

func (d *sqlxDriver) closeStmts() {
	if d.xs != nil {
		if err := d.xs.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: closing the prepared statement:", err)
		}
	}
	if d.ns != nil {
		if err := d.ns.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: closing the prepared statement:", err)
		}
	}
	d.xs, d.ns = nil, nil
}

func (d *sqlxDriver) end(st *step) {
	d.closeStmts()
	d.sqlDriver.end(st)
	d.ent, d.rd, d.nargs, d.groups, d.types = nil, nil, nil, nil, nil
	d.res, d.ld = nil, nil
}

// api: "raw" for a statement of no shape, whose rows have no struct type (SliceScan).
func (d *sqlxDriver) api() string {
	if d.raw {
		return "raw"
	}
	return ""
}

// shapes: sqlx runs the statement's own text, so it maps every feature: its rows go into a
// struct made for the step's result (an entity, or a row type of the items).
func (d *sqlxDriver) shapes() object { return shapesExcept(nil) }

// readResult reads rows of a join, an aggregate or a group into the step's row type: by name
// with Select (sqlx's mapper, the struct's db tags) when the statement names every result
// column once; else, since mapping by name would need aliases the statement does not have (a
// join's two id columns, an aggregate PostgreSQL names "count" and MariaDB "count(*)"), with
// Queryx and Rows.Scan into the same struct's fields in order (sqlx.Rows is a *sql.Rows).
func (d *sqlxDriver) readResult(q sqlxQueryer, args []any, sk *sink) (int64, error) {
	typ := d.res.typ
	if d.res.byName {
		rows := reflect.New(reflect.SliceOf(typ))
		if err := q.Select(rows.Interface(), args...); err != nil {
			return 0, err
		}
		if sk != nil {
			d.rd.addAll(sk, rows.Elem())
		}
		return int64(rows.Elem().Len()), nil
	}
	rows, err := q.Queryx(args...)
	if err != nil {
		return 0, err
	}
	out := reflect.MakeSlice(reflect.SliceOf(typ), 0, 0)
	nf := typ.NumField()
	for rows.Next() {
		row := reflect.New(typ).Elem()
		dests := make([]any, nf)
		for f := range dests {
			dests[f] = row.Field(f).Addr().Interface()
		}
		if err := rows.Scan(dests...); err != nil {
			rows.Close()
			return 0, err
		}
		out = reflect.Append(out, row)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if sk != nil {
		d.rd.addAll(sk, out)
	}
	return int64(out.Len()), nil
}

// ---- steps under load ----------------------------------------------------------------------

func (d *sqlxDriver) connect() error {
	if err := d.sqlDriver.connect(); err != nil {
		return err
	}
	d.wrap()
	return nil
}

func (d *sqlxDriver) disconnect() {
	d.closeStmts() // this request's, before its connection
	d.xtx = nil
	d.sqlDriver.disconnect()
	d.x, d.xFor = nil, nil
}

func (d *sqlxDriver) attach(p connPool) {
	d.sqlDriver.attach(p)
	d.wrap()
}

func (d *sqlxDriver) classify(err error) *failure { return d.under.classify(err) }

// ---- load steps -------------------------------------------------------------------------------

// sqlxLoad: sqlx has no relations, so a load is written by hand with sqlx's calls, as its
// users write it: Select of each level into a slice of its table's entities, the statements
// the message carries (PROTOCOL.md, Loading associations) with sqlx's Rebind for the markers;
// lazy: Select per parent (and per child); selectin: one Select per level whose IN list is
// made by sqlx.In, sqlx's own IN-list helper (the keys read expanded into markers); joined: one
// Queryx of the joined statement, each row scanned into one entity per table and split.
type sqlxLoad struct {
	strategy string
	ents     []*entity // parents, then each level
	readers  []*reader
	refAt    []int    // per table: the column the next level references (-1: the last)
	keyAt    [][]int  // per table: its key's columns
	parent   string   // the statements, rebound to the driver's markers
	one      []string // per level
	in       []string // per level: head + "?" + tail, a single ? that sqlx.In expands
	joined   string
	seen     []map[any]struct{}
}

func (d *sqlxDriver) beginLoad(st *step) error {
	a := st.assoc
	ents, err := loadEntities(a, d.dbmsName, false)
	if err != nil {
		return unsupported("%v", err)
	}
	bind := sqlx.BindType(d.bindName)
	ld := &sqlxLoad{strategy: a.strategy, ents: ents, parent: sqlx.Rebind(bind, st.sql), joined: sqlx.Rebind(bind, a.joined)}
	ld.refAt = append(ld.refAt, a.refAt)
	ld.keyAt = append(ld.keyAt, keyColumns(a.parent))
	for _, lv := range a.levels {
		ld.one = append(ld.one, sqlx.Rebind(bind, lv.one))
		ld.in = append(ld.in, lv.in[0]+"?"+lv.in[1])
		ld.refAt = append(ld.refAt, lv.refAt)
		ld.keyAt = append(ld.keyAt, lv.keyAt)
	}
	for _, e := range ents {
		r, err := e.reader(e.fields)
		if err != nil {
			return unsupported("%v", err)
		}
		ld.readers = append(ld.readers, r)
	}
	d.ld = ld
	return nil
}

// load is one load by the step's strategy; every statement counted in a verification pass.
func (d *sqlxDriver) load(args []any, sk *sink) (int64, error) {
	ld := d.ld
	sent := func() {
		if sk != nil {
			sk.sent(1)
		}
	}
	var n int64
	keep := func(level int, rows reflect.Value) {
		n += int64(rows.Len())
		if sk != nil {
			ld.readers[level].addAll(sk, rows)
		}
	}
	if ld.strategy == "joined" {
		sent()
		return d.loadJoined(args, sk)
	}
	parents := reflect.New(reflect.SliceOf(ld.ents[0].typ))
	sent()
	if err := d.x.Select(parents.Interface(), ld.parent, args...); err != nil {
		return 0, err
	}
	if ld.strategy == "selectin" {
		rows := parents.Elem()
		for level := 0; ; level++ {
			keep(level, rows)
			if level+1 == len(ld.ents) || rows.Len() == 0 {
				return n, nil
			}
			keys := make([]any, rows.Len())
			for k := range keys {
				keys[k] = rows.Index(k).Field(ld.refAt[level]).Interface()
			}
			query, in, err := sqlx.In(ld.in[level], keys)
			if err != nil {
				return 0, err
			}
			children := reflect.New(reflect.SliceOf(ld.ents[level+1].typ))
			sent()
			if err := d.x.Select(children.Interface(), d.x.Rebind(query), in...); err != nil {
				return 0, err
			}
			rows = children.Elem()
		}
	}
	// lazy: each parent's children selected when it is reached, then each child's (nested loops)
	var walk func(level int, rows reflect.Value) error
	walk = func(level int, rows reflect.Value) error {
		keep(level, rows)
		if level+1 == len(ld.ents) {
			return nil
		}
		for k := 0; k < rows.Len(); k++ {
			children := reflect.New(reflect.SliceOf(ld.ents[level+1].typ))
			sent()
			if err := d.x.Select(children.Interface(), ld.one[level], rows.Index(k).Field(ld.refAt[level]).Interface()); err != nil {
				return err
			}
			if err := walk(level+1, children.Elem()); err != nil {
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

// loadJoined: one Queryx of the joined statement; each row scanned by position (its columns
// are the tables' columns in order, two of them named id: mapping by name would need aliases
// the statement does not have) into one new entity per table, each kept the first time its key
// is seen, none where the key is NULL.
func (d *sqlxDriver) loadJoined(args []any, sk *sink) (int64, error) {
	ld := d.ld
	if ld.seen == nil {
		ld.seen = make([]map[any]struct{}, len(ld.ents))
		for k := range ld.seen {
			ld.seen[k] = map[any]struct{}{}
		}
	}
	kept := make([]reflect.Value, len(ld.ents))
	for k, e := range ld.ents {
		clear(ld.seen[k])
		kept[k] = reflect.MakeSlice(reflect.SliceOf(e.typ), 0, 0)
	}
	rows, err := d.x.Queryx(ld.joined, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	width := 0
	for _, e := range ld.ents {
		width += len(e.fields)
	}
	for rows.Next() {
		vals := make([]reflect.Value, len(ld.ents))
		dests := make([]any, 0, width)
		for k, e := range ld.ents {
			vals[k] = reflect.New(e.typ).Elem()
			for f := range e.fields {
				dests = append(dests, vals[k].Field(f).Addr().Interface())
			}
		}
		if err := rows.Scan(dests...); err != nil {
			rows.Close()
			return 0, err
		}
		for k, e := range ld.ents {
			row := vals[k]
			key, null := entityKey(func(c int) value { return e.read[c](row.Field(c)) }, 0, ld.keyAt[k])
			if null {
				break
			}
			if _, dup := ld.seen[k][key]; dup {
				continue
			}
			ld.seen[k][key] = struct{}{}
			kept[k] = reflect.Append(kept[k], row)
			n++
			if sk != nil {
				ld.readers[k].add(sk, row)
			}
		}
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	return n, rows.Err()
}
