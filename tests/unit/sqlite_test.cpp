#include "core/sqlite.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

namespace fs = std::filesystem;
using vinci::core::Database;
using vinci::core::SqliteError;

namespace sqlite_test {
fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("vinci-sqlite-" + std::to_string(getpid()) + "-" + name + ".db");
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(p.string() + s);
  return p;
}
int64_t count(Database& db, const char* table) {
  auto s = db.prepare(std::string("SELECT count(*) FROM ") + table);
  s.step();
  return s.integer(0);
}

TEST(Sqlite, MigrationsApplyOnceInOrder) {
  const auto path = fresh("migrate");
  {
    Database db(path);
    db.migrate({"CREATE TABLE a (x INTEGER)"});
    EXPECT_EQ(db.user_version(), 1);
  }
  Database db(path);
  db.migrate({"CREATE TABLE a (x INTEGER)", "ALTER TABLE a ADD COLUMN y TEXT"});  // only the second runs
  EXPECT_EQ(db.user_version(), 2);
  db.prepare("INSERT INTO a (x, y) VALUES (?, ?)").bind_all(int64_t{1}, "one").run();
  EXPECT_THROW(db.migrate({"CREATE TABLE a (x INTEGER)"}), SqliteError);  // the file is newer than the program
}

TEST(Sqlite, AFailedMigrationLeavesTheVersionAlone) {
  Database db(fresh("bad-migration"));
  EXPECT_THROW(db.migrate({"CREATE TABLE a (x INTEGER)", "CREATE TABLE a (x INTEGER)"}), SqliteError);
  EXPECT_EQ(db.user_version(), 1);
}

TEST(Sqlite, TransactionsRollBackOnExceptions) {
  Database db(fresh("tx"));
  db.exec("CREATE TABLE t (v INTEGER)");
  EXPECT_THROW(db.transaction([&] {
    db.prepare("INSERT INTO t VALUES (1)").run();
    db.transaction([&] { db.prepare("INSERT INTO t VALUES (2)").run(); });  // joins the outer one
    throw std::runtime_error("fail");
  }),
               std::runtime_error);
  EXPECT_EQ(count(db, "t"), 0);
  db.transaction([&] { db.prepare("INSERT INTO t VALUES (3)").run(); });
  EXPECT_EQ(count(db, "t"), 1);
}

TEST(Sqlite, ErrorsNameTheFileAndStatement) {
  Database db(fresh("errors"));
  try {
    db.prepare("SELECT * FROM missing_table");
    FAIL();
  } catch (const SqliteError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("errors.db"), std::string::npos) << what;
    EXPECT_NE(what.find("missing_table"), std::string::npos) << what;
  }
}
}  // namespace sqlite_test
