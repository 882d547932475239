package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// go-pgx: pgx v5's native API on one *pgx.Conn.
//
// pgx's default query exec mode (cache_statement) prepares every statement behind the
// caller's back and keeps it in a per-connection cache; here the default is pinned to
// QueryExecModeExec and both caches have capacity 0, so each mode does what PROTOCOL.md says.

type pgxDriver struct {
	batchCopy bool
	copyOut   string // scan=copy-binary|copy-text: "binary" or "text" (driver_pgx_copy.go)

	cfg  *pgx.ConnConfig
	conn *pgx.Conn
	tx   pgx.Tx

	// pooled clients of a loaded step: the pool, and the connection borrowed from it
	pool *pgxpool.Pool
	held *pgxpool.Conn

	// per step
	sqlDollar string
	args      [][]any
	prepared  string // the statement's name once prepared in this step
	counter   int
	copyTable pgx.Identifier
	copyCols  []string
	plan      *pgxPlan
	copySQL   string     // scan=copy-…: COPY (query) TO STDOUT (FORMAT …)
	copyPlan  *pgxPlan   // and the result's destinations, from its described types
	hand      *handLoad  // a load step's statements (assoc.go)
	plans     []*pgxPlan // a load step's result shapes: the parents, each level, the joined rows
}

func newPgxDriver() dbDriver { return &pgxDriver{} }

var ctx = context.Background()

func (d *pgxDriver) driverName() string    { return "github.com/jackc/pgx/v5" }
func (d *pgxDriver) driverVersion() string { return moduleVersion("github.com/jackc/pgx/v5") }
func (d *pgxDriver) dbms() []string        { return []string{"postgresql"} }

func (d *pgxDriver) configure(key, value string) error {
	if key == "batch" && (value == "pipeline" || value == "copy") {
		d.batchCopy = value == "copy"
		return nil
	}
	if key == "scan" && (value == "copy-binary" || value == "copy-text") {
		d.copyOut = value[len("copy-"):]
		return nil
	}
	return noSetting{have: "batch=pipeline|copy, scan=copy-binary|copy-text"}
}

// modes: a scan variant's statements are go-pgx's own.
func (d *pgxDriver) modes() []string {
	if d.copyOut != "" {
		return []string{}
	}
	return []string{"literal", "extended", "prepared"}
}

func (d *pgxDriver) batchStyle() string {
	if d.batchCopy {
		return "per group: Conn.Begin, Tx.CopyFrom (binary COPY FROM STDIN; pgx first describes 'select cols from t', every group), Tx.Commit"
	}
	return "one pgx.Batch per group: BEGIN, one Bind/Execute of the prepared INSERT per row (Conn.Prepare once, in the first group), COMMIT, all queued in the batch and sent as one pipeline with one Sync (one round trip per group)"
}

