#include "texts.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ab {

std::string quote_value(const std::string &v)
{
    std::string out = "'";
    for (char c : v) {
        if (c == '\'' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "'";
}

// ---- calendar -----------------------------------------------------------------------------

std::int64_t floordiv(std::int64_t a, std::int64_t b)
{
    std::int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::int64_t floormod(std::int64_t a, std::int64_t b)
{
    std::int64_t m = a % b;
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

// Howard Hinnant's days_from_civil / civil_from_days.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

Civil civil_from_days(std::int64_t z)
{
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    Civil c{};
    c.day = doy - (153 * mp + 2) / 5 + 1;
    c.month = mp < 10 ? mp + 3 : mp - 9;
    c.year = static_cast<std::int64_t>(yoe) + era * 400 + (c.month <= 2);
    return c;
}

Civil civil_from_us(std::int64_t us)
{
    std::int64_t days = floordiv(us, 86400000000LL), rem = us - days * 86400000000LL;
    Civil c = civil_from_days(days);
    c.hour = static_cast<unsigned>(rem / 3600000000LL);
    c.minute = static_cast<unsigned>(rem / 60000000LL % 60);
    c.second = static_cast<unsigned>(rem / 1000000 % 60);
    c.micro = static_cast<unsigned>(rem % 1000000);
    return c;
}

// ---- writing ------------------------------------------------------------------------------

std::string format_timestamp(std::int64_t us, TimestampForm form)
{
    Civil t = civil_from_us(us);
    char buf[64];
    auto y = static_cast<long long>(t.year);
    if (form == TimestampForm::Generate)
        std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02u:%02u:%02u.%06u", y, t.month, t.day, t.hour, t.minute,
                      t.second, t.micro);
    else if (t.micro)
        std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02u:%02u:%02u.%06u", y, t.month, t.day, t.hour, t.minute,
                      t.second, t.micro);
    else
        std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02u:%02u:%02u", y, t.month, t.day, t.hour, t.minute,
                      t.second);
    return buf;
}

std::string format_date(std::int64_t days)
{
    Civil t = civil_from_days(days);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(t.year), t.month, t.day);
    return buf;
}

namespace {

// The shortest "%.*e" text of x that reads back as x: its digits and decimal exponent.
void shortest_digits(double x, std::string &digits, int &exp10)
{
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        std::snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (std::strtod(buf, nullptr) == x)
            break;
    }
    const char *q = buf + (buf[0] == '-');
    for (; *q && *q != 'e'; q++)
        if (std::isdigit(static_cast<unsigned char>(*q)))
            digits += *q;
    exp10 = std::atoi(q + 1);
    while (digits.size() > 1 && digits.back() == '0')
        digits.pop_back();
}

}  // namespace

