// `vinci bench-model`'s parts on a scripted backbone and a scripted evaluator: the pass@k estimator,
// one policy turn over rollouts of several tasks, the bench loop's chunks, turns and summary, the
// files it writes, and a resumed run. (tests/integration/bench_model_test.cpp runs the command on
// the real evaluator.)
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "agents/run_journal.h"
#include "bench/model_bench.h"
#include "core/files.h"
#include "eval/metrics.h"
#include "support/fake_backbone.h"
#include "support/jsonl.h"
#include "support/scripted_evaluator.h"

namespace model_bench_test {

using vinci::test::read_jsonl;

namespace fs = std::filesystem;
using namespace vinci::agents;
using namespace vinci::bench;
using nlohmann::json;
using vinci::eval::Result;
using vinci::eval::Verdict;

// Counts generate() calls and their sizes around a FakeBackbone.
class CountingBackbone final : public vinci::llm::Backbone {
 public:
  explicit CountingBackbone(vinci::test::FakeBackbone& inner) : inner_(inner) {}
  std::vector<vinci::llm::GenerationResult> generate(std::span<const vinci::llm::GenerationRequest> requests) override {
    batches.push_back(requests.size());
    return inner_.generate(requests);
  }
  std::string model_name() const override { return "fake"; }
  std::vector<size_t> batches;

