// Skill libraries as JSONL: all-or-nothing reads whose errors name file, line and field.
#include "skills/skill_jsonl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "core/files.h"
#include "support/temp_dir.h"

namespace skill_jsonl_test {
using namespace vinci::skills;

const char* kContent = "## Motivation\\nm\\n## Key Idea\\nk\\n## Example\\ne\\n";

std::string line(const std::string& name, const std::string& extra = "") {
  return fmt::format(R"({{"name": "{}", "description": "d", "content": "{}"{}}})", name, kContent, extra);
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string error_of(const std::filesystem::path& p) {
  try {
    read_skills_jsonl(p);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(SkillJsonl, BlankLinesAreSkippedAndLinesWithoutStatusGetTheDefault) {
  const vinci::test::TempDir dir("skill-jsonl");
  const auto file = dir.path() / "lib.jsonl";
  write(file, line("warp_reduce") + "\n\n   \n" + line("block_reduce", R"(, "status": "retired")") + "\n");
  const auto skills = read_skills_jsonl(file, Status::candidate);
  ASSERT_EQ(skills.size(), 2u);
  EXPECT_EQ(skills[0].name, "warp_reduce");
  EXPECT_EQ(skills[0].status, Status::candidate);
  EXPECT_EQ(skills[1].status, Status::retired);
  EXPECT_EQ(read_skills_jsonl(file)[0].status, Status::admitted);
}

TEST(SkillJsonl, IdsInTheFileAreDropped) {
  // An id belongs to the store the skill came from; another store must assign its own.
  const vinci::test::TempDir dir("skill-jsonl");
  const auto file = dir.path() / "lib.jsonl";
  write(file, line("warp_reduce", R"(, "id": 42)") + "\n");
  EXPECT_EQ(read_skills_jsonl(file).at(0).id, 0);
}

TEST(SkillJsonl, InvalidJsonNamesFileAndLine) {
  const vinci::test::TempDir dir("skill-jsonl");
  const auto file = dir.path() / "lib.jsonl";
  write(file, line("warp_reduce") + "\n{not json\n" + line("block_reduce") + "\n");
  const std::string e = error_of(file);
  EXPECT_NE(e.find(file.string() + ":2: not valid JSON"), std::string::npos) << e;
}

TEST(SkillJsonl, ABadFieldNamesLineSkillAndField) {
  const vinci::test::TempDir dir("skill-jsonl");
  const auto file = dir.path() / "lib.jsonl";
  write(file, line("warp_reduce") + "\n" + line("block_reduce", R"(, "backends": ["opencl"])") + "\n");
  const std::string e = error_of(file);
  EXPECT_NE(e.find(file.string() + ":2 (skill 'block_reduce'): "), std::string::npos) << e;
  EXPECT_NE(e.find("backends[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("opencl"), std::string::npos) << e;
}

TEST(SkillJsonl, AMissingNameIsReportedWithoutASkillName) {
  const vinci::test::TempDir dir("skill-jsonl");
  const auto file = dir.path() / "lib.jsonl";
  write(file, R"({"description": "d", "content": "c"})"
              "\n");
  const std::string e = error_of(file);
  EXPECT_NE(e.find(file.string() + ":1: "), std::string::npos) << e;
  EXPECT_NE(e.find("name"), std::string::npos) << e;
  EXPECT_EQ(e.find("(skill"), std::string::npos) << e;
}

TEST(SkillJsonl, ALineThatIsNotAnObjectIsAnError) {
  const vinci::test::TempDir dir("skill-jsonl");
  const auto file = dir.path() / "lib.jsonl";
  write(file, "[1, 2]\n");
  const std::string e = error_of(file);
  EXPECT_NE(e.find(file.string() + ":1: "), std::string::npos) << e;
  EXPECT_NE(e.find("JSON object"), std::string::npos) << e;
}

TEST(SkillJsonl, WritingLeavesIdsOutOneLineEach) {
  Skill s;
  s.id = 7;
  s.name = "warp_reduce";
  s.description = "d";
  s.content = "c";
  const std::string text = skills_to_jsonl({s, s});
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  const auto first = nlohmann::json::parse(text.substr(0, text.find('\n')));
  EXPECT_FALSE(first.contains("id"));
  EXPECT_EQ(first["name"], "warp_reduce");
  EXPECT_EQ(skills_to_jsonl({}), "");
}

TEST(SkillJsonl, AWrittenLibraryReadsBackTheSame) {
  const vinci::test::TempDir dir("skill-jsonl");
  const auto file = dir.path() / "lib.jsonl";
  Skill s;
  s.name = "warp_reduce";
  s.description = "reduce — in registers";  // non-ASCII survives the trip
  s.tags = {"reduction"};
  s.content = "## Motivation\nm\n## Key Idea\nk\n## Example\ne\n";
  s.status = Status::retired;
  s.backends = {"cuda", "triton"};
  s.arch = "sm_80+";
  s.provenance.task = "task_a";
  s.provenance.episode_ids = {"ep1"};
  s.usage.selected = 3;
  write_skills_jsonl(file, {s});
  const auto back = read_skills_jsonl(file);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0], s);
}
}  // namespace skill_jsonl_test
