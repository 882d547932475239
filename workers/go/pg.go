package main

import (
	"crypto/tls"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Connection settings and value decoding shared by the PostgreSQL methods.

// pgConnString is a libpq-style keyword/value string: host (a directory = unix socket
// directory), port, dbname, user, password when given, and the endpoint's TLS in libpq's
// keywords, which pgx and lib/pq both parse (pgTLS). libpqVersions: a pinned TLS version as
// ssl_min_protocol_version and ssl_max_protocol_version too (lib/pq's keywords; pgx does not
// know them and would send them to the server as run-time parameters: pgxPinTLS).
func pgConnString(ep endpoint, libpqVersions bool) (string, error) {
	t, err := pgTLSOf(ep)
	if err != nil {
		return "", err
	}
	var parts []string
	add := func(k, v string) {
		v = strings.ReplaceAll(v, `\`, `\\`)
		v = strings.ReplaceAll(v, `'`, `\'`)
		parts = append(parts, k+"='"+v+"'")
	}
	if v := ep.str("host"); v != "" {
		add("host", v)
	}
	if v := ep.str("port"); v != "" {
		add("port", v)
	}
	if v := ep.str("database"); v != "" {
		add("dbname", v)
	}
	if v := ep.str("user"); v != "" {
		add("user", v)
	}
	if v := ep.str("password"); v != "" {
		add("password", v)
	}
	add("sslmode", t.mode)
	if t.rootcert != "" {
		add("sslrootcert", t.rootcert)
	}
	if t.direct {
		add("sslnegotiation", "direct")
	}
	if libpqVersions && t.version != "" {
		add("ssl_min_protocol_version", t.version)
		add("ssl_max_protocol_version", t.version)
	}
	return strings.Join(parts, " "), nil
}

// pgRuntimeParams adds the endpoint's session settings to the run-time parameters the driver
// sends in the startup packet (pgx's RuntimeParams, lib/pq's Runtime), so that every
// connection has them from its first statement: search_path when a schema is given, and
// default_transaction_read_only=on when the endpoint is read_only (the server then refuses
// every write with SQLSTATE 25006).
func pgRuntimeParams(ep endpoint, params map[string]string) map[string]string {
	set := func(k, v string) {
		if params == nil {
			params = map[string]string{}
		}
		params[k] = v
	}
	if schema := ep.str("schema"); schema != "" {
		set("search_path", schema)
	}
	if ep.flag("read_only") {
		set("default_transaction_read_only", "on")
	}
	return params
}

// pgTLS is the endpoint's TLS (PROTOCOL.md, open: "TLS, for both DBMSs"), checked.
type pgTLS struct {
	mode     string // sslmode; absent = prefer (the drivers' own default, left as it is)
	rootcert string // sslrootcert, kept with verify-ca and verify-full only
	version  string // tls_version, TLSv1.2 or TLSv1.3: both the minimum and the maximum; "" = not pinned
	direct   bool   // sslnegotiation=direct
}

var tlsVersions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

func pgTLSOf(ep endpoint) (pgTLS, error) {
	t := pgTLS{mode: ep.str("sslmode"), version: ep.str("tls_version")}
	switch t.mode {
	case "":
		t.mode = "prefer"
	case "disable", "allow", "prefer", "require":
	case "verify-ca", "verify-full":
		t.rootcert = ep.str("sslrootcert") // require checks no certificate: its CA is not given
	default:
		return t, fail("protocol", "sslmode %q: expected disable, prefer, require, verify-ca or verify-full", t.mode)
	}
	if _, ok := tlsVersions[t.version]; t.version != "" && !ok {
		return t, fail("protocol", "tls_version %q: expected TLSv1.2 or TLSv1.3", t.version)
	}
	switch n := ep.str("sslnegotiation"); n {
	case "", "postgres":
	case "direct":
		t.direct = true
		if t.mode != "require" && t.mode != "verify-ca" && t.mode != "verify-full" {
			return t, fail("protocol", "sslnegotiation=direct needs sslmode require, verify-ca or verify-full, not %s", t.mode)
		}
	default:
		return t, fail("protocol", "sslnegotiation %q: expected postgres or direct", n)
	}
	if host := ep.str("host"); strings.HasPrefix(host, "/") && t.mode != "disable" && t.mode != "allow" && t.mode != "prefer" {
		return t, unsupported("a unix socket carries no TLS (pgx and lib/pq ignore sslmode there), and sslmode=%s asks for it", t.mode)
	}
	return t, nil
}

// pgxPinTLS: a pinned TLS version as MinVersion and MaxVersion of the tls.Config pgx parsed
// from the connection string, and of each fallback's (sslmode=prefer's second try has none).
func pgxPinTLS(ep endpoint, c *pgconn.Config) {
	v := tlsVersions[ep.str("tls_version")]
	if v == 0 {
		return
	}
	pin := func(tc *tls.Config) {
		if tc != nil {
			tc.MinVersion, tc.MaxVersion = v, v
		}
	}
	pin(c.TLSConfig)
	for _, f := range c.Fallbacks {
		pin(f.TLSConfig)
	}
}

// How the PostgreSQL methods map the endpoint's TLS (hello's settings, "tls").
const (
	pgTLSKeys = "sslmode as it comes (absent: prefer, the driver's default, left alone); sslrootcert with verify-ca and verify-full (require checks no certificate, so the CA is not passed: libpq's keyword rules would make require with a CA a verify-ca); "
	pgxTLS    = "pgx's libpq keywords in the connection string pgx.ParseConfig reads: " + pgTLSKeys +
		"sslnegotiation=direct as it comes (pgx sets ALPN \"postgresql\"); tls_version: MinVersion and MaxVersion of the tls.Config pgx built (ConnConfig.TLSConfig and each Fallbacks[i].TLSConfig), as pgx has no keyword for it. " +
		"verify-full: tls.Config.RootCAs from sslrootcert, ServerName = host; verify-ca: InsecureSkipVerify with pgx's VerifyPeerCertificate checking the chain only; require: InsecureSkipVerify; disable: no TLSConfig, no SSLRequest. " +
		"The ConnConfig (the CA file read, the tls.Config built) is parsed once when the endpoint arrives and reused by every connection; the TLS handshake is inside each connect"
)

// How the PostgreSQL methods set the endpoint's read_only (hello's settings, "read_only").
const (
	pgReadOnly  = "[default_transaction_read_only] = on in the startup packet of every connection, beside search_path; absent or false: not sent"
	pgxReadOnly = "endpoint read_only: ConnConfig.RuntimeParams" + pgReadOnly
	pqReadOnly  = "endpoint read_only: Config.Runtime" + pgReadOnly
)

// pgxArg binds a value as pgx's own type for it (go-pgx, and go-pgx-stdlib, whose adapter
// hands arguments to pgx unchanged): int64, float64, string, bool, time.Time (UTC wall
// clock) for timestamps, pgtype.Numeric for decimals, pgtype.Date for dates, []byte, nil.
func pgxArg(p param) any {
	switch p.t {
	case pDecimal: // plain digits, so the text is the coefficient with the point taken out
		whole, frac, _ := strings.Cut(p.s, ".")
		coef, _ := new(big.Int).SetString(whole+frac, 10)
		return pgtype.Numeric{Int: coef, Exp: -int32(len(frac)), Valid: true}
	case pDate:
		return pgtype.Date{Time: p.date(), Valid: true}
	}
	return sqlArg(p)
}

// pgxParameters: how go-pgx and go-pgx-stdlib bind each type (hello's settings).
const pgxParameters = "pgx's own type for each: int → int64, float → float64, bool → bool, text → string, decimal → pgtype.Numeric, date → pgtype.Date, bytes → []byte, timestamp → time.Time (UTC), NULL → nil. " +
	"extended (QueryExecModeExec): pgx encodes each as its text with type OID 0, for every type alike, and the server takes the type from the statement (a time.Time is sent with a 'Z' suffix, which a timestamp without time zone ignores); " +
	"prepared and batch: encoded for the parameter types the server described (binary for bool, float8, numeric, date, bytea, int8, timestamp); batch=copy: the same values in binary COPY"

// float4 values are hashed as a text-format driver sees them: the shortest text of the
// float32, read as a double (what c-libpq does).
func float4AsDouble(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return v
}

func unixDays(t time.Time) int32 { return int32(floorDiv(t.Unix(), 86400)) }

func clockMicros(t time.Time) int64 {
	return ((int64(t.Hour())*60+int64(t.Minute()))*60+int64(t.Second()))*1000000 + int64(t.Nanosecond()/1000)
}

// parseClock reads 'HH:MM:SS[.ffffff]' as µs since midnight.
func parseClock(s string) int64 {
	var h, m, sec, us int64
	fields := strings.SplitN(s, ":", 3)
	if len(fields) == 3 {
		h, _ = strconv.ParseInt(fields[0], 10, 64)
		m, _ = strconv.ParseInt(fields[1], 10, 64)
		whole, frac, _ := strings.Cut(fields[2], ".")
		sec, _ = strconv.ParseInt(whole, 10, 64)
		frac = (frac + "000000")[:6]
		us, _ = strconv.ParseInt(frac, 10, 64)
	}
	return (h*3600+m*60+sec)*1000000 + us
}

// numericText renders a pgtype.Numeric as PostgreSQL prints it. pgx keeps the scale of
// text-format values in Exp, and of binary ones too except for zero, whose dscale is read
// from the raw value.
func numericText(n *pgtype.Numeric, raw []byte, binaryFormat bool) string {
	switch {
	case n.NaN:
		return "NaN"
	case n.InfinityModifier == pgtype.Infinity:
		return "Infinity"
	case n.InfinityModifier == pgtype.NegativeInfinity:
		return "-Infinity"
	}
	if n.Int == nil || n.Int.Sign() == 0 {
		scale := 0
		if binaryFormat && len(raw) >= 8 {
			scale = int(int16(binary.BigEndian.Uint16(raw[6:8])))
		} else if !binaryFormat && n.Exp < 0 {
			scale = int(-n.Exp)
		}
		if scale > 0 {
			return "0." + strings.Repeat("0", scale)
		}
		return "0"
	}
	return bigDecimal(n.Int, int(n.Exp))
}

func bigDecimal(i *big.Int, exp int) string {
	s := i.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case exp > 0:
		b.WriteString(s)
		b.WriteString(strings.Repeat("0", exp))
	case exp < 0:
		if len(s) <= -exp {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -exp-len(s)))
			b.WriteString(s)
		} else {
			b.WriteString(s[:len(s)+exp])
			b.WriteByte('.')
			b.WriteString(s[len(s)+exp:])
		}
	default:
		b.WriteString(s)
	}
	return b.String()
}

