// Text forms the protocol fixes, one place for all drivers: calendar arithmetic, timestamp and
// date texts (written and read), Python's repr of a float, plain decimal text, SQL literals and
// the '?'-marker scanner. Reference: src/accessbench/protocol/{generators,sqltext}.py.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "values.hpp"

namespace ab {

// A value of a libpq conninfo or a SOCI connect string (its mysql backend reads them alike):
// single-quoted, with ' and \ escaped by a backslash.
std::string quote_value(const std::string &v);

// ---- calendar (proleptic Gregorian, no time zone) ----------------------------------------

std::int64_t floordiv(std::int64_t a, std::int64_t b);
std::int64_t floormod(std::int64_t a, std::int64_t b);
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);

struct Civil {
    std::int64_t year;
    unsigned month, day, hour, minute, second, micro;
};
Civil civil_from_us(std::int64_t us);
Civil civil_from_days(std::int64_t days);

// ---- writing ------------------------------------------------------------------------------

// Sql: 'YYYY-MM-DD HH:MM:SS[.ffffff]' (datetime.isoformat(sep=" ")); Generate: with 'T' and
// always six fraction digits (the generate op's form).
enum class TimestampForm { Sql, Generate };
std::string format_timestamp(std::int64_t us, TimestampForm form);
std::string format_date(std::int64_t days);

// Python's repr(float): the shortest text that reads back as the same double.
std::string float_repr(double x);

// Decimal text as Python's format(Decimal(text), "f"); nullopt when it is not a number.
std::optional<std::string> decimal_plain(std::string_view in);

// An integer count of 10^-scale as plain decimal text: (-1234, 2) → "-12.34".
std::string decimal_text(std::int64_t units, int scale);

// ---- reading ------------------------------------------------------------------------------

// datetime.fromisoformat (naive values only) → µs since 1970; date.fromisoformat → days.
std::optional<std::int64_t> parse_iso_timestamp(std::string_view s);
std::optional<std::int64_t> parse_iso_date(std::string_view s);

// A server's text results, without locale or errno (these run for every value a scan reads):
// "[-]digits"; "Y…Y-MM-DD[ HH:MM:SS[.f…]]" (years of any length, " BC" after it honoured);
// "[-]H…H:MM:SS[.f…]" (a time of day, or MariaDB's TIME beyond 24 hours).
std::int64_t parse_int(std::string_view s);
std::int64_t parse_date_days(std::string_view s);
std::int64_t parse_timestamp_us(std::string_view s);
std::int64_t parse_time_us(std::string_view s);

bool valid_utf8(std::string_view s);

// ---- SQL text -----------------------------------------------------------------------------

enum class Dialect { PostgreSQL, SQLite, MariaDB };

// Byte offsets of the '?' markers of sql, skipping quotes and comments exactly as sqltext.py.
std::vector<std::size_t> sql_markers(std::string_view sql);

// sql with each marker rewritten by mark(k) (k from 0): "$1", ":p0", "?".
template <typename Mark>
std::string sql_rewrite(std::string_view sql, const std::vector<std::size_t> &marks, Mark mark)
{
    std::string out;
    std::size_t prev = 0;
    for (std::size_t k = 0; k < marks.size(); k++) {
        out.append(sql.substr(prev, marks[k] - prev));
        out += mark(k);
        prev = marks[k] + 1;
    }
    out.append(sql.substr(prev));
    return out;
}

// A parameter as an SQL literal of the dialect (protocol/PROTOCOL.md, Literal rules).
std::string literal(const Param &v, Dialect dialect);

// The statement with every marker replaced by its value's literal.
std::string sql_inline(std::string_view sql, const std::vector<std::size_t> &marks, const Param *values,
                       Dialect dialect);

}  // namespace ab
