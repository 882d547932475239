package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Steps under load (PROTOCOL.md, "Steps under load"; the reference is pyworker/load.py): C
// clients in this one process, one goroutine each, every one with its own dbDriver; all start
// at a wall-clock barrier; they run by count or by duration, in a closed loop or an open loop
// at a rate, and record every latency into a histogram. Connections are the client's own for
// the whole trial (persistent), made and closed inside every operation (per-request), or
// borrowed from a pool the clients share (pooled).
//
// Closed loop: an operation's latency runs from the end of the client's previous operation to
// its own end, as in the plain loop. Open loop: from its intended start to its end, so time
// spent queued behind a slow operation is counted (no coordinated omission). A loop by
// duration runs while its previous operation ended before the stop, open or closed (no
// backlog is served past it). An open loop by duration lasts its duration: a client starts no
// operation whose intended start is at or after it; when its arrivals are over it waits, idle
// and untimed, until it has passed; one still behind schedule when it has passed counts the
// intended starts before the stop it never began as skipped (n + skipped = the intended starts
// inside the duration).

type connPolicy int

const (
	pPersistent connPolicy = iota
	pPerRequest
	pPooled
)

// spinNs: sleep until this close to an instant, then spin. Go's own time.Sleep wakes up to
// a millisecond late (the runtime waits in epoll with a timeout in whole milliseconds), so the
// sleep is nanosleep(2) itself, which here wakes 70–110 µs late: 150 µs of spinning covers it.
const spinNs = 150_000

// load is what a step message asks beyond the plain loop.
type load struct {
	clients  int
	duration int64   // ns; 0: each client runs the step's operations once
	rate     float64 // open loop: operations per second of all clients together; 0: closed loop
	poisson  bool
	seed     uint64 // client k's arrivals are seeded seed + k
	phaseNs  int64  // uniform: this worker's first intended start
	lateNs   int64
	skipNs   int64 // 0: never skip
	startAt  int64 // the barrier, unix ns; 0: start at once
	policy   connPolicy
	poolSize int
	loaded   bool // the step runs here; false: the plain loop (the policy holds either way)
}

// parseLoad reads the load fields of a step. loaded is false for a plain step (which keeps
// the plain loop); the policy is read either way, since a verification pass applies it.
func parseLoad(msg map[string]any) (*load, *failure) {
	ld := &load{clients: 1, poisson: true, lateNs: 1_000_000}
	switch p, _ := msg["policy"].(string); p {
	case "", "persistent":
	case "per-request":
		ld.policy = pPerRequest
	case "pooled":
		ld.policy = pPooled
	default:
		return nil, unsupported("no connection policy '%s' (abworker-go has persistent, per-request, pooled)", p)
	}
	clients, _, err1 := jsonInt(msg, "clients", 1)
	seed, _, err2 := jsonInt(msg, "schedule_seed", 0)
	late, _, err3 := jsonInt(msg, "late_ns", 1_000_000)
	start, _, err4 := jsonInt(msg, "start_at_unix_ns", 0)
	pool, _, err5 := jsonInt(msg, "pool_size", 0)
	phase, _, err6 := jsonInt(msg, "phase_ns", 0)
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			return nil, fail("protocol", "%v", err)
		}
	}
	if clients < 1 || pool < 0 || phase < 0 {
		return nil, fail("protocol", "clients must be >= 1, pool_size and phase_ns >= 0")
	}
	ld.clients, ld.seed, ld.lateNs, ld.startAt, ld.poolSize = int(clients), uint64(seed), late, start, int(pool)
	ld.phaseNs = phase
	if ld.poolSize == 0 {
		ld.poolSize = ld.clients
	}
	if truthy(msg["skip_ns"]) {
		skip, _, err := jsonInt(msg, "skip_ns", 0)
		if err != nil {
			return nil, fail("protocol", "%v", err)
		}
		ld.skipNs = skip
	}
	if truthy(msg["duration_ms"]) {
		ms, ok := toFloat(msg["duration_ms"])
		if !ok || ms < 0 {
			return nil, fail("protocol", "duration_ms must be a number >= 0")
		}
		ld.duration = int64(ms * 1e6)
	}
	if truthy(msg["rate"]) {
		rate, ok := toFloat(msg["rate"])
		if !ok || rate <= 0 {
			return nil, fail("protocol", "rate must be a positive number")
		}
		ld.rate = rate
	}
	switch a, _ := msg["arrival"].(string); a {
	case "", "poisson":
	case "uniform":
		ld.poisson = false
	default:
		return nil, fail("protocol", "unknown arrival '%s' (poisson, uniform)", a)
	}
	ld.loaded = ld.policy != pPersistent || ld.clients > 1 || ld.duration > 0 || ld.rate > 0 || truthy(msg["histogram"])
	return ld, nil
}

