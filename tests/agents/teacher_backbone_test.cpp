// The procedural teacher as a model (agents/teacher_backbone.h) run through the real agents: its
// answers parse as each role's, its policy turns follow the settings (wrong first turns, repairs,
// injected skills followed or not), its summaries propose the skill of the fastest correct turn, and
// tests/rl/episode_sft_test.cpp turns the same runs into SFT records. The evaluator knows each
// candidate's strategy by its exact text and gives it a made-up speed from a table
// (tests/support/teacher_run.h), so every expectation follows from the table.
#include "agents/teacher_backbone.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "support/teacher_run.h"

namespace teacher_backbone_test {

using namespace vinci;
using test::StrategyEvaluator;
using test::TeacherRun;

TEST(TeacherBackbone, SkillsMapToStrategiesTheTeacherWrites) {
  TeacherRun run;
  std::set<std::string> named;
  for (const auto& t : run.tasks)
    for (const auto& s : curriculum::teacher_strategies(t.spec))
      if (const auto skill = agents::teacher_skill_of(t.spec, s); !skill.empty()) named.insert(skill);
  std::set<std::string> shipped;
  for (const auto& s : run.teacher_skills) shipped.insert(s.name);
  for (const auto& name : named) EXPECT_TRUE(shipped.contains(name)) << name << " is not in skills/curriculum.jsonl";
  EXPECT_EQ(named.size(), 4u) << "a chain of two: fused chain, wide blocks; a 1024-column softmax: a row per program "
                                 "and several rows a program";
  curriculum::TaskSpec long_rows;
  long_rows.family = curriculum::Family::rowwise;
  long_rows.kind = "softmax";
  long_rows.cols = 65536;
  std::vector<std::string> skills;
  for (const auto& s : curriculum::teacher_strategies(long_rows))
    skills.push_back(agents::teacher_skill_of(long_rows, s));
  EXPECT_EQ(skills, (std::vector<std::string>{"triton_online_reduction_long_rows", "triton_online_reduction_long_rows",
                                              "", "", ""}))
      << "the looped strategies carry the online reduction; a long row as one tile and the wrong ones none";
  EXPECT_TRUE(shipped.contains("triton_online_reduction_long_rows"));
  curriculum::TaskSpec short_rows = long_rows;
  short_rows.cols = 32;
  skills.clear();
  for (const auto& s : curriculum::teacher_strategies(short_rows))
    skills.push_back(agents::teacher_skill_of(short_rows, s));
  EXPECT_EQ(skills, (std::vector<std::string>{"triton_several_rows_per_program", "triton_several_rows_per_program", "",
                                              "", ""}))
      << "the tiled strategies carry the several-rows skill; a program a short row and the wrong ones none";
  curriculum::TaskSpec matmul;
  matmul.family = curriculum::Family::matmul;
  matmul.chain = {{"relu", 0}};
  skills.clear();
  for (const auto& s : curriculum::teacher_strategies(matmul)) skills.push_back(agents::teacher_skill_of(matmul, s));
  EXPECT_EQ(skills, (std::vector<std::string>{"triton_linear_epilogue_on_the_accumulator",
                                              "triton_linear_epilogue_on_the_accumulator",
                                              "triton_linear_epilogue_on_the_accumulator", "", "", ""}))
      << "the fused epilogues carry the epilogue skill; a second kernel over the output and the wrong ones none";
  EXPECT_TRUE(shipped.contains("triton_linear_epilogue_on_the_accumulator"));
}

TEST(TeacherBackbone, WrongFirstTurnsAreRepairedAndEveryAnswerParses) {
  TeacherRun run;
  agents::TeacherSettings teacher{.follow_skill = 0.0, .wrong_first = 1.0, .seed = 3};
  for (size_t task = 0; task < run.tasks.size(); ++task) {
    const auto out = run.optimize(task, teacher, 1, {});
    ASSERT_FALSE(out.rollouts.empty());
    for (const auto& r : out.rollouts) {
      ASSERT_EQ(r.turns.size(), 3u);
      for (const auto& t : r.turns) EXPECT_EQ(t.parse_failure, "") << run.tasks[task].id;
      EXPECT_FALSE(r.turns[0].result->correct()) << "wrong_first = 1";
      EXPECT_TRUE(r.turns[1].result->correct()) << "a wrong turn is repaired";
      EXPECT_NE(r.turns[1].strategy, r.turns[2].strategy) << "a correct turn is followed by an untried strategy";
      EXPECT_NE(r.turns[0].strategy.find("Triton"), std::string::npos) << r.turns[0].strategy;
    }
  }
}

TEST(TeacherBackbone, AnInjectedSkillIsFollowedAsOftenAsTold) {
  TeacherRun run;
  skills::Skill rows_skill;
  for (const auto& s : run.teacher_skills)
    if (s.name == "triton_several_rows_per_program") rows_skill = s;
  size_t followed = 0, turns = 0;
  for (const double follow : {1.0, 0.0}) {
    followed = turns = 0;
    for (uint64_t seed = 0; seed < 4; ++seed) {
      const auto out = run.optimize(1, {.follow_skill = follow, .wrong_first = 0.0, .seed = seed}, seed, {rows_skill});
      for (const auto& r : out.rollouts) {
        if (r.skills.empty()) continue;
        for (const auto& t : r.turns) {
          ++turns;
          followed += StrategyEvaluator(run.tasks).strategy_of(t.code)->name == "rows4_w4";
        }
      }
    }
    ASSERT_GT(turns, 0u) << "selection injected the only skill";
    if (follow == 1.0) {
      EXPECT_EQ(followed, turns) << "every turn follows it";
    }
    if (follow == 0.0) {
      EXPECT_LT(followed, turns) << "turns pick among the three correct row strategies";
    }
  }
}

TEST(TeacherBackbone, TheSummaryProposesTheFastestCorrectTurnsSkill) {
  TeacherRun run;
  const auto out = run.optimize(0, {.follow_skill = 0.0, .wrong_first = 0.0, .seed = 5}, 9, run.teacher_skills);
  size_t summaries = 0;
  for (const auto& summary : out.summaries) {
    ASSERT_NE(summary.rollout, nullptr);
    const auto& r = *summary.rollout;
    const auto best = r.best_turn();
    ASSERT_TRUE(best.has_value());
    const auto strategy = StrategyEvaluator(run.tasks).strategy_of(r.turns[*best].code);
    const std::string skill = agents::teacher_skill_of(run.tasks[0].spec, *strategy);
    if (skill.empty()) {
      EXPECT_TRUE(summary.proposals.empty()) << strategy->name << " has no skill";
    } else {
      ASSERT_EQ(summary.proposals.size(), 1u) << strategy->name;
      EXPECT_EQ(summary.proposals[0].skill.name, skill);
    }
    ++summaries;
  }
  EXPECT_GT(summaries, 0u) << "some rollout improved on its first turn";
}

}  // namespace teacher_backbone_test
