// The shared pieces of protocol v1 (protocol/PROTOCOL.md), in Go: splitmix64, the value
// generators, the FNV-1a row hash over the canonical encoding, timestamps, the '?'-marker
// scanner and SQL literals. They must match src/accessbench/protocol/ bit for bit.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// ---- PRNG ---------------------------------------------------------------------------------

type splitMix64 struct{ state uint64 }

func (r *splitMix64) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	z := r.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// unit is a double in [0, 1) from the top 53 bits.
func (r *splitMix64) unit() float64 {
	return float64(r.next()>>11) * (1.0 / 9007199254740992.0)
}

// ---- checksum -----------------------------------------------------------------------------

const (
	fnvOffset uint64 = 0xcbf29ce484222325
	fnvPrime  uint64 = 0x100000001b3
)

func hByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func hLE(h uint64, v uint64, n int) uint64 {
	for k := 0; k < n; k++ {
		h = (h ^ (v & 0xff)) * fnvPrime
		v >>= 8
	}
	return h
}

func hStr(h uint64, s string) uint64 {
	for k := 0; k < len(s); k++ {
		h = (h ^ uint64(s[k])) * fnvPrime
	}
	return h
}

func hBuf(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// value is one value read, in its canonical form (PROTOCOL.md, the checksum): the encoding's
// type letter and what it encodes. In a verification pass each driver reads every column it
// decoded as a value, which the sink hashes into the row's checksum (hash) and, when asked for
// a dump, writes out (typed): the same value, so a dump shows exactly what was checksummed. The checksum op reads its
// typed values into values too (typedValue, main.go).
type value struct {
	kind byte   // 'N' NULL, 'B' bool, 'I' int, 'F' float, 'D' decimal, 'S' text, 'X' bytes, 'T' timestamp, 'd' date, 't' time
	n    int64  // B: 1/0; I; F: the IEEE-754 bits; T, t: µs; d: days
	s    string // D: the plain decimal text; S
	x    []byte // X
}

var nullValue = value{kind: 'N'}

func boolValue(b bool) value {
	if b {
		return value{kind: 'B', n: 1}
	}
	return value{kind: 'B'}
}

func intValue(n int64) value        { return value{kind: 'I', n: n} }
func floatValue(f float64) value    { return value{kind: 'F', n: int64(math.Float64bits(f))} }
func decimalValue(s string) value   { return value{kind: 'D', s: s} }
func textValue(s string) value      { return value{kind: 'S', s: s} }
func bytesValue(b []byte) value     { return value{kind: 'X', x: b} }
func timestampValue(us int64) value { return value{kind: 'T', n: us} }
func dateValue(days int32) value    { return value{kind: 'd', n: int64(days)} }
func timeValue(us int64) value      { return value{kind: 't', n: us} }

// hash folds the value's canonical encoding into h: its type letter, then the content
// (integers little-endian, a date in 4 bytes; text, decimal text and bytes after their 4-byte
// length).
func (v value) hash(h uint64) uint64 {
	h = hByte(h, v.kind)
	switch v.kind {
	case 'B':
		return hByte(h, byte(v.n))
	case 'I', 'F', 'T', 't':
		return hLE(h, uint64(v.n), 8)
	case 'd':
		return hLE(h, uint64(v.n), 4)
	case 'D', 'S':
		return hStr(hLE(h, uint64(len(v.s)), 4), v.s)
	case 'X':
		return hBuf(hLE(h, uint64(len(v.x)), 4), v.x)
	}
	return h // NULL: the letter alone
}

// typed is a value as the protocol writes it out ({"type": T, "value": V}, no value for
// NULL): the checksum op's input form and a verification pass's dump.
type typed struct {
	Type  string `json:"type"`
	Value any    `json:"value,omitempty"` // omitted only when nil: false, 0 and "" are kept
}

// typed writes the value out: the same type letter and the same integer, float bits (16 hex
// digits, big-endian), decimal text, text or bytes (lower-case hex) that hash encodes.
func (v value) typed() typed {
	switch v.kind {
	case 'B':
		return typed{"bool", v.n != 0}
	case 'I':
		return typed{"int", v.n}
	case 'F':
		return typed{"float", fmt.Sprintf("%016x", uint64(v.n))}
	case 'D':
		return typed{"decimal", v.s}
	case 'S':
		return typed{"text", v.s}
	case 'X':
		return typed{"bytes", hex.EncodeToString(v.x)}
	case 'T':
		return typed{"timestamp", v.n}
	case 'd':
		return typed{"date", v.n}
	case 't':
		return typed{"time", v.n}
	}
	return typed{Type: "null"}
}

// nullable gives a scanned value by val, or NULL when its valid flag is false.
func nullable(valid *bool, val func() value) func() value {
	return func() value {
		if !*valid {
			return nullValue
		}
		return val()
	}
}

// sink receives the rows of a verification pass: the sum of their hashes, the width of the
// first row and, when the step asks for a dump (to explain a checksum mismatch), the first
// rows as typed values.
type sink struct {
	sum    uint64
	rows   int64
	width  int
	values int64 // every value of every row (a load's rows are of several tables)
	// statements the pass's operations sent, as the method counts them (a load's, and
	// whatever else the method counts); counted: the method counted them
	statements int64
	counted    bool
	limit      int       // rows to dump (the step's dump; 0: none)
	dump       [][]typed // the first limit rows read, in the order read
}

// newSink is a verification pass's sink, which also dumps the first limit rows (an empty
// dump, not none, when the pass reads no rows).
func newSink(limit int) *sink { return &sink{limit: limit, dump: [][]typed{}} }

// add takes one row read, its values in column order (the caller may reuse the slice).
func (s *sink) add(row []value) {
	h := fnvOffset
	for _, v := range row {
		h = v.hash(h)
	}
	if s.rows == 0 {
		s.width = len(row)
	}
	s.sum += h
	s.rows++
	s.values += int64(len(row))
	if len(s.dump) < s.limit {
		out := make([]typed, len(row))
		for c, v := range row {
			out[c] = v.typed()
		}
		s.dump = append(s.dump, out)
	}
}

// sent counts n statements sent to the DBMS (verification passes only: the sink exists there).
func (s *sink) sent(n int64) {
	s.statements += n
	s.counted = true
}

func (s *sink) hex() string { return fmt.Sprintf("%016x", s.sum) }

// ---- latency histogram and arrival schedule (steps under load) -------------------------------

// The histogram (src/accessbench/protocol/histogram.py): log-linear buckets over integer
// nanoseconds, filed with integer operations only so that every language puts a value in the
// same bucket. Values under 256 are their own bucket; above, a value of bit length L goes to
// (L − 8)·128 + (v >> (L − 8)), its top eight bits (at most 0.8% wide). From 2⁴⁰ ns on: overflow.
const (
	histMantissaBits = 8
	histSub          = 1 << (histMantissaBits - 1)
	histExact        = 1 << histMantissaBits
	histLimit        = uint64(1) << 40
	histBuckets      = (40-histMantissaBits+1)*histSub + histExact
)

// histogram is a fixed array of counts: recording allocates nothing and costs a few
// instructions, so it can sit inside the timed loop.
type histogram struct {
	counts   [histBuckets]uint64
	overflow uint64
	n        uint64
	min, max uint64
	sum      uint64 // of every value, ns (the mean)
}

func histBucket(v uint64) int {
	if v < histExact {
		return int(v)
	}
	shift := bits.Len64(v) - histMantissaBits
	return shift*histSub + int(v>>shift)
}

func (h *histogram) record(v uint64) {
	if v >= histLimit {
		h.overflow++
	} else {
		h.counts[histBucket(v)]++
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.sum += v
	h.n++
}

// merge adds another client's counts: the histogram of the whole trial.
func (h *histogram) merge(o *histogram) {
	for b, c := range o.counts {
		h.counts[b] += c
	}
	if o.n > 0 && (h.n == 0 || o.min < h.min) {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.overflow += o.overflow
	h.sum += o.sum
	h.n += o.n
}

// wire is the protocol's form: sparse [bucket, count] pairs in ascending bucket order.
func (h *histogram) wire() object {
	buckets := make([][2]uint64, 0, 64)
	for b, c := range h.counts {
		if c != 0 {
			buckets = append(buckets, [2]uint64{uint64(b), c})
		}
	}
	return object{{"buckets", buckets}, {"overflow", h.overflow}, {"min", h.min}, {"max", h.max}, {"sum", h.sum}}
}

// schedule gives the intended start offsets of an open loop (src/accessbench/protocol/
// schedule.py), the same in every language: a double accumulator, first offset 0, each next
// one a gap later, truncated toward zero to integer ns. Uniform gaps are 1e9 / rate; Poisson
// gaps −ln(1 − u)·1e9 / rate with u from splitmix64's top 53 bits (pgbench -R's draw).
type schedule struct {
	meanGap float64
	poisson bool
	rng     splitMix64
	at      float64
}

func newSchedule(rate float64, poisson bool, seed uint64) *schedule {
	return &schedule{meanGap: 1e9 / rate, poisson: poisson, rng: splitMix64{state: seed}}
}

func (s *schedule) next() int64 {
	offset := s.at
	gap := s.meanGap
	if s.poisson {
		gap = -math.Log(1.0-s.rng.unit()) * s.meanGap
	}
	s.at += gap
	return int64(offset)
}

// ---- time ---------------------------------------------------------------------------------

const usPerDay = 86400000000

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	var era int64
	if y >= 0 {
		era = y / 400
	} else {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mm := int64(m)
	if m > 2 {
		mm -= 3
	} else {
		mm += 9
	}
	doy := (153*mm+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	var era int64
	if z >= 0 {
		era = z / 146097
	} else {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return
}

// appendDate appends 'YYYY-MM-DD' of days since 1970-01-01 (date.isoformat()).
func appendDate(b []byte, days int64) []byte {
	y, mo, d := civilFromDays(days)
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, int64(mo), 2)
	b = append(b, '-')
	return appendPadded(b, int64(d), 2)
}

// formatDate: 'YYYY-MM-DD'.
func formatDate(days int64) string { return string(appendDate(make([]byte, 0, 10), days)) }

// formatTimestamp: 'YYYY-MM-DD HH:MM:SS[.ffffff]' (datetime.isoformat(sep=" ")), or with
// generateForm 'YYYY-MM-DDTHH:MM:SS.ffffff' (always six fraction digits).
func formatTimestamp(us int64, generateForm bool) string {
	days := floorDiv(us, usPerDay)
	rem := us - days*usPerDay
	secs, frac := rem/1000000, rem%1000000
	b := appendDate(make([]byte, 0, 32), days)
	if generateForm {
		b = append(b, 'T')
	} else {
		b = append(b, ' ')
	}
	b = appendPadded(b, secs/3600, 2)
	b = append(b, ':')
	b = appendPadded(b, secs/60%60, 2)
	b = append(b, ':')
	b = appendPadded(b, secs%60, 2)
	if generateForm || frac != 0 {
		b = append(b, '.')
		b = appendPadded(b, frac, 6)
	}
	return string(b)
}

func appendPadded(b []byte, v int64, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	for k := len(s); k < width; k++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

func daysInMonth(y, m int) int {
	dm := [12]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if m == 2 && ((y%4 == 0 && y%100 != 0) || y%400 == 0) {
		return 29
	}
	return dm[m-1]
}

// parseISODate takes what date.fromisoformat takes in its usual forms, YYYY-MM-DD or
// YYYYMMDD, as days since 1970-01-01.
func parseISODate(s string) (int64, error) {
	us, err := parseISOTimestamp(s)
	if err != nil || (len(s) != 10 && len(s) != 8) {
		return 0, fmt.Errorf("not an ISO date: %q", s)
	}
	return us / usPerDay, nil
}

// parseISOTimestamp takes what datetime.fromisoformat (3.11) takes for naive values:
// YYYY-MM-DD or YYYYMMDD, then optionally one separator character and HH[:MM[:SS[.f…]]]
// (or the compact HHMMSS forms). A time zone is an error.
func parseISOTimestamp(s string) (int64, error) {
	bad := fmt.Errorf("not an ISO timestamp without time zone: %q", s)
	p := 0
	digits := func(n int) (int, bool) {
		if p+n > len(s) {
			return 0, false
		}
		v := 0
		for k := 0; k < n; k++ {
			c := s[p+k]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		p += n
		return v, true
	}
	var y, mo, d, h, mi, se, frac int
	var ok bool
	if y, ok = digits(4); !ok {
		return 0, bad
	}
	if p < len(s) && s[p] == '-' {
		p++
		if mo, ok = digits(2); !ok {
			return 0, bad
		}
		if p >= len(s) || s[p] != '-' {
			return 0, bad
		}
		p++
		if d, ok = digits(2); !ok {
			return 0, bad
		}
	} else {
		if mo, ok = digits(2); !ok {
			return 0, bad
		}
		if d, ok = digits(2); !ok {
			return 0, bad
		}
	}
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) {
		return 0, bad
	}
	if p < len(s) {
		p++ // any one separator character
		if h, ok = digits(2); !ok {
			return 0, bad
		}
		colon := p < len(s) && s[p] == ':'
		if p < len(s) {
			if colon {
				p++
			}
			if mi, ok = digits(2); !ok {
				return 0, bad
			}
			if p < len(s) && (!colon || s[p] == ':') {
				if colon {
					p++
				}
				if se, ok = digits(2); !ok {
					return 0, bad
				}
				if p < len(s) && (s[p] == '.' || s[p] == ',') {
					p++
					nd := 0
					for p < len(s) && s[p] >= '0' && s[p] <= '9' {
						if nd < 6 {
							frac = frac*10 + int(s[p]-'0')
						}
						nd++
						p++
					}
					if nd == 0 {
						return 0, bad
					}
					for k := nd; k < 6; k++ {
						frac *= 10
					}
				}
			}
		}
		if p < len(s) {
			return 0, bad
		}
		if h > 23 || mi > 59 || se > 59 {
			return 0, bad
		}
	}
	return (daysFromCivil(int64(y), mo, d)*86400+int64(h)*3600+int64(mi)*60+int64(se))*1000000 + int64(frac), nil
}

// ---- parameters and generators --------------------------------------------------------------

// ptype is a parameter's type (PROTOCOL.md, Types): every spec names it, and each driver binds
// a value as its type, never by what the JSON looked like.
type ptype uint8

const (
	pNull ptype = iota
	pInt
	pFloat
	pText
	pBool
	pTimestamp // i = µs since 1970-01-01
	pDecimal   // s = plain decimal text, its scale kept
	pDate      // i = days since 1970-01-01
	pBytes     // x
)

// ptypes: the types by their names in a spec's "type".
var ptypes = map[string]ptype{"int": pInt, "bool": pBool, "float": pFloat, "decimal": pDecimal,
	"text": pText, "date": pDate, "timestamp": pTimestamp, "bytes": pBytes}

// param is one generated value, before a driver adapts it to its own types (the bindings:
// pgxArg, sqlArg, the SQLite driver's adapt) or literal renders it.
type param struct {
	i int64
	f float64
	s string
	x []byte // never nil for a pBytes value (nil is NULL to the drivers)
	t ptype
	b bool
}

// timestamp is a pTimestamp value as a time.Time in UTC (the wall clock; no zone is meant).
func (p param) timestamp() time.Time { return time.UnixMicro(p.i).UTC() }

// date is a pDate value as a time.Time at midnight UTC.
func (p param) date() time.Time { return time.Unix(p.i*86400, 0).UTC() }

// generated is the value as the generate op answers it: by its type, floats as the 16 hex
// digits of their IEEE-754 bits, decimals as their text, dates YYYY-MM-DD, bytes as hex.
func (p param) generated() any {
	switch p.t {
	case pInt:
		return p.i
	case pFloat:
		return fmt.Sprintf("%016x", math.Float64bits(p.f))
	case pText, pDecimal:
		return p.s
	case pBool:
		return p.b
	case pTimestamp:
		return formatTimestamp(p.i, true)
	case pDate:
		return formatDate(p.i)
	case pBytes:
		return hex.EncodeToString(p.x)
	}
	return nil
}

const (
	gSeq = iota
	gUniform
	gChoice
	gText
	gTimestamp
	gConst
	gFloat
	gDecimal
	gDate
	gBytes
)

type generator struct {
	kind    int
	rng     splitMix64
	null    float64
	start   int64 // seq; timestamp: µs; date: days
	step    int64 // seq; timestamp: µs; date: days
	div     int64
	mod     int64
	lo      int64 // uniform, decimal (units of 10^-scale)
	span    uint64
	jitter  uint64 // timestamp: µs; date: days
	choices []param
	pattern string
	flo     float64 // float: lo, hi, and with digits 10^digits (0: no rounding)
	fhi     float64
	pow     float64
	scale   int // decimal
	length  int // bytes
}

// jsonInt reads an integer field (a json.Number); absent or null gives dflt.
func jsonInt(spec map[string]any, key string, dflt int64) (int64, bool, error) {
	v, ok := spec[key]
	if !ok || v == nil {
		return dflt, false, nil
	}
	n, err := toInt64(v)
	if err != nil {
		return 0, true, fmt.Errorf("%s must be an integer", key)
	}
	return n, true, nil
}

// toInt64 accepts a JSON integer, including u64 values above 2^63-1 (kept as the same 64 bits).
func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return int64(u), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 9.3e18 {
			return int64(f), nil
		}
		return 0, fmt.Errorf("not an integer: %s", s)
	case string: // as the C worker, an integer written as a string is accepted
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n, nil
		}
	case float64:
		if x == math.Trunc(x) {
			return int64(x), nil
		}
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	}
	return 0, fmt.Errorf("not an integer: %v", v)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case float64:
		return x, true
	}
	return 0, false
}

// specType is the type of a spec's values: its "type"; without one (a spec written before
// types), its kind's own, or for choice and const their first value's JSON type.
func specType(spec map[string]any, kind string, values []any) (ptype, error) {
	if name, _ := spec["type"].(string); name != "" {
		t, ok := ptypes[name]
		if !ok {
			return 0, fmt.Errorf("unknown type '%s'", name)
		}
		return t, nil
	}
	own := map[string]ptype{"seq": pInt, "uniform": pInt, "text": pText, "timestamp": pTimestamp,
		"float": pFloat, "decimal": pDecimal, "date": pDate, "bytes": pBytes}
	if t, ok := own[kind]; ok {
		return t, nil
	}
	switch x := values[0].(type) {
	case bool:
		return pBool, nil
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return pFloat, nil
		}
		return pInt, nil
	}
	return pText, nil
}

