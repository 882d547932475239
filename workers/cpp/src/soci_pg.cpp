// cpp-soci-pg: SOCI's postgresql backend (over libpq). What it sends, per mode (SOCI 4.0.3,
// src/backends/postgresql/statement.cpp; checked with log_statement=all):
//   literal, scans: PQexec — the simple query protocol (a one-time statement with no use());
//   extended: PQexecParams — the unnamed statement, every parameter as text without a type OID;
//   prepared: PQprepare("st_N") in the first operation, PQexecPrepared after; DEALLOCATE st_N
//     when the statement is destroyed (after the step, untimed).
// Connecting is PQconnectdb of the conninfo, then SOCI's own SET extra_float_digits = 3.
#include <soci/postgresql/soci-postgresql.h>

#include "drivers.hpp"
#include "pg_common.hpp"
#include "soci_common.hpp"

namespace ab {

namespace {

class SociPg : public soci_methods::SociDriver {
public:
    std::string driver() const override { return "SOCI (postgresql backend)"; }
    std::vector<std::string> dbms() const override { return {"postgresql"}; }
    std::string method() const override { return "cpp-soci-pg"; }
    const soci::backend_factory &factory() const override { return soci::postgresql; }
    std::string connect_string(const json &ep) const override { return pg::conninfo(ep, method()); }
    soci_methods::BytesAs bytes_as() const override { return soci_methods::BytesAs::HexText; }

    std::int64_t connected(soci::session &sql, const json &, json *info) const override
    {
        PGconn *conn = static_cast<soci::postgresql_session_backend *>(sql.get_backend())->conn_;
        if (info) {
            (*info)["server_pid"] = PQbackendPID(conn);
            if (const char *v = PQparameterStatus(conn, "server_version"))
                (*info)["server_version"] = v;
        }
        return PQbackendPID(conn);
    }

    std::string sqlstate(const soci::soci_error &e, soci::session *) const override
    {
        auto *pe = dynamic_cast<const soci::postgresql_soci_error *>(&e);
        return pe ? pe->sqlstate() : std::string();
    }

    // The row SOCI's fetch points at (currentRow_) in the PGresult it holds, by type OID.
    void read_row(soci::statement &st, const soci::row &, Row &row, std::vector<std::string> &store) const override
    {
        auto &be = static_cast<soci::postgresql_statement_backend &>(*st.get_backend());
        PGresult *res = be.result_.get_result();
        const int r = be.currentRow_, nc = PQnfields(res);
        row.resize(static_cast<std::size_t>(nc));
        store.resize(row.size());
        for (int c = 0; c < nc; c++) {
            auto k = static_cast<std::size_t>(c);
            row[k] = PQgetisnull(res, r, c)
                         ? Value::null()
                         : pg::decode_text(PQftype(res, c),
                                           std::string_view(PQgetvalue(res, r, c),
                                                            static_cast<std::size_t>(PQgetlength(res, r, c))),
                                           store[k]);
        }
    }

    std::string client_version() const override
    {
        int v = PQlibVersion();
        return "postgresql backend, libpq " + std::to_string(v / 10000) + "." + std::to_string(v % 10000);
    }

    std::string batch_words() const override
    {
        return "a soci::transaction per group (BEGIN … COMMIT), the prepared insert (PQprepare once, in the first "
               "group) executed per row (PQexecPrepared, one round trip each)";
    }

    void backend_settings(json &s) const override
    {
        pg::tls_settings(s);
        s["connect"] = "PQconnectdb(conninfo), then SOCI's SET extra_float_digits = 3 (one more round trip)";
        s["literal"] = "the one-time statement with no use(): PQexec, the simple query protocol";
        s["extended"] = "the one-time statement with use(): PQexecParams, the unnamed statement parsed every time, "
                        "every parameter as text without a type OID (the server infers it)";
        s["prepared"] = "sql.prepare: PQprepare of a named statement (st_N) in the first operation, PQexecPrepared "
                        "after; DEALLOCATE st_N when the statement is destroyed, after the step (untimed)";
        s["scan step"] = "the one-time statement: PQexec (simple protocol, text results)";
        s["row types"] = "SOCI's describe_column by type OID: text, varchar, char, bytea (its \\x text), json, uuid → "
                         "dt_string; date, time, timestamp(tz) → dt_date (std::tm, no fraction of a second); float4, "
                         "float8 and numeric → dt_double; bool, int2, int4 → dt_integer; int8 → dt_long_long; the "
                         "worker reads each value's text from the PGresult by its OID instead";
    }
};

}  // namespace

std::unique_ptr<Driver> make_soci_pg() { return std::make_unique<SociPg>(); }

}  // namespace ab
