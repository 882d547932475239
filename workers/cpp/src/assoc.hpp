// Load steps (protocol/PROTOCOL.md, Loading associations): a parent table's rows with their
// children and grandchildren, by the three hand-written strategies over any driver's
// Connection::query (its bound execution). Reference: src/accessbench/pyworker/association.py.
//
// lazy = the parents' statement, then levels[k].one for each row of the level above with a
// non-NULL parent_column (a statement per parent and per child: N+1); selectin = the parents'
// statement, then per level one levels[k].in over the distinct values read above (none once a
// level read no rows); joined = the joined statement once, each row split by the levels' column
// counts and each entity kept once by its key (a level whose key is NULL has no entity there).
// Every entity goes to the verification sink as a row of its table's columns; rows = entities.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "driver.hpp"

namespace ab {

class Association {
public:
    // Parses the message's `load` and the parents' shape; statements in the driver's markers.
    Association(const json &msg, const Step &st, const Driver &driver);
    // One operation: the whole load with the parents' arguments of row i; returns entities read.
    std::int64_t op(Connection &conn, Step &st, std::int64_t i);
    // The statements sent since the last call (a verification pass counts them).
    std::int64_t take_statements();

    static const char *const WORDS;  // hello's settings["load"]

private:
    enum class Strategy { Lazy, Selectin, Joined };
    struct Level {                    // the parents (0), then each of the message's levels
        std::size_t ncols = 0;
        std::vector<std::size_t> key;  // the key's columns, as indices into the level's row
        std::size_t ref = 0;           // the column the next level references (its parent_column)
        std::string one, in_head, in_tail;  // the level's statements (level 0: none)
    };
    Strategy strategy_;
    std::vector<Level> levels_;
    std::string parents_, joined_;
    const Driver &driver_;
    std::map<std::pair<std::size_t, std::size_t>, std::string> in_texts_;  // (level, keys) → IN statement
    std::int64_t statements_ = 0;

    std::int64_t run(Connection &conn, Step &st, const std::string &sql, const std::vector<Param> &args,
                     const std::function<void(const Row &)> &row);
    std::int64_t lazy(Connection &conn, Step &st, const std::vector<Param> &args);
    std::int64_t selectin(Connection &conn, Step &st, const std::vector<Param> &args);
    std::int64_t joined(Connection &conn, Step &st, const std::vector<Param> &args);
    const std::string &in_text(std::size_t level, std::size_t keys);
};

}  // namespace ab
