// The loops the host owns: the verification pass, the timed pass and the loop of a step under
// load (one client: this worker's concurrency is processes). A driver supplies operations only.
#pragma once

#include "driver.hpp"
#include "step.hpp"

namespace ab {

class Passes {
public:
    Passes(Driver &driver, Step &st) : driver_(driver), st_(st) {}

    // Untimed: every row checksummed; first_op_ns the cold start. per_request: each operation
    // connects, runs and disconnects on a connection of its own (conn is then unused).
    json verify(Connection &conn, bool per_request);
    // Operation i runs from the end of i−1 to its own end, one clock read per operation.
    json timed(Connection &conn, const std::string &latency_file);
    // A step under load: by count or duration, closed or open loop, a histogram of latencies;
    // with a pool, each operation on a connection borrowed from it (conn is then unused).
    json loaded(Connection &conn, const Load &load, Pool *pool = nullptr);

private:
    Driver &driver_;
    Step &st_;
    Pool *pool_ = nullptr;

    std::int64_t run_op(Connection &conn, std::int64_t i, std::int64_t seq);
    std::int64_t client_op(Connection &conn, bool per_request, std::int64_t i, std::int64_t seq);
    json timed_fields(std::int64_t n, std::int64_t elapsed_ns, std::int64_t rows, const struct CpuTimes &before) const;
};

}  // namespace ab
