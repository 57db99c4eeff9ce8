// The procedural teacher run through the real agents on two hand-made curriculum tasks (a chain of
// two ops, a 1024-column softmax), judged by an evaluator that knows each candidate's strategy by
// its exact text and gives it a made-up speed from a table, so every expectation follows from the
// table. Shared by the teacher's tests (agents) and the SFT records' (rl).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/optimizer.h"
#include "agents/teacher_backbone.h"
#include "core/files.h"
#include "curriculum/task_source.h"
#include "eval/task.h"
#include "skills/skill_jsonl.h"
#include "support/temp_dir.h"

namespace vinci::test {

inline const std::map<std::string, double> kTeacherSpeedup = {
    {"fused_b1024_w4", 1.5}, {"fused_b4096_w8", 2.0}, {"fused_b256_w2", 1.1}, {"per_op", 0.6},
    {"row_block_w4", 1.7},   {"row_block_w8", 1.8},   {"rows4_w4", 2.2}};

// Which strategy wrote a file, found by its exact text.
class StrategyEvaluator final : public agents::KernelEvaluator {
 public:
  explicit StrategyEvaluator(std::vector<curriculum::CurriculumTask> tasks) : tasks_(std::move(tasks)) {}

  std::optional<curriculum::Strategy> strategy_of(const std::string& source) const {
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
      if (!s || s->defect != curriculum::Defect::none) {
        r.verdict = eval::Verdict::incorrect;
        r.trials_passed = 1;
      } else {
        r.verdict = eval::Verdict::correct;
        r.trials_passed = 5;
        r.speedup_eager = kTeacherSpeedup.at(s->name);
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
  TempDir dir{"teacher-run"};
  std::vector<curriculum::CurriculumTask> tasks;
  std::vector<eval::Task> suite;
  std::vector<skills::Skill> teacher_skills =
      skills::read_skills_jsonl(std::filesystem::path(VINCI_SOURCE_ROOT) / "skills/curriculum.jsonl");
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
    std::filesystem::create_directories(policy_task.candidates_dir);
    return agents::optimize(model, evaluator, prompts, library, policy_task, s);
  }
};

}  // namespace vinci::test