// anyValue reads a value of whatever Go type a driver produced.
func anyValue(v any) value {
	switch x := v.(type) {
	case nil:
		return nullValue
	case bool:
		return boolValue(x)
	case int64:
		return intValue(x)
	case int32:
		return intValue(int64(x))
	case int16:
		return intValue(int64(x))
	case int8:
		return intValue(int64(x))
	case int:
		return intValue(int64(x))
	case uint32:
		return intValue(int64(x))
	case uint16:
		return intValue(int64(x))
	case uint64:
		return intValue(int64(x))
	case float64:
		return floatValue(x)
	case float32:
		return floatValue(float4AsDouble(x))
	case string:
		return textValue(x)
	case []byte:
		return bytesValue(x)
	case time.Time:
		return timestampValue(x.UnixMicro())
	case pgtype.Numeric:
		return decimalValue(numericText(&x, nil, false))
	case [16]byte:
		return bytesValue(x[:])
	}
	return textValue(fmt.Sprint(v))
}

// ---- database/sql decoding for PostgreSQL (go-pgx-stdlib, go-pq) --------------------------------

// What the PostgreSQL database/sql methods do alike (hello's settings).
const (
	pgSQLBatch      = "database/sql has no batch API: per group DB.BeginTx, Tx.Stmt of the INSERT prepared once (DB.Prepare, in the first group), one Stmt.Exec (Bind/Execute/Sync, a round trip) per row, Tx.Commit"
	pgSQLAutocommit = "yes; commit_every uses DB.BeginTx / Tx.Commit (BEGIN/COMMIT by the simple protocol)"
	pgSQLDecoding   = "rows.Scan into sql.Null* chosen by ColumnType.DatabaseTypeName: integers → NullInt64, float4/8 → NullFloat64, numeric → NullString, bool → NullBool, timestamp(tz)/date → NullTime, bytea → Null[[]byte], time → any, others → NullString"
)

