#include "pg_common.hpp"

#include <cstdlib>

#include <libpq-fe.h>

#include "driver.hpp"
#include "texts.hpp"

namespace ab::pg {

namespace {

std::string port_of(const json &ep)
{
    auto it = ep.find("port");
    if (it == ep.end() || it->is_null())
        return {};
    return it->is_number() ? std::to_string(it->get<std::int64_t>()) : it->get<std::string>();
}

// sslmode as given (disable: no TLS and no SSLRequest); sslrootcert with verify-ca and
// verify-full; a pinned version as both the minimum and maximum; sslnegotiation=direct.
std::string tls_keys(const json &ep, const std::string &who)
{
    if (ep.value("compress", false))
        throw Unsupported(who + ": PostgreSQL's protocol has no compression (compress is MariaDB's)");
    std::string mode = ep_str(ep, "sslmode").value_or(""), out;
    static const char *MODES[] = {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"};
    if (!mode.empty() && std::find(std::begin(MODES), std::end(MODES), mode) == std::end(MODES))
        throw ProtocolError("endpoint sslmode '" + mode + "': expected disable, prefer, require, verify-ca or verify-full");
    if (!mode.empty())
        out += " sslmode=" + quote_value(mode);
    if (mode == "disable")
        return out;
    auto root = ep_str(ep, "sslrootcert");
    if (root && !root->empty() && mode != "require")
        out += " sslrootcert=" + quote_value(*root);
    if (auto version = ep_str(ep, "tls_version")) {
        if (*version != "TLSv1.2" && *version != "TLSv1.3")
            throw ProtocolError("endpoint tls_version '" + *version + "': expected TLSv1.2 or TLSv1.3");
        out += " ssl_min_protocol_version=" + quote_value(*version) + " ssl_max_protocol_version=" + quote_value(*version);
    }
    if (ep_str(ep, "sslnegotiation").value_or("") == "direct") {
        int v = PQlibVersion();
        if (v < 170000)
            throw Unsupported(who + ": libpq " + std::to_string(v / 10000) + "." + std::to_string(v % 10000) +
                              " has no sslnegotiation=direct (libpq 17 and later)");
        out += " sslnegotiation=direct";
    }
    return out;
}

}  // namespace

std::string conninfo(const json &ep, const std::string &who)
{
    std::string ci;
    static const std::pair<const char *, const char *> KEYS[] = {
        {"host", "host"}, {"database", "dbname"}, {"user", "user"}, {"password", "password"}};
    for (const auto &[field, keyword] : KEYS)
        if (auto v = ep_str(ep, field); v && !v->empty())
            ci += std::string(ci.empty() ? "" : " ") + keyword + "=" + quote_value(*v);
    if (std::string port = port_of(ep); !port.empty())
        ci += " port=" + quote_value(port);
    ci += tls_keys(ep, who);
    std::string options;
    if (auto schema = ep_str(ep, "schema"); schema && !schema->empty())
        options = "-c search_path=" + *schema;
    if (ep_read_only(ep))
        options += std::string(options.empty() ? "" : " ") + "-c default_transaction_read_only=on";
    if (!options.empty())
        ci += " options=" + quote_value(options);
    return ci;
}

void tls_settings(json &s)
{
    s["tls"] = "libpq's own keywords in the conninfo string: sslmode as given (disable: no TLS and no SSLRequest; "
               "absent: libpq's default, prefer), sslrootcert=<the CA file> with verify-ca and verify-full (not with "
               "require, which checks no chain), a pinned version as ssl_min_protocol_version and "
               "ssl_max_protocol_version both set to it, sslnegotiation=direct only with libpq 17 or later (an older "
               "one answers unsupported); libpq makes its SSL context per connection, inside connect's time";
    s["search_path"] = "options=-c search_path=<schema> in the startup packet";
    s["read_only"] = "endpoint read_only: options=-c default_transaction_read_only=on in the startup packet (after "
                     "-c search_path=<schema> when there is one)";
}

namespace {

// timestamptz text "…+HH[:MM[:SS]]" → the offset in seconds east of UTC, 0 when none.
std::int64_t zone_offset_s(std::string_view t)
{
    std::size_t at = t.find_last_of("+-");
    if (at == std::string_view::npos || at < 10)  // the date's own '-'
        return 0;
    int sign = t[at] == '-' ? -1 : 1;
    std::int64_t parts[3] = {0, 0, 0};
    std::size_t k = 0;
    for (std::size_t p = at + 1; p < t.size() && k < 3; p++) {
        if (t[p] == ':')
            k++;
        else if (t[p] >= '0' && t[p] <= '9')
            parts[k] = parts[k] * 10 + (t[p] - '0');
        else
            break;
    }
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
}

int hexv(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

}  // namespace

Value decode_text(unsigned oid, std::string_view text, std::string &scratch)
{
    switch (oid) {
    case BOOL: return Value::integer(Kind::Bool, !text.empty() && text[0] == 't');
    case INT2:
    case INT4:
    case INT8:
    case OID: return Value::integer(Kind::Int, parse_int(text));
    case FLOAT4:
    case FLOAT8: return Value::real(std::strtod(std::string(text).c_str(), nullptr));
    case NUMERIC: return Value::text(Kind::Decimal, text);
    case TIMESTAMP: return Value::integer(Kind::Timestamp, parse_timestamp_us(text));
    case TIMESTAMPTZ:
        return Value::integer(Kind::Timestamp, parse_timestamp_us(text) - zone_offset_s(text) * 1000000);
    case DATE: return Value::integer(Kind::Date, parse_date_days(text));
    case TIME: return Value::integer(Kind::Time, parse_time_us(text));
    case BYTEA:
        if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x') {
            scratch.resize((text.size() - 2) / 2);
            for (std::size_t k = 0; k < scratch.size(); k++)
                scratch[k] = static_cast<char>(hexv(text[2 + 2 * k]) << 4 | hexv(text[3 + 2 * k]));
            return Value::text(Kind::Bytes, scratch);
        }
        return Value::text(Kind::Bytes, text);  // bytea_output = escape: not decoded
    default: return Value::text(Kind::Text, text);  // char, name, text, bpchar, varchar, …
    }
}

}  // namespace ab::pg
