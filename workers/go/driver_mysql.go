package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// go-mysql: github.com/go-sql-driver/mysql through database/sql, on MariaDB, the pool pinned
// to one connection like the other database/sql methods. The connector's Config decides
// what each mode is: interpolateParams=false, so a DB.Query/Exec with arguments is prepared,
// executed and closed by database/sql (the driver answers driver.ErrSkip rather than inlining
// the values on the client); one without arguments is a COM_QUERY of the text as it is. The
// record mode reads a table with MariaDB's HANDLER statements on a connection held for the
// step (PROTOCOL.md, "Record-level access"; the reference is pyworker/drivers/mysql.py).

// handlerRows: records per HANDLER … READ FIRST / NEXT of a record-level scan (the Python
// workers' HANDLER_ROWS).
const handlerRows = 1000

// mysqlServerThread: the OS thread serving the connection (the runner reads its CPU clock),
// the server's version and whether the session is in autocommit.
const mysqlServerThread = "SELECT TID, VERSION(), @@autocommit FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"

var handlerSeq atomic.Int64 // HANDLER aliases, unique in this process

type mysqlDriver struct {
	sqlDriver

	// record mode: the connection the HANDLER is open on (held for the step when persistent,
	// for the operation per request, borrowed for each operation when pooled) and the texts
	record   bool // the step is in the record mode
	rc       *sql.Conn
	hname    string // the HANDLER's alias
	hopen    bool   // the HANDLER is open on rc (persistent and per request)
	hpool    *mysqlPool
	hfirst   string   // scan: READ FIRST / READ NEXT
	hnext    string   //
	hkeys    []string // exec: READ index = (key), one per operation
	recTable string
}

func newMysqlDriver() dbDriver {
	d := &mysqlDriver{}
	d.m = d
	return d
}

func (d *mysqlDriver) driverName() string    { return "github.com/go-sql-driver/mysql (database/sql)" }
func (d *mysqlDriver) driverVersion() string { return moduleVersion("github.com/go-sql-driver/mysql") }
func (d *mysqlDriver) dbms() []string        { return []string{"mariadb"} }
func (d *mysqlDriver) dollar() bool          { return false }
func (d *mysqlDriver) simpleArgs() []any     { return nil }

func (d *mysqlDriver) batchStyle() string {
	return "database/sql has no batch API (nor has the driver): per group DB.BeginTx, Tx.Stmt of the INSERT prepared once (DB.Prepare: COM_STMT_PREPARE, in the first group), one Stmt.Exec (COM_STMT_EXECUTE, a round trip) per row, Tx.Commit"
}

func (d *mysqlDriver) recordAccess() string {
	return "HANDLER table OPEN AS alias (untimed, when the step begins, on a *sql.Conn held for the step; per request inside each operation on its new connection; pooled on each pooled connection's first use, inside that operation); per operation HANDLER alias READ `index` = (key) with the key as literals, or for a scan READ FIRST then READ NEXT, LIMIT " + strconv.Itoa(handlerRows) + " records per round trip, until a short batch: DB.Query-style Conn.QueryContext(text) without arguments, the text protocol (COM_QUERY); HANDLER alias CLOSE after the step"
}