// client is one client of a loaded step: its driver and its copy of the step (the driver
// writes what it learns, the column count, into it), and what it measured.
type client struct {
	d     dbDriver
	st    step
	own   bool // a driver of its own, closed after the trial (not the session's)
	done  int  // operations run
	inTx  bool // a commit_every transaction is open, with txOps operations in it
	txOps int

	start         time.Time // when it passed the barrier (its monotonic clock's zero)
	elapsed       int64     // ns from its start to the end of its last operation
	n, rows       int64
	late, skipped int64
	first         int64 // its first operation's latency
	hist          histogram
	err           error
	firstFailure  bool // its error was the trial's first
}

// op is one operation under the client's policy: per request inside a connection of its own
// (connect and disconnect timed with it); pooled on a connection borrowed for it.
func (c *client) op(policy connPolicy, i int, sk *sink) (int64, error) {
	switch policy {
	case pPerRequest:
		if err := c.d.connect(); err != nil {
			return 0, err
		}
		count, err := c.run(i, sk)
		if err != nil {
			c.d.recover(&c.st) // database/sql would keep a connection in a transaction open
		}
		c.d.disconnect()
		return count, err
	case pPooled:
		if err := c.d.borrow(); err != nil {
			return 0, err
		}
		count, err := c.run(i, sk)
		if err != nil {
			c.d.recover(&c.st) // rolled back before the connection goes back to the pool
			c.inTx = false
		}
		c.d.giveBack()
		return count, err
	}
	return c.run(i, sk)
}

// run is operation i (the index of its arguments) with commit_every's BEGIN before the first
// operation of a group and COMMIT after the k-th, or after the last of the arguments: the
// plain loop's groups, again on every pass when a step cycles through its arguments.
func (c *client) run(i int, sk *sink) (int64, error) {
	d, st := c.d, &c.st
	k := st.commitEvery
	if k > 0 && !c.inTx {
		if err := d.txBegin(st); err != nil {
			return 0, err
		}
		c.inTx, c.txOps = true, 0
	}
	count, err := d.op(st, i, sk)
	if err != nil {
		return 0, err
	}
	c.done++
	if c.inTx {
		if c.txOps++; c.txOps == k || c.done%st.nops == 0 {
			c.inTx = false
			if err := d.txCommit(st); err != nil {
				return 0, err
			}
		}
	}
	return count, nil
}