std::string float_repr(double x)
{
    if (std::isnan(x))
        return "nan";
    if (std::isinf(x))
        return x < 0 ? "-inf" : "inf";
    if (x == 0)
        return std::signbit(x) ? "-0.0" : "0.0";
    std::string dig, out = x < 0 ? "-" : "";
    int e;
    shortest_digits(x, dig, e);
    const int nd = static_cast<int>(dig.size());
    if (e >= 16 || e < -4) {  // repr's exponent form: d[.ddd]e±XX
        out += dig[0];
        if (nd > 1)
            out += "." + dig.substr(1);
        char buf[16];
        std::snprintf(buf, sizeof buf, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
        return out + buf;
    }
    if (e < 0)
        return out + "0." + std::string(static_cast<std::size_t>(-e - 1), '0') + dig;
    for (int k = 0; k <= e; k++)
        out += k < nd ? dig[static_cast<std::size_t>(k)] : '0';
    return out + "." + (nd > e + 1 ? dig.substr(static_cast<std::size_t>(e + 1)) : "0");
}

namespace {

bool iequals(std::string_view a, const char *b)
{
    std::size_t n = std::strlen(b);
    if (a.size() != n)
        return false;
    for (std::size_t k = 0; k < n; k++)
        if (std::tolower(static_cast<unsigned char>(a[k])) != b[k])
            return false;
    return true;
}

// Decimal's special values: NaN, sNaN, Infinity (any case; "inf" too).
std::optional<std::string> decimal_special(std::string_view p, bool neg)
{
    const char *name = iequals(p, "nan") ? "NaN" : iequals(p, "snan") ? "sNaN"
                       : iequals(p, "inf") || iequals(p, "infinity") ? "Infinity" : nullptr;
    if (!name)
        return std::nullopt;
    return std::string(neg ? "-" : "") + name;
}

// The coefficient's digits (leading zeros dropped) and exponent of [digits][.digits][e±n].
bool decimal_parts(std::string_view p, std::string &coef, long long &exp)
{
    bool seen = false, dot = false;
    std::size_t k = 0;
    for (; k < p.size() && p[k] != 'e' && p[k] != 'E'; k++) {
        if (p[k] == '.') {
            if (dot)
                return false;
            dot = true;
        } else if (std::isdigit(static_cast<unsigned char>(p[k]))) {
            seen = true;
            if (!coef.empty() || p[k] != '0')
                coef += p[k];
            exp -= dot;
        } else {
            return false;
        }
    }
    if (k < p.size()) {
        std::string tail(p.substr(k + 1));
        char *end;
        long long e = std::strtoll(tail.c_str(), &end, 10);
        if (tail.empty() || *end)
            return false;
        exp += e;
    }
    if (coef.empty()) {
        coef = "0";
        exp = exp > 0 ? 0 : exp;
    }
    return seen;
}

}  // namespace

std::optional<std::string> decimal_plain(std::string_view in)
{
    while (!in.empty() && std::isspace(static_cast<unsigned char>(in.front())))
        in.remove_prefix(1);
    bool neg = false;
    if (!in.empty() && (in.front() == '+' || in.front() == '-'))
        neg = in.front() == '-', in.remove_prefix(1);
    if (auto special = decimal_special(in, neg))
        return special;
    std::string coef;
    long long exp = 0;
    if (!decimal_parts(in, coef, exp) || (exp > 0 ? exp : -exp) > 100000)
        return std::nullopt;
    std::string out = neg ? "-" : "";
    if (exp >= 0)
        return out + coef + std::string(static_cast<std::size_t>(exp), '0');
    long long k = static_cast<long long>(coef.size()) + exp;
    if (k > 0)
        return out + coef.substr(0, static_cast<std::size_t>(k)) + "." + coef.substr(static_cast<std::size_t>(k));
    return out + "0." + std::string(static_cast<std::size_t>(-k), '0') + coef;
}

std::string decimal_text(std::int64_t units, int scale)
{
    std::uint64_t mag = units < 0 ? 0 - static_cast<std::uint64_t>(units) : static_cast<std::uint64_t>(units);
    std::string digs = std::to_string(mag);
    if (static_cast<int>(digs.size()) <= scale)  // zeros ahead, up to scale + 1 digits
        digs.insert(0, static_cast<std::size_t>(scale + 1) - digs.size(), '0');
    if (scale)
        digs.insert(digs.size() - static_cast<std::size_t>(scale), 1, '.');
    return (units < 0 ? "-" : "") + digs;
}

// ---- reading ISO texts --------------------------------------------------------------------

namespace {

struct Cursor {
    std::string_view s;
    std::size_t at = 0;
    bool done() const { return at >= s.size(); }
    char peek() const { return done() ? '\0' : s[at]; }
    bool digits(int n, int &out)
    {
        int v = 0;
        for (int k = 0; k < n; k++, at++) {
            if (done() || !std::isdigit(static_cast<unsigned char>(s[at])))
                return false;
            v = v * 10 + (s[at] - '0');
        }
        out = v;
        return true;
    }
};

int days_in_month(int y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) ? 29 : dm[m - 1];
}

// date.fromisoformat's YYYY-MM-DD or YYYYMMDD.
bool iso_date(Cursor &c, int &y, int &mo, int &d)
{
    if (!c.digits(4, y))
        return false;
    if (c.peek() == '-') {
        c.at++;
        if (!c.digits(2, mo) || c.peek() != '-')
            return false;
        c.at++;
        if (!c.digits(2, d))
            return false;
    } else if (!c.digits(2, mo) || !c.digits(2, d)) {
        return false;
    }
    return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= days_in_month(y, mo);
}

// ".f…" or ",f…" (at least one digit) as µs, more than six digits cut off.
bool iso_fraction(Cursor &c, int &frac)
{
    c.at++;
    int nd = 0;
    for (; std::isdigit(static_cast<unsigned char>(c.peek())); nd++, c.at++)
        if (nd < 6)
            frac = frac * 10 + (c.peek() - '0');
    for (int k = nd; k < 6; k++)
        frac *= 10;
    return nd > 0;
}

// HH[:MM[:SS[.f…]]] or the compact HHMMSS forms, after the separator.
bool iso_time(Cursor &c, int &h, int &mi, int &se, int &frac)
{
    if (!c.digits(2, h))
        return false;
    bool colon = c.peek() == ':';
    if (!c.done()) {
        c.at += colon;
        if (!c.digits(2, mi))
            return false;
        if (!c.done() && (!colon || c.peek() == ':')) {
            c.at += colon;
            if (!c.digits(2, se))
                return false;
            if ((c.peek() == '.' || c.peek() == ',') && !iso_fraction(c, frac))
                return false;
        }
    }
    return c.done() && h <= 23 && mi <= 59 && se <= 59;  // a zone or junk: only naive values
}

}  // namespace

