package main

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// endpoint as the runner sends it.
type endpoint map[string]any

func (e endpoint) str(key string) string {
	switch v := e[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// flag: a boolean key, false when absent.
func (e endpoint) flag(key string) bool {
	v, _ := e[key].(bool)
	return v
}

// failure is an error answer.
type failure struct {
	kind     string // db, unsupported, protocol, timeout, internal
	message  string
	sqlstate string
}

func (f *failure) Error() string { return f.message }

func fail(kind, format string, args ...any) *failure {
	return &failure{kind: kind, message: fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) *failure { return fail("unsupported", format, args...) }

// dbDriver is one access method. The session generates parameters, then calls begin
// (untimed), op once per operation (timed, or verified with a sink), txBegin/txCommit around
// groups of operations for commit_every, recover after a failure, and end (untimed). One
// dbDriver is used by one goroutine at a time.
type dbDriver interface {
	driverName() string
	driverVersion() string
	dbms() []string
	batchStyle() string
	settings() map[string]string
	// configure takes one key=value setting of the method name (noSetting for one it has not).
	configure(key, value string) error
	// open connects (timed as connect_ns); describe then reports the backend (untimed).
	open(ep endpoint) error
	describe() (serverPID int64, serverVersion string, err error)
	close()
	serverPID() int64
	begin(st *step) error
	// op runs operation i; it returns the rows read, or rows changed/written. With a sink
	// (verification) every decoded row is hashed into it.
	op(st *step, i int, sk *sink) (int64, error)
	txBegin(st *step) error
	txCommit(st *step) error
	recover(st *step)
	end(st *step)
	// classify turns a driver error into an answer (kind db, with the sqlstate when known).
	classify(err error) *failure

	// Steps under load (load.go). Every client of a loaded step is a dbDriver of its own
	// (its connection, prepared statement, transaction): a persistent client is opened with
	// open. dial readies a client for the other policies, untimed: the endpoint's
	// configuration is parsed once. Per request, connect and disconnect then open and close
	// its connection around each operation, inside the operation's time.
	dial(ep endpoint) error
	connect() error
	disconnect()
	// newPool makes the runtime's usual pool of size connections and fills it (untimed);
	// attach has a dialled client borrow from it: borrow before each operation, giveBack
	// after it (no-ops where the pool lends a connection to every statement by itself).
	newPool(ep endpoint, size int) (connPool, error)
	attach(p connPool)
	borrow() error
	giveBack()
}

// recorder is a driver with record-level access (mode record, PROTOCOL.md "Record-level
// access"): a scan of every record of a table, or keyed reads on an index, without SQL.
type recorder interface {
	recordAccess() string // how, in words (hello's settings)
}

// loader is a driver with load steps (PROTOCOL.md, Loading associations; assoc.go).
type loader interface {
	loads() bool
}

// shaper is a layer: which shape features it maps through its own API, and why not the others
// (hello's capabilities.shapes).
type shaper interface {
	shapes() object
}

// apiTeller is a layer that may run a step's statement through its raw-SQL API (a statement
// of no shape, a table its entities cannot be made for): api() is "raw" then, after begin.
type apiTeller interface {
	api() string
}

// connPool is a pool shared by the clients of one loaded step; closed after the trial.
type connPool interface {
	close()
}

// moduleVersion is the version of a dependency as built into this program.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == path {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return "unknown"
}

// bindRows adapts generated rows to a driver's arguments, each value by bind (before the
// clock), in one allocation.
func bindRows(params [][]param, bind func(param) any) [][]any {
	n := 0
	if len(params) > 0 {
		n = len(params[0])
	}
	flat := make([]any, 0, len(params)*n)
	out := make([][]any, len(params))
	for i, row := range params {
		start := len(flat)
		for _, p := range row {
			flat = append(flat, bind(p))
		}
		out[i] = flat[start:len(flat):len(flat)]
	}
	return out
}

// asFailure: a failure as it is, anything else through the driver's classify.
func asFailure(d dbDriver, err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	return d.classify(err)
}

// copyTarget is the insert a COPY-style batch writes instead of the statement: the step's
// shape, when it is an insert of one row of markers, one per column.
func copyTarget(st *step) (*shape, error) {
	const only = "batch=copy writes only INSERT INTO t (cols) VALUES (?, …) statements: "
	sh := st.shape
	switch {
	case sh == nil:
		return nil, unsupported(only + "this one has no plain shape (the step's shape is null)")
	case sh.kind != "insert":
		return nil, unsupported(only+"its shape is %q, not \"insert\"", sh.kind)
	case len(sh.columns) != st.nparams:
		return nil, unsupported(only+"%d columns but %d markers", len(sh.columns), st.nparams)
	}
	return sh, nil
}