// typedParam is a choice's or const's JSON value as a value of type t: booleans, integers,
// numbers (float: an integer is the same float), strings, or strings in the type's text form
// (decimal digits, YYYY-MM-DD, ISO 8601 without zone, hex).
func typedParam(v any, t ptype) (param, error) {
	if v == nil {
		return param{t: pNull}, nil
	}
	text, isText := v.(string)
	switch t {
	case pBool:
		if b, ok := v.(bool); ok {
			return param{t: pBool, b: b}, nil
		}
		return param{}, fmt.Errorf("a bool value must be true or false")
	case pInt:
		n, err := toInt64(v)
		if _, isNum := v.(json.Number); err != nil || !isNum {
			return param{}, fmt.Errorf("an int value must be an integer")
		}
		return param{t: pInt, i: n}, nil
	case pFloat:
		if f, ok := toFloat(v); ok {
			return param{t: pFloat, f: f}, nil
		}
		return param{}, fmt.Errorf("a float value must be a number")
	case pText:
		if isText {
			return param{t: pText, s: text}, nil
		}
		return param{}, fmt.Errorf("a text value must be a string")
	case pDecimal:
		if n, ok := v.(json.Number); ok {
			text, isText = string(n), true
		}
		if plain, ok := decimalPlain(text); isText && ok && strings.Trim(plain, "-.0123456789") == "" {
			return param{t: pDecimal, s: plain}, nil
		}
		return param{}, fmt.Errorf("a decimal value must be plain digits like -12.50")
	case pDate:
		if days, err := parseISODate(text); isText && err == nil {
			return param{t: pDate, i: days}, nil
		}
		return param{}, fmt.Errorf("a date value must be YYYY-MM-DD")
	case pTimestamp:
		if us, err := parseISOTimestamp(text); isText && err == nil {
			return param{t: pTimestamp, i: us}, nil
		}
		return param{}, fmt.Errorf("a timestamp value must be an ISO timestamp without time zone")
	case pBytes:
		if b, err := hex.DecodeString(text); isText && err == nil {
			return param{t: pBytes, x: b}, nil
		}
		return param{}, fmt.Errorf("a bytes value must be hex digits")
	}
	return param{}, fmt.Errorf("unknown type")
}