func (d *pgxDriver) settings() map[string]string {
	batch := "pipeline"
	if d.batchCopy {
		batch = "copy"
	}
	settings := map[string]string{
		"default_query_exec_mode":    "QueryExecModeExec (pgx's default, cache_statement, would prepare every statement automatically)",
		"statement_cache_capacity":   "0 (no automatic prepared-statement cache)",
		"description_cache_capacity": "0 (no cache of statement descriptions)",
		"tls":                        pgxTLS + "; with prefer (or none), pgconn tries TLS and, if refused, opens a second connection without it",
		"search_path":                "ConnConfig.RuntimeParams[search_path] in the startup packet",
		"read_only":                  pgxReadOnly,
		"autocommit":                 "yes; BEGIN/COMMIT explicit (Conn.Begin / Tx.Commit for commit_every)",
		"literal":                    "statements that return rows: Conn.Query(text, QueryExecModeSimpleProtocol) with no arguments (pgx still scans the text for $n placeholders); others: Conn.Exec(text) with no arguments; simple query protocol, text results",
		"extended":                   "QueryExecModeExec: Parse/Bind/Describe/Execute/Sync of the unnamed statement in one round trip, parameters as text with type OID 0 (the server infers their types), text results. Chosen over QueryExecModeDescribeExec, which first asks the server for the parameter types (an extra round trip per execution), because it is what PQexecParams does. Conn.Exec for statements without rows (Conn.Query when there are no parameters, since Exec without arguments switches to the simple protocol)",
		"prepared":                   "Conn.Prepare(name, sql) once, inside the first operation; then Conn.Query/Conn.Exec by name (Bind/Execute/Sync), parameters in binary where pgx knows the type, results in binary for every type pgx decodes natively (numeric included); Conn.Deallocate after the step (untimed)",
		"scan":                       "Conn.Query(sql, QueryExecModeSimpleProtocol): simple query protocol, text results (as c-libpq's default)",
		"batch":                      batch,
		"pooled":                     "pgxpool (pgx v5's pool) with this ConnConfig: MaxConns = MinConns = pool_size, filled before the barrier (pool_size connections acquired at once, then released); ShouldPing returns false (pgxpool otherwise pings a connection idle over 1 s when it is acquired), MaxConnLifetime = 0 and MaxConnIdleTime = 0 (no connection closed for age or idleness), HealthCheckPeriod = 24 h (the background check takes the idle connections out of the pool while it looks at them); each operation Pool.Acquire, the operation on its *pgx.Conn, Conn.Release (a commit_every transaction keeps its connection until COMMIT); prepared: Conn.Prepare(\"abw_pooled\") on the borrowed connection in every operation: parsed on each connection's first use, a lookup in pgx's map after that",
		"per-request":                "per operation, inside its time: pgx.ConnectConfig with the ConnConfig parsed once before the barrier, the operation (prepared: Conn.Prepare on the new connection), Conn.Close (Terminate; what was prepared goes with the connection)",
		"parameters":                 pgxParameters,
		"load":                       handLoadSetting("Conn.Query(sql, args...) under QueryExecModeExec"),
		"decoding":                   "rows.Scan into pgtype values chosen by the field descriptions' type OIDs: int2/int4/int8 → pgtype.Int2/Int4/Int8, float4/float8 → pgtype.Float4/Float8, numeric → pgtype.Numeric (rendered with its scale), bool → pgtype.Bool, text types → pgtype.Text, timestamp(tz) → pgtype.Timestamp(tz) (time.Time), date → pgtype.Date, time → pgtype.Time, bytea → []byte, others → any",
	}
	if d.copyOut != "" {
		settings["scan"] = "PgConn.CopyTo of COPY (query) TO STDOUT (FORMAT " + d.copyOut + "): each row as it arrives, every field decoded by pgtype.Map.Scan into the destination of its column's type OID (described before the clock by PgConn.Prepare of the unnamed statement); statements with parameters that read rows: unsupported (COPY takes none)"
		why := "unsupported: go-pgx/scan=copy-" + d.copyOut + " measures scans; its statements are go-pgx's"
		settings["literal"], settings["extended"], settings["prepared"] = why, why, why
	}
	return settings
}

func (d *pgxDriver) config(ep endpoint) (*pgx.ConnConfig, error) {
	conninfo, err := pgConnString(ep, false)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(conninfo)
	if err != nil {
		return nil, err
	}
	pgxPinTLS(ep, &cfg.Config)
	cfg.RuntimeParams = pgRuntimeParams(ep, cfg.RuntimeParams)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.StatementCacheCapacity = 0
	cfg.DescriptionCacheCapacity = 0
	return cfg, nil
}

func (d *pgxDriver) open(ep endpoint) error {
	if err := d.dial(ep); err != nil {
		return err
	}
	return d.connect()
}

// dial parses the connection configuration once: connect then connects with it.
func (d *pgxDriver) dial(ep endpoint) error {
	cfg, err := d.config(ep)
	if err != nil {
		return err
	}
	d.cfg = cfg
	return nil
}

func (d *pgxDriver) connect() error {
	conn, err := pgx.ConnectConfig(ctx, d.cfg)
	if err != nil {
		return err
	}
	if err := isoDates(ctx, conn); err != nil {
		conn.Close(ctx)
		return err
	}
	d.conn = conn
	return nil
}

