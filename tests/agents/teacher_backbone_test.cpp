// The procedural teacher as a model (agents/teacher_backbone.h) run through the real agents: its
// answers parse as each role's, its policy turns follow the settings (wrong first turns, repairs,
// injected skills followed or not), its summaries propose the skill of the fastest correct turn, and
// the episodes become SFT records that the SFT reader accepts (rl/episode_sft.h). The evaluator
// knows each candidate's strategy by its exact text and gives it a made-up speed from a table, so
// every expectation follows from the table.
#include "agents/teacher_backbone.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "agents/optimizer.h"
#include "core/files.h"
#include "curriculum/task_source.h"
#include "eval/task.h"
#include "rl/episode_sft.h"
#include "rl/sft_data.h"
#include "skills/skill_jsonl.h"
#include "support/temp_dir.h"

namespace teacher_backbone_test {

namespace fs = std::filesystem;
using namespace vinci;
using curriculum::Defect;
using curriculum::Strategy;

const fs::path kRoot = VINCI_SOURCE_ROOT;

const std::map<std::string, double> kSpeedup = {
    {"fused_b1024_w4", 1.5}, {"fused_b4096_w8", 2.0}, {"fused_b256_w2", 1.1}, {"per_op", 0.6},
    {"row_block_w4", 1.7},   {"row_block_w8", 1.8},   {"rows4_w4", 2.2}};

// Which strategy wrote a file, found by its exact text.
class StrategyEvaluator final : public agents::KernelEvaluator {
 public:
  explicit StrategyEvaluator(std::vector<curriculum::CurriculumTask> tasks) : tasks_(std::move(tasks)) {}

  std::optional<Strategy> strategy_of(const std::string& source) const {
    for (const auto& t : tasks_)
      for (const auto& s : curriculum::teacher_strategies(t.spec))
        if (curriculum::triton_solution(t.spec, s) == source) return s;
    return std::nullopt;
  }

  std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override {
    std::vector<eval::Result> out;
    for (const auto& j : jobs) {
      eval::Result r;
      r.task = j.task.id;
      r.candidate = j.candidate.file.string();
      r.trials = 5;
      const auto s = strategy_of(j.candidate.source);
      if (!s) ADD_FAILURE() << "a candidate no strategy wrote: " << j.candidate.source.substr(0, 200);
      if (!s || s->defect != Defect::none) {
        r.verdict = eval::Verdict::incorrect;
        r.trials_passed = 1;
      } else {
        r.verdict = eval::Verdict::correct;
        r.trials_passed = 5;
        r.speedup_eager = kSpeedup.at(s->name);
      }
      out.push_back(r);
    }
    return out;
  }
  std::string device() const override { return "table"; }

 private:
  std::vector<curriculum::CurriculumTask> tasks_;
};

struct TeacherRun {
  test::TempDir dir{"teacher-backbone"};
  std::vector<curriculum::CurriculumTask> tasks;
  std::vector<eval::Task> suite;
  std::vector<skills::Skill> teacher_skills = skills::read_skills_jsonl(kRoot / "skills/curriculum.jsonl");
  agents::Prompts prompts;

  TeacherRun() {
    curriculum::CurriculumTask chain{.spec = {}, .held_out = false, .id = "level1/1_ReluScale"};
    chain.spec.chain = {{"relu", 0}, {"scale", 2}};
    curriculum::CurriculumTask rows{.spec = {}, .held_out = false, .id = "level2/1_Softmax"};
    rows.spec.family = curriculum::Family::rowwise;
    rows.spec.kind = "softmax";
    rows.spec.cols = 1024;
    tasks = {chain, rows};
    for (const auto& t : tasks) core::write_file_atomic(dir.path() / (t.id + ".py"), curriculum::task_source(t.spec));
    suite = eval::load_suite(dir.path()).tasks;
  }

  agents::OptimizeOutcome optimize(size_t task, const agents::TeacherSettings& teacher, uint64_t seed,
                                   std::vector<skills::Skill> library_skills) {
    agents::TeacherBackbone model(tasks, teacher_skills, teacher);
    StrategyEvaluator evaluator(tasks);
    const skills::Library library(std::move(library_skills));
    agents::OptimizeSettings s;
    s.policy.turns = 3;
    s.selection.schemes = 2;
    s.samples = 2;
    s.seed = seed;
    s.verify.repeats = 1;
    const auto& t = suite.at(task);
    agents::PolicyTask policy_task{t, core::read_file(t.file), dir.path() / "candidates" / std::to_string(seed)};
    fs::create_directories(policy_task.candidates_dir);
    return agents::optimize(model, evaluator, prompts, library, policy_task, s);
  }
};

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
    if (follow == 1.0) EXPECT_EQ(followed, turns) << "every turn follows it";
    if (follow == 0.0) EXPECT_LT(followed, turns) << "turns pick among the three correct row strategies";
  }
}

TEST(TeacherBackbone, TheSummaryProposesTheFastestCorrectTurnsSkillAndEpisodesBecomeSftRecords) {
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

  const auto records = rl::sft_records(out.episode);
  std::map<std::string, size_t> roles;
  size_t correct_policy_calls = 0;
  for (const auto& call : out.episode.calls)
    correct_policy_calls += (call.role == agents::Role::policy || call.role == agents::Role::verify) && call.result &&
                            call.result->correct();
  for (size_t i = 0; i < records.size(); ++i) {
    const auto c = rl::parse_sft_conversation(records[i], i + 1);
    ++roles[c.role];
    EXPECT_EQ(c.task, "level1/1_ReluScale");
    EXPECT_EQ(c.level, 1);
    EXPECT_EQ(c.tools.is_null(), c.role == "policy") << c.role;
  }
  EXPECT_EQ(roles["policy"], correct_policy_calls) << "every correct policy answer, and no other";
  EXPECT_EQ(roles["selection"], 2u);
  EXPECT_EQ(roles["summary"], summaries);
}

}  // namespace teacher_backbone_test
