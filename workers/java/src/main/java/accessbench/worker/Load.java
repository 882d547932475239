package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/** A loaded step (PROTOCOL.md, "Steps under load"): what its message asks for beyond the plain
 * loop, the loop each client runs (src/accessbench/pyworker/load.py) — by duration as well as
 * by count, closed loop or open loop at a rate, every latency into a histogram, all clients
 * starting at a wall-clock barrier — and the trial (loaded): the clients, one thread each, and
 * their results merged into the answer.
 *
 * Closed loop: operation i's latency runs from the end of operation i−1 to its own end, as in
 * the plain loop. Open loop: from operation i's intended start to its end, so a stall that
 * delays later operations shows in their latency (no coordinated omission); an operation that
 * starts more than lateNs after its intended time is late, and one that would start more than
 * skipNs late is skipped (pgbench -R --latency-limit). Uniform arrivals are dealt to the
 * clients in turn (client k's stream starts at phaseNs + k · 10^9 / rate), and an open loop by
 * duration lasts its duration: it starts no arrival at or after it, a client whose arrivals are
 * over idles (untimed) until it has passed, and one still behind schedule when it has passed
 * stops there, counting the arrivals due before it that it had not started as skipped. */
final class Load {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    /** Sleep until this close to an instant, then spin: parkNanos overshoots by ~50–60 µs (timer
     * slack), which would otherwise count as the client's own lateness. */
    static final long SPIN_NS = 100_000;

    int clients = 1;
    long durationNs;       // 0: each client runs the step's operations once (by count)
    double rate;           // operations per second of all clients together; 0: closed loop
    String arrival = "poisson";
    long seed;             // schedule_seed: client k's stream is seeded seed + k (mod 2^64)
    long phaseNs;          // uniform: this worker's first intended start (one-client processes interleave)
    long lateNs = 1_000_000;
    long skipNs;           // 0: nothing is skipped
    long startAtUnixNs;    // 0: no barrier
    int policy = Policy.PERSISTENT;
    int poolSize;

    /** The load fields of a step message, or null for a plain step (none of them given). */
    static Load parse(JsonNode msg) throws WorkerError {
        String policy = Fields.text(msg, "policy", "persistent");
        boolean loaded = !policy.equals("persistent") || Fields.truthy(msg.get("histogram"))
                || Fields.truthy(msg.get("duration_ms")) || Fields.truthy(msg.get("rate"))
                || Fields.integer(msg, "clients", 1) != 1;
        if (!loaded)
            return null;
        Load l = new Load();
        l.policy = Policy.parse(policy);
        long clients = Fields.integer(msg, "clients", 1);
        if (clients < 1 || clients > 10_000)
            throw WorkerError.protocol("clients must be between 1 and 10000, not " + clients);
        l.clients = (int) clients;
        double duration = Fields.number(msg, "duration_ms");
        if (duration < 0)
            throw WorkerError.protocol("duration_ms must be positive");
        l.durationNs = (long) (duration * 1_000_000);
        l.rate = Fields.number(msg, "rate");
        if (l.rate < 0)
            throw WorkerError.protocol("rate must be positive");
        l.arrival = Fields.text(msg, "arrival", "poisson");
        l.seed = Gen.u64(msg.get("schedule_seed"), "schedule_seed");
        l.phaseNs = Fields.integer(msg, "phase_ns", 0);
        if (l.phaseNs < 0)
            throw WorkerError.protocol("phase_ns must not be negative");
        l.lateNs = Fields.integer(msg, "late_ns", 1_000_000);
        l.skipNs = Math.max(0, Fields.integer(msg, "skip_ns", 0));
        l.startAtUnixNs = Fields.integer(msg, "start_at_unix_ns", 0);
        long pool = Fields.integer(msg, "pool_size", l.clients);
        if (pool < 1 || pool > 10_000)
            throw WorkerError.protocol("pool_size must be between 1 and 10000, not " + pool);
        l.poolSize = (int) pool;
        if (l.rate > 0) // the arrival is checked now, not in a client thread
            new Schedule(l.rate / l.clients, l.arrival, l.seed);
        return l;
    }

    /** One client's results; the worker merges them into the answer. */
    static final class Result {
        long n, rows, late, skipped, firstOpNs;
        long startNs, endNs; // System.nanoTime at the client's start (after the barrier) and last end
        boolean started;
        final Histogram histogram = new Histogram();
    }

    /** Set by the first client that fails: the others stop at their next operation. */
    static final class Failure {
        volatile boolean failed;
        final AtomicReference<Throwable> first = new AtomicReference<>();

