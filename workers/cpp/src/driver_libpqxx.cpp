// cpp-libpqxx: libpqxx (the C++ client API of PostgreSQL, over libpq) as its users write it.
//
// literal and scans: transaction_base::exec of the text (PQexec: the simple query protocol);
// extended: exec_params (PQexecParams, the unnamed statement, parsed every time); prepared:
// connection::prepare once per connection, exec_prepared after (PQprepare on first use, then
// PQexecPrepared). Statements run in a pqxx::nontransaction (autocommit) or, for commit_every
// and batch groups, in the open pqxx::work. Values are read with field::to / as<T> by the
// column's type OID; bytea through pqxx::binarystring; dates and times as libpqxx gives them
// (text), converted by the shared helpers.
#include <array>
#include <utility>

#include <pqxx/pqxx>

#include <libpq-fe.h>

#include "drivers.hpp"
#include "pg_common.hpp"
#include "texts.hpp"

namespace ab {

namespace {

const char *const PREPARED = "ab_stmt";  // the step's statement, prepared once per connection
const char *const WHO = "cpp-libpqxx";

// libpqxx's exceptions as the worker's: a server error with its SQLSTATE, anything else of
// libpqxx's (a broken connection, a usage error) as a db error without one.
template <typename F>
auto guarded(F &&f) -> decltype(f())
{
    try {
        return f();
    } catch (const pqxx::sql_error &e) {
        throw DbError(e.what(), e.sqlstate());
    } catch (const pqxx::failure &e) {
        throw DbError(e.what());
    } catch (const pqxx::usage_error &e) {
        throw DbError(e.what());
    }
}

// pqxx::stream_to writes a row from a std::tuple (its fields escaped by libpqxx, a null
// pointer as \N): one writer per row width, up to MAX_COPY_COLUMNS, chosen before the clock.
constexpr std::size_t MAX_COPY_COLUMNS = 32;
using RowWriter = void (*)(pqxx::stream_to &, const char *const *);

template <std::size_t... I>
void write_tuple(pqxx::stream_to &copy, const char *const *fields, std::index_sequence<I...>)
{
    copy << std::make_tuple(fields[I]...);
}

template <std::size_t N>
void write_row(pqxx::stream_to &copy, const char *const *fields)
{
    write_tuple(copy, fields, std::make_index_sequence<N>{});
}

template <std::size_t... N>
constexpr std::array<RowWriter, sizeof...(N)> row_writers(std::index_sequence<N...>)
{
    return {&write_row<N + 1>...};
}

constexpr auto ROW_WRITERS = row_writers(std::make_index_sequence<MAX_COPY_COLUMNS>{});

class LibpqxxDriver : public Driver {
public:
    std::string driver() const override { return "libpqxx"; }
    std::vector<std::string> dbms() const override { return {"postgresql"}; }
    void configure(const std::string &key, const std::string &value) override;
    void hello(json &answer, json &settings, json &caps) const override;
    std::unique_ptr<Connection> connection() override;
    void step_begin(Step &st) override;
    void step_end(Step &st) override;
    std::string statement_text(const std::string &neutral) const override
    {
        return sql_rewrite(neutral, sql_markers(neutral), [](std::size_t k) { return "$" + std::to_string(k + 1); });
    }
    std::string query_words() const override
    {
        return "exec_params (PQexecParams, the unnamed statement), every value as untyped text, in a "
               "pqxx::nontransaction";
    }

