// A step message parsed and checked (every protocol error of a step is found here, and the
// `unsupported` ones the driver's declarations decide), its parameters generated and, for
// `literal`, rendered into statement texts — all before anything runs.
#pragma once

#include <cstdint>
#include <string>

#include "driver.hpp"

namespace ab {

// What a step under load asks for beyond the plain loop (protocol/PROTOCOL.md, Steps under load).
struct Load {
    bool per_request = false;        // a connection per operation, inside its time
    bool pooled = false;             // the driver's pool: a connection borrowed per operation
    std::int64_t pool_size = 0;      // pooled: connections in the pool
    std::int64_t duration_ns = 0;    // 0: the step's operations once
    double rate = 0;                 // open loop: operations per second; 0: closed loop
    bool poisson = true;             // arrivals: poisson, or uniform
    std::uint64_t seed = 0;          // schedule_seed
    std::int64_t phase_ns = 0;       // uniform: this worker's first intended start
    std::int64_t late_ns = 1000000;  // an operation starting later than this is late
    std::int64_t skip_ns = -1;       // one that would start later than this is skipped; < 0: none is
    std::int64_t start_at_unix_ns = 0;  // the barrier on the wall clock; 0: at once
};

struct ParsedStep {
    Step st;
    Load load;
    bool loaded = false;       // histogram, duration, rate or policy: a step under load
    std::string latency_file;  // the plain timed pass writes its latencies here
};

// Parses msg against the open endpoint; throws ProtocolError or Unsupported.
ParsedStep parse_step(const json &msg, const json &endpoint, const Driver &driver, const std::string &method);

}  // namespace ab
