// The skill library a command opens: an explicit new library starts empty unless seeding is asked
// for, and a seeded one is seeded once.
#include "cli/skills_db.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "skills/skill_jsonl.h"
#include "skills/store.h"
#include "support/temp_dir.h"

namespace skills_db_test {
using vinci::cli::DbOpen;
using vinci::cli::open_skills_db;

size_t seed_size() {
  return vinci::skills::read_skills_jsonl(std::string(VINCI_SOURCE_ROOT) + "/skills/seed.jsonl").size();
}

TEST(SkillsDb, AnExplicitNewLibraryStartsEmpty) {
  const vinci::test::TempDir dir("skills-db");
  const auto store = open_skills_db((dir.path() / "lib.db").string(), DbOpen::create);
  EXPECT_EQ(store->count(), 0u);
}

// A mistyped path of a command that only reads must not answer from an empty library it just made.
TEST(SkillsDb, AReaderRefusesAPathWithNoLibraryAndCreatesNothing) {
  const vinci::test::TempDir dir("skills-db");
  const std::string path = (dir.path() / "typo.db").string();
  try {
    open_skills_db(path, DbOpen::existing);
    FAIL() << "opened a library that does not exist";
  } catch (const std::runtime_error& e) {
    const std::string said = e.what();
    EXPECT_NE(said.find(path + ": no such file"), std::string::npos) << said;
    EXPECT_NE(said.find("import"), std::string::npos) << said;
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SkillsDb, SeedingHappensOnlyWhenTheLibraryIsNew) {
  const vinci::test::TempDir dir("skills-db");
  const std::string path = (dir.path() / "lib.db").string();
  ::testing::internal::CaptureStderr();
  {
    const auto store = open_skills_db(path, DbOpen::seed_if_new);
    EXPECT_EQ(store->count(), seed_size());
  }
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find(fmt::format("created {} with the {} skills of", path, seed_size())), std::string::npos) << said;
  // Opened again, it is not new: nothing is imported twice.
  const auto again = open_skills_db(path, DbOpen::seed_if_new);
  EXPECT_EQ(again->count(), seed_size());
}
}  // namespace skills_db_test
