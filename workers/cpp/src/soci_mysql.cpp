// cpp-soci-mysql: SOCI's mysql backend (over libmariadb). It has no server-side statements:
// a statement's :name markers split its text into chunks, and each execution splices the
// use() values into them on the client — strings escaped with mysql_real_escape_string and
// quoted — and sends the whole text by mysql_real_query (COM_QUERY, the text protocol), reading
// the result with mysql_store_result (SOCI 4.0.3, src/backends/mysql/statement.cpp; checked in
// MariaDB's general log). So `literal` is what the protocol defines, and `extended` and
// `prepared` (the binary protocol's COM_STMT_PREPARE / COM_STMT_EXECUTE) are not there at all.
#include <soci/mysql/soci-mysql.h>

#include <cstdlib>

#include "drivers.hpp"
#include "soci_common.hpp"
#include "texts.hpp"

namespace ab {

namespace {

constexpr unsigned BINARY_CHARSET = 63;
const char *const TID_QUERY = "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()";
const char *const NO_STATEMENTS =
    "SOCI's mysql backend has no server-side statements: it splices the use() values into the text "
    "on the client (strings escaped with mysql_real_escape_string) and sends every execution as COM_QUERY "
    "(mysql_real_query); COM_STMT_PREPARE / COM_STMT_EXECUTE are never sent";

// TLS as SOCI's connect string can ask for it: only sslca (and a client certificate), which
// it hands to mysql_ssl_set: libmariadb then encrypts and checks the chain against the CA, but
// not the host name. What it cannot ask for is refused.
std::string tls_keys(const json &ep)
{
    std::string mode = ep_str(ep, "sslmode").value_or("");
    if (ep.value("compress", false))
        throw Unsupported("cpp-soci-mysql: SOCI's mysql connect string has no compression option (MYSQL_OPT_COMPRESS)");
    if (ep_str(ep, "sslnegotiation"))
        throw Unsupported("cpp-soci-mysql: sslnegotiation is PostgreSQL's; MariaDB's protocol has none");
    if (ep_str(ep, "tls_version"))
        throw Unsupported("cpp-soci-mysql: SOCI's mysql connect string cannot pin the TLS version");
    if (mode.empty() || mode == "disable" || mode == "prefer")
        return {};
    if (mode == "verify-ca" && ep_str(ep, "sslrootcert"))
        return " sslca=" + quote_value(*ep_str(ep, "sslrootcert"));
    throw Unsupported("cpp-soci-mysql: sslmode=" + mode + ": SOCI's mysql connect string has only sslca (mysql_ssl_set: "
                      "the chain checked against a CA file, the host name never); no TLS without a CA, no host name check");
}

// A text-protocol value by its field's type, as the bare MariaDB drivers decode it.
Value decode(const MYSQL_FIELD &f, const char *p, unsigned long len)
{
    std::string_view text(p, len);
    switch (f.type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR: return Value::integer(Kind::Int, parse_int(text));
    case MYSQL_TYPE_FLOAT:
    case MYSQL_TYPE_DOUBLE: return Value::real(std::strtod(p, nullptr));
    case MYSQL_TYPE_DECIMAL:
    case MYSQL_TYPE_NEWDECIMAL: return Value::text(Kind::Decimal, text);
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP: return Value::integer(Kind::Timestamp, parse_timestamp_us(text));
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE: return Value::integer(Kind::Date, parse_date_days(text));
    case MYSQL_TYPE_TIME: return Value::integer(Kind::Time, parse_time_us(text));
    case MYSQL_TYPE_NULL: return Value::null();
    default:  // strings, blobs, BIT, JSON, ENUM, SET
        return Value::text(f.charsetnr == BINARY_CHARSET || f.type == MYSQL_TYPE_BIT ? Kind::Bytes : Kind::Text, text);
    }
}

class SociMysql : public soci_methods::SociDriver {
public:
    std::string driver() const override { return "SOCI (mysql backend)"; }
    std::vector<std::string> dbms() const override { return {"mariadb"}; }
    std::vector<Mode> modes() const override { return {Mode::Literal}; }
    std::string why_not(Mode) const override { return NO_STATEMENTS; }
    std::string method() const override { return "cpp-soci-mysql"; }
    const soci::backend_factory &factory() const override { return soci::mysql; }
    soci_methods::BytesAs bytes_as() const override { return soci_methods::BytesAs::Raw; }