    // What every connection of the step shares, made before the clock.
    bool copy = false;                 // batch=copy: pqxx::stream_to
    std::string sql_dollar;            // the statement with $n markers
    std::vector<const char *> args;    // n × nparams parameter texts (nullptr: NULL)
    std::vector<std::string> bytea;    // the \x forms args points into
    std::string copy_table;            // batch=copy: the insert shape's table and columns
    std::vector<std::string> copy_columns;
    RowWriter copy_row = nullptr;         // stream_to's row of nparams fields
};

class LibpqxxConnection : public Connection {
public:
    explicit LibpqxxConnection(LibpqxxDriver &d) : d_(d) {}
    void open(const json &endpoint, json *info) override;
    void close() override;
    void begin(Step &) override { prepared_ = false; }
    std::int64_t op(Step &st, std::int64_t i) override { return guarded([&] { return run(st, i); }); }
    std::int64_t query(Step &st, const std::string &sql, const std::vector<Param> &params) override;
    void txn_begin(Step &) override { guarded([&] { work_ = std::make_unique<pqxx::work>(*conn_); }); }
    void txn_commit(Step &) override;
    void recover(Step &) override { work_.reset(); }  // its destructor rolls back
    void end(Step &st) override;
    std::int64_t server_pid() const override { return conn_ ? conn_->backendpid() : 0; }

private:
    LibpqxxDriver &d_;
    std::unique_ptr<pqxx::connection> conn_;
    std::unique_ptr<pqxx::work> work_;  // commit_every's transaction, or a batch group's
    bool prepared_ = false;
    std::vector<std::string> store_;    // one row's decoded texts and bytes

