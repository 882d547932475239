// The registry: every driver of this worker, by its method base name. The methods the worker
// knows are these and no others: hello's `methods`, the usage line and the `unknown method`
// answer come from here. A new driver is its file and one line below.
#include "driver.hpp"
#include "drivers.hpp"

namespace ab {

const std::map<std::string, DriverFactory> &registry()
{
    static const std::map<std::string, DriverFactory> DRIVERS = {
        {"cpp-libpqxx", make_libpqxx},
        {"cpp-soci-pg", make_soci_pg},
        {"cpp-soci-mysql", make_soci_mysql},
        {"cpp-soci-sqlite", make_soci_sqlite},
    };
    return DRIVERS;
}

const char *mode_name(Mode m)
{
    switch (m) {
    case Mode::Literal: return "literal";
    case Mode::Extended: return "extended";
    case Mode::Prepared: return "prepared";
    default: return "none";
    }
}

void Driver::configure(const std::string &key, const std::string &)
{
    throw Unsupported("no setting '" + key + "' (this method has none)");
}

std::optional<std::string> ep_str(const json &endpoint, const char *key)
{
    auto it = endpoint.find(key);
    if (it == endpoint.end() || !it->is_string())
        return std::nullopt;
    return it->get<std::string>();
}

bool ep_read_only(const json &endpoint)
{
    auto it = endpoint.find("read_only");
    return it != endpoint.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace ab