    std::string connect_string(const json &ep) const override
    {
        std::string cs;
        static const std::pair<const char *, const char *> KEYS[] = {
            {"host", "host"}, {"database", "db"}, {"user", "user"}, {"password", "password"}, {"socket", "unix_socket"}};
        for (const auto &[field, key] : KEYS)
            if (auto v = ep_str(ep, field); v && !v->empty())
                cs += std::string(cs.empty() ? "" : " ") + key + "=" + quote_value(*v);
        if (auto port = ep.find("port"); port != ep.end() && !port->is_null())
            cs += " port=" + (port->is_number() ? std::to_string(port->get<int>()) : port->get<std::string>());
        return cs + tls_keys(ep);
    }

    // The connection's first statement when read_only; with info its serving thread and version.
    std::int64_t connected(soci::session &sql, const json &ep, json *info) const override
    {
        MYSQL *conn = static_cast<soci::mysql_session_backend *>(sql.get_backend())->conn_;
        bool tls_asked = !ep_str(ep, "sslmode").value_or("").empty() && ep_str(ep, "sslmode") != "disable" &&
                         ep_str(ep, "sslmode") != "prefer";
        if (tls_asked && !mysql_get_ssl_cipher(conn))
            throw DbError("sslmode=" + *ep_str(ep, "sslmode") + ": the server offers no TLS, and libmariadb connected without it");
        if (ep_read_only(ep))
            sql << "SET SESSION TRANSACTION READ ONLY";
        if (!info)
            return 0;
        long long tid = 0;
        sql << TID_QUERY, soci::into(tid);
        (*info)["server_pid"] = tid;
        (*info)["server_version"] = mysql_get_server_info(conn);
        return tid;
    }

    std::string sqlstate(const soci::soci_error &, soci::session *sql) const override
    {
        if (!sql || !sql->get_backend())
            return {};
        const char *state = mysql_sqlstate(static_cast<soci::mysql_session_backend *>(sql->get_backend())->conn_);
        return state && std::string(state) != "00000" ? state : "";
    }

    // The row SOCI's fetch points at (resultRowOffsets_[currentRow_]) in its stored result.
    void read_row(soci::statement &st, const soci::row &, Row &row, std::vector<std::string> &) const override
    {
        auto &be = static_cast<soci::mysql_statement_backend &>(*st.get_backend());
        mysql_row_seek(be.result_, be.resultRowOffsets_[static_cast<std::size_t>(be.currentRow_)]);
        MYSQL_ROW r = mysql_fetch_row(be.result_);
        const unsigned long *lens = mysql_fetch_lengths(be.result_);
        const MYSQL_FIELD *fields = mysql_fetch_fields(be.result_);
        row.resize(mysql_num_fields(be.result_));
        for (std::size_t c = 0; c < row.size(); c++)
            row[c] = r[c] ? decode(fields[c], r[c], lens[c]) : Value::null();
    }

    std::string client_version() const override
    {
        return std::string("mysql backend, libmariadb ") + mysql_get_client_info();
    }

    std::string batch_words() const override
    {
        return "a soci::transaction per group (BEGIN … COMMIT), then per row the statement SOCI's sql.prepare makes "
               "executed with the row's values spliced into its text on the client: one COM_QUERY per row";
    }

    void backend_settings(json &s) const override
    {
        s["connect"] = "mysql_real_connect with CLIENT_FOUND_ROWS | CLIENT_MULTI_RESULTS (SOCI's flags), autocommit "
                       "on (the server's default)";
        s["tls"] = "SOCI's connect string has sslca only (mysql_ssl_set): verify-ca → sslca=<the CA file> (libmariadb "
                   "encrypts and checks the chain, not the host name), checked after connecting (mysql_get_ssl_cipher); "
                   "absent, prefer or disable → nothing (libmariadb asks for no TLS unless told to); require, "
                   "verify-full, a pinned tls_version and sslnegotiation: unsupported";
        s["compress"] = "unsupported: SOCI's mysql connect string has no compression option";
        s["read_only"] = "endpoint read_only: SET SESSION TRANSACTION READ ONLY as the connection's first statement "
                         "(SOCI has no init command)";
        s["literal"] = "the one-time statement with no use(): mysql_real_query (COM_QUERY), mysql_store_result";
        s["extended"] = std::string("unsupported: ") + NO_STATEMENTS;
        s["prepared"] = std::string("unsupported: ") + NO_STATEMENTS;
        s["scan step"] = "mysql_real_query (COM_QUERY), the whole result stored (mysql_store_result)";
        s["row types"] = "SOCI's describe_column by field type: DECIMAL → dt_double, DATE/DATETIME/TIMESTAMP/TIME → "
                         "dt_date (std::tm, no fraction of a second), BLOB and strings → dt_string; the worker reads "
                         "each value's text from the stored MYSQL_RES by its field type instead (BOOLEAN as an integer)";
    }
};

}  // namespace

std::unique_ptr<Driver> make_soci_mysql() { return std::make_unique<SociMysql>(); }

}  // namespace ab
