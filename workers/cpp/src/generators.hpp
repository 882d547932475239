// splitmix64 and the value generators (protocol/PROTOCOL.md, Generators). Reference:
// src/accessbench/protocol/{prng,generators}.py; bit for bit against protocol/vectors/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "values.hpp"

namespace ab {

struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next()
    {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

// One generator spec: value i for i = 0, 1, 2, … in order. The constructor throws
// ProtocolError for a malformed spec.
class Generator {
public:
    explicit Generator(const json &spec);
    Param next(std::int64_t i);
    Kind type() const { return type_; }

private:
    enum class G { Seq, Uniform, Choice, Text, Timestamp, Const, Float, Decimal, Date, Bytes };
    G kind_;
    Kind type_;
    SplitMix64 rng_{0};
    double null_ = 0;
    std::int64_t start_ = 1, step_ = 1, div_ = 1, mod_ = 0;  // seq; timestamp/date: start, step
    std::int64_t lo_ = 0;                                     // uniform, decimal
    std::uint64_t span_ = 0, jitter_ = 0;
    int scale_ = 0;
    double flo_ = 0, fhi_ = 0, pow10_ = 0;  // float
    std::vector<Param> choices_;            // choice, const
    std::string pattern_;                   // text
    std::size_t length_ = 0;                // bytes

    void init_type(const json &spec);
    void init_kind(const json &spec);
    void init_range(const json &spec);
    void init_choices(const json &spec);
    void init_time(const json &spec);
    void init_float(const json &spec);
    Param make(std::int64_t i);
};

}  // namespace ab