func newGenerator(specAny any) (*generator, error) {
	spec, ok := specAny.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a generator spec must be an object")
	}
	kind, _ := spec["kind"].(string)
	if kind == "" {
		return nil, fmt.Errorf("generator spec without kind")
	}
	g := &generator{}
	seed, _, err := jsonInt(spec, "seed", 0)
	if err != nil {
		return nil, fmt.Errorf("generator seed must be an integer")
	}
	g.rng.state = uint64(seed)
	if v, ok := spec["null"]; ok && v != nil {
		f, ok := toFloat(v)
		if !ok {
			return nil, fmt.Errorf("null must be a number")
		}
		g.null = f
	}
	switch kind {
	case "seq":
		g.kind = gSeq
		var e1, e2, e3, e4 error
		g.start, _, e1 = jsonInt(spec, "start", 1)
		g.step, _, e2 = jsonInt(spec, "step", 1)
		g.div, _, e3 = jsonInt(spec, "div", 1)
		g.mod, _, e4 = jsonInt(spec, "mod", 0)
		if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
			return nil, fmt.Errorf("seq: start, step, div and mod must be integers")
		}
		if g.div == 0 {
			return nil, fmt.Errorf("seq: div must not be 0")
		}
	case "uniform", "decimal":
		g.kind = gUniform
		lo, hasLo, e1 := jsonInt(spec, "lo", 0)
		hi, hasHi, e2 := jsonInt(spec, "hi", 0)
		if e1 != nil || e2 != nil || !hasLo || !hasHi {
			return nil, fmt.Errorf("%s: lo and hi must be integers", kind)
		}
		g.lo = lo
		g.span = uint64(hi) - uint64(lo) + 1
		if kind == "decimal" { // lo and hi count units of 10^-scale
			g.kind = gDecimal
			scale, _, err := jsonInt(spec, "scale", 0)
			if err != nil || scale < 0 || scale > 1000 {
				return nil, fmt.Errorf("decimal: scale must be an integer >= 0")
			}
			g.scale = int(scale)
		}
	case "choice", "const":
		var vals []any
		if kind == "choice" {
			g.kind = gChoice
			list, ok := spec["values"].([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("choice: values must be a non-empty list")
			}
			vals = list
		} else {
			g.kind = gConst
			v, ok := spec["value"]
			if !ok {
				return nil, fmt.Errorf("const: value is missing")
			}
			vals = []any{v}
		}
		t, err := specType(spec, kind, vals)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kind, err)
		}
		for _, v := range vals {
			p, err := typedParam(v, t)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", kind, err)
			}
			g.choices = append(g.choices, p)
		}
	case "text":
		g.kind = gText
		pat, ok := spec["pattern"].(string)
		if !ok {
			return nil, fmt.Errorf("text: pattern must be a string")
		}
		g.pattern = pat
	case "timestamp", "date":
		// start + i·step, plus next() mod (jitter + 1) with a jitter: µs for a timestamp,
		// days for a date
		start, _ := spec["start"].(string)
		unit, step := "us", int64(1000000)
		var err error
		if kind == "timestamp" {
			g.kind = gTimestamp
			if g.start, err = parseISOTimestamp(start); err != nil {
				return nil, fmt.Errorf("timestamp: start must be an ISO timestamp without time zone, like 2001-01-01T00:00:00")
			}
		} else {
			g.kind, unit, step = gDate, "days", 1
			if g.start, err = parseISODate(start); err != nil {
				return nil, fmt.Errorf("date: start must be a date YYYY-MM-DD")
			}
		}
		var e1, e2 error
		var jitter int64
		g.step, _, e1 = jsonInt(spec, "step_"+unit, step)
		jitter, _, e2 = jsonInt(spec, "jitter_"+unit, 0)
		if e1 != nil || e2 != nil || jitter < 0 {
			return nil, fmt.Errorf("%s: step_%s and jitter_%s must be integers (jitter_%s >= 0)", kind, unit, unit, unit)
		}
		g.jitter = uint64(jitter)
	case "float":
		g.kind = gFloat
		lo, ok1 := toFloat(spec["lo"])
		hi, ok2 := toFloat(spec["hi"])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("float: lo and hi must be numbers")
		}
		g.flo, g.fhi = lo, hi
		digits, hasDigits, err := jsonInt(spec, "digits", 0)
		if err != nil || digits < 0 || digits > 15 {
			return nil, fmt.Errorf("float: digits must be an integer from 0 to 15")
		}
		if hasDigits {
			g.pow = 1.0 // 10^digits by exact multiplications, as every worker makes it
			for k := int64(0); k < digits; k++ {
				g.pow *= 10.0
			}
		}
	case "bytes":
		g.kind = gBytes
		length, _, err := jsonInt(spec, "length", -1)
		if err != nil || length < 0 {
			return nil, fmt.Errorf("bytes: length must be an integer >= 0")
		}
		g.length = int(length)
	default:
		return nil, fmt.Errorf("unknown generator kind '%s'", kind)
	}
	return g, nil
}

