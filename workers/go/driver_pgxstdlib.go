package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"reflect"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// go-pgx-stdlib: database/sql over pgx's stdlib adapter, to show the cost of the
// database/sql layer over go-pgx. One *sql.DB pinned to one connection whose pgx config has
// QueryExecModeExec as its default; literal and scan statements carry
// pgx.QueryExecModeSimpleProtocol as their first argument, which the adapter hands to pgx
// unchanged (database/sql itself has no notion of the simple protocol, and pgx's exec mode
// would send a Query without parameters by the extended protocol).

type pgxStdlibDriver struct {
	sqlDriver
	pgx pgxDriver // for its connection config

	cfg   *pgx.ConnConfig // parsed once per endpoint (its TLS config with it): every connector reuses it
	cfgOf endpoint        // the endpoint it was parsed from (held, so that no other map takes its address)
}

func newPgxStdlibDriver() dbDriver {
	d := &pgxStdlibDriver{}
	d.m = d
	return d
}

func (d *pgxStdlibDriver) driverName() string    { return "github.com/jackc/pgx/v5/stdlib (database/sql)" }
func (d *pgxStdlibDriver) driverVersion() string { return moduleVersion("github.com/jackc/pgx/v5") }
func (d *pgxStdlibDriver) dbms() []string        { return []string{"postgresql"} }
func (d *pgxStdlibDriver) dollar() bool          { return true }
func (d *pgxStdlibDriver) simpleArgs() []any     { return simpleProtocol }

var simpleProtocol = []any{pgx.QueryExecModeSimpleProtocol}

func (d *pgxStdlibDriver) batchStyle() string {
	return pgSQLBatch
}

func (d *pgxStdlibDriver) settings() map[string]string {
	return map[string]string{
		"pool":                       sqlPinnedPool,
		"pooled":                     sqlPooled + "; OptionShouldPing false, so a connection idle over 1 s is not pinged when it is lent again",
		"per-request":                sqlPerRequest + " (Stmt.Close is a Deallocate, one round trip: database/sql closes a connection's statements before the connection)",
		"default_query_exec_mode":    "QueryExecModeExec on the ConnConfig (pgx's default, cache_statement, would prepare every statement automatically); literal and scan statements pass pgx.QueryExecModeSimpleProtocol as their first argument (the adapter forwards it to pgx)",
		"statement_cache_capacity":   "0",
		"description_cache_capacity": "0",
		"should_ping":                "OptionShouldPing returns false (the adapter otherwise pings the server before reusing a connection idle for more than 1 s)",
		"tls":                        pgxTLS,
		"search_path":                "ConnConfig.RuntimeParams[search_path] in the startup packet",
		"read_only":                  pgxReadOnly,
		"autocommit":                 pgSQLAutocommit,
		"literal":                    "DB.Query(text, pgx.QueryExecModeSimpleProtocol) / DB.Exec(text, pgx.QueryExecModeSimpleProtocol), no parameters: simple query protocol, text results (pgx still scans the text for $n placeholders)",
		"extended":                   "DB.Query(sql, args...) / DB.Exec(sql, args...) (exec mode): unnamed statement, Parse/Bind/Describe/Execute/Sync in one round trip, parameters as text of unspecified type, text results (a DB.Exec without arguments would be sent by the simple protocol: pgx's rule)",
		"prepared":                   "DB.Prepare once, inside the first operation (pgx Conn.Prepare, named statement), then Stmt.Query/Stmt.Exec (Bind/Execute/Sync); results in binary for bool, bytea, date, float4/8, int2/4/8, oid, timestamp(tz) (the adapter's choice), text for the rest (numeric included); Stmt.Close after the step (Deallocate, untimed)",
		"scan":                       "DB.Query(sql, pgx.QueryExecModeSimpleProtocol): simple query protocol, text results",
		"connect step":               "a fresh stdlib.GetConnector of the ConnConfig parsed once + sql.OpenDB + DB.PingContext (which connects) + DB.Close per operation",
		"parameters":                 pgxParameters + "; database/sql hands them to the adapter unchanged (its CheckNamedValue accepts every value) and the adapter to pgx",
		"load":                       handLoadSetting("DB.QueryContext(sql, args...)"),
		"decoding":                   pgSQLDecoding,
	}
}

// openDB: sql.OpenDB of the connector, what stdlib.OpenDB does.
func (d *pgxStdlibDriver) openDB(ep endpoint) (*sql.DB, error) { return openPinned(d.connector(ep)) }

// connector: stdlib.GetConnector of the endpoint's ConnConfig, parsed (the CA file read, the
// tls.Config built) the first time the endpoint is seen and reused after that, as go-pgx
// reuses its own: the connect step's operations make a connector each but parse nothing.
func (d *pgxStdlibDriver) connector(ep endpoint) (driver.Connector, error) {
	if d.cfg == nil || reflect.ValueOf(ep).UnsafePointer() != reflect.ValueOf(d.cfgOf).UnsafePointer() {
		cfg, err := d.pgx.config(ep)
		if err != nil {
			return nil, err
		}
		d.cfg, d.cfgOf = cfg, ep
	}
	return stdlib.GetConnector(*d.cfg,
		stdlib.OptionShouldPing(func(context.Context, stdlib.ShouldPingParams) bool { return false }),
		stdlib.OptionAfterConnect(isoDates)), nil
}

func (d *pgxStdlibDriver) info(db *sql.DB) (int64, string, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	var pid int64
	var version string
	err = c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("not a pgx stdlib connection")
		}
		pid = int64(sc.Conn().PgConn().PID())
		version = sc.Conn().PgConn().ParameterStatus("server_version")
		return nil
	})
	return pid, version, err
}

func (d *pgxStdlibDriver) adapt(params [][]param) [][]any { return bindRows(params, pgxArg) }

func (d *pgxStdlibDriver) plan(types []*sql.ColumnType) *sqlPlan { return pgSQLPlan(types) }

func (d *pgxStdlibDriver) classify(err error) *failure { return d.pgx.classify(err) }
