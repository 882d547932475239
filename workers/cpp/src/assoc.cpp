#include "assoc.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "texts.hpp"

namespace ab {

const char *const Association::WORDS =
    "the message's hand-written statements, run by the driver's bound execution (its extended mode; see 'load "
    "statements'): lazy = the parents' statement, then levels[k].one for each row of the level above (a statement "
    "per parent and per child: N+1); selectin = the parents' statement, then per level one levels[k].in over the "
    "distinct values read above, one marker per value (none once a level read no rows); joined = the joined "
    "statement once, each row split by the levels' column counts and each entity kept once by its key (a level "
    "whose key is NULL in a row has no entity there); rows = entities; statements counted as they are sent";

namespace {

std::vector<std::string> names(const json &list, const char *what)
{
    if (!list.is_array() || list.empty())
        throw ProtocolError(std::string("a load step's ") + what + " must be a list of names");
    return list.get<std::vector<std::string>>();
}

std::size_t index_of(const std::vector<std::string> &columns, const std::string &name)
{
    auto it = std::find(columns.begin(), columns.end(), name);
    if (it == columns.end())
        throw ProtocolError("a load step's column '" + name + "' is not among its table's columns");
    return static_cast<std::size_t>(it - columns.begin());
}

std::vector<std::size_t> key_of(const std::vector<std::string> &columns, const json &key)
{
    std::vector<std::size_t> at;
    for (const std::string &name : names(key, "key"))
        at.push_back(index_of(columns, name));
    return at;
}

// A value read, as a parameter for the next level's statement (by its kind, with its text form).
Param to_param(const Value &v)
{
    Param p;
    p.kind = v.kind;
    p.i = v.i;
    p.f = v.f;
    switch (v.kind) {
    case Kind::Int: p.text = std::to_string(v.i); break;
    case Kind::Bool: p.text = v.i ? "true" : "false"; break;
    case Kind::Float: p.text = float_repr(v.f); break;
    case Kind::Timestamp: p.text = format_timestamp(v.i, TimestampForm::Sql); break;
    case Kind::Date: p.text = format_date(v.i); break;
    default: p.text = std::string(v.s); break;
    }
    return p;
}

// The canonical bytes of a row's key values: equal keys, equal bytes.
std::string key_bytes(const Row &row, std::size_t first, const std::vector<std::size_t> &key)
{
    std::string out;
    for (std::size_t k : key) {
        const Value &v = row[first + k];
        out += static_cast<char>(v.kind);
        out.append(reinterpret_cast<const char *>(&v.i), sizeof v.i);
        out.append(reinterpret_cast<const char *>(&v.f), sizeof v.f);
        std::uint32_t n = static_cast<std::uint32_t>(v.s.size());
        out.append(reinterpret_cast<const char *>(&n), sizeof n);
        out.append(v.s);
    }
    return out;
}

}  // namespace

Association::Association(const json &msg, const Step &st, const Driver &driver) : driver_(driver)
{
    const json load = msg.value("load", json::object());
    const std::string strategy = load.value("strategy", "");
    strategy_ = strategy == "lazy" ? Strategy::Lazy : strategy == "selectin" ? Strategy::Selectin : Strategy::Joined;
    if (strategy != "lazy" && strategy != "selectin" && strategy != "joined")
        throw ProtocolError("unknown load strategy '" + strategy + "' (lazy, selectin, joined)");
    std::vector<std::string> columns = names(st.shape.value("table_columns", json()), "shape's table_columns");
    levels_.push_back({columns.size(), key_of(columns, st.shape.value("key", json())), 0, "", "", ""});
    for (const json &L : load.value("levels", json::array())) {
        levels_.back().ref = index_of(columns, L.value("parent_column", ""));
        columns = names(L.value("table_columns", json()), "levels' table_columns");
        const json in = L.value("in", json::array({"", ""}));
        levels_.push_back({columns.size(), key_of(columns, L.value("key", json())), 0,
                           driver.statement_text(L.value("one", "")), in.at(0), in.at(1)});
    }
    parents_ = driver.statement_text(st.sql);
    joined_ = driver.statement_text(load.value("joined", ""));
}

std::int64_t Association::take_statements()
{
    std::int64_t n = statements_;
    statements_ = 0;
    return n;
}

// One statement sent, each row it reads handed to `row` (decoded as the driver's scans decode).
std::int64_t Association::run(Connection &conn, Step &st, const std::string &sql, const std::vector<Param> &args,
                              const std::function<void(const Row &)> &row)
{
    statements_++;
    st.collect = &row;
    try {
        std::int64_t n = conn.query(st, sql, args);
        st.collect = nullptr;
        return n;
    } catch (...) {
        st.collect = nullptr;
        throw;
    }
}

const std::string &Association::in_text(std::size_t level, std::size_t keys)
{
    auto [it, added] = in_texts_.try_emplace({level, keys});
    if (added) {  // made once per number of keys (the first time inside an operation's time)
        std::string markers;
        for (std::size_t k = 0; k < keys; k++)
            markers += k ? ", ?" : "?";
        it->second = driver_.statement_text(levels_[level].in_head + markers + levels_[level].in_tail);
    }
    return it->second;
}

std::int64_t Association::lazy(Connection &conn, Step &st, const std::vector<Param> &args)
{
    std::int64_t entities = 0;
    std::vector<Param> above, below;
    std::size_t level = 0;
    auto keep = [&](const Row &row) {  // an entity of `level`, and its value the level below binds
        st.keep(row);
        entities++;
        if (level + 1 < levels_.size() && row[levels_[level].ref].kind != Kind::Null)
            below.push_back(to_param(row[levels_[level].ref]));
    };
    run(conn, st, parents_, args, keep);
    for (level = 1; level < levels_.size(); level++) {
        above.swap(below);
        below.clear();
        for (const Param &value : above)
            run(conn, st, levels_[level].one, {value}, keep);
    }
    return entities;
}

std::int64_t Association::selectin(Connection &conn, Step &st, const std::vector<Param> &args)
{
    std::int64_t entities = 0;
    std::vector<Param> below;
    std::unordered_set<std::string> seen;  // the distinct values the level below binds
    std::size_t level = 0;
    auto keep = [&](const Row &row) {
        st.keep(row);
        entities++;
        if (level + 1 < levels_.size() && row[levels_[level].ref].kind != Kind::Null &&
            seen.insert(key_bytes(row, 0, {levels_[level].ref})).second)
            below.push_back(to_param(row[levels_[level].ref]));
    };
    run(conn, st, parents_, args, keep);
    for (level = 1; level < levels_.size() && !below.empty(); level++) {
        std::vector<Param> values;
        values.swap(below);
        seen.clear();
        run(conn, st, in_text(level, values.size()), values, keep);
    }
    return entities;
}

std::int64_t Association::joined(Connection &conn, Step &st, const std::vector<Param> &args)
{
    std::int64_t entities = 0;
    std::unordered_set<std::string> kept;  // (level, key) of every entity taken
    Row entity;
    run(conn, st, joined_, args, [&](const Row &row) {
        std::size_t first = 0;
        for (std::size_t L = 0; L < levels_.size(); first += levels_[L].ncols, L++) {
            const Level &level = levels_[L];
            bool null_key = std::any_of(level.key.begin(), level.key.end(),
                                        [&](std::size_t k) { return row[first + k].kind == Kind::Null; });
            if (null_key)  // no entity at this level, nor below it (left joins)
                break;
            if (!kept.insert(std::to_string(L) + ":" + key_bytes(row, first, level.key)).second)
                continue;
            entity.assign(row.begin() + static_cast<std::ptrdiff_t>(first),
                          row.begin() + static_cast<std::ptrdiff_t>(first + level.ncols));
            st.keep(entity);
            entities++;
        }
    });
    return entities;
}

std::int64_t Association::op(Connection &conn, Step &st, std::int64_t i)
{
    std::vector<Param> args(st.row_params(i), st.row_params(i) + st.nparams);
    switch (strategy_) {
    case Strategy::Lazy: return lazy(conn, st, args);
    case Strategy::Selectin: return selectin(conn, st, args);
    default: return joined(conn, st, args);
    }
}

}  // namespace ab
