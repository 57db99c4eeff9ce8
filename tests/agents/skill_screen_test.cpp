// The pre-verification screen of proposed skills: what it refuses, the order of the checks, what
// counts as a task's size or name, and the length bar.
#include "agents/skill_screen.h"

#include <gtest/gtest.h>

namespace skill_screen_test {
using namespace vinci::agents;
using vinci::skills::Skill;

// 160 bytes or more of content, with no bypass, precision or size words.
const std::string kBody =
    "## Motivation\nLaunch overhead dominates small slices of work.\n## Key Idea\nOne launch covers all elements; "
    "index rows inside the kernel.\n## Example\nout[i] = max(in[i], 0.f);\n";

Skill skill(const std::string& name, const std::string& content, const std::string& scope = "elementwise ops") {
  Skill s;
  s.name = name;
  s.description = "d";
  s.scope = scope;
  s.content = content;
  return s;
}

TEST(SkillScreen, ABypassIsNamedWithTheMatchedText) {
  EXPECT_EQ(screen_skill(skill("x", kBody + "Use F.softmax (x, dim=1)."), "", "Softmax"),
            "bypasses the kernel: 'f.softmax (' (a skill must teach how to write the kernel, not how to avoid it)");
  EXPECT_NE(screen_skill(skill("x", kBody + "call cublasSgemm(handle, ...)"), "", "Mm")->find("cublassgemm("),
            std::string::npos);
  EXPECT_NE(screen_skill(skill("x", kBody + "Wrap forward in torch.compile."), "", "Mm")->find("torch.compile"),
            std::string::npos);
  EXPECT_NE(screen_skill(skill("x", kBody + "Memoize results by pointer."), "", "Mm")->find("memoi"),
            std::string::npos);
  // The function must be called: a mention of the name is not a bypass.
  EXPECT_EQ(screen_skill(skill("x", kBody + "Unlike torch.softmax, this stays in registers."), "", "Mm"), std::nullopt);
}

TEST(SkillScreen, BypassIsCheckedBeforeEverythingElse) {
  // Short, precision-dropping and bypassing: the bypass is what is reported.
  EXPECT_EQ(screen_skill(skill("x", "use fp16 and torch.mm(a, b)"), "", "Mm")->rfind("bypasses", 0), 0u);
}

TEST(SkillScreen, PrecisionNeedsAScopeOrTagThatLimitsIt) {
  EXPECT_EQ(screen_skill(skill("x", kBody + "Accumulate in __half."), "", "Mm"),
            "drops precision: it uses '__half' but its scope does not limit it to low-precision tasks");
  Skill tagged = skill("x", kBody + "Accumulate in __half.");
  tagged.tags = {"fp16"};
  EXPECT_EQ(screen_skill(tagged, "", "Mm"), std::nullopt);
  // A word that merely contains one of the names is not one.
  EXPECT_EQ(screen_skill(skill("x", kBody + "See halfway for details."), "", "Mm"), std::nullopt);
}

TEST(SkillScreen, OnlyNamesOfFourOrMoreLettersAndNumbersOfFourOrMoreDigitsAreTaskSpecific) {
  // "Mm" is too short a task name to mean anything inside a skill name.
  EXPECT_EQ(screen_skill(skill("mm_tiling", kBody), "", "Mm"), std::nullopt);
  EXPECT_EQ(screen_skill(skill("softmax_rows", kBody), "", "Softmax"),
            "task-specific: its name contains the task's name 'Softmax'");
  // 512 is a common tile size, not a shape: only 4+ digit numbers count.
  const std::string source = "N = 512\nM = 4096\nK = 8192\n";
  EXPECT_EQ(screen_skill(skill("x", kBody + "tile 512"), source, "Mm"), std::nullopt);
  EXPECT_EQ(screen_skill(skill("x", kBody + "K=8192 and M=4096; 40960 is fine"), source, "Mm"),
            "task-specific: it hard-codes the task's sizes (4096, 8192)");
}

TEST(SkillScreen, TheLengthBarIs160Bytes) {
  const std::string at_bar = std::string(160, 'a');
  EXPECT_EQ(screen_skill(skill("x", at_bar), "", "Mm"), std::nullopt);
  EXPECT_EQ(screen_skill(skill("x", at_bar.substr(1)), "", "Mm"),
            "trivial: 159 characters of content (at least 160 with motivation, key idea and example)");
}
TEST(SkillScreen, RefusesBypassTaskSpecificTrivialAndPrecisionDrops) {
  const std::string body =
      "## Motivation\nLaunch overhead dominates small slices.\n## Key Idea\nOne launch covers all elements; index rows "
      "inside the kernel.\n## Example\nfor (i...) out[i] = max(in[i], 0.f);\n";
  const std::string source = "BATCH = 16384\nclass Model: ...";
  EXPECT_EQ(screen_skill(skill("single_launch", body), source, "Relu"), std::nullopt);
  EXPECT_NE(screen_skill(skill("x", body + "Call torch.matmul(a, b) instead."), source, "Relu")->find("bypasses"),
            std::string::npos);
  EXPECT_NE(screen_skill(skill("x", body + "Cache the output between calls."), source, "Relu")->find("bypasses"),
            std::string::npos);
  EXPECT_NE(screen_skill(skill("x", body + "Size the grid for 16384 rows."), source, "Relu")->find("16384"),
            std::string::npos);
  EXPECT_NE(screen_skill(skill("fast_relu_trick", body), source, "Relu")->find("task's name"), std::string::npos);
  EXPECT_NE(screen_skill(skill("x", "## Motivation\n## Key Idea\n## Example\n"), source, "Relu")->find("trivial"),
            std::string::npos);
  EXPECT_NE(screen_skill(skill("x", body + "Convert to bf16 first."), source, "Relu")->find("precision"),
            std::string::npos);
  auto scoped = skill("x", body + "Convert to bf16 first.");
  scoped.scope = "bf16 inputs only";
  EXPECT_EQ(screen_skill(scoped, source, "Relu"), std::nullopt);
}

}  // namespace skill_screen_test