// next makes value i (called with i = 0, 1, 2, … in order).
func (g *generator) next(i int64) param {
	if g.null > 0 && g.rng.unit() < g.null {
		return param{t: pNull}
	}
	switch g.kind {
	case gSeq:
		v := floorDiv(g.start+i*g.step, g.div)
		if g.mod != 0 {
			v = floorMod(v, g.mod)
		}
		return param{t: pInt, i: v}
	case gUniform:
		return param{t: pInt, i: g.uniform()}
	case gDecimal:
		return param{t: pDecimal, s: decimalText(g.uniform(), g.scale)}
	case gChoice:
		return g.choices[g.rng.next()%uint64(len(g.choices))]
	case gConst:
		return g.choices[0]
	case gText:
		b := []byte(g.pattern)
		for k, c := range b {
			if c == '#' {
				b[k] = byte('0' + g.rng.next()%10)
			} else if c == '?' {
				b[k] = byte('a' + g.rng.next()%26)
			}
		}
		return param{t: pText, s: string(b)}
	case gTimestamp:
		return param{t: pTimestamp, i: g.start + i*g.step + g.jittered()}
	case gDate:
		return param{t: pDate, i: g.start + i*g.step + g.jittered()}
	case gFloat:
		// Each product is converted explicitly: Go may otherwise fuse a*b+c into one FMA
		// (arm64), which rounds once instead of twice and would give other values.
		v := g.flo + float64(g.rng.unit()*(g.fhi-g.flo))
		if g.pow != 0 {
			v = math.Floor(float64(v*g.pow)+0.5) / g.pow
		}
		return param{t: pFloat, f: v}
	case gBytes:
		b := make([]byte, g.length)
		for k := range b {
			b[k] = byte(g.rng.next() % 256)
		}
		return param{t: pBytes, x: b}
	}
	return param{t: pNull}
}