std::optional<std::int64_t> parse_iso_date(std::string_view s)
{
    Cursor c{s};
    int y, mo, d;
    if (!iso_date(c, y, mo, d) || !c.done())
        return std::nullopt;
    return days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
}

std::optional<std::int64_t> parse_iso_timestamp(std::string_view s)
{
    Cursor c{s};
    int y, mo, d, h = 0, mi = 0, se = 0, frac = 0;
    if (!iso_date(c, y, mo, d))
        return std::nullopt;
    if (!c.done()) {
        c.at++;  // any one separator character
        if (!iso_time(c, h, mi, se, frac))
            return std::nullopt;
    }
    std::int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
    return ((days * 86400 + h * 3600LL + mi * 60LL + se) * 1000000LL) + frac;
}

// ---- reading servers' texts ------------------------------------------------------------------

namespace {

std::int64_t take_digits(std::string_view s, std::size_t &at, int max = 30)
{
    std::int64_t v = 0;
    for (int k = 0; k < max && at < s.size() && s[at] >= '0' && s[at] <= '9'; k++)
        v = v * 10 + (s[at++] - '0');
    return v;
}

std::int64_t ymd_days(std::string_view s, std::size_t &at)
{
    std::int64_t y = take_digits(s, at);
    at++;
    auto m = static_cast<unsigned>(take_digits(s, at, 2));
    at++;
    auto d = static_cast<unsigned>(take_digits(s, at, 2));
    if (s.find(" BC") != std::string_view::npos)
        y = 1 - y;
    return days_from_civil(y, m, d);
}

std::int64_t time_us(std::string_view s, std::size_t &at)
{
    bool neg = at < s.size() && s[at] == '-';
    at += neg;
    std::int64_t h = take_digits(s, at);
    at++;
    std::int64_t mi = take_digits(s, at, 2);
    at++;
    std::int64_t se = take_digits(s, at, 2), us = 0;
    if (at < s.size() && s[at] == '.') {
        int nd = 0;
        for (at++; at < s.size() && s[at] >= '0' && s[at] <= '9'; at++)
            if (nd < 6)
                us = us * 10 + (s[at] - '0'), nd++;
        for (; nd < 6; nd++)
            us *= 10;
    }
    us += (h * 3600 + mi * 60 + se) * 1000000LL;
    return neg ? -us : us;
}

}  // namespace

std::int64_t parse_int(std::string_view s)
{
    std::size_t at = 0;
    bool neg = !s.empty() && s[0] == '-';
    at += neg || (!s.empty() && s[0] == '+');
    auto v = static_cast<std::uint64_t>(take_digits(s, at));
    return neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
}

