// abworker-go: the Go worker of accessbench (protocol/PROTOCOL.md, version 1).
//
// parse message → dispatch on op → for a step, parseStep (step.go) then runStep → answer. The
// method's driver comes from the registry (registry.go). One JSON object per line each way;
// stdout carries nothing else (the process's fd 1 is pointed at stderr, the log, and the
// protocol writes to a private duplicate of the original stdout).
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const protocolVersion = 1

var keptStdout *os.File

// ---- ordered JSON objects (so that "ok" comes first in the log) --------------------------------

type kv struct {
	k string
	v any
}

type object []kv

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ---- the session ---------------------------------------------------------------------------

type session struct {
	name    string
	drv     dbDriver // nil when why is set
	why     string   // non-empty: every message is answered unsupported
	ep      endpoint // the open connection's endpoint, nil when closed
	dialect string

	mk       func() dbDriver // more drivers of the same method, for the clients of loaded steps
	settings [][2]string     // the method name's settings, to configure them alike
}

// fresh is another driver of this session's method with its settings: a client of a
// loaded step with its own connection and step state.
func (s *session) fresh() dbDriver {
	d := s.mk()
	for _, kv := range s.settings {
		d.configure(kv[0], kv[1]) // accepted already by the session's own driver
	}
	return d
}

func (s *session) handle(msg map[string]any) (object, *failure) {
	op, _ := msg["op"].(string)
	if s.why != "" {
		return nil, unsupported("%s", s.why)
	}
	switch op {
	case "hello":
		return s.hello(), nil
	case "open":
		return s.open(msg)
	case "close", "bye":
		s.closeConn()
		return object{}, nil
	case "step":
		return s.step(msg)
	case "generate":
		return s.generate(msg)
	case "checksum":
		return s.checksum(msg)
	case "histogram":
		return s.histogram(msg)
	case "schedule":
		return s.schedule(msg)
	case "":
		return nil, fail("protocol", "a message needs an op")
	}
	return nil, fail("protocol", "unknown op '%s'", op)
}

func (s *session) hello() object {
	d := s.drv
	settings := d.settings()
	settings["runtime"] = fmt.Sprintf("%s, GOMAXPROCS=%d, GOGC=%s (garbage collector on, default pacing); runtime.GC() is called once before each timed loop so that garbage made while generating parameters is not collected inside it", runtime.Version(), runtime.GOMAXPROCS(0), gogc())
	settings["cpu"] = "getrusage(RUSAGE_SELF) around the loop: the whole process, including the garbage collector's and the runtime's other threads"
	settings["clock"] = "time.Now()/time.Since: the monotonic clock, read once before the loop and once after each operation"
	settings["context"] = "context.Background() (no deadline, so no per-query watcher goroutine)"
	settings["clients"] = "steps under load: one goroutine per client, each with a driver of its own (connection, prepared statement, transaction); persistent: the worker's connection is the first client's, the others connect before the barrier (untimed) and close after the trial"
	settings["barrier"] = "each client waits for start_at_unix_ns on the wall clock (time.Now), then starts its own monotonic clock; elapsed_ns runs from the earliest client's start to the last one's end"
	settings["open loop"] = "intended starts from the splitmix64 schedule at rate / clients per client (uniform: client k's offset by phase_ns + k / rate, so the worker's arrivals are evenly spaced); by duration a client runs while its previous operation ended before the stop and starts no arrival at or after it: when its arrivals are over it waits (untimed, in nanosleep(2)) for the end; one still behind schedule at the end counts the arrivals before it that it never started as skipped (n + skipped = the intended starts inside the duration); a client ahead of time sleeps in nanosleep(2) until 150 µs before, then spins calling runtime.Gosched (Go's time.Sleep wakes up to 1 ms late: the runtime's epoll timeout is in whole ms)"
	modes := []string{"literal", "extended", "prepared"}
	if ml, ok := d.(modeLister); ok { // a layer that binds every value has no literal mode
		modes = ml.modes()
	}
	if r, ok := d.(recorder); ok {
		modes = append(modes, "record")
		settings["record"] = r.recordAccess()
	}
	kinds := []string{"connect", "scan", "exec", "batch"}
	if l, ok := d.(loader); ok && l.loads() {
		kinds = append(kinds, "load")
	}
	settings["histogram"] = "a fixed array of (40 − 8 + 1) · 128 + 256 counts per client, bucket by integer operations, nothing allocated per operation; merged after the trial"
	caps := object{
		{"dbms", d.dbms()},
		{"kinds", kinds},
		{"modes", modes},
		{"batch", d.batchStyle()},
		{"concurrency", "goroutines (one per client)"},
		// steps under load: clients, duration, open loop at a rate, histograms, and the
		// connection policies built for every method of this worker
		{"load", object{{"policies", []string{"persistent", "per-request", "pooled"}}}},
	}
	if sh, ok := d.(shaper); ok { // a layer: the shape features it maps, and why not the others
		caps = append(caps, kv{"shapes", sh.shapes()})
	}
	return object{
		{"protocol", protocolVersion},
		{"name", s.name},
		{"language", "go"},
		{"runtime", runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH},
		{"driver", d.driverName()},
		{"driver_version", d.driverVersion()},
		{"methods", methodList()},
		{"settings", settings},
		{"capabilities", caps},
	}
}