// isoDates: text timestamps are parsed in the ISO form.
func isoDates(ctx context.Context, conn *pgx.Conn) error {
	if ds := conn.PgConn().ParameterStatus("DateStyle"); len(ds) < 3 || ds[:3] != "ISO" {
		_, err := conn.Exec(ctx, "SET DateStyle = ISO")
		return err
	}
	return nil
}

// disconnect closes a per-request connection; what was prepared on it went with it.
func (d *pgxDriver) disconnect() {
	if d.conn != nil {
		d.conn.Close(ctx)
		d.conn = nil
	}
	d.prepared, d.tx = "", nil
}

type pgxPool struct{ p *pgxpool.Pool }

func (p pgxPool) close() { p.p.Close() }

// newPool: pgxpool with the worker's ConnConfig, MaxConns = MinConns = size, filled before
// it is used. Its work beyond lending is pinned off: no ping of a connection idle over a second
// when it is acquired (ShouldPing), no lifetime or idle limit, and the background health check
// (which takes the idle connections out of the pool while it looks at them) a day apart.
func (d *pgxDriver) newPool(ep endpoint, size int) (connPool, error) {
	conninfo, err := pgConnString(ep, false)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(conninfo) // a pgxpool.Config must come from ParseConfig
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig, err = d.config(ep); err != nil {
		return nil, err
	}
	cfg.AfterConnect = isoDates
	cfg.MaxConns, cfg.MinConns, cfg.MinIdleConns = int32(size), int32(size), 0
	cfg.MaxConnLifetime, cfg.MaxConnLifetimeJitter, cfg.MaxConnIdleTime = 0, 0, 0
	cfg.HealthCheckPeriod = 24 * time.Hour
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	err = fillPool(size, func() (*pgxpool.Conn, error) { return pool.Acquire(ctx) }, (*pgxpool.Conn).Release)
	if err != nil {
		pool.Close() // after the release: Close waits for every connection to come back
		return nil, err
	}
	return pgxPool{pool}, nil
}

func (d *pgxDriver) attach(p connPool) { d.pool = p.(pgxPool).p }

// borrow takes a connection from the pool for one operation; a commit_every transaction
// keeps the one it has until its COMMIT.
func (d *pgxDriver) borrow() error {
	if d.held != nil {
		return nil
	}
	c, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	d.held, d.conn, d.prepared = c, c.Conn(), ""
	return nil
}

func (d *pgxDriver) giveBack() {
	if d.held == nil || d.tx != nil {
		return
	}
	d.held.Release() // destroyed rather than pooled if it is left in a transaction
	d.held, d.conn = nil, nil
}

func (d *pgxDriver) describe() (int64, string, error) {
	return int64(d.conn.PgConn().PID()), d.conn.PgConn().ParameterStatus("server_version"), nil
}

func (d *pgxDriver) close() {
	if d.pool != nil { // a pooled client: its pool is closed by the step
		d.giveBack()
		d.pool, d.conn = nil, nil
		return
	}
	if d.conn != nil {
		d.conn.Close(ctx)
		d.conn = nil
	}
}

func (d *pgxDriver) serverPID() int64 {
	if d.conn == nil {
		return 0
	}
	return int64(d.conn.PgConn().PID())
}

func (d *pgxDriver) classify(err error) *failure {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return &failure{kind: "db", message: pgErr.Severity + ": " + pgErr.Message, sqlstate: pgErr.Code}
	}
	return &failure{kind: "db", message: err.Error()}
}

func (d *pgxDriver) begin(st *step) error {
	d.prepared = ""
	d.plan, d.hand, d.plans = nil, nil, nil
	if st.kind == kLoad {
		d.hand, d.plans = newHandLoad(st, true), make([]*pgxPlan, len(st.assoc.levels)+2)
	}
	if d.copyOut != "" {
		if st.kind == kExec && st.fetch {
			return unsupported("go-pgx/scan=copy-%s reads whole results by COPY in scans; a statement that reads rows runs on go-pgx", d.copyOut)
		}
		d.copyPlan = nil
		if st.kind == kScan && d.conn != nil { // a client without its connection yet describes in its first operation
			if err := d.describeCopy(st.sql); err != nil {
				return err
			}
		}
	}
	if st.sql != "" {
		d.sqlDollar = convertMarkers(st.sql, true)
	}
	if st.params != nil && st.mode != mLiteral {
		d.args = bindRows(st.params, pgxArg)
	}
	if st.kind == kBatch && d.batchCopy {
		sh, err := copyTarget(st)
		if err != nil {
			return err
		}
		d.copyTable, d.copyCols = pgx.Identifier{sh.table}, sh.columns
	}
	return nil
}

