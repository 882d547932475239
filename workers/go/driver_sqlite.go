package main

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// go-sqlite: modernc.org/sqlite (SQLite translated to pure Go) through database/sql, the
// pool pinned to one connection (several connections of one *sql.DB to one file would lock
// each other).

const busyTimeoutMS = "5000" // what Python's sqlite3 and c-sqlite use

type sqliteDriver struct {
	sqlDriver
}

func newSqliteDriver() dbDriver {
	d := &sqliteDriver{}
	d.m = d
	return d
}

func (d *sqliteDriver) driverName() string { return "modernc.org/sqlite (database/sql)" }
func (d *sqliteDriver) driverVersion() string {
	return moduleVersion("modernc.org/sqlite") + " (SQLite " + sqlite3.SQLITE_VERSION + ")"
}
func (d *sqliteDriver) dbms() []string    { return []string{"sqlite"} }
func (d *sqliteDriver) dollar() bool      { return false }
func (d *sqliteDriver) simpleArgs() []any { return nil }

func (d *sqliteDriver) batchStyle() string {
	return "database/sql has no batch API: per group DB.BeginTx, Tx.Stmt of the INSERT prepared once (DB.Prepare, in the first group), one Stmt.Exec per row, Tx.Commit"
}

func (d *sqliteDriver) settings() map[string]string {
	return map[string]string{
		"pool":         sqlPinnedPool,
		"pooled":       sqlPooled + "; the connections are sqlite.NewConnector's, each opening the file with the busy_timeout pragma",
		"per-request":  sqlPerRequest + " (sqlite.NewConnector; connecting opens the file and runs the busy_timeout pragma; Stmt.Close finalizes)",
		"dsn":          "<file>?_pragma=busy_timeout(" + busyTimeoutMS + "): PRAGMA busy_timeout run by the driver when it opens the connection; no other DSN options (journal mode and synchronous are the file's / SQLite's defaults)",
		"autocommit":   "yes; commit_every uses DB.BeginTx / Tx.Commit (the driver runs BEGIN (deferred) / COMMIT, each prepared and finalized)",
		"literal":      "DB.Query(text) / DB.Exec(text) without arguments: sqlite3_prepare_v2 + step + finalize of the inlined text, every operation",
		"extended":     "DB.Query(sql, args...) / DB.Exec(sql, args...): the driver prepares, binds, steps and finalizes the statement every time (it keeps no statement cache)",
		"prepared":     "DB.Prepare once, inside the first operation, then Stmt.Query/Stmt.Exec (reset + bind + step); Stmt.Close after the step (finalize, untimed)",
		"scan":         "DB.Query(sql): prepare, step every row, finalize",
		"connect step": "a fresh sql.Open + DB.PingContext (which opens the file and runs the busy_timeout pragma) + DB.Close per operation",
		"read_only":    sqliteReadOnly,
		"timestamps":   "bound and read as ISO text (the target stores them as TEXT)",
		"parameters":   "as the target stores them (SQLite has no boolean, date, decimal or timestamp type): int → int64, float → float64 (real), text → string, bytes → []byte (blob), NULL → nil; bool → Go bool, which the driver binds as integer 1/0; decimal → its text (the column's NUMERIC affinity converts it); date → 'YYYY-MM-DD' text; timestamp → 'YYYY-MM-DD HH:MM:SS[.ffffff]' text",
		"load":         handLoadSetting("DB.QueryContext(sql, args...)"),
		"decoding":     "rows.Scan into any: each value by its dynamic type (int64, float64, string, []byte, nil); the driver turns TEXT of columns declared DATE/DATETIME/TIMESTAMP into time.Time (none in the targets' tables)",
	}
}

// sqliteDSN: the endpoint's file with the busy_timeout pragma; read_only: as a URI filename
// with mode=ro, which SQLite opens with SQLITE_OPEN_READONLY (the driver hands a DSN that
// starts with file: to sqlite3_open_v2 whole, with SQLITE_OPEN_URI; SQLite ignores the
// _pragma parameter, which the driver runs itself).
func sqliteDSN(ep endpoint) (string, error) {
	file := ep.str("file")
	if file == "" {
		return "", fail("protocol", "the sqlite endpoint needs a file")
	}
	pragma := "_pragma=busy_timeout(" + busyTimeoutMS + ")"
	if ep.flag("read_only") {
		return "file:" + sqliteURIPath.Replace(file) + "?mode=ro&" + pragma, nil
	}
	return file + "?" + pragma, nil
}