func gogc() string {
	if v := os.Getenv("GOGC"); v != "" {
		return v
	}
	return "100"
}

func (s *session) open(msg map[string]any) (object, *failure) {
	raw, ok := msg["endpoint"].(map[string]any)
	if !ok {
		return nil, fail("protocol", "open needs an endpoint object")
	}
	ep := endpoint(raw)
	dbms := ep.str("dbms")
	known := false
	for _, x := range s.drv.dbms() {
		known = known || x == dbms
	}
	if !known {
		return nil, unsupported("%s does not reach dbms '%s'", s.name, dbms)
	}
	s.closeConn() // a second open replaces the first connection
	start := time.Now()
	err := s.drv.open(ep)
	elapsed := time.Since(start)
	if err != nil {
		return nil, asFailure(s.drv, err)
	}
	pid, version, err := s.drv.describe()
	if err != nil {
		s.drv.close()
		return nil, asFailure(s.drv, err)
	}
	s.ep = ep
	s.dialect = dbms
	a := object{{"connect_ns", elapsed.Nanoseconds()}}
	if pid != 0 {
		a = append(a, kv{"server_pid", pid})
	}
	if version != "" {
		a = append(a, kv{"server_version", version})
	}
	return a, nil
}

func (s *session) closeConn() {
	if s.ep != nil {
		s.drv.close()
		s.ep = nil
	}
}

func (s *session) generate(msg map[string]any) (object, *failure) {
	count, _, err := jsonInt(msg, "count", 0)
	if err != nil {
		return nil, fail("protocol", "%v", err)
	}
	g, err := newGenerator(msg["spec"])
	if err != nil {
		return nil, fail("protocol", "%v", err)
	}
	values := make([]any, 0, count)
	for i := int64(0); i < count; i++ {
		values = append(values, g.next(i).generated())
	}
	return object{{"values", values}}, nil
}

// typedValue reads one typed conformance value (the inverse of value.typed) as the drivers'
// native value would be read.
func typedValue(tv any) (value, *failure) {
	t, ok := tv.(map[string]any)
	if !ok {
		return value{}, fail("protocol", "a typed value is an object")
	}
	typ, _ := t["type"].(string)
	val := t["value"]
	switch typ {
	case "null":
		return nullValue, nil
	case "bool":
		b, _ := val.(bool)
		return boolValue(b), nil
	case "int", "timestamp", "date", "time":
		n, err := toInt64(val)
		if err != nil {
			return value{}, fail("protocol", "a %s value must be an integer", typ)
		}
		switch typ {
		case "int":
			return intValue(n), nil
		case "timestamp":
			return timestampValue(n), nil
		case "date":
			return dateValue(int32(n)), nil
		}
		return timeValue(n), nil
	case "float":
		digits, _ := val.(string)
		bits, err := strconv.ParseUint(digits, 16, 64)
		if len(digits) != 16 || err != nil {
			return value{}, fail("protocol", "a float value is 16 hex digits")
		}
		return value{kind: 'F', n: int64(bits)}, nil // the bits as given, NaN payloads too
	case "decimal":
		text, _ := val.(string)
		plain, ok := decimalPlain(text)
		if !ok {
			return value{}, fail("protocol", "not a decimal: %s", text)
		}
		return decimalValue(plain), nil
	case "text":
		text, ok := val.(string)
		if !ok {
			return value{}, fail("protocol", "a text value is a string")
		}
		return textValue(text), nil
	case "bytes":
		digits, _ := val.(string)
		b, err := hex.DecodeString(digits)
		if err != nil {
			return value{}, fail("protocol", "a bytes value is an even number of hex digits")
		}
		return bytesValue(b), nil
	}
	return value{}, fail("protocol", "unknown value type '%s'", typ)
}

