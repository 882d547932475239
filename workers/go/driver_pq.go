package main

import (
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/lib/pq"
)

// go-pq: github.com/lib/pq through database/sql, the pool pinned to one connection.

type pqDriver struct {
	sqlDriver
}

func newPqDriver() dbDriver {
	d := &pqDriver{}
	d.m = d
	return d
}

func (d *pqDriver) driverName() string    { return "github.com/lib/pq (database/sql)" }
func (d *pqDriver) driverVersion() string { return moduleVersion("github.com/lib/pq") }
func (d *pqDriver) dbms() []string        { return []string{"postgresql"} }
func (d *pqDriver) dollar() bool          { return true }
func (d *pqDriver) simpleArgs() []any     { return nil }

func (d *pqDriver) batchStyle() string {
	return pgSQLBatch
}

func (d *pqDriver) settings() map[string]string {
	return map[string]string{
		"pool":                           sqlPinnedPool,
		"pooled":                         sqlPooled + "; lib/pq's ResetSession and IsValid, run when a connection is lent again, do no I/O",
		"per-request":                    sqlPerRequest + " (Stmt.Close sends Close + Sync, one round trip: database/sql closes a connection's statements before the connection)",
		"binary_parameters":              "no (lib/pq's default): parameters are sent as text of unspecified type",
		"disable_prepared_binary_result": "no (default): results of extended and prepared statements come in binary for int2/int4/int8, bytea and uuid columns, text for the rest",
		"tls":                            pqTLS,
		"search_path":                    "Config.Runtime[search_path] in the startup packet",
		"read_only":                      pqReadOnly,
		"startup":                        "lib/pq always sends client_encoding=UTF8 and datestyle='ISO, MDY' in the startup packet",
		"autocommit":                     pgSQLAutocommit,
		"literal":                        "DB.Query(text) / DB.Exec(text) without arguments: simple query protocol, text results",
		"extended":                       "DB.Query(sql, args...) / DB.Exec(sql, args...): lib/pq parses and describes the unnamed statement (Parse/Describe/Sync, one round trip) then binds and executes it (Bind/Execute/Sync, a second round trip) — two round trips per execution, seen in the server log",
		"prepared":                       "DB.Prepare once, inside the first operation (named statement: Parse/Describe/Sync), then Stmt.Query/Stmt.Exec (Bind/Execute/Sync); Stmt.Close after the step (untimed)",
		"scan":                           "DB.Query(sql) without arguments: simple query protocol, text results",
		"connect step":                   "a fresh sql.OpenDB + DB.PingContext (which connects) + DB.Close per operation",
		"parameters":                     "database/sql values: int → int64, float → float64, bool → bool, text → string, decimal → its text as a string (lib/pq has no decimal type), date → time.Time at midnight UTC, bytes → []byte, timestamp → time.Time (UTC), NULL → nil; lib/pq sends every one as text of unspecified type (binary_parameters off), the server taking the type from the statement it described: bool as true/false, float64 as its shortest text, a time.Time with a Z suffix (which a timestamp without time zone and a date ignore), []byte as bytea hex (\\x…)",
		"load":                           handLoadSetting("DB.QueryContext(sql, args...)"),
		"decoding":                       pgSQLDecoding,
	}
}

func (d *pqDriver) openDB(ep endpoint) (*sql.DB, error) { return openPinned(d.connector(ep)) }

func (d *pqDriver) connector(ep endpoint) (driver.Connector, error) {
	conninfo, err := pgConnString(ep, true)
	if err != nil {
		return nil, err
	}
	if ep.str("sslnegotiation") == "direct" {
		return nil, unsupported("%s", pqNoDirect)
	}
	cfg, err := pq.NewConfig(conninfo)
	if err != nil {
		return nil, err
	}
	cfg.Runtime = pgRuntimeParams(ep, cfg.Runtime)
	connector, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, err
	}
	return connector, nil
}

func (d *pqDriver) info(db *sql.DB) (int64, string, error) {
	var pid int64
	var version string
	err := db.QueryRowContext(ctx, "SELECT pg_backend_pid(), current_setting('server_version')").Scan(&pid, &version)
	return pid, version, err
}

func (d *pqDriver) adapt(params [][]param) [][]any { return bindRows(params, sqlArg) }

func (d *pqDriver) plan(types []*sql.ColumnType) *sqlPlan { return pgSQLPlan(types) }

func (d *pqDriver) classify(err error) *failure {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return &failure{kind: "db", message: pqErr.Severity + ": " + pqErr.Message, sqlstate: string(pqErr.Code)}
	}
	return &failure{kind: "db", message: err.Error()}
}
