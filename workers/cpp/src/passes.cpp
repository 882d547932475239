#include "passes.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "assoc.hpp"
#include "timing.hpp"

namespace ab {

// One operation, with the BEGIN/COMMIT of commit_every around it: i picks the operation's
// arguments, seq counts the operations this connection has run in the step (under load the
// arguments cycle while seq goes on). A connect step's operation is the host's: a new
// connection opened and closed, as open makes it but asking the server nothing.
std::int64_t Passes::run_op(Connection &conn, std::int64_t i, std::int64_t seq)
{
    if (st_.kind == StepKind::Connect) {
        auto fresh = driver_.connection();
        fresh->open(st_.endpoint, nullptr);
        fresh->close();
        return 0;
    }
    std::int64_t k = st_.commit_every;
    if (k && seq % k == 0)
        conn.txn_begin(st_);
    std::int64_t count = st_.kind == StepKind::Load ? st_.assoc->op(conn, st_, i) : conn.op(st_, i);
    if (k && ((seq + 1) % k == 0 || seq + 1 == st_.nops))
        conn.txn_commit(st_);
    return count;
}

// Connection per request: connecting, preparing what the operation needs, running it and
// disconnecting are all part of the operation.
std::int64_t Passes::client_op(Connection &conn, bool per_request, std::int64_t i, std::int64_t seq)
{
    if (pool_ && st_.kind != StepKind::Connect)
        return pool_->op(st_, i);
    if (!per_request || st_.kind == StepKind::Connect)
        return run_op(conn, i, seq);
    auto own = driver_.connection();
    own->open(st_.endpoint, nullptr);
    own->begin(st_);
    std::int64_t count = run_op(*own, i, 0);
    own->close();  // the server drops whatever the request prepared
    return count;
}

json Passes::timed_fields(std::int64_t n, std::int64_t elapsed_ns, std::int64_t rows, const CpuTimes &before) const
{
    CpuTimes after = CpuTimes::now();
    json a = {{"n", n}, {"elapsed_ns", elapsed_ns}, {"rows", rows}};
    if (st_.reads() && st_.ncols)
        a["values"] = rows * static_cast<std::int64_t>(st_.ncols);
    a["user_ns"] = after.user_ns - before.user_ns;
    a["sys_ns"] = after.sys_ns - before.sys_ns;
    return a;
}

json Passes::verify(Connection &conn, bool per_request)
{
    Sink sink;
    const bool reads = st_.reads() || st_.kind == StepKind::Load;
    sink.dump_max = reads ? st_.dump : 0;  // statements that read no rows dump nothing
    st_.sink = &sink;
    if (st_.assoc)
        st_.assoc->take_statements();
    std::int64_t rows = 0, first = 0, start = now_ns();
    for (std::int64_t i = 0; i < st_.nops; i++) {
        rows += client_op(conn, per_request, i, i);
        if (i == 0)  // the cold start: the first operation, its rows checksummed
            first = now_ns() - start;
    }
    st_.sink = nullptr;
    json a = {{"n", st_.nops}, {"rows", rows}, {"values", reads ? sink.values : 0}, {"checksum", sink.sum.hex()},
              {"first_op_ns", first}};
    // the statements the pass sent, where the worker can count them: a load's (counted as
    // they are sent), one per operation of a scan or an exec step without BEGIN/COMMIT (a
    // batch's round trips are its style's)
    if (st_.assoc)
        a["statements"] = st_.assoc->take_statements();
    else if ((st_.kind == StepKind::Scan || st_.kind == StepKind::Exec) && !st_.commit_every)
        a["statements"] = st_.nops;
    if (sink.dump_max > 0)
        a["dump"] = std::move(sink.dump);
    return a;
}

namespace {

void write_latencies(const std::string &path, const std::vector<std::uint64_t> &lat)
{
    std::ofstream f(path, std::ios::binary);
    for (std::uint64_t v : lat) {
        unsigned char b[8];
        for (int k = 0; k < 8; k++)
            b[k] = static_cast<unsigned char>(v >> (8 * k));
        f.write(reinterpret_cast<const char *>(b), 8);
    }
    f.close();
    if (!f)
        throw WorkerError("internal", "latency_file " + path + ": " + std::strerror(errno));
}

}  // namespace

json Passes::timed(Connection &conn, const std::string &latency_file)
{
    std::vector<std::uint64_t> lat(static_cast<std::size_t>(st_.nops));  // allocated before the clock
    std::int64_t rows = 0;
    CpuTimes before = CpuTimes::now();
    std::int64_t start = now_ns(), prev = start;
    for (std::int64_t i = 0; i < st_.nops; i++) {
        rows += run_op(conn, i, i);
        std::int64_t now = now_ns();
        lat[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(now - prev);
        prev = now;
    }
    json a = timed_fields(st_.nops, prev - start, rows, before);
    if (!latency_file.empty())
        write_latencies(latency_file, lat);
    a["first_op_ns"] = lat.empty() ? 0 : lat[0];
    if (std::int64_t pid = conn.server_pid())
        a["server_pids"] = {pid};
    return a;
}

namespace {

// One client's loop under load and what it counted.
struct ClientRun {
    std::int64_t n = 0, rows = 0, late = 0, skipped = 0, first_op_ns = 0;
    Histogram hist;
};

// Open loop: waits for the operation's intended start (sleep, then spin); false when it is to
// be skipped (it would start more than skip_ns late); a late one is counted.
bool await_arrival(std::int64_t intended, const Load &L, ClientRun &run)
{
    std::int64_t now = now_ns();
    if (now < intended) {
        pause_until(intended, false);
    } else if (L.skip_ns >= 0 && now - intended > L.skip_ns) {
        run.skipped++;
        return false;
    } else if (now - intended > L.late_ns) {
        run.late++;
    }
    return true;
}

// An open loop by duration lasts its duration: when its arrivals are over it sleeps (untimed)
// to the end; one still behind schedule when it passed counts the arrivals due before the
// end that it never started as skipped. Returns the client's end.
std::int64_t end_open_loop(Schedule &sched, std::int64_t origin, std::int64_t stop, std::int64_t prev, ClientRun &run)
{
    if (prev < stop) {
        sleep_until(stop);
        return stop;
    }
    while (origin + sched.next() < stop)
        run.skipped++;
    return prev;
}

}  // namespace

// The client connects and prepares before the barrier (untimed, the caller's connection or the
// pool), then waits until the wall clock reaches start_at_unix_ns. Closed loop: latency from
// the end of the previous operation; open loop: from the operation's intended start (no
// coordinated omission).
json Passes::loaded(Connection &conn, const Load &L, Pool *pool)
{
    pool_ = pool;
    auto run = std::make_unique<ClientRun>();  // the histogram's array: off the stack
    const bool open_loop = L.rate > 0;
    Schedule sched(open_loop ? L.rate : 1, L.poisson, L.seed);
    CpuTimes before = CpuTimes::now();
    if (L.start_at_unix_ns)
        pause_until(L.start_at_unix_ns, true);
    const std::int64_t start = now_ns(), stop = L.duration_ns ? start + L.duration_ns : 0;
    const std::int64_t origin = start + (open_loop && !L.poisson ? L.phase_ns : 0);  // uniform: this worker's phase
    std::int64_t prev = start;
    for (std::int64_t i = 0; stop ? prev < stop : i < st_.nops; i++) {
        std::int64_t from = prev;
        if (open_loop) {
            from = origin + sched.next();
            if (stop && from >= stop)  // the next arrival falls after the trial
                break;
            if (!await_arrival(from, L, *run))
                continue;
        }
        run->rows += client_op(conn, L.per_request, i % st_.nops, run->n);
        prev = now_ns();
        run->hist.record(static_cast<std::uint64_t>(prev - from));
        if (!run->n++)
            run->first_op_ns = prev - from;
    }
    if (open_loop && stop)
        prev = end_open_loop(sched, origin, stop, prev, *run);
    // commit_every by duration: the last group's transaction is still open (untimed)
    std::int64_t k = st_.commit_every;
    if (k && !L.per_request && !pool && run->n && run->n % k && run->n != st_.nops)
        conn.txn_commit(st_);
    json a = timed_fields(run->n, prev - start, run->rows, before);
    a["first_op_ns"] = run->first_op_ns;
    a["histogram"] = run->hist.to_json();
    a["late"] = run->late;
    a["skipped"] = run->skipped;
    a["clients"] = 1;
    a["per_client"] = {{{"n", run->n}, {"elapsed_ns", prev - start}}};
    if (pool)
        a["server_pids"] = pool->server_pids();
    else if (std::int64_t pid = L.per_request ? 0 : conn.server_pid())
        a["server_pids"] = {pid};
    return a;
}

}  // namespace ab