// histogram records the values into a histogram of the worker's own (conformance).
func (s *session) histogram(msg map[string]any) (object, *failure) {
	values, ok := msg["values"].([]any)
	if !ok {
		return nil, fail("protocol", "histogram needs values")
	}
	h := new(histogram)
	for _, v := range values {
		n, err := toInt64(v)
		if err != nil || n < 0 {
			return nil, fail("protocol", "a histogram value is an integer >= 0")
		}
		h.record(uint64(n))
	}
	return object{{"histogram", h.wire()}}, nil
}

// schedule answers the first count intended start offsets of an arrival stream (conformance).
func (s *session) schedule(msg map[string]any) (object, *failure) {
	rate, ok := toFloat(msg["rate"])
	if !ok || rate <= 0 {
		return nil, fail("protocol", "schedule needs a rate > 0")
	}
	poisson := true
	switch a, _ := msg["arrival"].(string); a {
	case "", "poisson":
	case "uniform":
		poisson = false
	default:
		return nil, fail("protocol", "unknown arrival '%s' (poisson, uniform)", a)
	}
	hex, _ := msg["seed"].(string)
	seed, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return nil, fail("protocol", "the seed is 16 hex digits")
	}
	count, _, err := jsonInt(msg, "count", 0)
	if err != nil || count < 0 {
		return nil, fail("protocol", "count must be an integer >= 0")
	}
	sched := newSchedule(rate, poisson, seed)
	offsets := make([]int64, count)
	for i := range offsets {
		offsets[i] = sched.next()
	}
	return object{{"offsets", offsets}}, nil
}

func (s *session) checksum(msg map[string]any) (object, *failure) {
	rows, ok := msg["rows"].([]any)
	if !ok {
		return nil, fail("protocol", "checksum needs rows")
	}
	var sk sink
	var vals []value
	for _, r := range rows {
		row, ok := r.([]any)
		if !ok {
			return nil, fail("protocol", "a row is a list")
		}
		vals = vals[:0]
		for _, tv := range row {
			v, f := typedValue(tv)
			if f != nil {
				return nil, f
			}
			vals = append(vals, v)
		}
		sk.add(vals)
	}
	return object{{"checksum", sk.hex()}, {"rows", sk.rows}}, nil
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case json.Number:
		f, _ := x.Float64()
		return f != 0
	case string:
		return x != ""
	case []any:
		return len(x) != 0
	case map[string]any:
		return len(x) != 0
	}
	return true
}

// step answers a step message: parseStep (every protocol error), then runStep.
func (s *session) step(msg map[string]any) (object, *failure) {
	st, f := s.parseStep(msg)
	if f != nil {
		return nil, f
	}
	return s.runStep(st)
}

// runStep runs a parsed step on the session's driver: begin (untimed), one pass — the
// verification pass, the loaded pass (load.go) or the plain timed loop — then end (untimed).
func (s *session) runStep(st *step) (object, *failure) {
	d, ld := s.drv, st.load
	var answer object
	var f *failure
	if err := d.begin(st); err != nil {
		f = asFailure(d, err)
	} else if st.verify && ld.policy != pPersistent {
		answer, f = s.verifyWith(st, ld) // one client, its connections as the policy says
	} else if st.verify {
		answer, f = s.verifyPass(st, func(i int, sk *sink) (int64, error) { return s.runOp(st, i, sk) })
	} else if ld.loaded {
		answer, f = s.loadedPass(st, ld)
	} else {
		answer, f = s.timedPass(st)
	}
	if f != nil {
		fmt.Fprintf(os.Stderr, "abworker-go: step failed (%s): %s\n", f.kind, f.message)
		d.recover(st) // leave the connection usable; the first error is the one answered
	} else if a, ok := d.(apiTeller); ok && a.api() != "" {
		answer = append(answer, kv{"api", a.api()}) // a layer that ran the statement as raw SQL says so
	}
	d.end(st)
	return answer, f
}

