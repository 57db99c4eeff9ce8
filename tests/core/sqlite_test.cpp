#include "core/sqlite.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

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
// A damaged file, cut short or overwritten inside, is named in one line that says how to recover.
TEST(Sqlite, ADamagedFileIsNamedInOneLine) {
  const fs::path whole = fresh("whole");
  {
    Database db(whole);
    db.exec("CREATE TABLE t(x TEXT); CREATE TABLE u(y TEXT);");
    auto insert = db.prepare("INSERT INTO t VALUES (?)");
    for (int i = 0; i < 400; ++i) {
      insert.bind(1, std::string(200, 'a' + i % 26));
      insert.step();
      insert.reset();
    }
  }
  const std::string bytes = [&] {
    std::ifstream in(whole, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_GT(bytes.size(), 3 * 4096u);
  const fs::path cut = fresh("cut"), scribbled = fresh("scribbled");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, 100);
  std::string overwritten = bytes;
  std::fill(overwritten.begin() + 4096, overwritten.begin() + 3 * 4096, '\xff');
  std::ofstream(scribbled, std::ios::binary) << overwritten;
  for (const fs::path& p : {cut, scribbled}) {
    try {
      Database db(p);
      ADD_FAILURE() << p << " opened";
    } catch (const SqliteError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(p.string() + ": the file is damaged (", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(".recover"), std::string::npos) << what;
    }
  }
}
}  // namespace sqlite_test
