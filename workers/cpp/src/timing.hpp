// Clocks, the latency histogram and the arrival schedule of steps under load (protocol/
// PROTOCOL.md, Steps under load). Reference: src/accessbench/protocol/{histogram,schedule}.py.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "generators.hpp"
#include "values.hpp"

namespace ab {

// The monotonic clock (CLOCK_MONOTONIC), and the wall clock (CLOCK_REALTIME), in ns.
std::int64_t now_ns();
std::int64_t wall_ns();

// Sleep until this close to the deadline, then spin: a sleep overshoots by the timer slack
// (~50–60 µs), which would otherwise count as the client's own lateness.
void pause_until(std::int64_t deadline_ns, bool wall);
void sleep_until(std::int64_t deadline_ns);

// CPU time of the process so far (getrusage), user and system, in ns.
struct CpuTimes {
    std::int64_t user_ns, sys_ns;
    static CpuTimes now();
};

// Log-linear over integer nanoseconds, integer operations only so every language files a
// value in the same bucket: v < 256 is bucket v; otherwise, with L = bit length of v, bucket
// (L − 8) · 128 + (v >> (L − 8)) — at most 0.8% wide. Values ≥ 2^40 count in overflow. A
// fixed array of counts: recording is an index and an increment, no allocation.
class Histogram {
public:
    void record(std::uint64_t v)
    {
        if (v >= LIMIT)
            overflow_++;
        else
            counts_[index(v)]++;
        if (!n_ || v < min_)
            min_ = v;
        if (v > max_)
            max_ = v;
        sum_ += v;
        n_++;
    }
    json to_json() const;

private:
    static constexpr std::uint64_t LIMIT = 1ULL << 40;
    static constexpr int BUCKETS = (40 - 8 + 1) * 128 + 256;
    static int index(std::uint64_t v)
    {
        if (v < 256)
            return static_cast<int>(v);
        int shift = 64 - __builtin_clzll(v) - 8;
        return shift * 128 + static_cast<int>(v >> shift);
    }
    std::array<std::uint64_t, BUCKETS> counts_{};
    std::uint64_t n_ = 0, overflow_ = 0, min_ = 0, max_ = 0, sum_ = 0;
};

// Intended start offsets of an open loop, in ns from the start: 0 first, then a double
// accumulator advanced by 1e9 / rate (uniform) or −ln(1 − u) · 1e9 / rate (poisson, u from
// splitmix64), each offset truncated toward zero.
class Schedule {
public:
    Schedule(double rate_per_s, bool poisson, std::uint64_t seed)
        : mean_gap_ns_(1e9 / rate_per_s), poisson_(poisson), rng_{seed}
    {
    }
    std::int64_t next();

private:
    double mean_gap_ns_, at_ = 0;
    bool poisson_;
    SplitMix64 rng_;
};

}  // namespace ab