// runOp is one operation, with the BEGIN/COMMIT of commit_every around it.
func (s *session) runOp(st *step, i int, sk *sink) (int64, error) {
	d := s.drv
	k := st.commitEvery
	if k > 0 && i%k == 0 {
		if err := d.txBegin(st); err != nil {
			return 0, err
		}
	}
	count, err := d.op(st, i, sk)
	if err != nil {
		return 0, err
	}
	if k > 0 && ((i+1)%k == 0 || i+1 == st.nops) {
		if err := d.txCommit(st); err != nil {
			return 0, err
		}
	}
	return count, nil
}

// verifyPass is the untimed pass that checksums every value read (and dumps the first rows
// when the step asks for a dump); only its first operation is timed, the cold start.
func (s *session) verifyPass(st *step, runOp func(i int, sk *sink) (int64, error)) (object, *failure) {
	sk := newSink(st.dump)
	var rows, first int64
	start := time.Now()
	for i := 0; i < st.nops; i++ {
		count, err := runOp(i, sk)
		if err != nil {
			return nil, asFailure(s.drv, err)
		}
		if i == 0 { // the cold start: the first operation, its rows checksummed
			first = time.Since(start).Nanoseconds()
		}
		rows += count
	}
	var values int64
	switch {
	case st.kind == kLoad: // entities of several tables
		values = sk.values
	case st.fetch:
		values = rows * int64(sk.width)
	}
	answer := object{
		{"n", st.nops},
		{"rows", rows},
		{"values", values},
		{"checksum", sk.hex()},
		{"first_op_ns", first},
	}
	if st.dump > 0 && st.fetch {
		answer = append(answer, kv{"dump", sk.dump})
	}
	if sk.counted { // the statements the pass sent, as the method counts them (a load's always)
		answer = append(answer, kv{"statements", sk.statements})
	}
	return answer, nil
}

// timedPass is the plain loop: one client, the session's connection, by count.
func (s *session) timedPass(st *step) (object, *failure) {
	lat := make([]uint64, st.nops) // allocated before the clock
	var rows int64
	runtime.GC()
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	var prev time.Duration
	for i := 0; i < st.nops; i++ {
		count, err := s.runOp(st, i, nil)
		if err != nil {
			return nil, asFailure(s.drv, err)
		}
		now := time.Since(start)
		lat[i] = uint64(now - prev)
		prev = now
		rows += count
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if f := writeLatencies(st.latencyFile, lat); f != nil {
		return nil, f
	}
	a := object{
		{"n", st.nops},
		{"elapsed_ns", prev.Nanoseconds()},
		{"rows", rows},
	}
	if st.fetch && st.ncols > 0 {
		a = append(a, kv{"values", rows * int64(st.ncols)})
	}
	var first uint64
	if len(lat) > 0 {
		first = lat[0]
	}
	a = append(a,
		kv{"user_ns", tvNs(after.Utime) - tvNs(before.Utime)},
		kv{"sys_ns", tvNs(after.Stime) - tvNs(before.Stime)},
		kv{"first_op_ns", first},
	)
	if pid := s.drv.serverPID(); pid != 0 {
		a = append(a, kv{"server_pids", []int64{pid}})
	}
	return a, nil
}

// writeLatencies writes the plain loop's latencies to path (none when path is ""), after the
// loop: n little-endian uint64 nanoseconds.
func writeLatencies(path string, lat []uint64) *failure {
	if path == "" {
		return nil
	}
	buf := make([]byte, 8*len(lat))
	for i, v := range lat {
		binary.LittleEndian.PutUint64(buf[8*i:], v)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		return fail("internal", "latency_file %s: %v", path, err)
	}
	return nil
}

func tvNs(tv syscall.Timeval) int64 { return tv.Sec*1e9 + int64(tv.Usec)*1e3 }

// ---- the loop ---------------------------------------------------------------------------------

func writeAnswer(out *bufio.Writer, a object, f *failure) {
	var line []byte
	var err error
	if f == nil {
		line, err = object(append(object{{"ok", true}}, a...)).MarshalJSON()
	} else {
		msg := strings.TrimSpace(f.message)
		if k := strings.IndexByte(msg, '\n'); k >= 0 { // one line, as the Python worker does
			msg = strings.TrimSpace(msg[:k])
		}
		if msg == "" {
			msg = f.kind
		}
		e := object{{"kind", f.kind}, {"message", msg}}
		if f.sqlstate != "" {
			e = append(e, kv{"sqlstate", f.sqlstate})
		}
		line, err = object{{"ok", false}, {"error", e}}.MarshalJSON()
	}
	if err != nil {
		line = []byte(`{"ok": false, "error": {"kind": "internal", "message": "unencodable answer"}}`)
	}
	out.Write(line)
	out.WriteByte('\n')
	out.Flush()
}

func (s *session) safeHandle(msg map[string]any) (a object, f *failure) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "abworker-go: panic: %v\n%s", r, debug.Stack())
			a, f = nil, fail("internal", "panic: %v", r)
		}
	}()
	return s.handle(msg)
}

