#include "soci_common.hpp"

#include <iostream>

#include "texts.hpp"

namespace ab::soci_methods {

namespace {

using soci::details::statement_type;

// One parameter's binding: bound once by reference with soci::use(), refilled before each
// execution (SOCI reads the bound variables when the statement executes).
struct Slot {
    Kind kind = Kind::Null;
    long long i = 0;
    double f = 0;
    std::string s;
    std::unique_ptr<soci::blob> blob;
    soci::indicator ind = soci::i_ok;
};

class SociConnection : public Connection {
public:
    explicit SociConnection(SociDriver &d) : d_(d) {}
    void open(const json &endpoint, json *info) override;
    void close() override;
    // A session of a soci::connection_pool (opened by the pool), as this client's connection.
    void attach(soci::session &pooled, const json &endpoint);
    void begin(Step &st) override;
    std::int64_t op(Step &st, std::int64_t i) override { return guarded([&] { return run(st, i); }); }
    std::int64_t query(Step &st, const std::string &sql, const std::vector<Param> &params) override;
    void txn_begin(Step &) override
    {
        guarded([&] { sql_->begin(); });
        in_txn_ = true;
    }
    void txn_commit(Step &) override
    {
        guarded([&] { sql_->commit(); });
        in_txn_ = false;
    }
    void recover(Step &st) override;
    void end(Step &st) override;
    std::int64_t server_pid() const override { return pid_; }

private:
    SociDriver &d_;
    std::unique_ptr<soci::session> own_;  // opened by open(); none when attached to a pool's
    soci::session *sql_ = nullptr;
    std::int64_t pid_ = 0;
    bool in_txn_ = false;
    std::vector<Slot> slots_;                    // the step's parameters, one slot each
    std::vector<Slot> no_slots_;                 // what literal statements and scans bind
    soci::row prepared_row_;                     // what the prepared statement reads into
    std::unique_ptr<soci::statement> prepared_;  // prepared mode and batches: made in the first op
    Row row_;
    std::vector<std::string> store_;