// mysqlConfig is the connector's configuration for the endpoint. Everything that decides
// behaviour is set here, not left to defaults (the same as the DSN
// user:…@unix(PATH)/db?interpolateParams=false&parseTime=true&clientFoundRows=true&collation=utf8mb4_bin&checkConnLiveness=false&maxAllowedPacket=67108864&loc=UTC).
func mysqlConfig(ep endpoint) (*mysql.Config, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = ep.str("user"), ep.str("password"), ep.str("database")
	if sock := ep.str("socket"); sock != "" {
		cfg.Net, cfg.Addr = "unix", sock
	} else {
		host, port := ep.str("host"), ep.str("port")
		if host == "" {
			return nil, fail("protocol", "the mariadb endpoint needs a socket or a host")
		}
		if port == "" {
			port = "3306"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	}
	cfg.InterpolateParams = false // values are never inlined on the client
	cfg.ParseTime = true          // DATETIME and DATE as time.Time
	cfg.Loc = time.UTC
	cfg.ClientFoundRows = true      // an UPDATE counts the rows it matched
	cfg.Collation = "utf8mb4_bin"   // utf8mb4 in the handshake: no SET NAMES round trip
	cfg.CheckConnLiveness = false   // no read(2) on the socket each time the pool lends it
	cfg.MaxAllowedPacket = 64 << 20 // the default, so no max_allowed_packet query at connect
	cfg.MultiStatements = false
	name, err := mysqlTLS(ep)
	if err != nil {
		return nil, err
	}
	cfg.TLSConfig = name
	if ep.flag("compress") {
		if err := cfg.Apply(mysql.EnableCompression(true)); err != nil { // the DSN's compress=true
			return nil, err
		}
	}
	return cfg, nil
}

// mysqlTLS maps the endpoint's TLS keys (in libpq's words, PROTOCOL.md) onto the driver's
// tls parameter: "false" for disable (the driver's default is no TLS already; said
// explicitly), "" for prefer or none (left to the driver), else the name of a tls.Config
// registered with mysql.RegisterTLSConfig. Each distinct configuration is built (its CA file
// read) and registered once, the first time an endpoint asks for it: the connectors made
// after that, one per operation of a connect step, only name it.
func mysqlTLS(ep endpoint) (string, error) {
	mode, version := ep.str("sslmode"), ep.str("tls_version")
	switch mode {
	case "", "prefer":
		return "", nil
	case "disable":
		return "false", nil
	case "require", "verify-ca", "verify-full":
	default:
		return "", fail("protocol", "sslmode %q: expected disable, prefer, require, verify-ca or verify-full", mode)
	}
	if n := ep.str("sslnegotiation"); n != "" && n != "postgres" {
		return "", unsupported("MariaDB has no sslnegotiation=%s (TLS always starts after the server's greeting)", n)
	}
	pin, ok := tlsVersions[version]
	if version != "" && !ok {
		return "", fail("protocol", "tls_version %q: expected TLSv1.2 or TLSv1.3", version)
	}
	if ep.str("socket") != "" {
		return "", unsupported("a unix socket carries no TLS here, and sslmode=%s asks for it", mode)
	}
	rootcert := ""
	if mode != "require" { // require checks no certificate
		rootcert = ep.str("sslrootcert")
	}
	host := ep.str("host")
	key := strings.Join([]string{mode, version, rootcert, host}, "\x00")
	mysqlTLSMu.Lock()
	defer mysqlTLSMu.Unlock()
	if name, ok := mysqlTLSNames[key]; ok {
		return name, nil
	}
	tc := &tls.Config{MinVersion: pin, MaxVersion: pin}
	if rootcert != "" {
		pem, err := os.ReadFile(rootcert)
		if err != nil {
			return "", fmt.Errorf("sslrootcert: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return "", fmt.Errorf("sslrootcert %s: no PEM certificate in it", rootcert)
		}
	}
	switch mode {
	case "require":
		tc.InsecureSkipVerify = true
	case "verify-ca": // the chain checked against the CA, the host name not
		tc.InsecureSkipVerify = true
		roots := tc.RootCAs
		tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("tls: the server sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			var leaf *x509.Certificate
			for i, der := range raw {
				cert, err := x509.ParseCertificate(der)
				if err != nil {
					return fmt.Errorf("tls: the server's certificate: %w", err)
				}
				if i == 0 {
					leaf = cert
				} else {
					opts.Intermediates.AddCert(cert)
				}
			}
			_, err := leaf.Verify(opts)
			return err
		}
	case "verify-full":
		tc.ServerName = host
	}
	name := fmt.Sprintf("accessbench-%d", len(mysqlTLSNames)+1)
	if err := mysql.RegisterTLSConfig(name, tc); err != nil {
		return "", err
	}
	mysqlTLSNames[key] = name
	return name, nil
}

var (
	mysqlTLSMu    sync.Mutex
	mysqlTLSNames = map[string]string{} // mode, version, CA file, host → the registered tls.Config's name
)

// mysqlTLSSetting: how go-mysql maps the endpoint's TLS (hello's settings, "tls").
const mysqlTLSSetting = "the driver's tls parameter (Config.TLSConfig, the DSN's tls=): sslmode=disable → tls=false (no TLS, no probing: the driver's default is already none, named explicitly); prefer or none → left unset (the driver's default: no TLS); " +
	"require, verify-ca, verify-full → a tls.Config registered with mysql.RegisterTLSConfig and named: require: InsecureSkipVerify; verify-ca: InsecureSkipVerify and a VerifyPeerCertificate that checks the chain against RootCAs (sslrootcert), not the host name; verify-full: RootCAs from sslrootcert, ServerName = host; " +
	"tls_version: its MinVersion and MaxVersion; sslnegotiation=direct: unsupported (MariaDB has no such handshake). " +
	"Each distinct tls.Config is built (the CA file read) and registered once, when the endpoint arrives; every connector after that names it (the driver clones it into each connector); the TLS handshake is inside each connect"

// mysqlCompressSetting: the protocol's compression (hello's settings, "compress").
const mysqlCompressSetting = "endpoint compress=true → the driver's compress=true (mysql.EnableCompression(true) on the Config): CLIENT_COMPRESS, zlib, the driver's own compressed packets (go-sql-driver/mysql 1.8 and later); otherwise off"

func (d *mysqlDriver) settings() map[string]string {
	return map[string]string{
		"pool":              sqlPinnedPool,
		"pooled":            sqlPooled + "; checkConnLiveness off, so lending a connection again does no I/O (the driver's ResetSession otherwise reads the socket once, non-blocking, every time)",
		"per-request":       sqlPerRequest + " (Stmt.Close is a COM_STMT_CLOSE, which has no answer)",
		"connector":         "mysql.NewConnector(Config) + sql.OpenDB; Config as the DSN user:…@unix(SOCKET)/accessbench (tcp(HOST:PORT) without a socket)?interpolateParams=false&parseTime=true&loc=UTC&clientFoundRows=true&collation=utf8mb4_bin&checkConnLiveness=false&maxAllowedPacket=67108864 (multiStatements off; tls= and compress= as the endpoint asks: see tls and compress)",
		"tls":               mysqlTLSSetting,
		"compress":          mysqlCompressSetting,
		"read_only":         mysqlReadOnly,
		"login":             "the server's: mysql_native_password, or client_ed25519 on the auth switch (the driver's own, no option); go-sql-driver/mysql strips a zero last byte from the auth switch's data, meant for the NUL after a native-password scramble, so when MariaDB's 32-byte ed25519 nonce ends in one (1 login in 256) the login fails with 'malformed packet' (accessbench measured 7 in 2,000)",
		"interpolateParams": "false: the driver never inlines values on the client; DB.Query/Exec with arguments gets driver.ErrSkip from it and database/sql prepares, executes and closes the statement",
		"client_flag":       "CLIENT_FOUND_ROWS (clientFoundRows=true: an UPDATE counts the rows it matched)",
		"charset":           "utf8mb4 with collation utf8mb4_bin, chosen in the handshake (collation=…); no charset= option, which would send SET NAMES after every connect",
		"connect":           "handshake and authentication only: no SET NAMES, no max_allowed_packet query (maxAllowedPacket pinned to the default 64 MiB), no session variables (an endpoint read_only adds one statement: see read_only); connection attributes (client name, OS, pid) go in the handshake; autocommit is left as the server has it (on: the open checks @@autocommit)",
		"autocommit":        "yes (the server's default, checked at open); commit_every uses DB.BeginTx / Tx.Commit (START TRANSACTION / COMMIT as text queries)",
		"literal":           "DB.Query(text) / DB.Exec(text) without arguments: one COM_QUERY, the text protocol, values inlined by the worker (backslashes doubled, MariaDB's escape)",
		"extended":          "DB.Query(sql, args...) / DB.Exec(sql, args...): interpolateParams is off, so database/sql prepares, executes and closes the statement every operation (COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_STMT_CLOSE: two round trips, the close has no answer); binary protocol",
		"prepared":          "DB.Prepare once, inside the first operation (COM_STMT_PREPARE), then Stmt.Query/Stmt.Exec (COM_STMT_EXECUTE, binary protocol, one round trip; with MARIADB_CLIENT_CACHE_METADATA the server does not resend the result's column definitions with each execute); Stmt.Close after the step (COM_STMT_CLOSE, untimed)",
		"scan":              "DB.Query(sql) without arguments: COM_QUERY, text protocol",
		"connect step":      "a fresh sql.OpenDB + DB.PingContext (which connects, then sends COM_PING) + DB.Close (COM_QUIT) per operation",
		"parameters":        "database/sql values, bound by the driver in the binary protocol: int → int64 (LONGLONG), float → float64 (DOUBLE), bool → bool (TINY 1/0), text → string; decimal → its text as a string (the driver has no decimal type; the server converts it for the DECIMAL column); timestamp → time.Time in UTC, which the driver sends as a string with its fraction ('2001-05-01 00:00:00.00001'), so microseconds are kept; date → time.Time at midnight UTC, sent as the string 'YYYY-MM-DD' (the driver has no DATE parameter type); bytes → []byte, sent as a STRING of the raw bytes (nor a BLOB one); NULL → nil",
		"load":              handLoadSetting("DB.QueryContext(sql, args...)"),
		"decoding":          "rows.Scan into sql.Null* chosen by ColumnType.DatabaseTypeName: integer types (TINYINT(1)/BOOLEAN included: the driver has no boolean mapping) → NullInt64, DOUBLE → NullFloat64, FLOAT → NullFloat64 of the float32, DECIMAL → NullString (its text, scale kept), DATETIME/TIMESTAMP/DATE → NullTime (parseTime, UTC), TIME → its text, BLOB/BINARY/VARBINARY types → Null[[]byte], others → NullString; the driver converts text-protocol numbers to int64/float64 itself",
	}
}

func (d *mysqlDriver) openDB(ep endpoint) (*sql.DB, error) { return openPinned(d.connector(ep)) }

func (d *mysqlDriver) connector(ep endpoint) (driver.Connector, error) {
	cfg, err := mysqlConfig(ep)
	if err != nil {
		return nil, err
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil || !ep.flag("read_only") {
		return c, err
	}
	return readOnlyConnector{c}, nil
}

// readOnlyConnector runs SET SESSION TRANSACTION READ ONLY on every connection it makes, before
// database/sql lends it: the driver has no init command, and its system-variable parameters
// would need the variable's name, tx_read_only or transaction_read_only by server version.
type readOnlyConnector struct{ driver.Connector }

const mysqlReadOnlyStmt = "SET SESSION TRANSACTION READ ONLY"

func (c readOnlyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.(driver.ExecerContext).ExecContext(ctx, mysqlReadOnlyStmt, nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// mysqlReadOnly: how go-mysql sets the endpoint's read_only (hello's settings, "read_only").
const mysqlReadOnly = "endpoint read_only: " + mysqlReadOnlyStmt + " run by a connector wrapper on every new connection (a pool's included) before database/sql uses it, the driver having no init command; absent or false: nothing sent"

func (d *mysqlDriver) info(db *sql.DB) (int64, string, error) {
	var tid int64
	var version string
	var autocommit int64
	if err := db.QueryRowContext(ctx, mysqlServerThread).Scan(&tid, &version, &autocommit); err != nil {
		return 0, "", err
	}
	if autocommit != 1 {
		return 0, "", unsupported("the server starts sessions with autocommit off; go-mysql runs every statement in autocommit")
	}
	return tid, version, nil
}

func (d *mysqlDriver) adapt(params [][]param) [][]any { return bindRows(params, sqlArg) }

// plan decodes the rows by the columns' database type names into typed destinations.
func (d *mysqlDriver) plan(types []*sql.ColumnType) *sqlPlan {
	p := newSQLPlan(len(types))
	for c, t := range types {
		switch name := t.DatabaseTypeName(); name {
		case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR",
			"UNSIGNED TINYINT", "UNSIGNED SMALLINT", "UNSIGNED MEDIUMINT", "UNSIGNED INT":
			p.nullInt(c)
		case "UNSIGNED BIGINT":
			v := new(sql.Null[uint64])
			p.column(c, v, &v.Valid, func() value { return intValue(int64(v.V)) })
		case "DOUBLE", "FLOAT":
			p.nullFloat(c, name == "FLOAT")
		case "DECIMAL":
			p.nullDecimal(c)
		case "DATETIME", "TIMESTAMP":
			p.nullTimestamp(c)
		case "DATE":
			p.nullDate(c)
		case "TIME":
			v := new(sql.NullString) // 'HH:MM:SS[.ffffff]' on both protocols
			p.column(c, v, &v.Valid, func() value { return timeValue(parseClock(v.String)) })
		case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY", "BIT", "GEOMETRY":
			p.nullBytes(c)
		default: // CHAR, VARCHAR, TEXT types, ENUM, SET, JSON: text
			p.nullText(c)
		}
	}
	return p
}

func (d *mysqlDriver) classify(err error) *failure {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		f := &failure{kind: "db", message: me.Error()}
		if me.SQLState != [5]byte{} {
			f.sqlstate = string(me.SQLState[:])
		}
		return f
	}
	return &failure{kind: "db", message: err.Error()}
}

// ---- record-level access: MariaDB's HANDLER ---------------------------------------------------

// begin readies the step; for the record mode it makes the HANDLER's statement texts and,
// when the client is persistent, holds a connection and opens the HANDLER on it (untimed).
// A per-request client opens it inside each operation, a pooled one on each connection's
// first use.
func (d *mysqlDriver) begin(st *step) error {
	if err := d.sqlDriver.begin(st); err != nil {
		return err
	}
	d.hkeys, d.hfirst, d.hnext, d.hopen = nil, "", "", false
	d.record = st.mode == mRecord
	if !d.record {
		return nil
	}
	if d.hpool != nil { // one alias on every connection of the pool
		d.hname = d.hpool.hname
	} else {
		d.hname = "ab_h" + strconv.FormatInt(handlerSeq.Add(1), 10)
	}
	d.recTable = st.recTable
	if st.kind == kScan {
		d.hfirst = "HANDLER " + d.hname + " READ FIRST LIMIT " + strconv.Itoa(handlerRows)
		d.hnext = "HANDLER " + d.hname + " READ NEXT LIMIT " + strconv.Itoa(handlerRows)
	} else {
		read := "HANDLER " + d.hname + " READ `" + strings.ReplaceAll(st.recIndex, "`", "``") + "` = ("
		d.hkeys = make([]string, len(st.texts))
		for i, key := range st.texts {
			d.hkeys[i] = read + key + ")"
		}
	}
	if d.shared == nil && d.db != nil { // persistent: the step's connection, held
		return d.holdHandler()
	}
	return nil
}

// holdHandler takes a connection of the client's own *sql.DB for the HANDLER and opens it.
func (d *mysqlDriver) holdHandler() error {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	d.rc = c
	if _, err := c.ExecContext(ctx, "HANDLER "+d.recTable+" OPEN AS "+d.hname); err != nil {
		return err
	}
	d.hopen = true
	return nil
}

// hquery runs a HANDLER statement on the held connection, or in the transaction begun on it.
func (d *mysqlDriver) hquery(text string) (*sql.Rows, error) {
	if d.tx != nil {
		return d.tx.QueryContext(ctx, text)
	}
	return d.rc.QueryContext(ctx, text)
}

func (d *mysqlDriver) op(st *step, i int, sk *sink) (int64, error) {
	if st.mode != mRecord {
		return d.sqlDriver.op(st, i, sk)
	}
	if d.rc == nil { // per request: this operation's new connection
		if err := d.holdHandler(); err != nil {
			return 0, err
		}
	}
	if st.kind == kExec {
		rows, err := d.hquery(d.hkeys[i])
		return d.read(st, rows, err, sk)
	}
	var total int64
	text := d.hfirst
	for {
		rows, err := d.hquery(text)
		n, err := d.read(st, rows, err, sk)
		if err != nil {
			return 0, err
		}
		total += n
		if n < handlerRows { // a short batch: the table has been read
			return total, nil
		}
		text = d.hnext
	}
}

// txBegin: in the record mode, the transaction is begun on the HANDLER's connection.
func (d *mysqlDriver) txBegin(st *step) error {
	if st.mode != mRecord {
		return d.sqlDriver.txBegin(st)
	}
	if d.rc == nil {
		if err := d.holdHandler(); err != nil {
			return err
		}
	}
	return d.setTx(d.rc.BeginTx(ctx, nil))
}

// end closes the HANDLER and hands the held connection back (untimed).
// (A pooled connection's HANDLER is closed with the pool's connections after the trial.)
func (d *mysqlDriver) end(st *step) {
	if d.rc != nil && d.hopen {
		if _, err := d.rc.ExecContext(ctx, "HANDLER "+d.hname+" CLOSE"); err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: HANDLER CLOSE:", err)
		}
	}
	d.dropConn()
	d.record, d.hkeys = false, nil
	d.sqlDriver.end(st)
}

// dropConn hands the held connection back, with the HANDLER open on it if any.
func (d *mysqlDriver) dropConn() {
	if d.rc != nil {
		d.rc.Close()
		d.rc, d.hopen = nil, false
	}
}

// disconnect (per request): the operation's connection goes with its HANDLER.
func (d *mysqlDriver) disconnect() {
	d.dropConn()
	d.sqlDriver.disconnect()
}

func (d *mysqlDriver) close() {
	d.dropConn()
	d.hpool = nil
	d.sqlDriver.close()
}

// mysqlPool is database/sql's pool with, for the record mode, the HANDLER's alias (the same
// on every connection) and the connections it is open on.
type mysqlPool struct {
	*sqlPool
	hname  string
	mu     sync.Mutex
	opened map[any]bool // by the driver's connection (*mysql.mysqlConn)
}

func (d *mysqlDriver) newPool(ep endpoint, size int) (connPool, error) {
	p, err := d.sqlDriver.newPool(ep, size)
	if err != nil {
		return nil, err
	}
	return &mysqlPool{sqlPool: p.(*sqlPool), hname: "ab_h" + strconv.FormatInt(handlerSeq.Add(1), 10),
		opened: map[any]bool{}}, nil
}

func (d *mysqlDriver) attach(p connPool) {
	d.hpool = p.(*mysqlPool)
	d.sqlDriver.attach(d.hpool.sqlPool)
}

// borrow (pooled, record mode): a connection of the pool for this operation, the HANDLER
// opened on it at its first use (inside that operation's time); a commit_every transaction
// keeps the one it has until its COMMIT. In the SQL modes database/sql lends a connection to
// each statement by itself.
func (d *mysqlDriver) borrow() error {
	if !d.record || d.rc != nil {
		return nil
	}
	c, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	var key any
	if err := c.Raw(func(dc any) error { key = dc; return nil }); err != nil {
		c.Close()
		return err
	}
	p := d.hpool
	p.mu.Lock()
	opened := p.opened[key]
	p.mu.Unlock()
	if !opened {
		if _, err := c.ExecContext(ctx, "HANDLER "+d.recTable+" OPEN AS "+p.hname); err != nil {
			c.Close()
			return err
		}
		p.mu.Lock()
		p.opened[key] = true
		p.mu.Unlock()
	}
	d.rc = c
	return nil
}

func (d *mysqlDriver) giveBack() {
	if d.rc == nil || d.tx != nil {
		return
	}
	d.rc.Close()
	d.rc = nil
}