// pooledStatement names a pooled step's statement on every connection of the pool: pgx's
// Prepare of a name the connection already has with the same text is a map lookup, so each
// connection parses it once, in the first operation it serves.
const pooledStatement = "abw_pooled"

func (d *pgxDriver) prepare() error {
	name := pooledStatement
	if d.pool == nil {
		d.counter++
		name = fmt.Sprintf("abw_%d", d.counter)
	}
	if _, err := d.conn.Prepare(ctx, name, d.sqlDollar); err != nil {
		return err
	}
	d.prepared = name
	return nil
}

func (d *pgxDriver) op(st *step, i int, sk *sink) (int64, error) {
	switch st.kind {
	case kConnect:
		c, err := pgx.ConnectConfig(ctx, d.cfg)
		if err != nil {
			return 0, err
		}
		return 0, c.Close(ctx)
	case kScan:
		if d.copyOut != "" {
			return d.scanCopy(st, sk)
		}
		rows, err := d.conn.Query(ctx, st.sql, pgx.QueryExecModeSimpleProtocol)
		return d.read(st, rows, err, sk)
	case kExec:
		switch st.mode {
		case mLiteral:
			if st.fetch {
				rows, err := d.conn.Query(ctx, st.texts[i], pgx.QueryExecModeSimpleProtocol)
				return d.read(st, rows, err, sk)
			}
			tag, err := d.conn.Exec(ctx, st.texts[i])
			return tag.RowsAffected(), err
		case mExtended:
			if st.fetch {
				rows, err := d.conn.Query(ctx, d.sqlDollar, d.args[i]...)
				return d.read(st, rows, err, sk)
			}
			if st.nparams == 0 { // Exec without arguments would use the simple protocol
				rows, err := d.conn.Query(ctx, d.sqlDollar)
				if err != nil {
					return 0, err
				}
				rows.Close()
				return rows.CommandTag().RowsAffected(), rows.Err()
			}
			tag, err := d.conn.Exec(ctx, d.sqlDollar, d.args[i]...)
			return tag.RowsAffected(), err
		default:
			if d.prepared == "" { // parsed once, inside the first operation's time
				if err := d.prepare(); err != nil {
					return 0, err
				}
			}
			if st.fetch {
				rows, err := d.conn.Query(ctx, d.prepared, d.args[i]...)
				return d.read(st, rows, err, sk)
			}
			tag, err := d.conn.Exec(ctx, d.prepared, d.args[i]...)
			return tag.RowsAffected(), err
		}
	case kBatch:
		first, last := st.group(i)
		if d.batchCopy {
			return d.batchCopyGroup(first, last)
		}
		if d.prepared == "" { // prepared once, in the first group
			if err := d.prepare(); err != nil {
				return 0, err
			}
		}
		b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, last-first+2)}
		b.Queue("BEGIN")
		for r := first; r < last; r++ {
			b.Queue(d.prepared, d.args[r]...)
		}
		b.Queue("COMMIT")
		if err := d.conn.SendBatch(ctx, b).Close(); err != nil {
			return 0, err
		}
		return int64(last - first), nil
	case kLoad:
		return d.hand.run(d, d.args[i], sk)
	}
	return 0, fail("internal", "unknown step kind")
}

// loads: go-pgx has the hand-written load strategies (assoc.go); a scan=copy variant measures
// scans only.
func (d *pgxDriver) loads() bool { return d.copyOut == "" }