// loop is the client's goroutine: wait for the barrier, then run by count or until the
// duration has passed, cycling through the step's arguments.
func (c *client) loop(ld *load, k int, failed *atomic.Bool) {
	count := c.st.nops
	var sched *schedule
	var phase int64
	if ld.rate > 0 {
		sched = newSchedule(ld.rate/float64(ld.clients), ld.poisson, ld.seed+uint64(k))
		// uniform: the worker's arrivals are evenly spaced at rate from its phase_ns and dealt
		// to its clients in turn (client k's own stream at rate / C, k / rate later), not C
		// at once
		if !ld.poisson {
			phase = int64(float64(ld.phaseNs) + float64(k)*1e9/ld.rate)
		}
	}
	policy, stop := ld.policy, ld.duration
	waitUntil(ld.startAt)
	start := time.Now()
	c.start = start
	var prev int64
	for i := 0; count > 0 && ((stop == 0 && i < count) || (stop > 0 && prev < stop)); i++ {
		if failed.Load() { // another client failed: the trial is over
			break
		}
		var rows, latency int64
		var err error
		if sched != nil {
			intended := phase + sched.next()
			if stop > 0 && intended >= stop { // the arrivals are over; the trial is not
				break
			}
			now := int64(time.Since(start))
			if now < intended {
				pauseUntil(start, intended)
			} else if ld.skipNs > 0 && now-intended > ld.skipNs {
				c.skipped++ // pgbench --latency-limit: not run at all
				continue
			} else if now-intended > ld.lateNs {
				c.late++
			}
			rows, err = c.op(policy, i%count, nil)
			now = int64(time.Since(start))
			latency, prev = now-intended, now
		} else {
			rows, err = c.op(policy, i%count, nil)
			now := int64(time.Since(start))
			latency, prev = now-prev, now
		}
		if err != nil {
			c.err = err
			c.firstFailure = failed.CompareAndSwap(false, true)
			c.d.recover(&c.st)
			c.inTx = false
			break
		}
		c.rows += rows
		c.hist.record(uint64(latency))
		if c.n == 0 {
			c.first = latency
		}
		c.n++
	}
	c.elapsed = prev
	if c.inTx { // the duration ended inside a commit_every group: committed, outside the clock
		c.inTx = false
		if err := c.d.txCommit(&c.st); err != nil && c.err == nil {
			c.err = err
			c.firstFailure = failed.CompareAndSwap(false, true)
			c.d.recover(&c.st)
		}
		c.d.giveBack()
	}
	if sched != nil && stop > 0 && c.err == nil && !failed.Load() {
		if c.elapsed < stop {
			// an open loop lasts its duration (PROTOCOL.md): its arrivals are over, so idle,
			// untimed, until it has passed (after the commit above, so a pooled connection
			// is back for the other clients)
			sleepUntil(start, stop)
			c.elapsed = stop
		} else {
			// behind schedule when the duration passed: the intended starts of its stream
			// before the stop that it never began are skipped (not run, not in the histogram)
			for phase+sched.next() < stop {
				c.skipped++
			}
		}
	}
}

// nap sleeps ns in nanosleep(2), blocking this goroutine's thread (the runtime hands its P on
// to another thread meanwhile).
func nap(ns int64) {
	ts := syscall.NsecToTimespec(ns)
	syscall.Nanosleep(&ts, nil) // interrupted early by a signal: the callers sleep again
}

// waitUntil is the barrier: it returns when the wall clock reaches unixNs.
func waitUntil(unixNs int64) {
	if unixNs == 0 {
		return
	}
	for {
		left := unixNs - time.Now().UnixNano()
		if left <= spinNs {
			break
		}
		nap(left - spinNs)
	}
	for time.Now().UnixNano() < unixNs {
		runtime.Gosched() // spinning, but not keeping a client whose reply has come from its CPU
	}
}

// sleepUntil returns when the monotonic clock is at offset ns past start, without spinning.
func sleepUntil(start time.Time, offset int64) {
	for left := offset - int64(time.Since(start)); left > 0; left = offset - int64(time.Since(start)) {
		nap(left)
	}
}

// pauseUntil returns when the monotonic clock is at offset ns past start.
func pauseUntil(start time.Time, offset int64) {
	for {
		left := offset - int64(time.Since(start))
		if left <= spinNs {
			break
		}
		nap(left - spinNs)
	}
	for int64(time.Since(start)) < offset {
		runtime.Gosched()
	}
}

// newClients makes a loaded step's clients, untimed, before the barrier: for persistent, the
// session's own connection is the first client and the others open theirs; per request, each
// client has the configuration parsed; pooled, the pool is made and filled and every client
// borrows from it.
func (s *session) newClients(st *step, ld *load, n int) ([]*client, connPool, *failure) {
	cs := make([]*client, 0, n)
	var pool connPool
	if ld.policy == pPooled {
		p, err := s.drv.newPool(s.ep, ld.poolSize)
		if err != nil {
			return nil, nil, asFailure(s.drv, err)
		}
		pool = p
	}
	for k := 0; k < n; k++ {
		c := &client{st: *st}
		cs = append(cs, c)
		if k == 0 && ld.policy == pPersistent {
			c.d = s.drv // already begun by the step
			continue
		}
		c.d, c.own = s.fresh(), true
		var err error
		switch ld.policy {
		case pPersistent:
			if err = c.d.open(s.ep); err == nil {
				_, _, err = c.d.describe() // its backend's pid
			}
		case pPerRequest:
			err = c.d.dial(s.ep)
		case pPooled:
			if err = c.d.dial(s.ep); err == nil {
				c.d.attach(pool)
			}
		}
		if err == nil {
			err = c.d.begin(&c.st)
		}
		if err != nil {
			f := asFailure(c.d, err)
			dropClients(cs, pool)
			return nil, nil, f
		}
	}
	return cs, pool, nil
}

