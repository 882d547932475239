// What the SOCI methods share (cpp-soci-pg, cpp-soci-mysql, cpp-soci-sqlite): SOCI's generic
// interface over each vendor's client library, written as SOCI's users write it — a
// soci::session, statements with soci::use() bound by reference and soci::into(soci::row) — with
// only the backend's own pieces (its connect string, what it does on connecting, how it binds
// bytes, how a fetched row's values are read exactly) in one class per backend.
//
// The statements of each mode:
//   literal, scans: the one-time statement `sql << text` makes (statement::prepare with
//     st_one_time_query), kept to fetch every row (`sql << text, into(row)` keeps the first);
//   extended: the same one-time statement with each parameter bound by soci::use();
//   prepared: the statement `sql.prepare << text, use(…)` makes (st_repeatable_query), once
//     per connection in the first operation, executed with the slots refilled after that.
// What each backend sends for these is in its hello's settings and workers/cpp/README.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "soci_headers.hpp"

#include "driver.hpp"

namespace ab::soci_methods {

// How a backend binds a bytes parameter: its \x hex text (PostgreSQL infers bytea), the raw
// bytes as a std::string (MySQL's backend escapes them into the text), or a soci::blob (SQLite,
// so that the value is stored as a BLOB).
enum class BytesAs { HexText, Raw, Blob };

class SociDriver : public Driver {
public:
    void hello(json &answer, json &settings, json &caps) const override;
    std::unique_ptr<Connection> connection() override;
    std::unique_ptr<Pool> pool(const json &endpoint, std::size_t size) override;
    bool has_pool() const override { return true; }
    void step_begin(Step &st) override;
    std::string statement_text(const std::string &neutral) const override;
    std::string query_words() const override;

    // ---- what each backend supplies ----
    virtual std::string method() const = 0;
    virtual const soci::backend_factory &factory() const = 0;
    // The endpoint as the backend's connect string (throws Unsupported for what it cannot do).
    virtual std::string connect_string(const json &endpoint) const = 0;
    // After connecting: what every connection sends first (read_only on MariaDB), and with
    // info, server_pid and server_version. Returns the connection's server pid (0: none).
    virtual std::int64_t connected(soci::session &sql, const json &endpoint, json *info) const = 0;
    virtual BytesAs bytes_as() const = 0;
    // The values of the row SOCI has just fetched, read from the backend's own result
    // (statement::get_backend()), exactly as the column holds them.
    virtual void read_row(soci::statement &st, const soci::row &described, Row &row,
                          std::vector<std::string> &store) const = 0;
    // The SQLSTATE of a SOCI error, where the backend gives one ("" otherwise).
    virtual std::string sqlstate(const soci::soci_error &e, soci::session *sql) const = 0;
    // The client library under the backend and its version, for driver_version.
    virtual std::string client_version() const = 0;
    // capabilities.batch (or "unsupported: …" for a backend whose batches are not the protocol's).
    virtual std::string batch_words() const = 0;
    // The backend's settings (wire behaviour per mode, TLS, read_only, reading).
    virtual void backend_settings(json &settings) const = 0;

    // Made before the clock, once per step: the statement with :p1, :p2 … markers, and each
    // bytes parameter as the backend binds it (indexed as Step::params).
    std::string sql_named;
    std::vector<std::string> bytes_text;

    // A bytes parameter as the backend binds it (BytesAs::HexText or Raw).
    std::string bytes_form(const std::string &bytes) const;
};

}  // namespace ab::soci_methods
