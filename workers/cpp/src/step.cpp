#include "step.hpp"

#include <algorithm>
#include <cmath>

#include "assoc.hpp"
#include "generators.hpp"
#include "texts.hpp"

namespace ab {

namespace {

// A field that is absent or null.
bool absent(const json &msg, const char *key)
{
    auto it = msg.find(key);
    return it == msg.end() || it->is_null();
}

std::int64_t get_int(const json &msg, const char *key, std::int64_t dflt)
{
    if (absent(msg, key))
        return dflt;
    const json &v = msg[key];
    if (v.is_number_unsigned())  // u64 seeds: the same 64 bits
        return static_cast<std::int64_t>(v.get<std::uint64_t>());
    if (v.is_number_integer())
        return v.get<std::int64_t>();
    if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>())
        return static_cast<std::int64_t>(v.get<double>());
    throw ProtocolError(std::string("field '") + key + "' must be an integer");
}

double get_num(const json &msg, const char *key, double dflt)
{
    if (absent(msg, key))
        return dflt;
    if (!msg[key].is_number())
        throw ProtocolError(std::string("field '") + key + "' must be a number");
    return msg[key].get<double>();
}

std::string get_str(const json &msg, const char *key)
{
    return !absent(msg, key) && msg[key].is_string() ? msg[key].get<std::string>() : std::string();
}

// Python's truth of a JSON value.
bool truthy(const json &msg, const char *key)
{
    if (absent(msg, key))
        return false;
    const json &v = msg[key];
    if (v.is_boolean())
        return v.get<bool>();
    if (v.is_number())
        return v.get<double>() != 0;
    return !v.empty();
}

StepKind parse_kind(const std::string &kind)
{
    static const std::map<std::string, StepKind> KINDS = {
        {"connect", StepKind::Connect}, {"scan", StepKind::Scan}, {"exec", StepKind::Exec},
        {"batch", StepKind::Batch},     {"load", StepKind::Load}};
    if (kind.empty())
        throw ProtocolError("a step needs a kind");
    auto it = KINDS.find(kind);
    if (it == KINDS.end())
        throw Unsupported("step kind '" + kind + "': this worker has connect, scan, exec, batch and load");
    return it->second;
}

// An exec step needs a mode the driver has; a scan step may not ask for record.
Mode parse_mode(const json &msg, const Step &st, const Driver &driver, const std::string &method)
{
    std::string mode = get_str(msg, "mode");
    if (st.kind == StepKind::Scan && mode == "record")
        throw Unsupported(method + " has no record-level access (mode record)");
    if (st.kind != StepKind::Exec)
        return Mode::None;
    if (mode.empty())
        throw ProtocolError("an exec step needs a mode");
    for (Mode m : {Mode::Literal, Mode::Extended, Mode::Prepared}) {
        if (mode != mode_name(m))
            continue;
        auto modes = driver.modes();
        if (std::find(modes.begin(), modes.end(), m) == modes.end())
            throw Unsupported(method + " has no " + mode + " mode: " + driver.why_not(m));
        return m;
    }
    if (mode == "record")
        throw Unsupported(method + " has no record-level access (mode record)");
    throw ProtocolError("unknown mode '" + mode + "'");
}

// iterations, commit_every (exec only), batch, verify, fetch, dump, and sql and its shape.
void parse_fields(const json &msg, Step &st)
{
    st.n = get_int(msg, "iterations", -1);
    st.commit_every = get_int(msg, "commit_every", 0);
    st.batch = get_int(msg, "batch", 0);
    st.dump = get_int(msg, "dump", 0);
    if (st.n < 0)
        throw ProtocolError("a step needs iterations >= 0");
    if (st.kind != StepKind::Exec || st.commit_every < 0)
        st.commit_every = 0;
    st.verify = truthy(msg, "verify");
    st.fetch = st.kind == StepKind::Scan || st.kind == StepKind::Load || (st.kind == StepKind::Exec && truthy(msg, "fetch"));
    if (st.kind != StepKind::Connect) {
        if (absent(msg, "sql") || !msg["sql"].is_string())
            throw ProtocolError("a " + get_str(msg, "kind") + " step needs sql");
        st.sql = msg["sql"];
        st.shape = msg.value("shape", json());
    }
    if (st.kind == StepKind::Batch && st.batch < 1)
        throw ProtocolError("a batch step needs batch >= 1");
    st.nops = st.kind == StepKind::Batch ? (st.n + st.batch - 1) / st.batch : st.n;
}

void parse_policy(const json &msg, const Step &st, Load &load, const Driver &driver, const std::string &method)
{
    std::string policy = get_str(msg, "policy");
    load.per_request = policy == "per-request";
    load.pooled = policy == "pooled" && driver.has_pool();
    if (!policy.empty() && policy != "persistent" && !load.per_request && !load.pooled)
        throw Unsupported(method + " has no " + policy + " connection policy (it has persistent and per-request" +
                          (driver.has_pool() ? ", pooled)" : ")"));
    if (load.per_request && st.commit_every > 1)
        throw Unsupported("commit_every " + std::to_string(st.commit_every) +
                          " with a connection per request: a transaction cannot span requests");
    if (load.pooled && st.commit_every > 0)
        throw Unsupported("commit_every with a connection borrowed from the pool per operation: a transaction "
                          "cannot span borrowings");
    load.pool_size = get_int(msg, "pool_size", 1);
    if (load.pooled && load.pool_size < 1)
        throw ProtocolError("a pooled step needs pool_size >= 1");
}

// Steps under load: one client per process, duration, open loop, connection policy.
void parse_load(const json &msg, ParsedStep &p, const Driver &driver, const std::string &method)
{
    Load &L = p.load;
    std::int64_t clients = get_int(msg, "clients", 1), skip = get_int(msg, "skip_ns", 0);
    double duration_ms = get_num(msg, "duration_ms", 0);
    L.rate = get_num(msg, "rate", 0);
    L.seed = static_cast<std::uint64_t>(get_int(msg, "schedule_seed", 0));
    L.phase_ns = get_int(msg, "phase_ns", 0);
    L.late_ns = get_int(msg, "late_ns", 1000000);
    L.start_at_unix_ns = std::max<std::int64_t>(get_int(msg, "start_at_unix_ns", 0), 0);
    if (duration_ms < 0 || L.rate < 0 || L.phase_ns < 0)
        throw ProtocolError("a step needs duration_ms >= 0, rate >= 0 and phase_ns >= 0");
    if (clients != 1)
        throw ProtocolError("concurrency is processes: one client per worker process (clients = 1), not " +
                            std::to_string(clients));
    std::string arrival = get_str(msg, "arrival");
    if (!arrival.empty() && arrival != "poisson" && arrival != "uniform")
        throw ProtocolError("unknown arrival '" + arrival + "' (poisson, uniform)");
    parse_policy(msg, p.st, L, driver, method);
    L.duration_ns = static_cast<std::int64_t>(duration_ms * 1e6);
    L.poisson = arrival != "uniform";
    L.skip_ns = skip > 0 ? skip : -1;
    p.loaded = truthy(msg, "histogram") || L.duration_ns || L.rate > 0 || L.per_request || L.pooled;
    if (p.loaded && L.duration_ns && !p.st.nops)
        throw ProtocolError("a step by duration needs iterations >= 1 to cycle through");
}

Dialect endpoint_dialect(const json &ep)
{
    std::string dbms = ep_str(ep, "dbms").value_or("");
    return dbms == "sqlite" ? Dialect::SQLite : dbms == "mariadb" ? Dialect::MariaDB : Dialect::PostgreSQL;
}

// The markers of sql, and for exec and batch one generator per marker, each run for every
// operation's row; literal: each operation's statement with its values inlined.
void generate_params(const json &msg, Step &st)
{
    st.marks = sql_markers(st.sql);
    st.nparams = st.marks.size();
    if (st.kind == StepKind::Scan && st.nparams)
        throw ProtocolError("a scan runs one query without params, but the sql has " + std::to_string(st.nparams) +
                            " markers");
    if (st.kind == StepKind::Scan || st.kind == StepKind::Connect)
        return;
    json specs = msg.value("params", json::array());
    if (!specs.is_array() || specs.size() != st.nparams)
        throw ProtocolError(std::to_string(st.nparams) + " markers but " +
                            std::to_string(specs.is_array() ? specs.size() : 0) + " params");
    std::vector<Generator> gens(specs.begin(), specs.end());
    for (const Generator &g : gens)
        st.param_types.push_back(g.type());
    st.params.reserve(static_cast<std::size_t>(st.n) * st.nparams);
    for (std::int64_t i = 0; i < st.n; i++)
        for (Generator &g : gens)
            st.params.push_back(g.next(i));
    if (st.mode == Mode::Literal) {
        Dialect dialect = endpoint_dialect(st.endpoint);
        for (std::int64_t i = 0; i < st.n; i++)
            st.texts.push_back(sql_inline(st.sql, st.marks, st.row_params(i), dialect));
    }
}

}  // namespace

ParsedStep parse_step(const json &msg, const json &endpoint, const Driver &driver, const std::string &method)
{
    if (endpoint.is_null())
        throw ProtocolError("step before open");
    ParsedStep p;
    Step &st = p.st;
    st.endpoint = endpoint;
    st.kind = parse_kind(get_str(msg, "kind"));
    parse_fields(msg, st);
    st.mode = parse_mode(msg, st, driver, method);
    p.latency_file = get_str(msg, "latency_file");
    parse_load(msg, p, driver, method);
    if (st.kind != StepKind::Connect)
        generate_params(msg, st);
    if (st.kind == StepKind::Load)
        st.assoc = std::make_shared<Association>(msg, st, driver);
    return p;
}

}  // namespace ab