// assocQuery runs one statement of a hand-written load by Conn.Query with its arguments
// (QueryExecModeExec, as the extended mode), every row scanned into the typed destinations of
// its result shape (made from the field descriptions at its first row, kept while they stay
// the same).
func (d *pgxDriver) assocQuery(result int, text string, args []any, row func(get func(int) value)) error {
	rows, err := d.conn.Query(ctx, text, args...)
	if err != nil {
		return err
	}
	var p *pgxPlan
	var raw [][]byte
	get := func(c int) value { return p.values[c](raw[c]) }
	for rows.Next() {
		if p == nil {
			p = planIn(&d.plans[result], rows.FieldDescriptions())
		}
		if err := rows.Scan(p.dests...); err != nil {
			rows.Close()
			return err
		}
		raw = rows.RawValues()
		row(get)
	}
	rows.Close()
	return rows.Err()
}

func (d *pgxDriver) batchCopyGroup(first, last int) (int64, error) {
	tx, err := d.conn.Begin(ctx)
	if err != nil {
		return 0, err
	}
	d.tx = tx
	if _, err := tx.CopyFrom(ctx, d.copyTable, d.copyCols, pgx.CopyFromRows(d.args[first:last])); err != nil {
		return 0, err
	}
	err = tx.Commit(ctx)
	d.tx = nil
	if err != nil {
		return 0, err
	}
	return int64(last - first), nil
}

func (d *pgxDriver) txBegin(st *step) error {
	tx, err := d.conn.Begin(ctx)
	if err != nil {
		return err
	}
	d.tx = tx
	return nil
}

func (d *pgxDriver) txCommit(st *step) error {
	err := d.tx.Commit(ctx)
	d.tx = nil
	return err
}

func (d *pgxDriver) recover(st *step) {
	if d.conn == nil || d.conn.IsClosed() {
		return
	}
	if d.tx != nil {
		d.tx.Rollback(ctx)
		d.tx = nil
	}
	if d.conn.PgConn().TxStatus() != 'I' {
		if _, err := d.conn.Exec(ctx, "ROLLBACK"); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: ROLLBACK:", err)
		}
	}
}

func (d *pgxDriver) end(st *step) {
	if d.prepared != "" && d.conn != nil && !d.conn.IsClosed() {
		if err := d.conn.Deallocate(ctx, d.prepared); err != nil {
			fmt.Fprintf(os.Stderr, "abworker-go: deallocate %s: %v\n", d.prepared, err)
		}
	}
	d.prepared = ""
	d.args = nil
	d.plan, d.hand, d.plans = nil, nil, nil
}

// read decodes every row of a result into Go values (rows.Scan), checksumming them when verifying.
func (d *pgxDriver) read(st *step, rows pgx.Rows, err error, sk *sink) (int64, error) {
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		return 0, err
	}
	var n int64
	var plan *pgxPlan
	ncols := len(rows.FieldDescriptions())
	for rows.Next() {
		if plan == nil {
			plan = d.planFor(rows.FieldDescriptions())
		}
		if err := rows.Scan(plan.dests...); err != nil {
			rows.Close()
			return 0, err
		}
		if sk != nil {
			raw := rows.RawValues()
			for c, val := range plan.values {
				plan.row[c] = val(raw[c])
			}
			sk.add(plan.row)
		}
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	st.ncols = ncols
	return n, nil
}

// pgxPlan: one typed destination per column and how to read it as a value. Built on the step's first
// row and reused while the result shape (type OIDs and formats) stays the same.
type pgxPlan struct {
	oids    []uint32
	formats []int16
	dests   []any
	values  []func(raw []byte) value
	row     []value // the row being checksummed
}

func (d *pgxDriver) planFor(fds []pgconn.FieldDescription) *pgxPlan { return planIn(&d.plan, fds) }

// planIn: the plan kept in slot when the fields are the same, else a new one kept there.
func planIn(slot **pgxPlan, fds []pgconn.FieldDescription) *pgxPlan {
	if p := *slot; p != nil && len(p.oids) == len(fds) {
		same := true
		for c := range fds {
			same = same && p.oids[c] == fds[c].DataTypeOID && p.formats[c] == fds[c].Format
		}
		if same {
			return p
		}
	}
	p := &pgxPlan{}
	for _, fd := range fds {
		p.oids = append(p.oids, fd.DataTypeOID)
		p.formats = append(p.formats, fd.Format)
		dest, val := pgxColumn(fd.DataTypeOID, fd.Format == pgx.BinaryFormatCode)
		p.dests = append(p.dests, dest)
		p.values = append(p.values, val)
	}
	p.row = make([]value, len(fds))
	*slot = p
	return p
}