std::int64_t parse_date_days(std::string_view s)
{
    std::size_t at = 0;
    return ymd_days(s, at);
}

std::int64_t parse_timestamp_us(std::string_view s)
{
    std::size_t at = 0;
    std::int64_t days = ymd_days(s, at);
    at++;
    return days * 86400000000LL + (at < s.size() ? time_us(s, at) : 0);
}

std::int64_t parse_time_us(std::string_view s)
{
    std::size_t at = 0;
    return time_us(s, at);
}

bool valid_utf8(std::string_view s)
{
    for (std::size_t k = 0; k < s.size();) {
        auto lead = static_cast<unsigned char>(s[k]);
        std::size_t follow = lead < 0x80 ? 0 : (lead >> 5) == 6 ? 1 : (lead >> 4) == 14 ? 2 : (lead >> 3) == 30 ? 3 : 4;
        if (follow == 4 || (follow && k + follow >= s.size()))  // not a lead byte, or cut off
            return false;
        for (std::size_t j = 1; j <= follow; j++)  // continuation bytes: 10xxxxxx
            if ((static_cast<unsigned char>(s[k + j]) >> 6) != 2)
                return false;
        k += follow + 1;
    }
    return true;
}

// ---- SQL text -----------------------------------------------------------------------------

std::vector<std::size_t> sql_markers(std::string_view sql)
{
    std::vector<std::size_t> pos;
    const std::size_t n = sql.size();
    for (std::size_t i = 0; i < n;) {
        char ch = sql[i];
        if (ch == '\'' || ch == '"') {  // a quoted string or identifier, its quote doubled inside
            std::size_t end = i + 1;
            while (end < n && !(sql[end] == ch && !(end + 1 < n && sql[end + 1] == ch)))
                end += sql[end] == ch ? 2 : 1;
            i = end + 1;
        } else if (sql.compare(i, 2, "--") == 0) {
            std::size_t nl = sql.find('\n', i);
            i = nl == std::string_view::npos ? n : nl;
        } else if (sql.compare(i, 2, "/*") == 0) {
            std::size_t end = sql.find("*/", i + 2);
            i = end == std::string_view::npos ? n : end + 2;
        } else {
            if (ch == '?')
                pos.push_back(i);
            i++;
        }
    }
    return pos;
}

namespace {

std::string quoted_text(const std::string &s, Dialect dialect)
{
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "''";
        else if (c == '\\' && dialect == Dialect::MariaDB)  // an escape character there
            out += "\\\\";
        else
            out += c;
    }
    return out + "'";
}

}  // namespace

std::string literal(const Param &v, Dialect dialect)
{
    const bool pg = dialect == Dialect::PostgreSQL;
    switch (v.kind) {
    case Kind::Bool:  // SQLite has no boolean: bound as integer 1/0, so written as one
        return dialect == Dialect::SQLite ? (v.i ? "1" : "0") : (v.i ? "TRUE" : "FALSE");
    case Kind::Int:
    case Kind::Decimal: return v.text;
    case Kind::Float: {
        // shortest round-trip digits, always in exponent form: 0.1e0 is a double on MariaDB,
        // where 0.1 is DECIMAL; PostgreSQL reads any such text as numeric, so it is cast
        std::string t = v.text.find('e') == std::string::npos ? v.text + "e0" : v.text;
        return pg ? t + "::float8" : t;
    }
    case Kind::Date: return (pg ? "DATE '" : "'") + v.text + "'";
    case Kind::Timestamp: return "'" + v.text + "'";
    case Kind::Bytes: return pg ? "'\\x" + hex(v.text) + "'::bytea" : "X'" + hex(v.text) + "'";
    case Kind::Text: return quoted_text(v.text, dialect);
    default: return "NULL";
    }
}

std::string sql_inline(std::string_view sql, const std::vector<std::size_t> &marks, const Param *values,
                       Dialect dialect)
{
    return sql_rewrite(sql, marks, [&](std::size_t k) { return literal(values[k], dialect); });
}

}  // namespace ab