// pgSQLPlan decodes database/sql rows by the columns' database type names into typed
// destinations (sql.Null*), the idiomatic database/sql way.
func pgSQLPlan(types []*sql.ColumnType) *sqlPlan {
	p := newSQLPlan(len(types))
	for c, t := range types {
		switch t.DatabaseTypeName() {
		case "INT2", "INT4", "INT8", "OID":
			p.nullInt(c)
		case "FLOAT4", "FLOAT8":
			p.nullFloat(c, t.DatabaseTypeName() == "FLOAT4")
		case "NUMERIC":
			p.nullDecimal(c)
		case "BOOL":
			v := new(sql.NullBool)
			p.column(c, v, &v.Valid, func() value { return boolValue(v.Bool) })
		case "TIMESTAMP", "TIMESTAMPTZ":
			p.nullTimestamp(c)
		case "DATE":
			p.nullDate(c)
		case "TIME":
			v := new(any) // lib/pq: time.Time on 0000-01-01; pgx stdlib: text
			p.dests[c] = v
			p.values[c] = func() value {
				switch x := (*v).(type) {
				case nil:
					return nullValue
				case time.Time:
					return timeValue(clockMicros(x))
				case string:
					return timeValue(parseClock(x))
				case []byte:
					return timeValue(parseClock(string(x)))
				}
				return anyValue(*v)
			}
		case "BYTEA":
			p.nullBytes(c)
		default: // text, varchar, bpchar, name and anything else: text
			p.nullText(c)
		}
	}
	return p
}

