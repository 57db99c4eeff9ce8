// Skill verification on a scripted backbone and evaluator: the bar a skill must reach (worst
// repeat against max(min_speedup, min_ratio x the turn-1 speedup)), the record it leaves, and how
// the repeats are asked for (greedy, fresh measurements, the skill added to the rollout's own).
#include "agents/verifier.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/files.h"
#include "support/fake_backbone.h"
#include "support/scripted_evaluator.h"
#include "support/temp_dir.h"

namespace verifier_test {
using namespace vinci::agents;
using vinci::eval::Result;
using vinci::eval::Verdict;

std::string answer(double speedup, bool wrong = false) {
  return fmt::format("Strategy: s\n```python\nclass ModelNew:\n    pass  # {}eager={}\n```\n", wrong ? "wrong " : "",
                     speedup);
}

vinci::skills::Skill skill(const std::string& name) {
  vinci::skills::Skill s;
  s.name = name;
  s.description = "about " + name;
  s.content = "## Motivation\nm\n## Key Idea\nunique-idea-of-" + name + "\n## Example\ne\n";
  s.backends = {"cuda"};
  return s;
}

struct Origin {
  vinci::test::TempDir dir{"verifier"};
  PolicyTask task;
  Rollout origin;
  explicit Origin(std::optional<double> turn1_speedup) {
    task.task.id = "level1/1_Relu";
    task.task.name = "Relu";
    task.task.file = dir.path() / "1_Relu.py";
    task.source = "class Model: pass\n";
    vinci::core::write_file_atomic(task.task.file, task.source);
    task.candidates_dir = dir.path() / "candidates";
    std::filesystem::create_directories(task.candidates_dir);
    origin.label = "s0";
    origin.scheme = 3;
    origin.sample = 1;
    origin.skills = {skill("coalesced_access")};
    if (turn1_speedup) {
      PolicyTurn t;
      Result r;
      r.verdict = Verdict::correct;
      r.speedup_eager = *turn1_speedup;
      t.result = r;
      origin.turns.push_back(t);
    }
  }
};

TEST(Verifier, TheWorstRepeatMustReachTheBar) {
  Origin s(1.5);  // bar: max(1.2, 1.2 x 1.5) = 1.8
  vinci::test::FakeBackbone model;
  for (const double x : {2.0, 1.9, 2.5, 1.7}) model.push_text(answer(x));
  model.push_text(answer(3.0));
  model.push_text(answer(3.0, /*wrong=*/true));
  vinci::test::ScriptedEvaluator evaluator;
  const auto out = verify_skills(model, evaluator, Prompts(), s.task, s.origin,
                                 {skill("reaches_bar"), skill("misses_bar"), skill("not_correct")}, VerifySettings{});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].admitted);
  EXPECT_EQ(out[0].why, "worst repeat 1.90x reaches the bar of 1.80x (max(1.20, 1.20 x turn-1 1.50x))");
  EXPECT_FALSE(out[1].admitted);
  EXPECT_EQ(out[1].why, "worst repeat 1.70x misses the bar of 1.80x (max(1.20, 1.20 x turn-1 1.50x))");
  EXPECT_FALSE(out[2].admitted);
  EXPECT_EQ(out[2].why, "a repeat with the skill was not correct");

  const auto& v = out[0].record;
  EXPECT_EQ(v.task, "level1/1_Relu");
  EXPECT_DOUBLE_EQ(v.base_speedup, 1.5);
  EXPECT_DOUBLE_EQ(v.skill_speedup, 1.9);
  EXPECT_EQ(v.repeats, 2);
  EXPECT_TRUE(v.correct);
  EXPECT_EQ(v.gpu, "scripted");
  EXPECT_FALSE(v.at.empty());
  EXPECT_FALSE(out[2].record.correct);
}

TEST(Verifier, WithoutATurnOneSpeedupTheBarIsTheMinimum) {
  Origin s(std::nullopt);
  vinci::test::FakeBackbone model;
  model.push_text(answer(1.25));
  vinci::test::ScriptedEvaluator evaluator;
  VerifySettings settings;
  settings.repeats = 1;
  const auto out = verify_skills(model, evaluator, Prompts(), s.task, s.origin, {skill("k")}, settings);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].admitted) << out[0].why;
  EXPECT_DOUBLE_EQ(out[0].record.base_speedup, 0.0);
  EXPECT_NE(out[0].why.find("the bar of 1.20x"), std::string::npos) << out[0].why;
}

TEST(Verifier, RepeatsAreGreedyFreshAndCarryTheSkill) {
  Origin s(1.0);
  vinci::test::FakeBackbone model;
  model.push_text(answer(2.0));
  model.push_text(answer(2.0));
  vinci::test::ScriptedEvaluator evaluator;
  VerifySettings settings;
  settings.max_new_tokens = 123;
  const auto out = verify_skills(model, evaluator, Prompts(), s.task, s.origin, {skill("new_trick")}, settings);
  ASSERT_EQ(model.requests().size(), 2u);
  for (const auto& q : model.requests()) {
    EXPECT_TRUE(q.sampling.greedy);
    EXPECT_EQ(q.sampling.max_new_tokens, 123);
    const std::string prompt = vinci::llm::to_json(q.messages).dump();
    // The rollout's own skill and the one under test are both in the prompt.
    EXPECT_NE(prompt.find("unique-idea-of-new_trick"), std::string::npos);
    EXPECT_NE(prompt.find("unique-idea-of-coalesced_access"), std::string::npos);
  }
  EXPECT_EQ(evaluator.fresh(), (std::vector<bool>{true, true}));
  ASSERT_EQ(out[0].repeats.size(), 2u);
  EXPECT_EQ(out[0].repeats[1].label, "verify_s0_new_trick_r1");
  EXPECT_EQ(out[0].repeats[1].scheme, 3);
  EXPECT_EQ(out[0].repeats[1].sample, 1);
  ASSERT_EQ(out[0].repeats[1].skills.size(), 2u);
  EXPECT_EQ(out[0].repeats[1].skills.back().name, "new_trick");
  ASSERT_EQ(out[0].repeats[1].turns.size(), 1u);
}

TEST(Verifier, NoProposalsAskForNothing) {
  Origin s(1.0);
  vinci::test::FakeBackbone model;
  vinci::test::ScriptedEvaluator evaluator;
  EXPECT_TRUE(verify_skills(model, evaluator, Prompts(), s.task, s.origin, {}, VerifySettings{}).empty());
  EXPECT_TRUE(model.requests().empty());
}
}  // namespace verifier_test
