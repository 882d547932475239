// cpp-soci-sqlite: SOCI's sqlite3 backend (over the system's libsqlite3). In process: literal
// and scans prepare, step and finalize the text each time (no parameters); extended the same
// with sqlite3_bind_* of each use(); prepared: sqlite3_prepare_v2 once in the first operation,
// then sqlite3_reset, bind and step per execution (SOCI 4.0.3, src/backends/sqlite3/).
#include <soci/sqlite3/soci-sqlite3.h>

#include "drivers.hpp"
#include "soci_common.hpp"

namespace ab {

namespace {

using namespace ::sqlite_api;  // SOCI declares sqlite3.h in its own namespace

// A connect string value, double-quoted as SOCI's sqlite3 backend reads it.
std::string dquoted(const std::string &v) { return "\"" + v + "\""; }

class SociSqlite : public soci_methods::SociDriver {
public:
    std::string driver() const override { return "SOCI (sqlite3 backend)"; }
    std::vector<std::string> dbms() const override { return {"sqlite"}; }
    std::string method() const override { return "cpp-soci-sqlite"; }
    const soci::backend_factory &factory() const override { return soci::sqlite3; }
    soci_methods::BytesAs bytes_as() const override { return soci_methods::BytesAs::Blob; }

    std::string connect_string(const json &ep) const override
    {
        auto file = ep_str(ep, "file");
        if (!file)
            throw ProtocolError("a sqlite endpoint needs a file");
        if (file->find('"') != std::string::npos)
            throw Unsupported("cpp-soci-sqlite: SOCI's connect string cannot hold a file name with a double quote");
        return "db=" + dquoted(*file) + " timeout=5" + (ep_read_only(ep) ? " readonly=1" : "");
    }

    std::int64_t connected(soci::session &, const json &, json *info) const override
    {
        if (info)
            (*info)["server_version"] = sqlite3_libversion();
        return 0;  // in process: no server
    }

    std::string sqlstate(const soci::soci_error &, soci::session *) const override { return {}; }

    // The row SOCI has just stepped to (it fetches one row per fetch into a row), read from its
    // sqlite3_stmt by each value's storage class, as every SQLite method reads it — except that
    // SOCI's row holds a column it describes as dt_blob in a std::string, read with
    // sqlite3_column_text, which turns the value's type to TEXT: such a column's values are
    // its bytes (SOCI's own reading of a BLOB column).
    void read_row(soci::statement &st, const soci::row &described, Row &row, std::vector<std::string> &) const override
    {
        auto &be = static_cast<soci::sqlite3_statement_backend &>(*st.get_backend());
        sqlite3_stmt *s = be.stmt_;
        const int nc = sqlite3_column_count(s);
        row.resize(static_cast<std::size_t>(nc));
        for (int c = 0; c < nc; c++) {
            Value &v = row[static_cast<std::size_t>(c)];
            int type = sqlite3_column_type(s, c);
            if (type != SQLITE_NULL && described.get_properties(static_cast<std::size_t>(c)).get_data_type() == soci::dt_blob)
                type = SQLITE_BLOB;
            switch (type) {
            case SQLITE_INTEGER: v = Value::integer(Kind::Int, sqlite3_column_int64(s, c)); break;
            case SQLITE_FLOAT: v = Value::real(sqlite3_column_double(s, c)); break;
            case SQLITE_TEXT:
                v = Value::text(Kind::Text, std::string_view(reinterpret_cast<const char *>(sqlite3_column_text(s, c)),
                                                             static_cast<std::size_t>(sqlite3_column_bytes(s, c))));
                break;
            case SQLITE_BLOB:
                v = Value::text(Kind::Bytes, std::string_view(static_cast<const char *>(sqlite3_column_blob(s, c)),
                                                              static_cast<std::size_t>(sqlite3_column_bytes(s, c))));
                break;
            default: v = Value::null();
            }
        }
    }

    std::string client_version() const override { return std::string("sqlite3 backend, SQLite ") + sqlite3_libversion(); }

    std::string batch_words() const override
    {
        return "a soci::transaction per group (BEGIN … COMMIT), the prepared insert (sqlite3_prepare_v2 once, in the "
               "first group) reset, bound and stepped per row";
    }

    void backend_settings(json &s) const override
    {
        s["open"] = "sqlite3_open_v2(file, READWRITE|CREATE) through SOCI's connect string db=\"file\" timeout=5 "
                    "(busy timeout 5000 ms, as Python's sqlite3)";
        s["read_only"] = "endpoint read_only: readonly=1 in the connect string: sqlite3_open_v2(file, SQLITE_OPEN_READONLY)";
        s["tls"] = "none: SQLite is in process";
        s["literal"] = "the one-time statement with no use(): sqlite3_prepare_v2, step, finalize";
        s["extended"] = "the one-time statement with use(): sqlite3_prepare_v2, sqlite3_bind_* of each value, step, "
                        "finalize";
        s["prepared"] = "sql.prepare: sqlite3_prepare_v2 once in the first operation, then reset, bind and step; "
                        "finalized after the step (untimed)";
        s["row types"] = "SOCI's describe_column by declared type (sqlite3_column_decltype: integer → dt_integer, "
                         "timestamp/date → dt_date as std::tm, an expression's column → dt_string); the worker reads "
                         "each value from the sqlite3_stmt by its storage class instead";
    }
};

}  // namespace

std::unique_ptr<Driver> make_soci_sqlite() { return std::make_unique<SociSqlite>(); }

}  // namespace ab
