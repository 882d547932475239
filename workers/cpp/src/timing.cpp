#include "timing.hpp"

#include <cerrno>
#include <cmath>
#include <ctime>

#include <sys/resource.h>

namespace ab {

namespace {

constexpr std::int64_t SPIN_NS = 100000;

std::int64_t clock_ns(clockid_t clk)
{
    timespec ts;
    clock_gettime(clk, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void sleep_on(clockid_t clk, std::int64_t ns)
{
    timespec ts{static_cast<time_t>(ns / 1000000000LL), static_cast<long>(ns % 1000000000LL)};
    while (clock_nanosleep(clk, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

std::int64_t tv_ns(timeval tv)
{
    return static_cast<std::int64_t>(tv.tv_sec) * 1000000000LL + static_cast<std::int64_t>(tv.tv_usec) * 1000LL;
}

}  // namespace

std::int64_t now_ns() { return clock_ns(CLOCK_MONOTONIC); }
std::int64_t wall_ns() { return clock_ns(CLOCK_REALTIME); }

void sleep_until(std::int64_t deadline_ns) { sleep_on(CLOCK_MONOTONIC, deadline_ns); }

void pause_until(std::int64_t deadline_ns, bool wall)
{
    clockid_t clk = wall ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    if (deadline_ns - clock_ns(clk) > SPIN_NS)
        sleep_on(clk, deadline_ns - SPIN_NS);
    while (clock_ns(clk) < deadline_ns) {
    }
}

CpuTimes CpuTimes::now()
{
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return {tv_ns(ru.ru_utime), tv_ns(ru.ru_stime)};
}

json Histogram::to_json() const
{
    json buckets = json::array();
    for (int b = 0; b < BUCKETS; b++)
        if (counts_[static_cast<std::size_t>(b)])
            buckets.push_back({b, counts_[static_cast<std::size_t>(b)]});
    return {{"buckets", buckets}, {"overflow", overflow_}, {"min", n_ ? min_ : 0}, {"max", max_}, {"sum", sum_}};
}

std::int64_t Schedule::next()
{
    double offset = at_;
    // as schedule.py: -log(1 - u) * mean gap, in that order, so the doubles agree
    at_ += poisson_ ? -std::log(1.0 - rng_.unit()) * mean_gap_ns_ : mean_gap_ns_;
    return static_cast<std::int64_t>(offset);
}

}  // namespace ab