// pqTLS: how go-pq maps the endpoint's TLS (hello's settings, "tls").
const pqTLS = "lib/pq's libpq keywords in the connection string pq.NewConfig reads: " + pgTLSKeys +
	"tls_version as ssl_min_protocol_version and ssl_max_protocol_version (lib/pq sets them as the tls.Config's MinVersion and MaxVersion); sslnegotiation=direct: unsupported (" + pqNoDirect + "). " +
	"verify-full: RootCAs from sslrootcert, ServerName = host; verify-ca: InsecureSkipVerify, then lib/pq checks the chain after the handshake; require: InsecureSkipVerify; disable: no SSLRequest (lib/pq forces disable on a unix socket). " +
	"lib/pq builds its tls.Config, reading the sslrootcert file, at every connection (inside each connect's time): with its keywords it keeps none between connections (its RegisterTLSConfig, sslmode=pqgo-NAME, would keep one, but replaces lib/pq's own sslmode handling with the caller's tls.Config, so it is not used)"

// pqNoDirect: why go-pq answers sslnegotiation=direct unsupported. lib/pq parses the keyword
// and skips the SSLRequest, but its tls.Config offers no ALPN, and PostgreSQL 17 closes a
// direct TLS connection without ALPN "postgresql" (the client sees EOF).
// Fixed upstream (lib/pq#1332) after v1.12.3, the newest release when this was written: with a
// release that has the fix, drop the check in driver_pq.go.
const pqNoDirect = "lib/pq's sslnegotiation=direct (through v1.12.3) offers no ALPN \"postgresql\", which PostgreSQL 17 requires of a direct TLS handshake (the server closes the connection: lib/pq issue #1331)"
