package main

// The step: a step message parsed and validated into a step, its parameters generated (and
// for literal and record, rendered into texts) before any clock starts. Every protocol error
// of a step message, and whatever the method cannot do, is answered here, before the driver
// sees the step; running it is main.go's (the plain loop) and load.go's (steps under load).

type stepKind int

const (
	kConnect stepKind = iota
	kScan
	kExec
	kBatch
	kLoad // a parent table's rows with their children and grandchildren (assoc.go)
)

var stepKinds = map[string]stepKind{"connect": kConnect, "scan": kScan, "exec": kExec, "batch": kBatch, "load": kLoad}

type execMode int

const (
	mNone execMode = iota
	mLiteral
	mExtended
	mPrepared
	mRecord // record-level access (drivers that implement recorder)
)

var execModes = map[string]execMode{"literal": mLiteral, "extended": mExtended, "prepared": mPrepared}

// step is one execution of a step: what the message asked, with the parameters generated
// (and for literal, the texts rendered) before any clock starts.
type step struct {
	kind        stepKind
	mode        execMode
	sql         string // neutral form, '?' markers; "" for connect
	nparams     int
	n           int  // iterations: rows for batch, operations otherwise
	batch       int  // rows per group
	nops        int  // operations: n, or groups for batch
	commitEvery int  // exec: operations per transaction, 0 = autocommit
	fetch       bool // the statement returns rows that are read to the end
	verify      bool
	dump        int       // verify: rows to answer as dump (the first rows read); 0: none
	load        *load     // clients, duration, rate, policy (load.go); read by every step
	latencyFile string    // the plain loop's latencies, written after it; "" for none
	params      [][]param // n rows × nparams
	texts       []string  // literal mode: n statements with values inlined; record: n keys as literals
	recTable    string    // record mode: the table, and for an exec keyed read the index
	recIndex    string
	endpoint    endpoint
	ncols       int    // set by the driver: columns of the rows it read
	shape       *shape // what sql does, as the runner worked it out (shape.go); nil for none
	assoc       *assoc // load: the association to load and how (assoc.go)
}

// group returns the rows [first, last) of batch group i.
func (st *step) group(i int) (int, int) {
	first := i * st.batch
	last := first + st.batch
	if last > st.n {
		last = st.n
	}
	return first, last
}

// parseStep reads a step message into a step on the session's connection. The checks run
// in a fixed order, so that a message with several faults is always answered with the same one.
func (s *session) parseStep(msg map[string]any) (*step, *failure) {
	if s.ep == nil {
		return nil, fail("protocol", "step before open")
	}
	k, _ := msg["kind"].(string)
	kind, ok := stepKinds[k]
	if k == "" {
		return nil, fail("protocol", "a step needs a kind")
	} else if !ok {
		return nil, fail("protocol", "unknown step kind '%s'", k)
	}
	st := &step{kind: kind, endpoint: s.ep}
	if f := st.parseCounts(msg); f != nil {
		return nil, f
	}
	var f *failure
	if st.load, f = parseLoad(msg); f != nil {
		return nil, f
	}
	st.verify = truthy(msg["verify"])
	if st.verify {
		dump, _, err := jsonInt(msg, "dump", 0)
		if err != nil || dump < 0 {
			return nil, fail("protocol", "dump must be an integer >= 0")
		}
		st.dump = int(dump)
	}
	st.fetch = st.kind == kScan || (st.kind == kExec && truthy(msg["fetch"]))
	st.latencyFile, _ = msg["latency_file"].(string)
	if st.kind != kConnect {
		sql, ok := msg["sql"].(string)
		if !ok {
			return nil, fail("protocol", "a %s step needs sql", msg["kind"])
		}
		st.sql = sql
		st.shape = parseShape(msg["shape"])
	}
	if f := s.parseMode(st, msg); f != nil {
		return nil, f
	}
	if st.kind == kLoad {
		if l, ok := s.drv.(loader); !ok || !l.loads() {
			return nil, unsupported("%s has no load steps", s.name)
		}
		if st.assoc, f = parseAssoc(msg["load"], st.shape); f != nil {
			return nil, f
		}
		// its statements are bound: the driver's extended mode; each operation reads rows
		st.mode, st.fetch = mExtended, true
	}
	if st.kind == kBatch && st.batch < 1 {
		return nil, fail("protocol", "a batch step needs batch >= 1")
	}
	if st.load.policy == pPerRequest && st.commitEvery > 0 {
		return nil, unsupported("commit_every groups operations on one connection; per-request closes it after every operation")
	}
	st.nops = st.n
	if st.kind == kBatch {
		st.nops = (st.n + st.batch - 1) / st.batch
	}
	if f := st.generate(msg["params"], s.dialect); f != nil {
		return nil, f
	}
	return st, nil
}

