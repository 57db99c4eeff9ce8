// A small RAII layer over SQLite: connection, statements, transactions, migrations.
//
// A small RAII layer over SQLite: one connection, prepared statements, transactions that roll
// back on exceptions, and schema migrations keyed by PRAGMA user_version.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace vinci::core {

// Names the database file and the statement that failed.
class SqliteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql, std::string where);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::nullopt_t);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, std::nullopt);
  }
  template <class... Args>
  Statement& bind_all(const Args&... args) {
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }

  bool step();  // true while a row is available
  void run();   // steps a statement that returns no rows
  void reset();

  bool is_null(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string where_;
};

class Database {
 public:
  // Opens (creating if missing) in WAL mode with foreign keys on; a writer waits up to
  // busy_timeout for another connection's lock instead of failing at once.
  explicit Database(const std::filesystem::path& path, int busy_timeout_ms = 10000);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  int64_t last_insert_rowid() const;
  int user_version();

  // Runs body inside BEGIN IMMEDIATE … COMMIT; any exception rolls everything back and rethrows.
  // Nested calls join the outer transaction.
  void transaction(const std::function<void()>& body);

  // Applies migrations[v..] for a database at user_version v, each in its own transaction that
  // also bumps user_version, so a crash between two leaves a consistent, resumable schema.
  // A database newer than this program is refused.
  void migrate(const std::vector<std::string>& migrations);

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  int depth_ = 0;
};

}  // namespace vinci::core
