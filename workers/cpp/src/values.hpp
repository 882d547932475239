// Values as the protocol knows them (protocol/PROTOCOL.md, Checksum and Types): the decoded
// value a driver reads (Value), a generated parameter (Param), and the canonical checksum over
// rows of values. Reference: src/accessbench/protocol/checksum.py.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ab {

using json = nlohmann::json;

enum class Kind : std::uint8_t { Null, Bool, Int, Float, Decimal, Text, Bytes, Timestamp, Date, Time };

// The protocol's name of a kind ("int", "timestamp", …).
const char *kind_name(Kind k);

// One decoded value. Integers, booleans (0/1), timestamps (µs since 1970), dates (days since
// 1970) and times (µs since midnight) live in i, floats in f, decimal text, text and bytes in
// s, which points at memory the reader keeps until the row has been handed on.
struct Value {
    Kind kind = Kind::Null;
    std::int64_t i = 0;
    double f = 0;
    std::string_view s;

    static Value null() { return {}; }
    static Value integer(Kind k, std::int64_t v) { return {k, v, 0, {}}; }
    static Value real(double v) { return {Kind::Float, 0, v, {}}; }
    static Value text(Kind k, std::string_view v) { return {k, 0, 0, v}; }
};

using Row = std::vector<Value>;

// FNV-1a 64 over the canonical encoding of each value of a row, in column order.
std::uint64_t row_hash(const Row &row);

// The sum of row hashes mod 2^64 (row order does not matter) and the number of rows.
struct Checksum {
    std::uint64_t total = 0;
    std::uint64_t rows = 0;
    void add(const Row &row) { total += row_hash(row), ++rows; }
    std::string hex() const;
};

// A row as typed values, [{"type": T, "value": V}, …]: the checksum op's input form and a
// verification pass's dump.
json row_json(const Row &row);

// A generated parameter: its kind (Null for a NULL; the column's type is its generator's) and
// its value, with the text form drivers that bind text use: digits, "true"/"false", the
// shortest round-trip float, plain decimal text, the string, 'YYYY-MM-DD HH:MM:SS[.ffffff]',
// 'YYYY-MM-DD'; for bytes the raw bytes.
struct Param {
    Kind kind = Kind::Null;
    std::int64_t i = 0;
    double f = 0;
    std::string text;
};

// A generated value as the generate op answers it.
json param_json(const Param &p);

// Lower-case hex of bytes, and back (false when not an even number of hex digits).
std::string hex(std::string_view bytes);
bool unhex(std::string_view hex, std::string &out);

}  // namespace ab
