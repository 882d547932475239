// What the PostgreSQL drivers (libpqxx, SOCI's postgresql backend) share: the endpoint as one
// libpq conninfo string — TLS keys, search_path and read_only mapped once — the type OIDs of
// the text results they read, and the server's text of each type decoded into a Value.
#pragma once

#include <string>
#include <string_view>

#include "values.hpp"

namespace ab::pg {

// Type OIDs (catalog/pg_type_d.h).
enum Oid : unsigned {
    BOOL = 16, BYTEA = 17, INT8 = 20, INT2 = 21, INT4 = 23, OID = 26, FLOAT4 = 700, FLOAT8 = 701,
    DATE = 1082, TIME = 1083, TIMESTAMP = 1114, TIMESTAMPTZ = 1184, NUMERIC = 1700
};

// The endpoint as libpq's conninfo: host, port, dbname, user, password, the TLS keys (below)
// and options=-c search_path=<schema> -c default_transaction_read_only=on where asked. Throws
// Unsupported for what this libpq cannot do (sslnegotiation before 17, compress).
std::string conninfo(const json &endpoint, const std::string &who);

// How conninfo maps the TLS keys, search_path and read_only, for hello's settings.
void tls_settings(json &settings);

// A PostgreSQL text value of type oid: timestamps (and timestamptz, converted to UTC) → µs,
// dates → days, times → µs, bytea's \x hex → its bytes (into scratch), numeric → its text,
// booleans 't'/'f', integers, floats (strtod of the server's shortest text), anything else →
// text as sent. The Value points into text or scratch.
Value decode_text(unsigned oid, std::string_view text, std::string &scratch);

}  // namespace ab::pg