// uniform: lo + next() mod (hi − lo + 1), in 64-bit wrap-around arithmetic.
func (g *generator) uniform() int64 {
	r := g.rng.next()
	if g.span != 0 {
		r %= g.span
	}
	return int64(uint64(g.lo) + r)
}

// jittered: next() mod (jitter + 1) when there is a jitter (one draw), else 0 (none).
func (g *generator) jittered() int64 {
	if g.jitter == 0 {
		return 0
	}
	return int64(g.rng.next() % (g.jitter + 1))
}

// decimalText writes a count of 10^-scale as plain decimal text: (-1234, 2) → "-12.34",
// (5, 3) → "0.005".
func decimalText(units int64, scale int) string {
	sign := ""
	mag := uint64(units)
	if units < 0 {
		sign, mag = "-", -mag
	}
	digits := strconv.FormatUint(mag, 10)
	if scale == 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale+1-len(digits)) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

// ---- SQL text -------------------------------------------------------------------------------

// sqlSegments splits sql at its '?' markers (n markers → n+1 segments), skipping quoted
// strings, quoted identifiers and comments exactly as sqltext.py does.
func sqlSegments(sql string) []string {
	var segs []string
	var cur strings.Builder
	n := len(sql)
	for i := 0; i < n; {
		ch := sql[i]
		switch {
		case ch == '\'' || ch == '"':
			end := i + 1
			for end < n {
				if sql[end] == ch {
					if end+1 < n && sql[end+1] == ch {
						end += 2
						continue
					}
					break
				}
				end++
			}
			if end+1 > n {
				cur.WriteString(sql[i:])
				i = n
			} else {
				cur.WriteString(sql[i : end+1])
				i = end + 1
			}
		case strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				end = n
			} else {
				end += i
			}
			cur.WriteString(sql[i:end])
			i = end
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				end = n
			} else {
				end += i + 2 + 2
			}
			cur.WriteString(sql[i:end])
			i = end
		case ch == '?':
			segs = append(segs, cur.String())
			cur.Reset()
			i++
		default:
			cur.WriteByte(ch)
			i++
		}
	}
	return append(segs, cur.String())
}