 private:
  vinci::test::FakeBackbone& inner_;
};

std::string kernel(const std::string& strategy, const std::string& marks) {
  return fmt::format("Strategy: {}\n```python\nclass ModelNew:\n    pass  # {}\n```\n", strategy, marks);
}
const std::string kNoCode = "I would rather not write code today.";

// A suite of problem files in a temporary folder, removed at the end.
struct Suite {
  fs::path dir = fs::temp_directory_path() / fmt::format("vinci-model-bench-test-{}", ::getpid());
  std::vector<vinci::eval::Task> tasks;
  explicit Suite(const std::vector<std::string>& ids) {
    fs::remove_all(dir);
    for (const auto& id : ids)
      vinci::core::write_file_atomic(dir / "suite" / (id + ".py"), "class Model: pass  # " + id + "\n");
    tasks = vinci::eval::load_suite(dir / "suite").tasks;
  }
  ~Suite() { fs::remove_all(dir); }
  PolicyTask policy_task(size_t i) const {
    return {tasks[i], vinci::core::read_file(tasks[i].file), dir / "candidates" / tasks[i].id};
  }
};

std::string last_user_message(const vinci::llm::GenerationRequest& q) { return q.messages.back().content; }

TEST(ModelBench, PassAtKIsTheUnbiasedEstimator) {
  using vinci::eval::pass_at_k;
  EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 1), 0.4);   // c/n
  EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 2), 0.7);   // 1 - C(3,2)/C(5,2) = 1 - 3/10
  EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 3), 0.9);   // 1 - C(3,3)/C(5,3) = 1 - 1/10
  EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 4), 1.0);   // n - c < k: every draw of 4 holds a correct one
  EXPECT_DOUBLE_EQ(pass_at_k(10, 1, 5), 0.5);  // 1 - C(9,5)/C(10,5) = 1 - 126/252
  EXPECT_DOUBLE_EQ(pass_at_k(5, 0, 3), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(1, 1, 1), 1.0);
  // C(500,100) overflows nothing here: the product form stays within [0, 1].
  EXPECT_DOUBLE_EQ(pass_at_k(500, 250, 100), 1.0);  // 1 - (under 0.5^100)
  EXPECT_NEAR(pass_at_k(400, 1, 1), 0.0025, 1e-15);
  EXPECT_THROW(pass_at_k(5, 2, 0), std::invalid_argument);
  EXPECT_THROW(pass_at_k(5, 2, 6), std::invalid_argument);
  EXPECT_THROW(pass_at_k(5, 6, 1), std::invalid_argument);

  EXPECT_EQ(pass_k_values(1), (std::vector<int>{1}));
  EXPECT_EQ(pass_k_values(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(pass_k_values(5), (std::vector<int>{1, 2, 4, 5}));
  EXPECT_EQ(pass_k_values(8), (std::vector<int>{1, 2, 4, 8}));
}

TEST(ModelBench, PolicyTurnAdvancesTwoTasksInOneBatch) {
  const Suite suite({"level1/1_Relu", "level2/3_Gelu"});
  const PolicyTask relu = suite.policy_task(0), gelu = suite.policy_task(1);
  const Prompts prompts;
  vinci::test::FakeBackbone fake;
  CountingBackbone model(fake);
  vinci::test::ScriptedEvaluator evaluator;
  Rollout a0, a1, b0;
  a0.label = "a0";
  a1.label = "a1";
  a1.sample = 1;
  b0.label = "b0";
  StrategyMemory relu_memory, gelu_memory;
  const std::vector<PolicySlot> slots = {
      {&relu, &a0, &relu_memory, 7}, {&relu, &a1, &relu_memory, 7}, {&gelu, &b0, &gelu_memory, std::nullopt}};
  PolicySettings settings;
  settings.seed = 3;

  fake.push_text(kernel("relu tiles", "eager=1.5"));
  fake.push_text(kernel("relu wrong", "wrong"));
  fake.push_text(kernel("gelu erf", "eager=2.0"));
  policy_turn(model, evaluator, prompts, slots, settings);
  EXPECT_EQ(model.batches, (std::vector<size_t>{3}));
  ASSERT_EQ(evaluator.calls.size(), 1u);
  ASSERT_EQ(evaluator.calls[0].size(), 3u);
  EXPECT_EQ(evaluator.calls[0][0].task.id, "level1/1_Relu");
  EXPECT_EQ(evaluator.calls[0][1].task.id, "level1/1_Relu");
  EXPECT_EQ(evaluator.calls[0][2].task.id, "level2/3_Gelu");
  EXPECT_EQ(a0.turns[0].file, suite.dir / "candidates/level1/1_Relu/a0_t0.py");
  EXPECT_EQ(b0.turns[0].file, suite.dir / "candidates/level2/3_Gelu/b0_t0.py");
  EXPECT_TRUE(fs::exists(b0.turns[0].file));
  EXPECT_DOUBLE_EQ(a0.turns[0].speedup(), 1.5);
  EXPECT_EQ(a1.turns[0].result->verdict, Verdict::incorrect);
  EXPECT_DOUBLE_EQ(b0.turns[0].speedup(), 2.0);
  // Each request carries its own task's source and its slot's seed base.
  const auto& q = fake.requests();
  EXPECT_NE(q[0].messages[1].content.find("# level1/1_Relu"), std::string::npos);
  EXPECT_NE(q[2].messages[1].content.find("# level2/3_Gelu"), std::string::npos);
  EXPECT_EQ(q[0].sampling.seed, turn_seed(7, -1, 0, 0));
  EXPECT_EQ(q[1].sampling.seed, turn_seed(7, -1, 1, 0));
  EXPECT_EQ(q[2].sampling.seed, turn_seed(3, -1, 0, 0));
  EXPECT_EQ(relu_memory.entries().size(), 2u);
  EXPECT_EQ(gelu_memory.entries().size(), 1u);

  // Turn 2: both Relu rollouts see the Relu memory as it stood before this turn, Gelu only its own.
  fake.push_text(kernel("relu vectorized", "eager=1.8"));
  fake.push_text(kernel("relu fixed", "eager=1.1"));
  fake.push_text(kNoCode);
  policy_turn(model, evaluator, prompts, slots, settings);
  EXPECT_EQ(model.batches, (std::vector<size_t>{3, 3}));
  ASSERT_EQ(evaluator.calls.size(), 2u);
  EXPECT_EQ(evaluator.calls[1].size(), 2u) << "the answer without code is not evaluated";
  for (size_t i : {3u, 4u}) {
    const std::string m = last_user_message(q[i]);
    EXPECT_NE(m.find("- relu tiles -> correct, 1.50x eager"), std::string::npos) << m;
    EXPECT_NE(m.find("- relu wrong -> incorrect"), std::string::npos) << m;
    EXPECT_EQ(m.find("relu vectorized"), std::string::npos) << "rendered before this turn's additions";
    EXPECT_EQ(m.find("gelu"), std::string::npos) << m;
  }
  const std::string gelu_last = last_user_message(q[5]);
  EXPECT_NE(gelu_last.find("- gelu erf -> correct, 2.00x eager"), std::string::npos) << gelu_last;
  EXPECT_EQ(gelu_last.find("relu"), std::string::npos) << gelu_last;
  EXPECT_EQ(b0.turns[1].parse_failure, "no_code");
  EXPECT_EQ(relu_memory.entries().size(), 4u);
  EXPECT_EQ(gelu_memory.entries().size(), 2u);
}

TEST(ModelBench, ChunksTasksAndSummarizesPassAtKAndFastP) {
  const Suite suite({"level1/1_A", "level1/2_B", "level2/1_C"});
  const Prompts prompts;
  vinci::test::FakeBackbone fake;
  CountingBackbone model(fake);
  vinci::test::ScriptedEvaluator evaluator;
  // Chunk 1: A (one correct sample of two), B (no kernel at all); chunk 2: C (both correct).
  fake.push_text(kernel("a fast", "eager=2.0 compile=0.9 flag=launch_bound"));
  fake.push_text(kernel("a wrong", "wrong"));
  fake.push_text(kNoCode);
  fake.push_text("");
  fake.push_text(kernel("c slow \xe2\x82", "eager=0.5"));  // a strategy cut inside a character
  fake.push_text(kernel("c better", "eager=1.2"));
  BenchSettings s;
  s.samples = 2;
  s.batch_tasks = 2;
  s.seed = 11;
  std::vector<std::string> progress;
  const fs::path candidates = suite.dir / "out/candidates";
  const BenchOutcome out = bench_model(model, evaluator, prompts, suite.tasks, candidates, s,
                                       [&](const std::string& line) { progress.push_back(line); });
  EXPECT_EQ(fake.left(), 0u);
  EXPECT_EQ(model.batches, (std::vector<size_t>{4, 2}));
  ASSERT_EQ(evaluator.calls.size(), 2u);
  EXPECT_EQ(evaluator.calls[0].size(), 2u);
  EXPECT_EQ(evaluator.calls[1].size(), 2u);
  EXPECT_EQ(progress,
            (std::vector<std::string>{
                "tasks 1-2 of 3, turn 1/1: 4 answers", "tasks 1-2 of 3, turn 1/1: 4 answers, 2 kernels, 1 correct",
                "task 3 of 3, turn 1/1: 2 answers", "task 3 of 3, turn 1/1: 2 answers, 2 kernels, 2 correct"}));
  // Sample k of two tasks draws its own stream.
  const auto& q = fake.requests();
  EXPECT_NE(q[0].sampling.seed, q[2].sampling.seed);
  EXPECT_NE(q[0].sampling.seed, q[1].sampling.seed);
  ASSERT_EQ(out.tasks.size(), 3u);
  EXPECT_EQ(out.tasks[0].correct_samples(), 1);
  EXPECT_EQ(out.tasks[1].correct_samples(), 0);
  EXPECT_EQ(out.tasks[2].correct_samples(), 2);
  EXPECT_EQ(out.tasks[1].samples[1].turns[0].parse_failure, "empty");
  EXPECT_TRUE(fs::exists(candidates / "level2/1_C/sample1_t0.py"));

  const BenchSummary sum = summarize_bench(out);
  EXPECT_EQ(sum.tasks, 3);
  EXPECT_EQ(sum.attempts, 6);
  EXPECT_EQ(sum.evaluated, 4);
  EXPECT_EQ(sum.no_kernel, 2);
  EXPECT_EQ(sum.correct_attempts, 3);
  EXPECT_EQ(sum.solved_tasks, 2);
  ASSERT_EQ(sum.pass_at_k.size(), 2u);
  EXPECT_DOUBLE_EQ(sum.pass_at_k.at(1), (0.5 + 0.0 + 1.0) / 3);
  EXPECT_DOUBLE_EQ(sum.pass_at_k.at(2), 2.0 / 3);
  // fast_p over each task's best correct attempt: A 2.0x, C 1.2x (best of 0.5 and 1.2), B none.
  const auto& eager = sum.eager.overall;
  EXPECT_EQ(eager.tasks, 3);
  EXPECT_DOUBLE_EQ(eager.fast_p.at(0.0), 2.0 / 3);
  EXPECT_DOUBLE_EQ(eager.fast_p.at(1.0), 2.0 / 3);
  EXPECT_DOUBLE_EQ(eager.fast_p.at(1.5), 1.0 / 3);
  EXPECT_DOUBLE_EQ(eager.fast_p.at(2.0), 0.0);  // strict
  ASSERT_EQ(sum.eager.levels.size(), 2u);
  EXPECT_DOUBLE_EQ(sum.eager.levels[0].fast_p.at(0.0), 0.5);
  EXPECT_DOUBLE_EQ(sum.eager.levels[1].fast_p.at(0.0), 1.0);
  // Against torch.compile only A has a speedup; C counts for fast_0 alone.
  EXPECT_DOUBLE_EQ(sum.compile.overall.fast_p.at(0.0), 2.0 / 3);
  EXPECT_DOUBLE_EQ(sum.compile.overall.fast_p.at(0.8), 1.0 / 3);
  EXPECT_DOUBLE_EQ(sum.compile.overall.fast_p.at(1.0), 0.0);
  const std::string table = bench_table(sum);
  EXPECT_EQ(
      table.rfind("fake on scripted: 3 tasks, 2 samples of 1 turn each\npass@1 50.0%  pass@2 66.7%  (2 of 3 tasks "
                  "solved)\nanswers: 6, 4 kernels evaluated, 2 without a kernel, 3 correct\n",
                  0),
      0u)
      << table;
  EXPECT_NE(table.find("speedup vs compile"), std::string::npos) << table;

  const fs::path dir = suite.dir / "out";
  write_bench_outputs(dir, out, sum);
  const auto results = vinci::eval::read_results_jsonl(dir / "results.jsonl");
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].task, "level1/1_A");
  EXPECT_EQ(results[3].task, "level2/1_C");
  const auto attempts = read_jsonl(dir / "attempts.jsonl");
  ASSERT_EQ(attempts.size(), 6u);
  EXPECT_EQ(attempts[0]["task"], "level1/1_A");
  EXPECT_EQ(attempts[0]["sample"], 0);
  EXPECT_EQ(attempts[0]["turn"], 0);
  EXPECT_EQ(attempts[0]["file"], "candidates/level1/1_A/sample0_t0.py");
  EXPECT_EQ(attempts[0]["class"], "correct");
  EXPECT_DOUBLE_EQ(attempts[0]["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(attempts[0]["speedup_compile"].get<double>(), 0.9);
  EXPECT_EQ(attempts[0]["flags"], nlohmann::json::array({"launch_bound"}));  // the judge's, as they came
  EXPECT_EQ(attempts[1]["class"], "incorrect");
  EXPECT_EQ(attempts[1]["flags"], nlohmann::json::array());
  EXPECT_EQ(attempts[2]["task"], "level1/2_B");
  EXPECT_EQ(attempts[2]["parse_failure"], "no_code");
  EXPECT_TRUE(attempts[2]["file"].is_null());
  EXPECT_TRUE(attempts[2]["class"].is_null());
  EXPECT_TRUE(attempts[2]["flags"].is_null());  // nothing was evaluated
  EXPECT_EQ(attempts[4]["strategy"], "c slow \xef\xbf\xbd") << "the broken character replaced, the files written";
  const auto episodes = load_episodes(dir / "episodes.jsonl");
  ASSERT_EQ(episodes.size(), 3u);
  EXPECT_EQ(episodes[1].task, "level1/2_B");
  ASSERT_EQ(episodes[1].calls.size(), 2u);
  EXPECT_EQ(episodes[1].calls[1].sample, 1);
  EXPECT_EQ(episodes[1].calls[1].scheme, -1);
  EXPECT_EQ(episodes[1].meta.protocol, "kernelbench");
  const json summary = json::parse(vinci::core::read_file(dir / "summary.json"));
  EXPECT_DOUBLE_EQ(summary["pass_at_k"]["1"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(summary["pass_at_k"]["2"].get<double>(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(summary["fast_p"]["eager"]["overall"]["fast_1.5"].get<double>(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(summary["fast_p"]["compile"]["levels"]["1"]["fast_0.8"].get<double>(), 0.5);
  EXPECT_EQ(summary["counts"]["no_kernel"], 2);
  EXPECT_EQ(summary["model"], "fake");
}

TEST(ModelBench, TurnsRefineEachSampleOnItsOwn) {
  const Suite suite({"level1/1_A"});
  const Prompts prompts;
  vinci::test::FakeBackbone fake;
  CountingBackbone model(fake);
  vinci::test::ScriptedEvaluator evaluator;
  fake.push_text(kernel("zero wrong", "wrong"));
  fake.push_text(kernel("one right", "eager=1.3"));
  fake.push_text(kernel("zero fixed", "eager=1.1"));
  fake.push_text(kNoCode);
  BenchSettings s;
  s.samples = 2;
  s.policy.turns = 2;
  const BenchOutcome out = bench_model(model, evaluator, prompts, suite.tasks, suite.dir / "candidates", s);
  EXPECT_EQ(model.batches, (std::vector<size_t>{2, 2}));
  // A sample counts when any of its turns is correct: sample 0 at turn 2, sample 1 at turn 1.
  EXPECT_EQ(out.tasks[0].correct_samples(), 2);
  const BenchSummary sum = summarize_bench(out);
  EXPECT_DOUBLE_EQ(sum.pass_at_k.at(1), 1.0);
  EXPECT_EQ(sum.turns, 2);
  EXPECT_EQ(sum.attempts, 4);
  // Turn 2 of sample 0 sees its own attempt and memory, nothing of sample 1's.
  const std::string m = last_user_message(fake.requests()[2]);
  EXPECT_NE(m.find("- zero wrong -> incorrect"), std::string::npos) << m;
  EXPECT_EQ(m.find("one right"), std::string::npos) << m;
  EXPECT_EQ(out.tasks[0].episode.calls.size(), 4u);
}

vinci::skills::Skill admitted_skill(const std::string& name, const std::string& description) {
  vinci::skills::Skill s;
  s.name = name;
  s.description = description;
  s.content = "## Key Idea\nthe idea of " + name + "\n";
  s.status = vinci::skills::Status::admitted;
  return s;
}

std::string select_answer(const std::string& skill) {
  return fmt::format(R"({{"think": "t", "selected_skills": [{{"name": "{}", "reason": "r"}}]}})", skill);
}

TEST(ModelBench, ALibraryGivesEachSampleTheSkillsItsSelectionPicked) {
  const Suite suite({"level1/1_A"});
  const Prompts prompts;
  const vinci::skills::Library library({admitted_skill("fuse_the_model", "fuse the Model pass into one kernel"),
                                        admitted_skill("tile_the_model", "tile the Model pass in shared memory")});
  vinci::test::FakeBackbone fake;
  CountingBackbone model(fake);
  vinci::test::ScriptedEvaluator evaluator;
  fake.push_text(select_answer("tile_the_model"));
  fake.push_text(select_answer("fuse_the_model"));
  fake.push_text(kernel("zero", "eager=1.2"));
  fake.push_text(kernel("one", "eager=0.9"));
  BenchSettings s;
  s.samples = 2;
  s.library = &library;
  const BenchOutcome out = bench_model(model, evaluator, prompts, suite.tasks, suite.dir / "candidates", s);
  EXPECT_EQ(model.batches, (std::vector<size_t>{2, 2}));  // one selection call per sample, then one turn
  const auto system_of = [&](size_t i) { return fake.requests()[i].messages.front().content; };
  EXPECT_NE(system_of(2).find("the idea of tile_the_model"), std::string::npos) << system_of(2);
  EXPECT_EQ(system_of(2).find("the idea of fuse_the_model"), std::string::npos);
  EXPECT_NE(system_of(3).find("the idea of fuse_the_model"), std::string::npos) << system_of(3);
  ASSERT_EQ(out.tasks[0].samples[0].skills.size(), 1u);
  EXPECT_EQ(out.tasks[0].samples[0].skills[0].name, "tile_the_model");
  // The episode holds the selection calls first, and says skills were injected.
  const Episode& e = out.tasks[0].episode;
  ASSERT_EQ(e.calls.size(), 4u);
  EXPECT_EQ(e.calls[0].role, Role::selection);
  EXPECT_EQ(e.calls[2].role, Role::policy);
  EXPECT_EQ(e.meta.protocol, "kernelbench+skills");
  EXPECT_EQ(e.meta.library_size, 2u);
  EXPECT_EQ(e.meta.skills_shown.size(), 2u);
  EXPECT_EQ(summarize_bench(out).correct_attempts, 2);
}

TEST(ModelBench, ResumedRunIsAnsweredFromItsJournal) {
  const Suite suite({"level1/1_A", "level1/2_B"});
  const Prompts prompts;
  const fs::path journal_path = suite.dir / "journal.jsonl";
  BenchSettings s;
  s.samples = 2;
  s.batch_tasks = 1;
  vinci::test::ScriptedEvaluator evaluator;
  // The first run is stopped in its second chunk: the backbone has nothing left for it.
  {
    vinci::test::FakeBackbone model;
    model.push_text(kernel("a", "eager=1.5"));
    model.push_text(kernel("a2", "wrong"));
    RunJournal journal(journal_path);
    ReplayBackbone replay_model(model, journal);
    ReplayEvaluator replay_eval(evaluator, journal);
    EXPECT_THROW(bench_model(replay_model, replay_eval, prompts, suite.tasks, suite.dir / "candidates", s),
                 std::logic_error);
    EXPECT_EQ(journal.recorded(), 4u);  // two generations, two evaluations
  }
  vinci::test::FakeBackbone model;
  model.push_text(kernel("b", "eager=3.0"));
  model.push_text(kNoCode);
  RunJournal journal(journal_path);
  ReplayBackbone replay_model(model, journal);
  ReplayEvaluator replay_eval(evaluator, journal);
  const BenchOutcome out = bench_model(replay_model, replay_eval, prompts, suite.tasks, suite.dir / "candidates", s);
  EXPECT_EQ(journal.replayed(), 4u);
  EXPECT_EQ(model.requests().size(), 2u) << "only the second chunk reaches the backbone";
  ASSERT_EQ(evaluator.calls.size(), 2u);
  EXPECT_EQ(evaluator.calls[1].size(), 1u);
  EXPECT_DOUBLE_EQ(out.tasks[0].samples[0].best_speedup(), 1.5);
  EXPECT_DOUBLE_EQ(out.tasks[1].samples[0].best_speedup(), 3.0);
  EXPECT_DOUBLE_EQ(summarize_bench(out).pass_at_k.at(1), 0.5);
}

}  // namespace model_bench_test