// parseCounts reads iterations, batch and (for an exec step) commit_every.
func (st *step) parseCounts(msg map[string]any) *failure {
	n, _, err1 := jsonInt(msg, "iterations", -1)
	every, _, err2 := jsonInt(msg, "commit_every", 0)
	batch, _, err3 := jsonInt(msg, "batch", 0)
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			return fail("protocol", "%v", err)
		}
	}
	if n < 0 {
		return fail("protocol", "a step needs iterations >= 0")
	}
	st.n, st.batch = int(n), int(batch)
	if st.kind == kExec && every > 0 {
		st.commitEvery = int(every)
	}
	return nil
}

// parseMode reads how an exec step sends its statement (literal, extended, prepared), or the
// record mode of an exec or scan step, which only a recorder has.
func (s *session) parseMode(st *step, msg map[string]any) *failure {
	mode, _ := msg["mode"].(string)
	if mode == "record" && (st.kind == kExec || st.kind == kScan) {
		// record-level access: a scan of the table, or keyed reads on an index
		st.mode = mRecord
		if _, ok := s.drv.(recorder); !ok {
			return unsupported("%s has no record-level access (mode record)", s.name)
		}
		rec, _ := msg["record"].(map[string]any)
		st.recTable, _ = rec["table"].(string)
		st.recIndex, _ = rec["index"].(string)
		if st.recTable == "" || (st.kind == kExec && st.recIndex == "") {
			return fail("protocol", "mode record needs record.table (and record.index for an exec step)")
		}
		return nil
	}
	if st.kind != kExec {
		return nil
	}
	if mode == "" {
		return fail("protocol", "an exec step needs a mode")
	}
	m, ok := execModes[mode]
	if !ok {
		return fail("protocol", "unknown mode '%s'", mode)
	}
	st.mode = m
	return nil
}

// generate makes the parameters of an exec or batch step from the message's generators,
// before the clock: n rows of nparams values in one allocation; for literal, the statements
// with the values inlined; for record, the keys as literals (HANDLER … READ index = (…)).
func (st *step) generate(specsAny any, dialect string) *failure {
	var segs []string
	if st.sql != "" {
		segs = sqlSegments(st.sql)
		st.nparams = len(segs) - 1
	}
	if st.kind == kScan && st.nparams > 0 {
		return fail("protocol", "a scan runs one query without params, but the sql has %d markers", st.nparams)
	}
	if st.kind != kExec && st.kind != kBatch && st.kind != kLoad {
		return nil
	}
	specs, _ := specsAny.([]any)
	if len(specs) != st.nparams {
		return fail("protocol", "%d markers but %d params", st.nparams, len(specs))
	}
	gens := make([]*generator, len(specs))
	for k, spec := range specs {
		g, err := newGenerator(spec)
		if err != nil {
			return fail("protocol", "%v", err)
		}
		gens[k] = g
	}
	flat := make([]param, st.n*st.nparams)
	st.params = make([][]param, st.n)
	for i := 0; i < st.n; i++ {
		row := flat[i*st.nparams : (i+1)*st.nparams : (i+1)*st.nparams]
		for k, g := range gens {
			row[k] = g.next(int64(i))
		}
		st.params[i] = row
	}
	if st.kind == kExec && (st.mode == mLiteral || st.mode == mRecord) {
		st.texts = make([]string, st.n)
		for i, row := range st.params {
			if st.mode == mLiteral {
				st.texts[i] = inlineSQL(segs, row, dialect)
			} else {
				st.texts[i] = literalList(row, dialect)
			}
		}
	}
	return nil
}