// dropClients ends the step on the clients' own drivers and closes their connections, then
// the pool (the session's driver is ended by the step).
func dropClients(cs []*client, pool connPool) {
	for _, c := range cs {
		if c.own {
			c.d.end(&c.st)
			c.d.close()
		}
	}
	if pool != nil {
		pool.close()
	}
}

// verifyWith is the verification pass of a step with a policy: one client, untimed but for
// the first operation, its connection made per request or borrowed as the policy says.
func (s *session) verifyWith(st *step, ld *load) (object, *failure) {
	cs, pool, f := s.newClients(st, ld, 1)
	if f != nil {
		return nil, f
	}
	defer dropClients(cs, pool)
	c := cs[0]
	a, f := s.verifyPass(st, func(i int, sk *sink) (int64, error) { return c.op(ld.policy, i, sk) })
	if f != nil {
		c.d.recover(&c.st)
	}
	return a, f
}

// loadedPass runs a loaded step's clients together and answers what they measured.
func (s *session) loadedPass(st *step, ld *load) (object, *failure) {
	cs, pool, f := s.newClients(st, ld, ld.clients)
	if f != nil {
		return nil, f
	}
	defer dropClients(cs, pool)
	before, after := trial(cs, ld)
	for _, c := range cs {
		if c.firstFailure {
			return nil, asFailure(c.d, c.err)
		}
	}
	return loadedAnswer(st, ld, cs, before, after), nil
}

// trial runs the clients, one goroutine each, until the last one is done: the process's
// CPU usage is read before they start and after they end.
func trial(cs []*client, ld *load) (before, after syscall.Rusage) {
	var failed atomic.Bool
	var wg sync.WaitGroup
	runtime.GC() // the garbage of the preparation is not collected inside the loop
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for k, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { // a client's panic is answered, as the session's are
				if r := recover(); r != nil {
					fmt.Fprintf(os.Stderr, "abworker-go: panic in client %d: %v\n%s", k, r, debug.Stack())
					c.err = fail("internal", "panic: %v", r)
					c.firstFailure = failed.CompareAndSwap(false, true)
				}
			}()
			c.loop(ld, k, &failed)
		}()
	}
	wg.Wait()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	return before, after
}

// loadedAnswer merges what the clients measured: counts add up, the histograms merge, the
// trial lasts from the first client's start to the last one's end.
func loadedAnswer(st *step, ld *load, cs []*client, before, after syscall.Rusage) object {
	hist := new(histogram)
	var n, rows, late, skipped, elapsed int64
	common := cs[0].start
	for _, c := range cs {
		if c.start.Before(common) {
			common = c.start
		}
	}
	perClient := make([]object, len(cs))
	ncols := 0
	for k, c := range cs {
		hist.merge(&c.hist)
		n, rows, late, skipped = n+c.n, rows+c.rows, late+c.late, skipped+c.skipped
		if end := int64(c.start.Sub(common)) + c.elapsed; end > elapsed {
			elapsed = end
		}
		perClient[k] = object{{"n", c.n}, {"elapsed_ns", c.elapsed}}
		ncols = max(ncols, c.st.ncols)
	}
	a := object{{"n", n}, {"elapsed_ns", elapsed}, {"rows", rows}}
	if st.fetch && ncols > 0 {
		a = append(a, kv{"values", rows * int64(ncols)})
	}
	a = append(a,
		kv{"user_ns", tvNs(after.Utime) - tvNs(before.Utime)},
		kv{"sys_ns", tvNs(after.Stime) - tvNs(before.Stime)},
		kv{"first_op_ns", cs[0].first},
		kv{"histogram", hist.wire()},
		kv{"late", late},
		kv{"skipped", skipped},
		kv{"clients", len(cs)},
		kv{"per_client", perClient},
	)
	if ld.policy == pPersistent { // per-request and pooled backends are gone by now
		var pids []int64
		for _, c := range cs {
			if pid := c.d.serverPID(); pid != 0 {
				pids = append(pids, pid)
			}
		}
		if len(pids) > 0 {
			a = append(a, kv{"server_pids", pids})
		}
	}
	return a
}
