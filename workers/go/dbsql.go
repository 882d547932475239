package main

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"sync"
)

// The database/sql methods (go-pgx-stdlib, go-pq, go-sqlite, go-mysql) share one implementation: a
// *sql.DB whose pool is pinned to one connection, ops through DB / Tx / Stmt, and rows read
// with rows.Scan into typed destinations. Each method supplies how to open its DB, how to
// adapt parameters, how to decode a result and how to classify errors.

type sqlMethod interface {
	// openDB returns a *sql.DB for the endpoint (openPinned of its connector, but for
	// go-sqlite, whose connect step is sql.Open of the DSN).
	openDB(ep endpoint) (*sql.DB, error)
	// connector: the endpoint's configuration, parsed once, for the pools of loaded steps.
	connector(ep endpoint) (driver.Connector, error)
	// simpleArgs: leading arguments that make a statement without parameters go by the
	// simple query protocol (literal and scan steps); nil when the driver does so anyway.
	simpleArgs() []any
	// info reads server_pid and server_version at open (untimed).
	info(db *sql.DB) (int64, string, error)
	adapt(params [][]param) [][]any
	plan(types []*sql.ColumnType) *sqlPlan
	dollar() bool
	classify(err error) *failure
}

// sqlArg binds a value as a database/sql driver.Value of its type (go-pq, go-mysql; the
// others start from it): int64, float64, string, bool, time.Time in UTC (a timestamp's wall
// clock, a date's midnight), []byte, nil; a decimal as its text (database/sql has no decimal
// type).
func sqlArg(p param) any {
	switch p.t {
	case pInt:
		return p.i
	case pFloat:
		return p.f
	case pText, pDecimal:
		return p.s
	case pBool:
		return p.b
	case pTimestamp:
		return p.timestamp()
	case pDate:
		return p.date()
	case pBytes:
		return p.x
	}
	return nil
}

// What the database/sql methods do with their pool, and under the loaded policies (hello's
// settings).
const (
	sqlPinnedPool = "SetMaxOpenConns(1), SetMaxIdleConns(1), no connection lifetime or idle-time limit"
	sqlPooled     = "database/sql's own pool: one *sql.DB shared by the step's clients, SetMaxOpenConns(pool_size), SetMaxIdleConns(pool_size), SetConnMaxLifetime(0), SetConnMaxIdleTime(0) (no connection closed for age or idleness), filled before the barrier (pool_size DB.Conn held at once, then handed back); each statement borrows a connection and returns it when its rows are closed (a commit_every transaction keeps its own); prepared: one DB.Prepare shared by the clients, made in the first operation that needs it, which database/sql prepares again on each pooled connection the first time it runs there"
	sqlPerRequest = "per operation, inside its time: sql.OpenDB of a connector made once before the barrier (the DSN parsed once), pool pinned to one connection, the statement (which connects; no Ping), prepared: DB.Prepare then Stmt.Close, DB.Close"
)

// sqlPlan: typed destinations for one result shape and how to read each as a value after
// Scan (verification passes only).
type sqlPlan struct {
	dests  []any
	values []func() value
	row    []value // the row being checksummed
}

// newSQLPlan: a plan for n columns, each filled in by one of the column kinds below or by
// the method's own.
func newSQLPlan(n int) *sqlPlan {
	return &sqlPlan{dests: make([]any, n), values: make([]func() value, n), row: make([]value, n)}
}

// column sets column c: dest is what rows.Scan fills; valid is its NULL flag (false: NULL),
// val its value otherwise.
func (p *sqlPlan) column(c int, dest any, valid *bool, val func() value) {
	p.dests[c] = dest
	p.values[c] = nullable(valid, val)
}

// Column kinds the methods decode alike: column c is scanned into a new sql.Null* of the
// kind and read from it.

// nullInt: integers, as sql.NullInt64.
func (p *sqlPlan) nullInt(c int) {
	v := new(sql.NullInt64)
	p.column(c, v, &v.Valid, func() value { return intValue(v.Int64) })
}

// nullFloat: floating point, as sql.NullFloat64; a single-precision column (single) is
// read as its float32's shortest text.
func (p *sqlPlan) nullFloat(c int, single bool) {
	v := new(sql.NullFloat64)
	p.column(c, v, &v.Valid, func() value {
		if single {
			return floatValue(float4AsDouble(float32(v.Float64)))
		}
		return floatValue(v.Float64)
	})
}