        void set(Throwable e) {
            first.compareAndSet(null, e);
            failed = true;
        }
    }

    /** The wall clock in ns since 1970 (Instant has the clock's full resolution; this runs only
     * while waiting at the barrier, so its allocation does not matter). */
    static long wallNs() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** The barrier: returns when the wall clock reaches unixNs (untimed). */
    static void waitUntil(long unixNs) {
        if (unixNs == 0)
            return;
        while (true) {
            long left = unixNs - wallNs();
            if (left <= 0)
                return;
            if (left > SPIN_NS)
                LockSupport.parkNanos(left - SPIN_NS);
            else
                Thread.onSpinWait();
        }
    }

    /** An open-loop client ahead of its schedule: sleep, then spin the last SPIN_NS. */
    private static void pauseUntil(long deadline) {
        long left;
        while ((left = deadline - System.nanoTime()) > SPIN_NS)
            LockSupport.parkNanos(left - SPIN_NS);
        while (System.nanoTime() - deadline < 0)
            Thread.onSpinWait();
    }

    /** An open loop whose arrivals are over: idle (untimed) until its duration has passed. No
     * spin: nothing is measured at this instant. */
    private static void sleepUntil(long deadline) {
        long left;
        while ((left = deadline - System.nanoTime()) > 0)
            LockSupport.parkNanos(left);
    }

    /** Client k's loop: operations over the step's nops arguments (cycling through them when
     * the step runs by duration), after the barrier. */
    void run(Policy.Client client, int nops, int k, Result out, Failure failure) throws Exception {
        final Schedule schedule = rate > 0 ? new Schedule(rate / clients, arrival, seed + k) : null;
        // uniform: the worker's arrivals dealt to its clients in turn, after the worker's phase
        // (rounded down once: the offsets are whole ns, so this equals flooring each start)
        final long phase = schedule != null && arrival.equals("uniform") ? (long) (phaseNs + k * 1e9 / rate) : 0;
        final Histogram histogram = out.histogram;
        final boolean byDuration = durationNs > 0;
        waitUntil(startAtUnixNs);
        final long start = System.nanoTime();
        final long stop = start + durationNs;
        out.startNs = start;
        out.started = true;
        long prev = start, i = 0, skipped = 0, rows = 0;
        int arg = 0;
        boolean first = true;
        // by duration, open loop or closed, while the previous operation ended before the stop:
        // no client serves a backlog past the duration (an open loop also ends at the break below)
        while (nops > 0 && (byDuration ? prev - stop < 0 : i < nops) && !failure.failed) {
            long now, latency;
            if (schedule != null) {
                long offset = phase + schedule.next();
                if (byDuration && offset >= durationNs) // the arrivals are over; the trial is not
                    break;
                long intended = start + offset;
                now = System.nanoTime();
                if (now - intended < 0) {
                    pauseUntil(intended);
                } else if (skipNs > 0 && now - intended > skipNs) {
                    skipped++;
                    i++;
                    arg = arg + 1 == nops ? 0 : arg + 1;
                    continue;
                } else if (now - intended > lateNs) {
                    out.late++;
                }
                rows += client.op(arg);
                now = System.nanoTime();
                latency = now - intended;
            } else {
                rows += client.op(arg);
                now = System.nanoTime();
                latency = now - prev;
            }
            histogram.record(latency);
            if (first) {
                out.firstOpNs = latency;
                first = false;
            }
            prev = now;
            i++;
            arg = arg + 1 == nops ? 0 : arg + 1;
        }
        if (schedule != null && byDuration && !failure.failed) {
            if (prev - stop < 0) { // an open loop lasts its duration (PROTOCOL.md)
                sleepUntil(stop);
                prev = stop;
            } else { // behind schedule at the end: the arrivals due before it that never started
                while (phase + schedule.next() < durationNs) {
                    skipped++;
                    i++;
                }
            }
        }
        out.n = i - skipped;
        out.skipped = skipped;
        out.rows = rows;
        out.endNs = prev;
    }

    /** Client k of a step under load.policy, made untimed, with s its own Step: persistent,
     * client 0 on the session's connection (drv) and the others on connections of their own;
     * per-request, a driver instance of its own; pooled, borrowing from pool. */
    static Policy.Client client(Driver drv, Step s, Load load, Policy.Pool pool, int k) {
        return switch (load.policy) {
            case Policy.PERSISTENT -> new Policy.Persistent(k == 0 ? drv : drv.client(), s, k != 0);
            case Policy.PER_REQUEST -> new Policy.PerRequest(drv.client(), s);
            default -> new Policy.Pooled(pool, s);
        };
    }

