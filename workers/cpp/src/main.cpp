// abworker-cpp: the C++ worker of accessbench (protocol/PROTOCOL.md, version 1).
//
// parse message → the op's handler → answer. A step is parsed and checked, its arguments
// generated before the clock (step.cpp), then run by the passes the host owns (passes.cpp) on
// the driver the method names in the registry (registry.cpp). One JSON object per line each
// way; stdout carries nothing else (every library's output goes to stderr).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "assoc.hpp"
#include "driver.hpp"
#include "generators.hpp"
#include "passes.hpp"
#include "step.hpp"
#include "texts.hpp"
#include "timing.hpp"

namespace ab {

namespace {

constexpr int PROTOCOL_VERSION = 1;

std::string known_methods()
{
    std::string names;
    for (const auto &entry : registry())
        names += (names.empty() ? "" : ", ") + entry.first;
    return names;
}

// Cleaning up after a failed step: whatever fails here is logged, and the step's own error is
// the one answered.
template <typename F>
void quietly(F &&f)
{
    try {
        f();
    } catch (const std::exception &e) {
        std::cerr << "abworker-cpp: while cleaning up: " << e.what() << "\n";
    }
}

// The worker's state: the method's driver, and the open connection with its endpoint.
class Session {
public:
    explicit Session(std::string method);
    json answer(const json &msg);
    const std::string &unsupported() const { return unsupported_; }
    bool ended() const { return ended_; }

private:
    std::string method_, unsupported_;  // non-empty: every message is answered unsupported
    bool ended_ = false;                // bye was answered
    std::unique_ptr<Driver> driver_;
    json endpoint_;                     // null when closed
    std::unique_ptr<Connection> conn_;

