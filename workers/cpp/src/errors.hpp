// Errors are answers (protocol/PROTOCOL.md, Answers and errors): every failure the worker
// answers is one of these, thrown where it is found and caught by the message loop.
#pragma once

#include <stdexcept>
#include <string>

namespace ab {

class WorkerError : public std::runtime_error {
public:
    WorkerError(std::string kind, const std::string &message, std::string sqlstate = {})
        : std::runtime_error(message), kind_(std::move(kind)), sqlstate_(std::move(sqlstate))
    {
    }
    const std::string &kind() const { return kind_; }
    const std::string &sqlstate() const { return sqlstate_; }

private:
    std::string kind_, sqlstate_;
};

// The message was malformed (unknown op, missing field, step before open).
struct ProtocolError : WorkerError {
    explicit ProtocolError(const std::string &m) : WorkerError("protocol", m) {}
};

// The driver cannot do what was asked as asked.
struct Unsupported : WorkerError {
    explicit Unsupported(const std::string &m) : WorkerError("unsupported", m) {}
};

// The database or the driver raised an error: sqlstate is the DBMS's SQLSTATE, or MariaDB's
// error code name where it has none.
struct DbError : WorkerError {
    explicit DbError(const std::string &m, std::string sqlstate = {}) : WorkerError("db", m, std::move(sqlstate)) {}
};

}  // namespace ab
