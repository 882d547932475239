#include "values.hpp"

#include <cstdio>
#include <cstring>

#include "texts.hpp"

namespace ab {

namespace {

constexpr std::uint64_t FNV_OFFSET = 0xcbf29ce484222325ULL;
constexpr std::uint64_t FNV_PRIME = 0x100000001b3ULL;

struct Fnv {
    std::uint64_t h = FNV_OFFSET;
    void byte(unsigned char b) { h = (h ^ b) * FNV_PRIME; }
    void le(std::uint64_t v, int bytes)
    {
        for (int k = 0; k < bytes; k++)
            byte(static_cast<unsigned char>(v >> (8 * k)));
    }
    void data(std::string_view s)
    {
        for (char c : s)
            byte(static_cast<unsigned char>(c));
    }
    void sized(char tag, std::string_view s)
    {
        byte(static_cast<unsigned char>(tag));
        le(static_cast<std::uint32_t>(s.size()), 4);
        data(s);
    }
};

std::uint64_t bits_of(double f)
{
    std::uint64_t bits;
    std::memcpy(&bits, &f, 8);
    return bits;
}

std::string float_bits_hex(double f)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bits_of(f)));
    return buf;
}

}  // namespace

const char *kind_name(Kind k)
{
    switch (k) {
    case Kind::Null: return "null";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Decimal: return "decimal";
    case Kind::Text: return "text";
    case Kind::Bytes: return "bytes";
    case Kind::Timestamp: return "timestamp";
    case Kind::Date: return "date";
    case Kind::Time: return "time";
    }
    return "?";
}

std::uint64_t row_hash(const Row &row)
{
    Fnv h;
    for (const Value &v : row) {
        switch (v.kind) {
        case Kind::Null: h.byte('N'); break;
        case Kind::Bool: h.byte('B'), h.byte(v.i ? 1 : 0); break;
        case Kind::Int: h.byte('I'), h.le(static_cast<std::uint64_t>(v.i), 8); break;
        case Kind::Float: h.byte('F'), h.le(bits_of(v.f), 8); break;
        case Kind::Decimal: h.sized('D', v.s); break;
        case Kind::Text: h.sized('S', v.s); break;
        case Kind::Bytes: h.sized('X', v.s); break;
        case Kind::Timestamp: h.byte('T'), h.le(static_cast<std::uint64_t>(v.i), 8); break;
        case Kind::Date: h.byte('d'), h.le(static_cast<std::uint32_t>(static_cast<std::int32_t>(v.i)), 4); break;
        case Kind::Time: h.byte('t'), h.le(static_cast<std::uint64_t>(v.i), 8); break;
        }
    }
    return h.h;
}

std::string Checksum::hex() const
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(total));
    return buf;
}

namespace {

// One value as row_hash encodes it, typed (checksum.py's typed()): text that is not UTF-8
// cannot be a JSON string, so it is dumped as its bytes.
json value_json(const Value &v)
{
    json typed = {{"type", kind_name(v.kind)}};
    switch (v.kind) {
    case Kind::Null: break;
    case Kind::Bool: typed["value"] = v.i != 0; break;
    case Kind::Int:
    case Kind::Timestamp:
    case Kind::Time: typed["value"] = v.i; break;
    case Kind::Date: typed["value"] = static_cast<std::int32_t>(v.i); break;
    case Kind::Float: typed["value"] = float_bits_hex(v.f); break;
    case Kind::Decimal:
    case Kind::Text:
        if (valid_utf8(v.s)) {
            typed["value"] = std::string(v.s);
            break;
        }
        typed["type"] = "bytes";
        typed["value"] = hex(v.s);
        break;
    case Kind::Bytes: typed["value"] = hex(v.s); break;
    }
    return typed;
}

}  // namespace

json row_json(const Row &row)
{
    json out = json::array();
    for (const Value &v : row)
        out.push_back(value_json(v));
    return out;
}

json param_json(const Param &p)
{
    switch (p.kind) {
    case Kind::Null: return nullptr;
    case Kind::Bool: return p.i != 0;
    case Kind::Int: return p.i;
    case Kind::Float: return float_bits_hex(p.f);
    case Kind::Timestamp: return format_timestamp(p.i, TimestampForm::Generate);
    case Kind::Bytes: return hex(p.text);
    default: return p.text;  // decimal, text, date: their text
    }
}

std::string hex(std::string_view bytes)
{
    static const char digits[] = "0123456789abcdef";
    std::string out(bytes.size() * 2, '0');
    for (std::size_t k = 0; k < bytes.size(); k++) {
        auto b = static_cast<unsigned char>(bytes[k]);
        out[2 * k] = digits[b >> 4];
        out[2 * k + 1] = digits[b & 15];
    }
    return out;
}

namespace {
int hexdigit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}
}  // namespace

bool unhex(std::string_view h, std::string &out)
{
    if (h.size() % 2)
        return false;
    out.resize(h.size() / 2);
    for (std::size_t k = 0; k < h.size(); k += 2) {
        int hi = hexdigit(h[k]), lo = hexdigit(h[k + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[k / 2] = static_cast<char>(hi * 16 + lo);
    }
    return true;
}

}  // namespace ab
