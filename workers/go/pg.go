package main

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Connection settings and value decoding shared by the PostgreSQL methods.

// pgConnString is a libpq-style keyword/value string: host (a directory = unix socket
// directory), port, dbname, user, password when given, and the endpoint's sslmode.
func pgConnString(ep endpoint) string {
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
	sslmode := ep.str("sslmode")
	if sslmode == "" {
		sslmode = "prefer"
	}
	add("sslmode", sslmode)
	return strings.Join(parts, " ")
}

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