    /** A loaded step: C clients, each a platform thread with its own Step (decode buffer) and,
     * for persistent, its own connection; all start at the barrier; their results merge. */
    static void loaded(Driver drv, Step st, Load load, ObjectNode a) throws Exception {
        final int nc = load.clients;
        final Policy.Client[] clients = new Policy.Client[nc];
        final Result[] results = new Result[nc];
        final Failure failure = new Failure();
        Policy.Pool pool = null;
        boolean ok = false;
        try {
            if (load.policy == Policy.POOLED) // made and filled before the barrier, untimed
                pool = new Policy.Pool(drv, st, load.poolSize);
            for (int k = 0; k < nc; k++) {
                clients[k] = client(drv, st.forClient(), load, pool, k);
                results[k] = new Result();
            }
            // Each thread opens its client's connection (in parallel: C connects would take a
            // while one after the other), says it is ready, and waits for go; the CPU count
            // starts between the two, so the connects are not in it. Done, each says so and
            // parks until released: a thread that ended would take its CPU time with it (Cpu
            // reads each live thread's), so the count ends while every client is still alive.
            final CountDownLatch ready = new CountDownLatch(nc), go = new CountDownLatch(1);
            final CountDownLatch finished = new CountDownLatch(nc), release = new CountDownLatch(1);
            final Thread[] threads = new Thread[nc];
            Cpu before, after;
            try {
                for (int k = 0; k < nc; k++) {
                    final int kk = k;
                    threads[k] = new Thread(() -> {
                        boolean signalled = false;
                        try {
                            clients[kk].open();
                            ready.countDown();
                            signalled = true;
                            go.await();
                            if (!failure.failed)
                                load.run(clients[kk], st.nops, kk, results[kk], failure);
                        } catch (Throwable e) { // answered by the main thread, after the others stopped
                            failure.set(e);
                        } finally {
                            if (!signalled)
                                ready.countDown();
                            finished.countDown();
                            try {
                                release.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }, "abworker-client-" + k);
                    threads[k].start();
                }
                ready.await();
                before = Cpu.before();
                go.countDown();
                finished.await();
                after = Cpu.after();
            } finally {
                go.countDown();
                release.countDown();
                for (Thread t : threads)
                    if (t != null)
                        t.join();
            }
            Throwable e = failure.first.get();
            if (e instanceof Exception x)
                throw x;
            if (e instanceof Error x)
                throw x;
            for (Policy.Client c : clients)
                c.finish();
            answerLoaded(st, load, clients, results, before, after, a);
            ok = true;
        } finally {
            for (Policy.Client c : clients) {
                if (c == null)
                    continue;
                if (!ok)
                    c.recover();
                c.close();
            }
            if (pool != null)
                pool.close();
        }
    }

    /** Per-client results merged: counts add up, elapsed from the common start (the earliest
     * client start) to the last client's end, one histogram. */
    private static void answerLoaded(Step st, Load load, Policy.Client[] clients, Result[] results, Cpu before,
            Cpu after, ObjectNode a) {
        Histogram histogram = new Histogram();
        long n = 0, rows = 0, late = 0, skipped = 0;
        long start = results[0].startNs, end = results[0].endNs;
        int ncols = 0;
        ArrayNode perClient = F.arrayNode();
        for (int k = 0; k < results.length; k++) {
            Result r = results[k];
            histogram.merge(r.histogram);
            n += r.n;
            rows += r.rows;
            late += r.late;
            skipped += r.skipped;
            if (r.startNs - start < 0) // nanoTime values compare by their difference
                start = r.startNs;
            if (r.endNs - end > 0)
                end = r.endNs;
            ncols = Math.max(ncols, clients[k].st.ncols);
            ObjectNode c = perClient.addObject();
            c.put("n", r.n);
            c.put("elapsed_ns", r.endNs - r.startNs);
        }
        Main.putFigures(a, st, n, end - start, rows, ncols, before, after, results[0].firstOpNs);
        a.set("histogram", histogram.toJson(F));
        a.put("late", late);
        a.put("skipped", skipped);
        a.put("clients", clients.length);
        a.set("per_client", perClient);
        if (load.policy == Policy.PERSISTENT) // per-request and pooled backends are gone by now
            Main.putServerPids(a, Arrays.stream(clients).mapToLong(Policy.Client::serverPid).filter(pid -> pid != 0)
                    .sorted().distinct().toArray());
    }
}