// nullDecimal: exact numbers, as their text (sql.NullString, scale kept).
func (p *sqlPlan) nullDecimal(c int) {
	v := new(sql.NullString)
	p.column(c, v, &v.Valid, func() value { return decimalValue(v.String) })
}

// nullTimestamp: timestamps, as sql.NullTime.
func (p *sqlPlan) nullTimestamp(c int) {
	v := new(sql.NullTime)
	p.column(c, v, &v.Valid, func() value { return timestampValue(v.Time.UnixMicro()) })
}

// nullDate: dates, as sql.NullTime.
func (p *sqlPlan) nullDate(c int) {
	v := new(sql.NullTime)
	p.column(c, v, &v.Valid, func() value { return dateValue(unixDays(v.Time)) })
}

// nullBytes: binary strings, as sql.Null[[]byte].
func (p *sqlPlan) nullBytes(c int) {
	v := new(sql.Null[[]byte])
	p.column(c, v, &v.Valid, func() value { return bytesValue(v.V) })
}

// nullText: text, as sql.NullString.
func (p *sqlPlan) nullText(c int) {
	v := new(sql.NullString)
	p.column(c, v, &v.Valid, func() value { return textValue(v.String) })
}

// pinPool: one connection, never closed by age or idleness, so every operation of a step
// runs on the same server session.
func pinPool(db *sql.DB) { sizePool(db, 1) }

