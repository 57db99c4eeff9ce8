// The skill library a command opens: an explicit new library starts empty unless seeding is asked
// for, and a seeded one is seeded once.
#include "cli/skills_db.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "skills/skill_jsonl.h"
#include "skills/store.h"
#include "support/temp_dir.h"

namespace skills_db_test {
using vinci::cli::open_skills_db;

size_t seed_size() {
  return vinci::skills::read_skills_jsonl(std::string(VINCI_SOURCE_ROOT) + "/skills/seed.jsonl").size();
}

TEST(SkillsDb, AnExplicitNewLibraryStartsEmpty) {
  const vinci::test::TempDir dir("skills-db");
  const auto store = open_skills_db((dir.path() / "lib.db").string());
  EXPECT_EQ(store->count(), 0u);
}

TEST(SkillsDb, SeedingHappensOnlyWhenTheLibraryIsNew) {
  const vinci::test::TempDir dir("skills-db");
  const std::string path = (dir.path() / "lib.db").string();
  ::testing::internal::CaptureStderr();
  {
    const auto store = open_skills_db(path, /*seed_if_new=*/true);
    EXPECT_EQ(store->count(), seed_size());
  }
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find(fmt::format("created {} with the {} skills of", path, seed_size())), std::string::npos) << said;
  // Opened again, it is not new: nothing is imported twice.
  const auto again = open_skills_db(path, /*seed_if_new=*/true);
  EXPECT_EQ(again->count(), seed_size());
}
}  // namespace skills_db_test