// pgxColumn: the typed destination of a column by its type OID, and how to read its value
// (raw is the column's value as it came, nil for NULL).
func pgxColumn(oid uint32, binaryFormat bool) (any, func([]byte) value) {
	switch oid {
	case pgtype.Int2OID:
		v := new(pgtype.Int2)
		return pgxValid(v, &v.Valid, func() value { return intValue(int64(v.Int16)) })
	case pgtype.Int4OID:
		v := new(pgtype.Int4)
		return pgxValid(v, &v.Valid, func() value { return intValue(int64(v.Int32)) })
	case pgtype.Int8OID:
		v := new(pgtype.Int8)
		return pgxValid(v, &v.Valid, func() value { return intValue(v.Int64) })
	case pgtype.OIDOID, pgtype.XIDOID, pgtype.CIDOID:
		v := new(pgtype.Uint32)
		return pgxValid(v, &v.Valid, func() value { return intValue(int64(v.Uint32)) })
	case pgtype.Float4OID:
		v := new(pgtype.Float4)
		return pgxValid(v, &v.Valid, func() value { return floatValue(float4AsDouble(v.Float32)) })
	case pgtype.Float8OID:
		v := new(pgtype.Float8)
		return pgxValid(v, &v.Valid, func() value { return floatValue(v.Float64) })
	case pgtype.NumericOID:
		v := new(pgtype.Numeric)
		return v, func(raw []byte) value {
			if !v.Valid {
				return nullValue
			}
			return decimalValue(numericText(v, raw, binaryFormat))
		}
	case pgtype.BoolOID:
		v := new(pgtype.Bool)
		return pgxValid(v, &v.Valid, func() value { return boolValue(v.Bool) })
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		v := new(pgtype.Text)
		return pgxValid(v, &v.Valid, func() value { return textValue(v.String) })
	case pgtype.TimestampOID:
		v := new(pgtype.Timestamp)
		return pgxValid(v, &v.Valid, func() value {
			return timestampValue(infMicros(v.Time.UnixMicro(), v.InfinityModifier))
		})
	case pgtype.TimestamptzOID:
		v := new(pgtype.Timestamptz)
		return pgxValid(v, &v.Valid, func() value {
			return timestampValue(infMicros(v.Time.UnixMicro(), v.InfinityModifier))
		})
	case pgtype.DateOID:
		v := new(pgtype.Date)
		return pgxValid(v, &v.Valid, func() value {
			switch v.InfinityModifier {
			case pgtype.Infinity:
				return dateValue(math.MaxInt32)
			case pgtype.NegativeInfinity:
				return dateValue(math.MinInt32)
			}
			return dateValue(unixDays(v.Time))
		})
	case pgtype.TimeOID:
		v := new(pgtype.Time)
		return pgxValid(v, &v.Valid, func() value { return timeValue(v.Microseconds) })
	case pgtype.ByteaOID:
		v := new([]byte)
		return v, func(raw []byte) value {
			if raw == nil {
				return nullValue
			}
			return bytesValue(*v)
		}
	}
	v := new(any)
	return v, func(raw []byte) value {
		if raw == nil {
			return nullValue
		}
		if b, ok := (*v).(byte); ok { // "char"
			return textValue(string([]byte{b}))
		}
		return anyValue(*v)
	}
}

// pgxValid: a pgtype destination with a Valid flag, read by val or as NULL.
func pgxValid(dest any, valid *bool, val func() value) (any, func([]byte) value) {
	f := nullable(valid, val)
	return dest, func([]byte) value { return f() }
}

func infMicros(us int64, inf pgtype.InfinityModifier) int64 {
	switch inf {
	case pgtype.Infinity:
		return math.MaxInt64
	case pgtype.NegativeInfinity:
		return math.MinInt64
	}
	return us
}
