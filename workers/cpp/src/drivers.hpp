// The drivers' constructors, one per file, for the registry.
#pragma once

#include <memory>

#include "driver.hpp"

namespace ab {

std::unique_ptr<Driver> make_libpqxx();      // driver_libpqxx.cpp
std::unique_ptr<Driver> make_soci_pg();      // soci_pg.cpp
std::unique_ptr<Driver> make_soci_mysql();   // soci_mysql.cpp
std::unique_ptr<Driver> make_soci_sqlite();  // soci_sqlite.cpp

}  // namespace ab