// sqliteURIPath escapes what a URI filename's path would otherwise end at or decode.
var sqliteURIPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// sqliteReadOnly: how go-sqlite sets the endpoint's read_only (hello's settings, "read_only").
const sqliteReadOnly = "endpoint read_only: the DSN as the URI filename file:<file>?mode=ro&_pragma=busy_timeout(" + busyTimeoutMS + "), which SQLite opens with SQLITE_OPEN_READONLY; absent or false: the plain DSN"

// openDB: sql.Open of the DSN (the connect step's connection, and the session's).
func (d *sqliteDriver) openDB(ep endpoint) (*sql.DB, error) {
	dsn, err := sqliteDSN(ep)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	pinPool(db)
	return db, nil
}

// connector: what sql.Open does for the same DSN, made once for the clients of a loaded step.
func (d *sqliteDriver) connector(ep endpoint) (driver.Connector, error) {
	dsn, err := sqliteDSN(ep)
	if err != nil {
		return nil, err
	}
	return sqlite.NewConnector(dsn)
}

func (d *sqliteDriver) info(db *sql.DB) (int64, string, error) {
	var version string
	err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version)
	return 0, version, err
}

// adapt: values as the target stores them, SQLite having no timestamp, date, decimal or
// boolean type (PROTOCOL.md, Types): timestamps, dates and decimals as their text, booleans
// as Go bools, which the driver binds as integers 1/0.
func (d *sqliteDriver) adapt(params [][]param) [][]any { return bindRows(params, sqliteArg) }

func sqliteArg(p param) any {
	switch p.t {
	case pTimestamp:
		return formatTimestamp(p.i, false)
	case pDate:
		return formatDate(p.i)
	}
	return sqlArg(p) // a decimal is its text there too
}

func (d *sqliteDriver) plan(types []*sql.ColumnType) *sqlPlan {
	p := newSQLPlan(len(types))
	for c := range types {
		v := new(any)
		p.dests[c] = v
		p.values[c] = func() value { return anyValue(*v) }
	}
	return p
}

func (d *sqliteDriver) classify(err error) *failure {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return &failure{kind: "db", message: err.Error(), sqlstate: sqliteCodeName(e.Code())}
	}
	return &failure{kind: "db", message: err.Error()}
}

func sqliteCodeName(code int) string {
	switch code {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return "SQLITE_CONSTRAINT_PRIMARYKEY"
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return "SQLITE_CONSTRAINT_UNIQUE"
	case sqlite3.SQLITE_CONSTRAINT_NOTNULL:
		return "SQLITE_CONSTRAINT_NOTNULL"
	case sqlite3.SQLITE_CONSTRAINT_CHECK:
		return "SQLITE_CONSTRAINT_CHECK"
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return "SQLITE_CONSTRAINT_FOREIGNKEY"
	case sqlite3.SQLITE_BUSY_SNAPSHOT:
		return "SQLITE_BUSY_SNAPSHOT"
	}
	names := map[int]string{
		sqlite3.SQLITE_ERROR: "SQLITE_ERROR", sqlite3.SQLITE_INTERNAL: "SQLITE_INTERNAL", sqlite3.SQLITE_PERM: "SQLITE_PERM",
		sqlite3.SQLITE_ABORT: "SQLITE_ABORT", sqlite3.SQLITE_BUSY: "SQLITE_BUSY", sqlite3.SQLITE_LOCKED: "SQLITE_LOCKED",
		sqlite3.SQLITE_NOMEM: "SQLITE_NOMEM", sqlite3.SQLITE_READONLY: "SQLITE_READONLY", sqlite3.SQLITE_INTERRUPT: "SQLITE_INTERRUPT",
		sqlite3.SQLITE_IOERR: "SQLITE_IOERR", sqlite3.SQLITE_CORRUPT: "SQLITE_CORRUPT", sqlite3.SQLITE_FULL: "SQLITE_FULL",
		sqlite3.SQLITE_CANTOPEN: "SQLITE_CANTOPEN", sqlite3.SQLITE_SCHEMA: "SQLITE_SCHEMA", sqlite3.SQLITE_TOOBIG: "SQLITE_TOOBIG",
		sqlite3.SQLITE_CONSTRAINT: "SQLITE_CONSTRAINT", sqlite3.SQLITE_MISMATCH: "SQLITE_MISMATCH", sqlite3.SQLITE_MISUSE: "SQLITE_MISUSE",
		sqlite3.SQLITE_RANGE: "SQLITE_RANGE",
	}
	return names[code&0xff]
}