    void choose(const std::string &name);
    json hello() const;
    json capabilities() const;
    json open(const json &msg);
    json close();
    json step(const json &msg);
    json run(ParsedStep &p);
    json run_pooled(ParsedStep &p);
};

Session::Session(std::string method) : method_(std::move(method))
{
    try {
        choose(method_);
    } catch (const WorkerError &e) {
        unsupported_ = e.what();
    }
}

// Splits "cpp-libpqxx/batch=copy": the driver from the registry, then each key=value setting.
void Session::choose(const std::string &name)
{
    std::string base = name.substr(0, name.find('/'));
    auto it = registry().find(base);
    if (it == registry().end())
        throw Unsupported("unknown method '" + base + "' (abworker-cpp knows " + known_methods() + ")");
    driver_ = it->second();
    if (base.size() == name.size())
        return;
    std::string settings = name.substr(base.size() + 1);
    for (std::size_t at = 0; at <= settings.size();) {
        std::size_t comma = std::min(settings.find(',', at), settings.size());
        std::string kv = settings.substr(at, comma - at);
        std::size_t eq = kv.find('=');
        if (eq == std::string::npos)
            throw Unsupported(name + ": setting '" + kv + "' is not key=value");
        try {
            driver_->configure(kv.substr(0, eq), kv.substr(eq + 1));
        } catch (const WorkerError &e) {
            throw Unsupported(name + ": " + e.what());
        }
        at = comma + 1;
    }
}

json Session::capabilities() const
{
    json modes = json::array();
    for (Mode m : driver_->modes())
        modes.push_back(mode_name(m));
    return {{"dbms", driver_->dbms()},
            {"kinds", {"connect", "scan", "exec", "batch", "load"}},
            {"modes", modes},
            {"concurrency", "processes"},
            {"load", {{"policies", driver_->has_pool() ? json{"persistent", "per-request", "pooled"}
                                                       : json{"persistent", "per-request"}}}}};
}

json Session::hello() const
{
    json a = {{"protocol", PROTOCOL_VERSION}, {"name", method_}, {"language", "cpp"},
              {"runtime", std::string("g++ ") + __VERSION__ + ", C++" + std::to_string(__cplusplus / 100 % 100)},
              {"driver", driver_->driver()}};
    json settings = json::object(), caps = capabilities();
    driver_->hello(a, settings, caps);
    json methods = json::array();
    for (const auto &entry : registry())  // std::map: sorted, each once
        methods.push_back(entry.first);
    a["methods"] = methods;
    settings["clients"] = "one client per worker process (the runner starts one process per client); persistent: "
                          "the worker's own connection, prepared for the step before the barrier";
    settings["per-request"] = "connect (as open does, without asking for the backend pid or version), prepare what "
                              "the operation needs, run it, disconnect: all inside the operation's time";
    settings["load"] = Association::WORDS;
    settings["load statements"] = driver_->query_words();
    if (!driver_->has_pool())
        settings["pooled"] = "not built: " + driver_->driver() + " has no connection pool of its own";
    settings["open loop"] = "arrivals at rate from phase_ns (uniform) or seeded schedule_seed (poisson); no arrival "
                            "started at or after the duration, then an untimed sleep to its end; sleep "
                            "(clock_nanosleep), then spin the last 100 µs to each intended start";
    a["settings"] = settings;
    a["capabilities"] = caps;
    return a;
}

json Session::open(const json &msg)
{
    if (!msg.contains("endpoint") || !msg["endpoint"].is_object())
        throw ProtocolError("open needs an endpoint object");
    const json &ep = msg["endpoint"];
    std::string dbms = ep_str(ep, "dbms").value_or("(none)");
    auto reach = driver_->dbms();
    if (std::find(reach.begin(), reach.end(), dbms) == reach.end())
        throw Unsupported(method_ + " does not reach dbms '" + dbms + "'");
    if (ep.contains("read_only") && !ep["read_only"].is_boolean() && !ep["read_only"].is_null())
        throw ProtocolError("endpoint read_only: expected true or false");
    close();  // a second open replaces the first connection
    auto conn = driver_->connection();
    json a = json::object();
    std::int64_t start = now_ns();
    conn->open(ep, &a);
    a["connect_ns"] = now_ns() - start;
    conn_ = std::move(conn);
    endpoint_ = ep;
    return a;
}

json Session::close()
{
    if (conn_)
        conn_->close();
    conn_.reset();
    endpoint_ = nullptr;
    return json::object();
}

// The pass the step asks for, with the driver's per-step and per-connection preparation around
// it; after a failure the connection is left usable (its transaction rolled back).
json Session::run(ParsedStep &p)
{
    Step &st = p.st;
    if (p.load.pooled && !st.verify)
        return run_pooled(p);
    Passes passes(*driver_, st);
    bool per_request = p.load.per_request;
    if (!per_request)
        conn_->begin(st);
    try {
        json a = p.loaded && !st.verify ? passes.loaded(*conn_, p.load)
                 : st.verify           ? passes.verify(*conn_, per_request)
                                       : passes.timed(*conn_, p.latency_file);
        if (!per_request)
            conn_->end(st);
        return a;
    } catch (...) {
        if (!per_request)
            quietly([&] {
                conn_->recover(st);
                conn_->end(st);
            });
        throw;
    }
}

// A loaded step on the driver's pool, filled and prepared before the barrier (untimed).
json Session::run_pooled(ParsedStep &p)
{
    auto pool = driver_->pool(endpoint_, static_cast<std::size_t>(p.load.pool_size));
    pool->begin(p.st);
    try {
        json a = Passes(*driver_, p.st).loaded(*conn_, p.load, pool.get());
        pool->end(p.st, false);
        return a;
    } catch (...) {
        quietly([&] { pool->end(p.st, true); });
        throw;
    }
}

json Session::step(const json &msg)
{
    ParsedStep p = parse_step(msg, endpoint_, *driver_, method_);
    driver_->step_begin(p.st);
    try {
        json a = run(p);
        driver_->step_end(p.st);
        return a;
    } catch (...) {
        quietly([&] { driver_->step_end(p.st); });
        throw;
    }
}

json generate(const json &msg)
{
    Generator g(msg.value("spec", json()));
    json values = json::array();
    const auto count = msg.value("count", std::int64_t{0});
    for (std::int64_t i = 0; i < count; i++)
        values.push_back(param_json(g.next(i)));
    return {{"values", values}};
}

// A typed conformance value → the native value the drivers produce (text kept in store).
Value typed_value(const json &t, std::string &store)
{
    static const std::map<std::string, Kind> KINDS = {
        {"null", Kind::Null}, {"bool", Kind::Bool}, {"int", Kind::Int}, {"float", Kind::Float},
        {"decimal", Kind::Decimal}, {"text", Kind::Text}, {"bytes", Kind::Bytes}, {"timestamp", Kind::Timestamp},
        {"date", Kind::Date}, {"time", Kind::Time}};
    auto k = KINDS.find(t.value("type", ""));
    if (k == KINDS.end())
        throw ProtocolError("unknown value type '" + t.value("type", "") + "'");
    const json v = t.value("value", json());
    switch (k->second) {
    case Kind::Null: return Value::null();
    case Kind::Bool: return Value::integer(Kind::Bool, v.is_boolean() && v.get<bool>());
    case Kind::Float: {
        std::uint64_t bits = std::stoull(v.get<std::string>(), nullptr, 16);
        double f;
        std::memcpy(&f, &bits, 8);
        return Value::real(f);
    }
    case Kind::Decimal: store = decimal_plain(v.get<std::string>()).value_or(""); break;
    case Kind::Text: store = v.get<std::string>(); break;
    case Kind::Bytes:
        if (!unhex(v.get<std::string>(), store))
            throw ProtocolError("a bytes value is an even number of hex digits");
        break;
    default: return Value::integer(k->second, v.get<std::int64_t>());
    }
    return Value::text(k->second, store);
}

json checksum(const json &msg)
{
    if (!msg.contains("rows") || !msg["rows"].is_array())
        throw ProtocolError("checksum needs rows");
    Checksum sum;
    for (const json &r : msg["rows"]) {
        std::vector<std::string> store(r.size());
        Row row;
        for (std::size_t c = 0; c < r.size(); c++)
            row.push_back(typed_value(r[c], store[c]));
        sum.add(row);
    }
    return {{"checksum", sum.hex()}, {"rows", sum.rows}};
}

json histogram(const json &msg)
{
    auto h = std::make_unique<Histogram>();
    for (const json &v : msg.value("values", json::array())) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
            throw ProtocolError("histogram values are integers >= 0");
        h->record(v.get<std::uint64_t>());
    }
    return {{"histogram", h->to_json()}};
}

json schedule(const json &msg)
{
    double rate = msg.value("rate", 0.0);
    std::string arrival = msg.value("arrival", "poisson"), seed = msg.value("seed", "");
    if (!(rate > 0))
        throw ProtocolError("schedule: rate must be positive");
    if (arrival != "poisson" && arrival != "uniform")
        throw ProtocolError("schedule: unknown arrival '" + arrival + "'");
    if (seed.empty() || seed.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        throw ProtocolError("schedule: the seed is 16 hex digits");
    Schedule s(rate, arrival == "poisson", std::stoull(seed, nullptr, 16));
    json offsets = json::array();
    for (std::int64_t i = 0, n = msg.value("count", std::int64_t{0}); i < n; i++)
        offsets.push_back(s.next());
    return {{"offsets", offsets}};
}

json Session::answer(const json &msg)
{
    if (!msg.is_object())
        throw ProtocolError("not a JSON object");
    std::string op = msg.value("op", "");
    ended_ = op == "bye";
    if (!unsupported_.empty())
        throw Unsupported(unsupported_);
    if (op == "hello") return hello();
    if (op == "open") return open(msg);
    if (op == "step") return step(msg);
    if (op == "close" || op == "bye") return close();
    if (op == "generate") return generate(msg);
    if (op == "checksum") return checksum(msg);
    if (op == "histogram") return histogram(msg);
    if (op == "schedule") return schedule(msg);
    throw ProtocolError(op.empty() ? "a message needs an op" : "unknown op '" + op + "'");
}

// An answer as written: "ok" first, for a reader of the log, then the answer's fields.
std::string answer_text(bool ok, const json &fields)
{
    nlohmann::ordered_json out = {{"ok", ok}};
    for (const auto &[key, value] : fields.items())
        out[key] = value;
    return out.dump(-1, ' ', true, json::error_handler_t::replace);
}

// An error in one line, as the Python worker answers it.
std::string error_text(const std::string &kind, std::string message, const std::string &sqlstate)
{
    message = message.substr(0, message.find('\n'));
    while (!message.empty() && (message.back() == ' ' || message.back() == '\r'))
        message.pop_back();
    json e = {{"kind", kind}, {"message", message.empty() ? kind : message}};
    if (!sqlstate.empty())
        e["sqlstate"] = sqlstate;
    return answer_text(false, {{"error", e}});
}

std::string answer_line(Session &session, const std::string &line)
{
    try {
        return answer_text(true, session.answer(json::parse(line)));
    } catch (const WorkerError &e) {
        std::cerr << "abworker-cpp: " << e.kind() << ": " << e.what() << "\n";
        return error_text(e.kind(), e.what(), e.sqlstate());
    } catch (const json::exception &e) {  // not JSON, or a field of the wrong type
        return error_text("protocol", e.what(), "");
    } catch (const std::exception &e) {
        std::cerr << "abworker-cpp: internal: " << e.what() << "\n";
        return error_text("internal", e.what(), "");
    }
}

}  // namespace

}  // namespace ab

int main(int argc, char **argv)
{
    // stdout belongs to the protocol: keep a private copy of it and send everything else any
    // library prints to stderr, the worker's log.
    int fd = dup(1);
    FILE *out = fd < 0 ? nullptr : fdopen(fd, "w");
    if (!out || dup2(2, 1) < 0) {
        std::perror("abworker-cpp: stdout");
        return 2;
    }
    if (argc != 2) {
        std::cerr << "usage: abworker-cpp METHOD[/key=value,...]  (" << ab::known_methods() << ")\n";
        return 2;
    }
    ab::Session session(argv[1]);
    if (!session.unsupported().empty())
        std::cerr << "abworker-cpp: " << session.unsupported() << "\n";
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r\n") == std::string::npos)
            continue;
        std::string text = ab::answer_line(session, line);
        std::fprintf(out, "%s\n", text.c_str());
        std::fflush(out);
        if (session.ended())
            break;
    }
    return 0;
}
