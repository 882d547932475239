#include "generators.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "errors.hpp"
#include "texts.hpp"

namespace ab {

namespace {

struct KindInfo {
    const char *name;
    Kind type;  // Null: the spec's (choice, const)
};
constexpr KindInfo KINDS[] = {{"seq", Kind::Int},        {"uniform", Kind::Int},      {"choice", Kind::Null},
                              {"text", Kind::Text},      {"timestamp", Kind::Timestamp}, {"const", Kind::Null},
                              {"float", Kind::Float},    {"decimal", Kind::Decimal},  {"date", Kind::Date},
                              {"bytes", Kind::Bytes}};
constexpr Kind SPEC_TYPES[] = {Kind::Int, Kind::Bool, Kind::Float, Kind::Decimal,
                               Kind::Text, Kind::Date, Kind::Timestamp, Kind::Bytes};

// An integer field (an integral real too); dflt when absent or null.
std::int64_t i64(const json &spec, const char *key, std::int64_t dflt, bool *present = nullptr)
{
    auto it = spec.find(key);
    bool has = it != spec.end() && !it->is_null();
    if (present)
        *present = has;
    if (!has)
        return dflt;
    if (it->is_number_unsigned())
        return static_cast<std::int64_t>(it->get<std::uint64_t>());
    if (it->is_number_integer())
        return it->get<std::int64_t>();
    if (it->is_number_float() && it->get<double>() == std::floor(it->get<double>()))
        return static_cast<std::int64_t>(it->get<double>());
    throw ProtocolError(std::string("generator field '") + key + "' must be an integer");
}

// The text form of a value whose kind and native value are set (Param::text).
void set_text(Param &p)
{
    switch (p.kind) {
    case Kind::Bool: p.text = p.i ? "true" : "false"; break;
    case Kind::Int: p.text = std::to_string(p.i); break;
    case Kind::Float: p.text = float_repr(p.f); break;
    case Kind::Timestamp: p.text = format_timestamp(p.i, TimestampForm::Sql); break;
    case Kind::Date: p.text = format_date(p.i); break;
    default: break;  // decimal, text, bytes: made with their text
    }
}

// A string of a choice's or const's type (decimal digits, YYYY-MM-DD, ISO 8601, hex).
bool from_text(const std::string &s, Param &out)
{
    switch (out.kind) {
    case Kind::Text: out.text = s; return true;
    case Kind::Decimal: {
        auto d = decimal_plain(s);
        out.text = d.value_or("");
        return d.has_value();
    }
    case Kind::Date: {
        auto d = parse_iso_date(s);
        out.i = d.value_or(0);
        return d.has_value();
    }
    case Kind::Timestamp: {
        auto t = parse_iso_timestamp(s);
        out.i = t.value_or(0);
        return t.has_value();
    }
    case Kind::Bytes: return unhex(s, out.text);
    default: return false;
    }
}

// A JSON value of a choice list or const, of the spec's type.
bool param_from_json(const json &v, Kind type, Param &out)
{
    out = Param{};
    out.kind = type;
    if (v.is_null())
        out.kind = Kind::Null;
    else if (type == Kind::Bool && v.is_boolean())
        out.i = v.get<bool>();
    else if (type == Kind::Int && v.is_number_integer())
        out.i = v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>()) : v.get<std::int64_t>();
    else if (type == Kind::Float && v.is_number())
        out.f = v.get<double>();
    else if (!v.is_string() || !from_text(v.get<std::string>(), out))
        return false;
    set_text(out);
    return true;
}

}  // namespace

Generator::Generator(const json &spec)
{
    if (!spec.is_object())
        throw ProtocolError("a generator spec must be an object");
    if (!spec.contains("kind") || !spec["kind"].is_string())
        throw ProtocolError("generator spec without kind");
    std::string kind = spec["kind"];
    auto found = std::find_if(std::begin(KINDS), std::end(KINDS), [&](const KindInfo &k) { return kind == k.name; });
    if (found == std::end(KINDS))
        throw ProtocolError("unknown generator kind '" + kind + "'");
    kind_ = static_cast<G>(found - std::begin(KINDS));
    rng_.state = static_cast<std::uint64_t>(i64(spec, "seed", 0));
    if (spec.contains("null") && spec["null"].is_number())
        null_ = spec["null"].get<double>();
    init_kind(spec);
}

// The spec's type: declared (one its kind makes), its kind's, or (choice, const without one) its
// first value's.
void Generator::init_type(const json &spec)
{
    const KindInfo &info = KINDS[static_cast<int>(kind_)];
    const json *first = kind_ == G::Choice ? (spec.contains("values") && spec["values"].is_array() &&
                                              !spec["values"].empty() ? &spec["values"][0] : nullptr)
                                           : (spec.contains("value") ? &spec["value"] : nullptr);
    if (spec.contains("type") && spec["type"].is_string()) {
        std::string name = spec["type"];
        auto t = std::find_if(std::begin(SPEC_TYPES), std::end(SPEC_TYPES), [&](Kind k) { return name == kind_name(k); });
        if (t == std::end(SPEC_TYPES) || (info.type != Kind::Null && info.type != *t))
            throw ProtocolError(std::string(info.name) + ": unknown type or not one this kind makes");
        type_ = *t;
    } else {
        type_ = info.type != Kind::Null ? info.type
                : first && first->is_boolean() ? Kind::Bool
                : first && first->is_number_integer() ? Kind::Int
                : first && first->is_number_float() ? Kind::Float : Kind::Text;
    }
}