// sizePool: size connections at most and at rest, none closed for age or idleness.
func sizePool(db *sql.DB, size int) {
	db.SetMaxOpenConns(size)
	db.SetMaxIdleConns(size)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// fillPool fills a new pool before the barrier: it holds size connections at once, each
// made by the pool (acquire), then hands them all back (release), idle.
func fillPool[C any](size int, acquire func() (C, error), release func(C)) error {
	held := make([]C, 0, size)
	var err error
	for len(held) < size {
		var c C
		if c, err = acquire(); err != nil {
			break
		}
		held = append(held, c)
	}
	for _, c := range held {
		release(c)
	}
	return err
}

// openPinned: a *sql.DB of the method's connector (as it comes from connector(ep)), its pool
// pinned to one connection.
func openPinned(c driver.Connector, err error) (*sql.DB, error) {
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	pinPool(db)
	return db, nil
}

type sqlDriver struct {
	m   sqlMethod
	ep  endpoint
	db  *sql.DB
	pid int64

	// clients of loaded steps: the parsed configuration (per request), the shared pool
	connector driver.Connector
	shared    *sqlPool

	// per step
	tx     *sql.Tx
	stmt   *sql.Stmt // prepared once in this step
	txStmt *sql.Stmt // stmt bound to the open transaction
	sqlArg string    // the statement with the driver's markers
	args   [][]any
	plan   *sqlPlan
	hand   *handLoad  // a load step's statements (assoc.go)
	plans  []*sqlPlan // a load step's result shapes: the parents, each level, the joined rows
}

func (d *sqlDriver) open(ep endpoint) error {
	db, err := d.m.openDB(ep)
	if err != nil {
		return err
	}
	if err := db.PingContext(ctx); err != nil { // connects
		db.Close()
		return err
	}
	d.db, d.ep = db, ep
	return nil
}

func (d *sqlDriver) describe() (int64, string, error) {
	pid, version, err := d.m.info(d.db)
	d.pid = pid
	return pid, version, err
}

func (d *sqlDriver) close() {
	if d.shared != nil { // a pooled client: the pool is closed by the step
		d.db, d.shared = nil, nil
		return
	}
	if d.db != nil {
		d.db.Close()
		d.db = nil
	}
}

func (d *sqlDriver) serverPID() int64 { return d.pid }

// configure: the database/sql methods have no settings.
func (d *sqlDriver) configure(key, value string) error { return noSetting{} }

func (d *sqlDriver) begin(st *step) error {
	d.stmt, d.txStmt, d.tx, d.plan, d.hand, d.plans = nil, nil, nil, nil, nil, nil
	if st.sql != "" {
		d.sqlArg = convertMarkers(st.sql, d.m.dollar())
	}
	if st.kind == kLoad {
		d.hand, d.plans = newHandLoad(st, d.m.dollar()), make([]*sqlPlan, len(st.assoc.levels)+2)
	}
	if st.params != nil && st.mode != mLiteral && st.mode != mRecord { // those two are texts
		d.args = d.m.adapt(st.params)
	}
	return nil
}

func (d *sqlDriver) prepare() error {
	if d.shared != nil {
		return d.shared.prepare(d)
	}
	s, err := d.db.PrepareContext(ctx, d.sqlArg)
	if err != nil {
		return err
	}
	d.stmt = s
	return nil
}

// exec runs a statement that returns no rows to read, on the transaction when one is open.
func (d *sqlDriver) exec(query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if d.tx != nil {
		res, err = d.tx.ExecContext(ctx, query, args...)
	} else {
		res, err = d.db.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (d *sqlDriver) query(query string, args ...any) (*sql.Rows, error) {
	if d.tx != nil {
		return d.tx.QueryContext(ctx, query, args...)
	}
	return d.db.QueryContext(ctx, query, args...)
}

// stmtNow: the prepared statement, bound to the open transaction when there is one.
func (d *sqlDriver) stmtNow() *sql.Stmt {
	if d.tx == nil {
		return d.stmt
	}
	if d.txStmt == nil {
		d.txStmt = d.tx.StmtContext(ctx, d.stmt)
	}
	return d.txStmt
}

func (d *sqlDriver) op(st *step, i int, sk *sink) (int64, error) {
	switch st.kind {
	case kConnect:
		db, err := d.m.openDB(d.ep)
		if err != nil {
			return 0, err
		}
		err = db.PingContext(ctx)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return 0, err
	case kScan:
		rows, err := d.query(st.sql, d.m.simpleArgs()...)
		return d.read(st, rows, err, sk)
	case kExec:
		switch st.mode {
		case mLiteral:
			if st.fetch {
				rows, err := d.query(st.texts[i], d.m.simpleArgs()...)
				return d.read(st, rows, err, sk)
			}
			return d.exec(st.texts[i], d.m.simpleArgs()...)
		case mExtended:
			if st.fetch {
				rows, err := d.query(d.sqlArg, d.args[i]...)
				return d.read(st, rows, err, sk)
			}
			return d.exec(d.sqlArg, d.args[i]...)
		default:
			if d.stmt == nil { // parsed once, inside the first operation's time
				if err := d.prepare(); err != nil {
					return 0, err
				}
			}
			s := d.stmtNow()
			if st.fetch {
				rows, err := s.QueryContext(ctx, d.args[i]...)
				return d.read(st, rows, err, sk)
			}
			res, err := s.ExecContext(ctx, d.args[i]...)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}
	case kBatch:
		first, last := st.group(i)
		if d.stmt == nil { // prepared once, in the first group
			if err := d.prepare(); err != nil {
				return 0, err
			}
		}
		if err := d.txBegin(st); err != nil {
			return 0, err
		}
		s := d.stmtNow()
		for r := first; r < last; r++ {
			if _, err := s.ExecContext(ctx, d.args[r]...); err != nil {
				return 0, err
			}
		}
		if err := d.txCommit(st); err != nil {
			return 0, err
		}
		return int64(last - first), nil
	case kLoad:
		return d.hand.run(d, d.args[i], sk)
	}
	return 0, fail("internal", "unknown step kind")
}

// loads: every database/sql method has the hand-written load strategies (assoc.go).
func (d *sqlDriver) loads() bool { return true }

// assocQuery runs one statement of a hand-written load by DB.QueryContext with its arguments
// (the extended mode), every row scanned into the typed destinations of its result shape (the
// method's plan, as its scans decode), made at its first result and kept for the step.
func (d *sqlDriver) assocQuery(result int, text string, args []any, row func(get func(int) value)) error {
	rows, err := d.query(text, args...)
	if err != nil {
		return err
	}
	p := d.plans[result]
	if p == nil {
		types, err := rows.ColumnTypes()
		if err != nil {
			rows.Close()
			return err
		}
		p = d.m.plan(types)
		d.plans[result] = p
	}
	get := func(c int) value { return p.values[c]() }
	for rows.Next() {
		if err := rows.Scan(p.dests...); err != nil {
			rows.Close()
			return err
		}
		row(get)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}

func (d *sqlDriver) txBegin(st *step) error {
	// A prepared statement is made before the transaction: with a pool of one connection,
	// DB.Prepare would wait for the connection the transaction holds.
	if st.kind == kExec && st.mode == mPrepared && d.stmt == nil {
		if err := d.prepare(); err != nil {
			return err
		}
	}
	return d.setTx(d.db.BeginTx(ctx, nil))
}

// setTx keeps the transaction just begun (on the DB, or on a connection the method holds).
func (d *sqlDriver) setTx(tx *sql.Tx, err error) error {
	if err != nil {
		return err
	}
	d.tx = tx
	return nil
}

func (d *sqlDriver) txCommit(st *step) error {
	err := d.tx.Commit()
	d.tx, d.txStmt = nil, nil
	return err
}

func (d *sqlDriver) recover(st *step) {
	if d.tx != nil {
		if err := d.tx.Rollback(); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: rollback:", err)
		}
		d.tx, d.txStmt = nil, nil
	}
}

func (d *sqlDriver) end(st *step) {
	if d.stmt != nil && d.shared == nil { // a pool's statement is closed with the pool
		if err := d.stmt.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: closing the prepared statement:", err)
		}
	}
	d.stmt, d.txStmt, d.args, d.plan, d.hand, d.plans = nil, nil, nil, nil, nil, nil
}

func (d *sqlDriver) read(st *step, rows *sql.Rows, err error, sk *sink) (int64, error) {
	if err != nil {
		return 0, err
	}
	if d.plan == nil { // the step's statement has one result shape
		types, err := rows.ColumnTypes()
		if err != nil {
			rows.Close()
			return 0, err
		}
		d.plan = d.m.plan(types)
	}
	p := d.plan
	var n int64
	for rows.Next() {
		if err := rows.Scan(p.dests...); err != nil {
			rows.Close()
			return 0, err
		}
		if sk != nil {
			for c, val := range p.values {
				p.row[c] = val()
			}
			sk.add(p.row)
		}
		n++
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	st.ncols = len(p.dests)
	return n, nil
}

// ---- steps under load ---------------------------------------------------------------------

// dial parses the endpoint's configuration once (a connector); connect then makes a
// *sql.DB of one connection from it, which connects at its first statement.
func (d *sqlDriver) dial(ep endpoint) error {
	c, err := d.m.connector(ep)
	if err != nil {
		return err
	}
	d.connector, d.ep = c, ep
	return nil
}

func (d *sqlDriver) connect() error {
	d.db = sql.OpenDB(d.connector)
	pinPool(d.db)
	return nil
}

// disconnect: the statement prepared for this request is closed (database/sql closes a
// connection's statements before the connection in any case), then the connection.
func (d *sqlDriver) disconnect() {
	if d.stmt != nil {
		d.stmt.Close()
	}
	d.stmt, d.txStmt, d.tx = nil, nil, nil
	if d.db != nil {
		d.db.Close()
		d.db = nil
	}
}

// sqlPool is database/sql's own pool, shared by the clients of a pooled step, with one
// statement prepared for them all: database/sql prepares a *sql.Stmt again on each pooled
// connection the first time it runs there, so each connection parses it once.
type sqlPool struct {
	db   *sql.DB
	mu   sync.Mutex
	stmt *sql.Stmt
}

func (p *sqlPool) prepare(d *sqlDriver) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stmt == nil {
		s, err := p.db.PrepareContext(ctx, d.sqlArg)
		if err != nil {
			return err
		}
		p.stmt = s
	}
	d.stmt = p.stmt
	return nil
}

func (p *sqlPool) close() {
	if p.stmt != nil {
		if err := p.stmt.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: closing the pool's prepared statement:", err)
		}
	}
	p.db.Close()
}

// newPool: database/sql's pool of the method's connector, sized and filled before the barrier.
func (d *sqlDriver) newPool(ep endpoint, size int) (connPool, error) {
	c, err := d.m.connector(ep)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	sizePool(db, size)
	err = fillPool(size, func() (*sql.Conn, error) { return db.Conn(ctx) }, func(c *sql.Conn) { c.Close() })
	if err != nil {
		db.Close()
		return nil, err
	}
	return &sqlPool{db: db}, nil
}

func (d *sqlDriver) attach(p connPool) {
	d.shared = p.(*sqlPool)
	d.db = d.shared.db
}

// database/sql lends a connection to each statement (and keeps one for a transaction) itself.
func (d *sqlDriver) borrow() error { return nil }
func (d *sqlDriver) giveBack()     {}