// chooseMethod makes the session of a method name, METHOD[/key=value,...]: the registry's
// driver with the settings configured. A method the registry does not have, or a setting its
// driver does not take, leaves a session that answers every message unsupported.
func chooseMethod(name string) *session {
	s := &session{name: name}
	named, settings, _ := strings.Cut(name, "/")
	// METHOD@VERSION: its driver at another version than the pinned one, for which this program
	// was built again (src/accessbench/methods/versions.py); a build with any other version of
	// the driver refuses the name rather than measure one version under another's
	base, version, _ := strings.Cut(named, "@")
	mk, ok := driverFor(base)
	if !ok {
		s.why = fmt.Sprintf("unknown method '%s' (abworker-go knows %s)", base, methodNames())
		return s
	}
	s.mk, s.drv = mk, mk()
	if built, _, _ := strings.Cut(s.drv.driverVersion(), " "); version != "" && built != version {
		s.why = fmt.Sprintf("%s: this abworker-go is built with %s's driver at %s, not %s", name, base, s.drv.driverVersion(), version)
		return s
	}
	if settings == "" {
		return s
	}
	for _, kvs := range strings.Split(settings, ",") {
		k, v, ok := strings.Cut(kvs, "=")
		if !ok {
			s.why = fmt.Sprintf("%s: setting '%s' is not key=value", name, kvs)
			break
		}
		if err := s.drv.configure(k, v); err != nil {
			s.why = fmt.Sprintf("%s: %s", name, settingError(base, k, v, err))
			break
		}
		s.settings = append(s.settings, [2]string{k, v})
	}
	return s
}

func main() {
	// stdout belongs to the protocol: keep a private copy of it and point fd 1 (anything a
	// library prints) at stderr, the worker's log.
	fd, err := syscall.Dup(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "abworker-go: stdout:", err)
		os.Exit(2)
	}
	if err := syscall.Dup3(2, 1, 0); err != nil {
		fmt.Fprintln(os.Stderr, "abworker-go: stdout:", err)
		os.Exit(2)
	}
	protoOut := os.NewFile(uintptr(fd), "protocol-stdout")
	// Keep the *os.File of fd 1 reachable: its finalizer would otherwise close fd 1 (now the
	// log) at the next garbage collection, and a file opened later would take its number.
	keptStdout = os.Stdout
	os.Stdout = os.Stderr
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: abworker-go METHOD[/key=value,...]  (%s)\n", methodNames())
		os.Exit(2)
	}
	s := chooseMethod(os.Args[1])
	if s.why != "" {
		fmt.Fprintln(os.Stderr, "abworker-go:", s.why)
	}
	out := bufio.NewWriter(protoOut)
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			var msg map[string]any
			var a object
			var f *failure
			if derr := dec.Decode(&msg); derr != nil || msg == nil {
				if derr == nil {
					derr = fmt.Errorf("wrong type")
				}
				f = fail("protocol", "not a JSON object: %v", derr)
			} else {
				a, f = s.safeHandle(msg)
			}
			writeAnswer(out, a, f)
			if op, _ := msg["op"].(string); op == "bye" {
				break
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "abworker-go: stdin:", err)
			break
		}
	}
	s.closeConn()
	os.Exit(0)
}
