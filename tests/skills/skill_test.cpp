#include "skills/skill.h"

#include <gtest/gtest.h>

#include "skills/skill_jsonl.h"

using namespace vinci::skills;

namespace skill_test {

Skill valid_skill() {
  Skill s;
  s.name = "warp_reduce";
  s.description = "reduce 32 lanes through registers";
  s.scope = "reductions";
  s.tags = {"reduction", "warp"};
  s.content =
      "## Motivation\nfew barriers\n## Key Idea\nshuffles\n## Example\n```cuda\nx += __shfl_down_sync(~0u, x, "
      "16);\n```\n";
  s.backends = {"cuda"};
  return s;
}

std::string field_of(const Skill& s) {
  try {
    validate(s);
  } catch (const SkillError& e) {
    return e.field();
  }
  return "";
}

TEST(SkillRecord, AValidSkillPasses) { EXPECT_EQ(field_of(valid_skill()), ""); }

TEST(SkillRecord, ValidationNamesTheField) {
  Skill s = valid_skill();
  s.name = "";
  EXPECT_EQ(field_of(s), "name");
  for (const char* bad : {"WarpReduce", "warp-reduce", "warp__reduce", "_warp", "warp_", "1warp", "warp reduce"}) {
    s.name = bad;
    EXPECT_EQ(field_of(s), "name") << bad;
  }
  s = valid_skill();
  s.content = "## Motivation\nx\n## Example\ny\n";
  EXPECT_EQ(field_of(s), "content");
  s.content = "## Motivation\nx\n### Key Idea\nz\n## Example\ny\n";  // a deeper heading is not the section
  EXPECT_EQ(field_of(s), "content");
  s = valid_skill();
  s.description = "  ";
  EXPECT_EQ(field_of(s), "description");
  s = valid_skill();
  s.backends = {"cuda", "opencl"};
  EXPECT_EQ(field_of(s), "backends[1]");
  s = valid_skill();
  s.arch = "hopper";
  EXPECT_EQ(field_of(s), "arch");
  s = valid_skill();
  s.tags = {"ok", ""};
  EXPECT_EQ(field_of(s), "tags[1]");
}

TEST(SkillRecord, BareDavinciLineLoadsWithDefaults) {
  const auto j = nlohmann::json::parse(R"({"name":"warp_reduce","description":"d","scope":"s","tags":["a"],
    "content":"## Motivation\nm\n## Key Idea\nk\n## Example\ne"})");
  const Skill s = skill_from_json(j);
  EXPECT_EQ(s.status, Status::candidate);
  EXPECT_EQ(s.backends, std::vector<std::string>{"cuda"});
  EXPECT_EQ(s.arch, "any");
}

TEST(SkillRecord, JsonRoundTripKeepsEveryField) {
  Skill s = valid_skill();
  s.status = Status::admitted;
  s.arch = "sm_80+";
  s.provenance = {"level1/4_Softmax", {"ep1", "ep2"}, 12, "qwen3-8b"};
  s.verifications = {{"level1/4_Softmax", 1.3, 1.9, 2, true, "NVIDIA H100", "2026-11-21T00:00:00.000Z"}};
  s.usage = {3, 2, 1.5, 2, 0.5, 1};
  s.created_at = "2026-11-21T00:00:00.000Z";
  s.updated_at = "2026-11-21T00:00:01.000Z";
  EXPECT_EQ(skill_from_json(to_json(s)), s);
  EXPECT_DOUBLE_EQ(*s.usage.mean_reward_injected(), 0.75);
  EXPECT_DOUBLE_EQ(*s.usage.mean_reward_not_injected(), 0.5);
}

TEST(SkillRecord, WrongTypesNameTheField) {
  auto j = to_json(valid_skill());
  j["tags"] = "reduction";
  EXPECT_THROW(
      {
        try {
          skill_from_json(j);
        } catch (const SkillError& e) {
          EXPECT_EQ(e.field(), "tags");
          throw;
        }
      },
      SkillError);
  j = to_json(valid_skill());
  j["verifications"] = nlohmann::json::array({{{"repeats", "two"}}});
  try {
    skill_from_json(j);
    FAIL();
  } catch (const SkillError& e) {
    EXPECT_EQ(e.field(), "verifications[0].repeats");
  }
}

TEST(SkillRecord, ArchRequirements) {
  EXPECT_TRUE(arch_supports("any", "sm_70"));
  EXPECT_TRUE(arch_supports("sm_80+", "sm_90"));
  EXPECT_FALSE(arch_supports("sm_80+", "sm_75"));
  EXPECT_TRUE(arch_supports("sm_90", "sm_90"));
  EXPECT_FALSE(arch_supports("sm_90", "sm_100"));
  EXPECT_TRUE(arch_supports("sm_90", ""));  // no GPU named: no filter
}

TEST(SeedLibrary, HasFortyValidSkillsCoveringBothBackends) {
  const auto skills = read_skills_jsonl(std::string(VINCI_SOURCE_ROOT) + "/skills/seed.jsonl");
  EXPECT_GE(skills.size(), 40u);
  size_t triton = 0;
  std::set<std::string> names;
  for (const auto& s : skills) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_EQ(s.status, Status::admitted);
    EXPECT_NE(s.content.find("```"), std::string::npos) << s.name << " has no code example";
    triton += std::count(s.backends.begin(), s.backends.end(), "triton");
  }
  EXPECT_GE(triton, 8u);
}
}  // namespace skill_test