    template <typename F>
    auto guarded(F &&f) -> decltype(f());
    std::int64_t run(Step &st, std::int64_t i);
    std::int64_t batch(Step &st, std::int64_t i);
    void make_statement(soci::statement &s, std::vector<Slot> &slots, soci::row *row, const std::string &text,
                        statement_type type);
    soci::statement &prepared(Step &st);
    void make_slots(std::vector<Slot> &slots, const std::vector<Kind> &kinds);
    void set(Slot &slot, const Param &p, const std::string &bytes);
    void fill(const Step &st, std::int64_t i);
    std::int64_t finish(soci::statement &s, const soci::row &described, bool reads, Step &st);
};

// SOCI's exceptions as the worker's: a db error, with the SQLSTATE the backend gives.
template <typename F>
auto SociConnection::guarded(F &&f) -> decltype(f())
{
    try {
        return f();
    } catch (const soci::soci_error &e) {
        throw DbError(e.what(), d_.sqlstate(e, sql_));
    }
}

void SociConnection::open(const json &ep, json *info)
{
    std::string cs = d_.connect_string(ep);
    guarded([&] {
        own_ = std::make_unique<soci::session>(d_.factory(), cs);
        sql_ = own_.get();
        pid_ = d_.connected(*sql_, ep, info);
    });
}

void SociConnection::attach(soci::session &pooled, const json &ep)
{
    sql_ = &pooled;
    json info;
    pid_ = guarded([&] { return d_.connected(pooled, ep, &info); });
}

void SociConnection::close()
{
    prepared_.reset();
    slots_.clear();
    sql_ = nullptr;
    own_.reset();
}

// Slots of these kinds (a blob needs the session: SQLite's bytes).
void SociConnection::make_slots(std::vector<Slot> &slots, const std::vector<Kind> &kinds)
{
    slots.clear();
    slots.resize(kinds.size());
    for (std::size_t k = 0; k < kinds.size(); k++) {
        slots[k].kind = kinds[k];
        if (kinds[k] == Kind::Bytes && d_.bytes_as() == BytesAs::Blob)
            slots[k].blob = std::make_unique<soci::blob>(*sql_);
    }
}

// The step's slots, by its parameters' types.
void SociConnection::begin(Step &st) { make_slots(slots_, st.param_types); }

void SociConnection::recover(Step &)
{
    if (!in_txn_ || !sql_)
        return;
    in_txn_ = false;
    try {
        sql_->rollback();
    } catch (const soci::soci_error &e) {
        std::cerr << "abworker-cpp: rollback: " << e.what() << "\n";
    }
}

void SociConnection::end(Step &)
{
    try {
        prepared_.reset();  // PostgreSQL: DEALLOCATE; SQLite: finalize (untimed)
    } catch (const soci::soci_error &e) {
        std::cerr << "abworker-cpp: " << e.what() << "\n";
    }
}

// A parameter into its slot, inside the operation's time: a SOCI user assigns the variables
// use() bound before each execute (texts copied, a blob rewritten). bytes: a bytes value's
// form for the backend, made before the clock.
void SociConnection::set(Slot &s, const Param &p, const std::string &bytes)
{
    s.ind = p.kind == Kind::Null ? soci::i_null : soci::i_ok;
    if (p.kind == Kind::Null)
        return;
    if (s.kind == Kind::Int || s.kind == Kind::Bool) {
        s.i = p.i;
    } else if (s.kind == Kind::Float) {
        s.f = p.f;
    } else if (s.blob) {
        s.blob->trim(0);
        s.blob->write(0, p.text.data(), p.text.size());
    } else {
        s.s = s.kind == Kind::Bytes ? bytes : p.text;
    }
}

// Operation i's parameters into the step's slots.
void SociConnection::fill(const Step &st, std::int64_t i)
{
    const Param *row = st.row_params(i);
    for (std::size_t k = 0; k < st.nparams; k++)
        set(slots_[k], row[k], d_.bytes_text[static_cast<std::size_t>(i) * st.nparams + k]);
}

// A statement as `sql << …` (one-time) or `sql.prepare << …` (repeatable) makes it: into the
// row when the step reads, every slot bound with use(), prepared, defined and bound.
void SociConnection::make_statement(soci::statement &s, std::vector<Slot> &slots, soci::row *row,
                                    const std::string &text, statement_type type)
{
    if (row)
        s.exchange(soci::into(*row));
    for (Slot &slot : slots) {
            if (slot.kind == Kind::Int || slot.kind == Kind::Bool)
                s.exchange(soci::use(slot.i, slot.ind));
            else if (slot.kind == Kind::Float)
                s.exchange(soci::use(slot.f, slot.ind));
            else if (slot.blob)
                s.exchange(soci::use(*slot.blob, slot.ind));
            else
                s.exchange(soci::use(slot.s, slot.ind));
    }
    s.alloc();
    s.prepare(text, type);
    s.define_and_bind();
}

// The step's repeatable statement on this connection, as `sql.prepare << …` makes it: made by
// the first operation that needs it (PostgreSQL: PQprepare; SQLite: sqlite3_prepare_v2).
soci::statement &SociConnection::prepared(Step &st)
{
    if (!prepared_) {
        prepared_ = std::make_unique<soci::statement>(*sql_);
        make_statement(*prepared_, slots_, st.reads() ? &prepared_row_ : nullptr, d_.sql_named,
                       soci::details::st_repeatable_query);
    }
    return *prepared_;
}

// Executes s and reads every row it returns (each value read exactly from the backend's
// result, after SOCI has converted it into the row), or counts the rows it changed.
std::int64_t SociConnection::finish(soci::statement &s, const soci::row &described, bool reads, Step &st)
{
    bool got = s.execute(true);
    if (!reads)
        return s.get_affected_rows();
    std::int64_t n = 0;
    for (; got; got = s.fetch(), n++) {
        d_.read_row(s, described, row_, store_);
        st.emit(row_);
    }
    return n;
}

std::int64_t SociConnection::run(Step &st, std::int64_t i)
{
    if (st.kind == StepKind::Batch)
        return batch(st, i);
    if (st.mode != Mode::Literal && st.kind == StepKind::Exec)
        fill(st, i);
    if (st.mode == Mode::Prepared)
        return finish(prepared(st), prepared_row_, st.reads(), st);
    soci::row row;
    soci::statement s(*sql_);
    const std::string &text = st.mode == Mode::Literal ? st.texts[static_cast<std::size_t>(i)]
                              : st.mode == Mode::Extended ? d_.sql_named : st.sql;
    make_statement(s, st.mode == Mode::Extended ? slots_ : no_slots_, st.reads() ? &row : nullptr, text,
                   soci::details::st_one_time_query);
    return finish(s, row, st.reads(), st);
}

// A load step's statement: the one-time statement with each value bound by use(), as extended.
std::int64_t SociConnection::query(Step &st, const std::string &sql, const std::vector<Param> &params)
{
    return guarded([&] {
        std::vector<Kind> kinds;
        for (const Param &p : params)
            kinds.push_back(p.kind == Kind::Null ? Kind::Text : p.kind);
        std::vector<Slot> slots;
        make_slots(slots, kinds);
        for (std::size_t k = 0; k < params.size(); k++)
            set(slots[k], params[k], params[k].kind == Kind::Bytes ? d_.bytes_form(params[k].text) : std::string());
        soci::row row;
        soci::statement s(*sql_);
        make_statement(s, slots, &row, sql, soci::details::st_one_time_query);
        return finish(s, row, true, st);
    });
}

// One group: a soci::transaction, the prepared insert executed once per row (made in the
// first group), committed.
std::int64_t SociConnection::batch(Step &st, std::int64_t i)
{
    auto [first, last] = st.group(i);
    soci::transaction tr(*sql_);
    soci::statement &insert = prepared(st);
    for (std::int64_t r = first; r < last; r++) {
        fill(st, r);
        insert.execute(true);
    }
    tr.commit();
    return last - first;
}

// The pooled policy: SOCI's own soci::connection_pool of `size` sessions, each opened as a
// client's connection is (and with its own prepared statement, made by its first operation);
// an operation leases a session (connection_pool::lease, waiting for a free one), runs on it
// and gives it back — what `soci::session sql(pool)` does, by position so that the operation
// finds what the step prepared on that session.
class SociPool : public Pool {
public:
    SociPool(SociDriver &d, const json &ep, std::size_t size) : pool_(size)
    {
        std::string cs = d.connect_string(ep);
        for (std::size_t k = 0; k < size; k++) {
            try {
                pool_.at(k).open(d.factory(), cs);
            } catch (const soci::soci_error &e) {
                throw DbError(e.what(), d.sqlstate(e, nullptr));
            }
            members_.push_back(std::make_unique<SociConnection>(d));
            members_.back()->attach(pool_.at(k), ep);
        }
    }
    void begin(Step &st) override
    {
        for (auto &m : members_)
            m->begin(st);
    }
    std::int64_t op(Step &st, std::int64_t i) override
    {
        struct Lease {
            soci::connection_pool &pool;
            std::size_t at;
            ~Lease() { pool.give_back(at); }
        } lease{pool_, pool_.lease()};
        return members_[lease.at]->op(st, i);
    }
    void end(Step &st, bool failed) override
    {
        for (auto &m : members_) {
            if (failed)
                m->recover(st);
            m->end(st);
        }
    }
    std::vector<std::int64_t> server_pids() const override
    {
        std::vector<std::int64_t> pids;
        for (const auto &m : members_)
            if (m->server_pid())
                pids.push_back(m->server_pid());
        return pids;
    }

private:
    soci::connection_pool pool_;  // declared first: its sessions outlive the members' statements
    std::vector<std::unique_ptr<SociConnection>> members_;
};

}  // namespace

std::unique_ptr<Connection> SociDriver::connection() { return std::make_unique<SociConnection>(*this); }

std::unique_ptr<Pool> SociDriver::pool(const json &endpoint, std::size_t size)
{
    return std::make_unique<SociPool>(*this, endpoint, size);
}

// Before the clock: the statement with SOCI's :name markers, and each bytes value as the
// backend binds it (hex text or raw).
void SociDriver::step_begin(Step &st)
{
    if (st.kind == StepKind::Batch && batch_words().rfind("unsupported", 0) == 0)
        throw Unsupported(method() + ": " + batch_words());
    sql_named = statement_text(st.sql);
    bytes_text.assign(st.params.size(), std::string());
    for (std::size_t k = 0; k < st.params.size(); k++)
        if (st.params[k].kind == Kind::Bytes)
            bytes_text[k] = bytes_form(st.params[k].text);
}

std::string SociDriver::bytes_form(const std::string &bytes) const
{
    return bytes_as() == BytesAs::HexText ? "\\x" + hex(bytes) : bytes;
}

std::string SociDriver::statement_text(const std::string &neutral) const
{
    return sql_rewrite(neutral, sql_markers(neutral), [](std::size_t k) { return ":p" + std::to_string(k + 1); });
}

std::string SociDriver::query_words() const
{
    return "the one-time statement `sql << text, use(…)` makes, into(soci::row), fetched to the end (as extended; "
           "markers :p1, :p2 …)";
}

void SociDriver::hello(json &a, json &s, json &caps) const
{
    a["driver_version"] = std::to_string(SOCI_VERSION / 100000) + "." + std::to_string(SOCI_VERSION / 100 % 1000) + "." +
                          std::to_string(SOCI_VERSION % 100) + " (" + client_version() + ")";
    caps["batch"] = batch_words();
    s["statements"] = "literal and scans: the one-time statement `sql << text` makes (statement::prepare with "
                      "st_one_time_query), kept to fetch every row; extended: the same with each parameter bound by "
                      "soci::use(); prepared: the statement `sql.prepare << text, use(…)` makes "
                      "(st_repeatable_query), once per connection in the first operation, then executed with its "
                      "bound variables refilled; markers as SOCI's :p1, :p2 …";
    s["parameters"] = "use() of long long (integers; booleans as 1/0), double (floats), std::string (decimal text, "
                      "text, 'YYYY-MM-DD HH:MM:SS[.ffffff]', 'YYYY-MM-DD': SOCI's std::tm has no fraction of a "
                      "second), bytes as " + std::string(bytes_as() == BytesAs::HexText ? "their \\x hex text"
                                                          : bytes_as() == BytesAs::Raw ? "a std::string of the bytes"
                                                                                       : "a soci::blob") +
                      "; NULL by soci::i_null";
    s["reading"] = "soci::into(soci::row): SOCI describes each column (column_properties::get_data_type) and converts "
                   "every value into its holder (dt_string, dt_double, dt_integer, dt_long_long, dt_date as std::tm); "
                   "where that type loses what the column holds (see 'row types'), the value the worker checksums is "
                   "read from the backend's own result SOCI fetched the row into (statement::get_backend()), by the "
                   "column's native type: every value exactly as the bare drivers read it";
    s["pooled"] = "soci::connection_pool of pool_size sessions, opened and ready before the barrier; each operation "
                  "leases a session (connection_pool::lease, as soci::session sql(pool) does), runs on it with the "
                  "statement prepared on that session, and gives it back, inside its time";
    s["autocommit"] = "yes: session::begin/commit (BEGIN/COMMIT) for commit_every; a soci::transaction per batch group";
    backend_settings(s);
}

}  // namespace ab::soci_methods