// The kind's own fields.
void Generator::init_kind(const json &spec)
{
    init_type(spec);
    switch (kind_) {
    case G::Seq:
        start_ = i64(spec, "start", 1), step_ = i64(spec, "step", 1), div_ = i64(spec, "div", 1), mod_ = i64(spec, "mod", 0);
        if (div_ == 0)
            throw ProtocolError("seq: div must not be 0");
        break;
    case G::Uniform:
    case G::Decimal: init_range(spec); break;
    case G::Choice:
    case G::Const: init_choices(spec); break;
    case G::Text:
        if (!spec.contains("pattern") || !spec["pattern"].is_string())
            throw ProtocolError("text: pattern must be a string");
        pattern_ = spec["pattern"];
        break;
    case G::Timestamp:
    case G::Date: init_time(spec); break;
    case G::Float: init_float(spec); break;
    case G::Bytes: {
        bool has;
        std::int64_t length = i64(spec, "length", 0, &has);
        if (!has || length < 0 || length > (1 << 30))
            throw ProtocolError("bytes: length must be an integer >= 0");
        length_ = static_cast<std::size_t>(length);
        break;
    }
    }
}

void Generator::init_range(const json &spec)
{
    bool has_lo, has_hi;
    lo_ = i64(spec, "lo", 0, &has_lo);
    std::int64_t hi = i64(spec, "hi", 0, &has_hi), scale = i64(spec, "scale", 0);
    if (!has_lo || !has_hi || scale < 0 || scale > 1000)
        throw ProtocolError("lo and hi must be integers (decimal: units of 10^-scale, 0 <= scale <= 1000)");
    span_ = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo_) + 1;
    scale_ = static_cast<int>(scale);
}

void Generator::init_choices(const json &spec)
{
    bool choice = kind_ == G::Choice;
    const char *key = choice ? "values" : "value";
    if (!spec.contains(key) || (choice && (!spec[key].is_array() || spec[key].empty())))
        throw ProtocolError(choice ? "choice: values must be a non-empty list" : "const: value is missing");
    json values = choice ? spec[key] : json::array({spec[key]});
    for (const json &v : values) {
        Param p;
        if (!param_from_json(v, type_, p))
            throw ProtocolError(std::string(choice ? "choice" : "const") + ": a value is not a " + kind_name(type_) +
                                " (decimal, date, timestamp and bytes: their text form)");
        choices_.push_back(std::move(p));
    }
}

void Generator::init_time(const json &spec)
{
    bool ts = kind_ == G::Timestamp;
    auto start = spec.contains("start") && spec["start"].is_string()
                     ? (ts ? parse_iso_timestamp(spec["start"].get<std::string>())
                           : parse_iso_date(spec["start"].get<std::string>()))
                     : std::nullopt;
    if (!start)
        throw ProtocolError(ts ? "timestamp: start must be an ISO timestamp without time zone, like 2001-01-01T00:00:00"
                               : "date: start must be an ISO date, like 2001-01-31");
    start_ = *start;
    step_ = i64(spec, ts ? "step_us" : "step_days", ts ? 1000000 : 1);
    std::int64_t jitter = i64(spec, ts ? "jitter_us" : "jitter_days", 0);
    if (jitter < 0)
        throw ProtocolError("timestamp/date: jitter must be >= 0");
    jitter_ = static_cast<std::uint64_t>(jitter);
}

void Generator::init_float(const json &spec)
{
    bool has_digits;
    if (!spec.contains("lo") || !spec.contains("hi") || !spec["lo"].is_number() || !spec["hi"].is_number())
        throw ProtocolError("float: lo and hi must be numbers");
    std::int64_t d = i64(spec, "digits", 0, &has_digits);
    if (d < 0 || d > 15)
        throw ProtocolError("float: digits must be an integer from 0 to 15");
    flo_ = spec["lo"].get<double>();
    fhi_ = spec["hi"].get<double>();
    if (has_digits)  // 10^d by repeated exact multiplication, as every worker makes it
        for (pow10_ = 1.0; d > 0; d--)
            pow10_ *= 10.0;
}

Param Generator::next(std::int64_t i)
{
    if (null_ > 0 && rng_.unit() < null_)
        return Param{};
    return make(i);
}

Param Generator::make(std::int64_t i)
{
    Param p;
    p.kind = type_;
    switch (kind_) {
    case G::Seq: {
        std::int64_t v = floordiv(start_ + i * step_, div_);
        p.i = mod_ ? floormod(v, mod_) : v;
        break;
    }
    case G::Uniform: {
        std::uint64_t r = rng_.next();
        p.i = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo_) + (span_ ? r % span_ : r));
        break;
    }
    case G::Choice: return choices_[rng_.next() % choices_.size()];
    case G::Const: return choices_[0];
    case G::Text:
        p.text = pattern_;
        for (char &ch : p.text)
            ch = ch == '#' ? static_cast<char>('0' + rng_.next() % 10) : ch == '?' ? static_cast<char>('a' + rng_.next() % 26) : ch;
        return p;
    case G::Timestamp:
    case G::Date:
        p.i = start_ + i * step_ + (jitter_ ? static_cast<std::int64_t>(rng_.next() % (jitter_ + 1)) : 0);
        break;
    case G::Float: {
        double v = flo_ + rng_.unit() * (fhi_ - flo_);
        p.f = pow10_ > 0 ? std::floor(v * pow10_ + 0.5) / pow10_ : v;
        break;
    }
    case G::Decimal: {
        std::uint64_t r = rng_.next();
        p.text = decimal_text(static_cast<std::int64_t>(static_cast<std::uint64_t>(lo_) + (span_ ? r % span_ : r)), scale_);
        return p;
    }
    case G::Bytes:
        p.text.resize(length_);
        for (char &b : p.text)
            b = static_cast<char>(rng_.next() % 256);
        return p;
    }
    set_text(p);
    return p;
}

}  // namespace ab