    std::int64_t run(Step &st, std::int64_t i);
    void ensure_prepared();
    pqxx::result execute(pqxx::transaction_base &tx, Step &st, std::int64_t i);
    std::int64_t batch(Step &st, std::int64_t i);
    std::int64_t read(Step &st, const pqxx::result &r);
    Value decode(const pqxx::field &f, unsigned oid, std::string &store);
};

void LibpqxxDriver::configure(const std::string &key, const std::string &value)
{
    if (key != "batch" || (value != "copy" && value != "prepared"))
        throw Unsupported("no setting '" + key + "=" + value + "' (cpp-libpqxx has batch=copy)");
    copy = value == "copy";
}

void LibpqxxDriver::hello(json &a, json &s, json &caps) const
{
    int lv = PQlibVersion();  // PQXX_VERSION: the headers' own (Debian's 6.4.5 package says 6.4.4)
    a["driver_version"] = std::string(PQXX_VERSION) + " (libpq " + std::to_string(lv / 10000) + "." +
                          std::to_string(lv % 10000) + ")";
    caps["batch"] = copy ? "pqxx::stream_to (COPY t (cols) FROM STDIN, text format: each row a std::tuple of the "
                           "parameters' texts, escaped by libpqxx) inside a pqxx::work, one COPY per group"
                         : "one pqxx::work per group (BEGIN … COMMIT), exec_prepared per row (prepared once, in the "
                           "first group)";
    pg::tls_settings(s);
    s["batch"] = copy ? "copy" : "prepared";
    s["autocommit"] = "yes: statements run in a pqxx::nontransaction (no BEGIN); commit_every and batch groups in a "
                      "pqxx::work (BEGIN … COMMIT)";
    s["literal"] = "transaction_base::exec of the text with values inlined: PQexec, the simple query protocol";
    s["extended"] = "exec_params: PQexecParams, the unnamed statement parsed every time";
    s["prepared"] = "connection::prepare (libpqxx registers it with the server on first use: PQprepare inside the "
                    "first operation), then exec_prepared (PQexecPrepared); unprepare (DEALLOCATE) after the step";
    s["parameters"] = "every value as text without a type OID (libpqxx 6's exec_params and exec_prepared send none; "
                      "the server infers each from the statement): integers, true/false, floats in shortest "
                      "round-trip text, decimal text, text, 'YYYY-MM-DD HH:MM:SS[.ffffff]', 'YYYY-MM-DD', bytea as \\x "
                      "hex; NULL as a null pointer";
    s["reading"] = "whole result buffered by libpq (pqxx::result); every field read by its column's type OID: "
                   "as<bool>, as<long long> (int2/4/8), as<double> (float4/8), to(std::string) for numeric and text, "
                   "pqxx::binarystring for bytea (unescaped by libpq), dates, times and timestamps as their text "
                   "converted by the worker";
    s["reactivation"] = "off (inhibit_reactivation): a broken connection is an error, never silently reconnected";
    s["scan step"] = "transaction_base::exec of the query: PQexec (simple protocol, text results)";
}

std::unique_ptr<Connection> LibpqxxDriver::connection() { return std::make_unique<LibpqxxConnection>(*this); }

// Before the clock: the statement in $n markers, each row's parameters as the texts libpqxx
// sends, and for batch=copy the table, columns and COPY lines.
void LibpqxxDriver::step_begin(Step &st)
{
    sql_dollar = statement_text(st.sql);
    bytea.clear();
    bytea.reserve(st.params.size());
    args.clear();
    for (const Param &p : st.params) {
        if (p.kind == Kind::Bytes)
            bytea.push_back("\\x" + hex(p.text));
        args.push_back(p.kind == Kind::Null ? nullptr : p.kind == Kind::Bytes ? bytea.back().c_str() : p.text.c_str());
    }
    if (st.kind != StepKind::Batch || !copy)
        return;
    if (st.shape.value("kind", json()) != "insert" || !st.shape.value("columns", json()).is_array())
        throw Unsupported("cpp-libpqxx/batch=copy writes by COPY: its statement must be an INSERT of one table (shape)");
    copy_table = st.shape["table"];
    copy_columns = st.shape["columns"].get<std::vector<std::string>>();
    if (st.nparams < 1 || st.nparams > MAX_COPY_COLUMNS)
        throw Unsupported("cpp-libpqxx/batch=copy writes rows of 1 to " + std::to_string(MAX_COPY_COLUMNS) + " columns");
    copy_row = ROW_WRITERS[st.nparams - 1];
}

void LibpqxxDriver::step_end(Step &)
{
    args.clear();
    bytea.clear();
}

void LibpqxxConnection::open(const json &ep, json *info)
{
    std::string ci = pg::conninfo(ep, WHO);
    guarded([&] { conn_ = std::make_unique<pqxx::connection>(ci); });
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    conn_->inhibit_reactivation(true);  // a local setting: nothing sent
#pragma GCC diagnostic pop
    if (info) {
        int v = conn_->server_version();
        (*info)["server_pid"] = conn_->backendpid();
        (*info)["server_version"] = std::to_string(v / 10000) + "." + std::to_string(v % 10000);
    }
}

void LibpqxxConnection::close()
{
    work_.reset();
    if (conn_)
        conn_->disconnect();
    conn_.reset();
}

void LibpqxxConnection::txn_commit(Step &)
{
    guarded([&] { work_->commit(); });
    work_.reset();
}

void LibpqxxConnection::end(Step &)
{
    if (prepared_ && conn_)
        guarded([&] { conn_->unprepare(PREPARED); });
    prepared_ = false;
}

// The step's statement, defined on this connection once (libpqxx registers it with the server
// when it is first executed).
void LibpqxxConnection::ensure_prepared()
{
    if (!prepared_)
        conn_->prepare(PREPARED, d_.sql_dollar);
    prepared_ = true;
}

// One statement in the step's mode on tx.
pqxx::result LibpqxxConnection::execute(pqxx::transaction_base &tx, Step &st, std::int64_t i)
{
    auto args = d_.args.begin() + i * static_cast<std::int64_t>(st.nparams);
    auto params = pqxx::prepare::make_dynamic_params(args, args + static_cast<std::int64_t>(st.nparams));
    switch (st.mode) {
    case Mode::Literal: return tx.exec(st.texts[static_cast<std::size_t>(i)]);
    case Mode::Extended: return tx.exec_params(d_.sql_dollar, params);
    case Mode::Prepared: ensure_prepared(); return tx.exec_prepared(PREPARED, params);
    default: return tx.exec(st.sql);  // a scan
    }
}

std::int64_t LibpqxxConnection::run(Step &st, std::int64_t i)
{
    if (st.kind == StepKind::Batch)
        return batch(st, i);
    pqxx::result r;
    if (work_) {
        r = execute(*work_, st, i);
    } else {
        pqxx::nontransaction tx(*conn_);
        r = execute(tx, st, i);
    }
    return st.reads() ? read(st, r) : static_cast<std::int64_t>(r.affected_rows());
}

std::int64_t LibpqxxConnection::query(Step &st, const std::string &sql, const std::vector<Param> &params)
{
    std::vector<std::string> texts;  // the values as libpqxx sends them (bytea as \x hex)
    std::vector<const char *> args;
    texts.reserve(params.size());
    for (const Param &p : params) {
        texts.push_back(p.kind == Kind::Bytes ? "\\x" + hex(p.text) : p.text);
        args.push_back(p.kind == Kind::Null ? nullptr : texts.back().c_str());
    }
    return guarded([&] {
        pqxx::nontransaction tx(*conn_);
        return read(st, tx.exec_params(sql, pqxx::prepare::make_dynamic_params(args)));
    });
}

// One group of rows in a pqxx::work: COPY through stream_to, or exec_prepared per row.
std::int64_t LibpqxxConnection::batch(Step &st, std::int64_t i)
{
    auto [first, last] = st.group(i);
    work_ = std::make_unique<pqxx::work>(*conn_);
    if (d_.copy) {
        pqxx::stream_to copy(*work_, d_.copy_table, d_.copy_columns);
        for (std::int64_t r = first; r < last; r++)
            d_.copy_row(copy, &d_.args[static_cast<std::size_t>(r) * st.nparams]);
        copy.complete();
    } else {
        ensure_prepared();
        for (std::int64_t r = first; r < last; r++) {
            auto args = d_.args.begin() + r * static_cast<std::int64_t>(st.nparams);
            work_->exec_prepared(PREPARED, pqxx::prepare::make_dynamic_params(args, args + static_cast<std::int64_t>(st.nparams)));
        }
    }
    work_->commit();
    work_.reset();
    return last - first;
}

// Every row of r, each field decoded by its column's type OID and handed on.
std::int64_t LibpqxxConnection::read(Step &st, const pqxx::result &r)
{
    const auto nc = static_cast<std::size_t>(r.columns());
    std::vector<unsigned> oids(nc);
    for (std::size_t c = 0; c < nc; c++)
        oids[c] = r.column_type(static_cast<pqxx::row::size_type>(c));
    store_.resize(nc);
    Row row(nc);
    for (const pqxx::row &tuple : r) {
        for (std::size_t c = 0; c < nc; c++)
            row[c] = decode(tuple[static_cast<pqxx::row::size_type>(c)], oids[c], store_[c]);
        st.emit(row);
    }
    st.ncols = nc;
    return static_cast<std::int64_t>(r.size());
}

Value LibpqxxConnection::decode(const pqxx::field &f, unsigned oid, std::string &store)
{
    if (f.is_null())
        return Value::null();
    switch (oid) {
    case pg::BOOL: return Value::integer(Kind::Bool, f.as<bool>());
    case pg::INT2:
    case pg::INT4:
    case pg::INT8:
    case pg::OID: return Value::integer(Kind::Int, f.as<long long>());
    case pg::FLOAT4:
    case pg::FLOAT8: return Value::real(f.as<double>());
    case pg::NUMERIC: f.to(store); return Value::text(Kind::Decimal, store);
    case pg::BYTEA: {
        pqxx::binarystring bytes(f);
        store.assign(bytes.get(), bytes.size());
        return Value::text(Kind::Bytes, store);
    }
    case pg::DATE:
    case pg::TIME:
    case pg::TIMESTAMP:
    case pg::TIMESTAMPTZ: return pg::decode_text(oid, std::string_view(f.c_str(), f.size()), store);
    default: f.to(store); return Value::text(Kind::Text, store);
    }
}

}  // namespace

std::unique_ptr<Driver> make_libpqxx() { return std::make_unique<LibpqxxDriver>(); }

}  // namespace ab