// convertMarkers rewrites the markers as $1, $2, … (dollar) or leaves them as '?'.
func convertMarkers(sql string, dollar bool) string {
	segs := sqlSegments(sql)
	if !dollar {
		return sql
	}
	var b strings.Builder
	b.WriteString(segs[0])
	for k, s := range segs[1:] {
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(k + 1))
		b.WriteString(s)
	}
	return b.String()
}

// literal renders a value as an SQL literal (the literal mode, PROTOCOL.md "Literal rules")
// for the dialect: on MariaDB, where backslash is an escape character in strings, each
// backslash is doubled too; SQLite, with no boolean type, writes booleans as 1/0.
func literal(p param, dialect string) string {
	switch p.t {
	case pNull:
		return "NULL"
	case pBool:
		switch {
		case dialect == "sqlite" && p.b:
			return "1"
		case dialect == "sqlite":
			return "0"
		case p.b:
			return "TRUE"
		}
		return "FALSE"
	case pInt:
		return strconv.FormatInt(p.i, 10)
	case pDecimal:
		return p.s
	case pFloat:
		// Shortest round-trip digits, always in exponent form: 0.1e0 is an approximate-value
		// (double) literal on MariaDB, where 0.1 would be DECIMAL; PostgreSQL reads any such
		// text as numeric, so it is cast.
		text := floatRepr(p.f)
		if !strings.ContainsAny(text, "en") { // not already 1e+300 (nor inf, nan)
			text += "e0"
		}
		if dialect == "postgresql" {
			return text + "::float8"
		}
		return text
	case pTimestamp:
		return "'" + formatTimestamp(p.i, false) + "'"
	case pDate:
		if dialect == "postgresql" {
			return "DATE '" + formatDate(p.i) + "'"
		}
		return "'" + formatDate(p.i) + "'"
	case pBytes:
		if dialect == "postgresql" {
			return `'\x` + hex.EncodeToString(p.x) + "'::bytea"
		}
		return "X'" + hex.EncodeToString(p.x) + "'"
	case pText:
		text := p.s
		if dialect == "mariadb" {
			text = strings.ReplaceAll(text, `\`, `\\`)
		}
		return "'" + strings.ReplaceAll(text, "'", "''") + "'"
	}
	return "NULL"
}

func inlineSQL(segs []string, row []param, dialect string) string {
	var b strings.Builder
	b.WriteString(segs[0])
	for k, s := range segs[1:] {
		b.WriteString(literal(row[k], dialect))
		b.WriteString(s)
	}
	return b.String()
}

// literalList is a row's values as literals separated by ", " (a record-level key).
func literalList(row []param, dialect string) string {
	parts := make([]string, len(row))
	for k, p := range row {
		parts[k] = literal(p, dialect)
	}
	return strings.Join(parts, ", ")
}

// floatRepr is Python's repr(float): shortest round-trip digits, exponent form when the
// decimal exponent is < -4 or >= 16.
func floatRepr(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	case x == 0:
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(x, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, expS, _ := strings.Cut(e, "e")
	exp10, _ := strconv.Atoi(expS)
	dig := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if exp10 >= -4 && exp10 < 16 {
		if exp10 >= 0 {
			for k := 0; k <= exp10; k++ {
				if k < len(dig) {
					b.WriteByte(dig[k])
				} else {
					b.WriteByte('0')
				}
			}
			b.WriteByte('.')
			if len(dig) > exp10+1 {
				b.WriteString(dig[exp10+1:])
			} else {
				b.WriteByte('0')
			}
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -exp10-1))
			b.WriteString(dig)
		}
	} else {
		b.WriteByte(dig[0])
		if len(dig) > 1 {
			b.WriteByte('.')
			b.WriteString(dig[1:])
		}
		sign := byte('+')
		if exp10 < 0 {
			sign = '-'
			exp10 = -exp10
		}
		b.WriteByte('e')
		b.WriteByte(sign)
		if exp10 < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp10))
	}
	return b.String()
}

// decimalPlain is Python's format(Decimal(text), "f"): plain digits, no exponent, the scale
// kept. ok is false when text is not a number.
func decimalPlain(text string) (string, bool) {
	s := strings.TrimSpace(text)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	sign := ""
	if neg {
		sign = "-"
	}
	switch strings.ToLower(s) {
	case "nan":
		return sign + "NaN", true
	case "snan":
		return sign + "sNaN", true
	case "inf", "infinity":
		return sign + "Infinity", true
	}
	mant, expS, hasExp := strings.Cut(strings.ToLower(s), "e")
	var exp int64
	if hasExp {
		e, err := strconv.ParseInt(expS, 10, 64)
		if err != nil {
			return "", false
		}
		exp = e
	}
	intPart, fracPart, _ := strings.Cut(mant, ".")
	digits := intPart + fracPart
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	exp -= int64(len(fracPart))
	coef := new(big.Int)
	coef.SetString(digits, 10)
	c := coef.String()
	if c == "0" && exp > 0 {
		exp = 0
	}
	var b strings.Builder
	b.WriteString(sign)
	if exp >= 0 {
		b.WriteString(c)
		b.WriteString(strings.Repeat("0", int(exp)))
	} else {
		k := int64(len(c)) + exp
		if k > 0 {
			b.WriteString(c[:k])
			b.WriteByte('.')
			b.WriteString(c[k:])
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", int(-k)))
			b.WriteString(c)
		}
	}
	return b.String(), true
}
