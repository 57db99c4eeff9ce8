#include "core/sqlite.h"

#include <sqlite3.h>

#include <fmt/format.h>

namespace vinci::core {

Statement::Statement(sqlite3* db, std::string_view sql, std::string where) : db_(db), where_(std::move(where)) {
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK)
    fail(fmt::format("preparing `{}`", sql));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_), where_(std::move(other.where_)) {
  other.stmt_ = nullptr;
}

void Statement::fail(const std::string& what) const {
  const char* sql = stmt_ ? sqlite3_sql(stmt_) : nullptr;
  throw SqliteError(
      fmt::format("{}: {}{}: {}", where_, what, sql ? fmt::format(" (`{}`)", sql) : "", sqlite3_errmsg(db_)));
}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail(fmt::format("binding parameter {}", index));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail(fmt::format("binding parameter {}", index));
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    fail(fmt::format("binding parameter {}", index));
  return *this;
}

Statement& Statement::bind(int index, std::nullopt_t) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail(fmt::format("binding parameter {}", index));
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail("executing");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}

Database::Database(const std::filesystem::path& path, int busy_timeout_ms) : path_(path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw SqliteError(fmt::format("{}: cannot open database: {}", path.string(), message));
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  // One line, whatever SQLite's own report looks like: its integrity dump runs to many lines, the
  // first a header naming the schema.
  const auto damaged = [&](std::string why) {
    if (why.rfind("*** in database", 0) == 0 && why.find('\n') != std::string::npos) why.erase(0, why.find('\n') + 1);
    why = why.substr(0, why.find('\n'));
    return SqliteError(
        fmt::format("{0}: the file is damaged ({1}); move it aside, then restore a backup, salvage what is left with "
                    "`sqlite3 {0} .recover | sqlite3 NEW.db`, or start a new file (from an export with `import`)",
                    path.string(), why));
  };
  try {
    // synchronous=FULL: a committed transaction survives power loss, not only a killed process.
    exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
    auto check = prepare("PRAGMA quick_check");
    if (!check.step() || check.text(0) != "ok") throw damaged(check.text(0));
  } catch (const SqliteError&) {
    const int code = sqlite3_errcode(db_) & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
      auto error = damaged(sqlite3_errmsg(db_));
      sqlite3_close(db_);
      throw error;
    }
    sqlite3_close(db_);
    throw;
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

Database::~Database() { sqlite3_close(db_); }

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw SqliteError(fmt::format("{}: `{}`: {}", path_.string(), text.substr(0, 200), message));
  }
}

Statement Database::prepare(std::string_view sql) { return Statement(db_, sql, path_.string()); }

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

int Database::user_version() {
  auto s = prepare("PRAGMA user_version");
  s.step();
  return static_cast<int>(s.integer(0));
}

void Database::transaction(const std::function<void()>& body) {
  if (depth_ > 0) {
    ++depth_;
    try {
      body();
    } catch (...) {
      --depth_;
      throw;
    }
    --depth_;
    return;
  }
  exec("BEGIN IMMEDIATE");
  depth_ = 1;
  try {
    body();
    exec("COMMIT");
  } catch (...) {
    depth_ = 0;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  depth_ = 0;
}

void Database::migrate(const std::vector<std::string>& migrations) {
  const int version = user_version();
  if (version > static_cast<int>(migrations.size()))
    throw SqliteError(fmt::format("{}: schema version {} is newer than this program's {}; upgrade vinci",
                                  path_.string(), version, migrations.size()));
  for (size_t v = static_cast<size_t>(version); v < migrations.size(); ++v)
    transaction([&] {
      exec(migrations[v]);
      exec(fmt::format("PRAGMA user_version={}", v + 1));
    });
}

}  // namespace vinci::core
