// The optimize loop on a scripted backbone and a scripted evaluator: the strategies' schedules, and
// replay from the journal. (tests/integration/optimize_test.cpp runs the whole loop on the real
// evaluator.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "agents/optimizer.h"
#include "agents/run_journal.h"
#include "core/files.h"
#include "support/fake_backbone.h"
#include "support/scripted_evaluator.h"

namespace optimizer_test {

namespace fs = std::filesystem;
using namespace vinci::agents;
using vinci::eval::Result;
using vinci::eval::Verdict;

std::string answer(const std::string& strategy, double speedup) {
  return fmt::format("Strategy: {}\n```python\nclass ModelNew:\n    pass  # eager={}\n```\n", strategy, speedup);
}

struct Fixture {
  fs::path dir = fs::temp_directory_path() / fmt::format("vinci-optimizer-test-{}", ::getpid());
  PolicyTask task;
  Prompts prompts;
  Fixture() {
    fs::remove_all(dir);
    fs::create_directories(dir / "candidates");
    task.task.id = "level1/1_Relu";
    task.task.name = "Relu";
    task.task.file = dir / "1_Relu.py";
    task.source = "class Model: pass  # BATCH = 16384\n";
    vinci::core::write_file_atomic(task.task.file, task.source);
    task.candidates_dir = dir / "candidates";
  }
  ~Fixture() { fs::remove_all(dir); }
};

TEST(Optimizer, SerialRefinesWithFeedbackAndMemory) {
  Fixture f;
  vinci::test::FakeBackbone model;  // no skills in the library: no selection call, one null scheme
  model.push_text(answer("naive loop", 1.0));
  model.push_text("<think>hmm</think>no code, sorry");
  model.push_text(answer("vectorize", 1.6));
  vinci::test::ScriptedEvaluator evaluator;
  OptimizeSettings s;
  s.policy.turns = 3;
  s.summarize = false;
  const vinci::skills::Library library;
  const auto out = optimize(model, evaluator, f.prompts, library, f.task, s);
  ASSERT_EQ(out.rollouts.size(), 1u);
  ASSERT_EQ(model.requests().size(), 3u);
  EXPECT_EQ(evaluator.evaluated, 2);
  EXPECT_EQ(out.rollouts[0].turns[1].parse_failure, "no_code");
  ASSERT_NE(out.best_turn(), nullptr);
  EXPECT_DOUBLE_EQ(out.best_turn()->speedup(), 1.6);
  // Turn 3 sees both earlier answers (code and strategy, no reasoning) and the memory.
  const auto& messages = model.requests()[2].messages;
  ASSERT_EQ(messages.size(), 6u);
  EXPECT_EQ(messages[2].content.rfind("Strategy: naive loop\n\n```python\n", 0), 0u);
  EXPECT_EQ(messages[4].content, "Strategy: no code, sorry\n\n(this answer held no usable kernel file)");
  const std::string last = messages[5].content;
  EXPECT_NE(last.find("Your answer had no code block"), std::string::npos);
  EXPECT_NE(last.find("- naive loop -> correct, 1.00x eager"), std::string::npos);
  EXPECT_EQ(messages[3].content.find("Strategies already tried"), std::string::npos)
      << "the memory is shown once, with the latest feedback";
  // Every request has its own seed; the episode holds one policy call per turn.
  EXPECT_NE(model.requests()[0].sampling.seed, model.requests()[1].sampling.seed);
  EXPECT_EQ(out.episode.calls.size(), 3u);
}

TEST(Optimizer, ParallelAndBeamSpendTheSameBudget) {
  Fixture f;
  vinci::test::ScriptedEvaluator evaluator;
  const vinci::skills::Library library;
  OptimizeSettings s;
  s.policy.turns = 2;
  s.samples = 2;
  s.summarize = false;

  vinci::test::FakeBackbone parallel_model;
  for (int i = 0; i < 4; ++i) parallel_model.push_text(answer("p", 1.0 + i));
  s.strategy = Strategy::parallel;
  const auto parallel = optimize(parallel_model, evaluator, f.prompts, library, f.task, s);
  EXPECT_EQ(parallel.rollouts.size(), 4u);
  for (const auto& q : parallel_model.requests()) EXPECT_EQ(q.messages.size(), 2u) << "independent single turns";

  // Beam of width 1: turn 1 has two samples (1.5x and 3x); turn 2 refines only the 3x kernel, twice.
  vinci::test::FakeBackbone beam_model;
  beam_model.push_text(answer("a", 1.5));
  beam_model.push_text(answer("b", 3.0));
  beam_model.push_text(answer("b2", 3.5));
  beam_model.push_text(answer("b3", 2.0));
  s.strategy = Strategy::beam;
  s.beam_width = 1;
  const auto beam = optimize(beam_model, evaluator, f.prompts, library, f.task, s);
  ASSERT_EQ(beam_model.requests().size(), 4u);
  for (size_t i = 2; i < 4; ++i) EXPECT_EQ(beam_model.requests()[i].messages[2].content.rfind("Strategy: b\n", 0), 0u);
  EXPECT_DOUBLE_EQ(beam.best_turn()->speedup(), 3.5);
  EXPECT_EQ(beam.episode.calls.size(), 4u) << "a child's inherited turn is recorded once, in its parent";
}

TEST(RunJournal, ReplaysRecordedCallsAndGoesLiveAfter) {
  Fixture f;
  const fs::path journal_path = f.dir / "journal.jsonl";
  OptimizeSettings s;
  s.policy.turns = 2;
  s.summarize = false;
  const vinci::skills::Library library;
  vinci::test::ScriptedEvaluator evaluator;
  {
    // The first run stops after turn 1: its backbone has nothing left for turn 2.
    vinci::test::FakeBackbone model;
    model.push_text(answer("first", 1.0));
    RunJournal journal(journal_path);
    ReplayBackbone replay_model(model, journal);
    ReplayEvaluator replay_eval(evaluator, journal);
    EXPECT_THROW(optimize(replay_model, replay_eval, f.prompts, library, f.task, s), std::logic_error);
    EXPECT_EQ(journal.recorded(), 2u);  // one generation, one evaluation
  }
  // A torn line from the kill is dropped.
  {
    std::ofstream torn(journal_path, std::ios::app);
    torn << "{\"key\": \"generate:";
  }
  vinci::test::FakeBackbone model;
  model.push_text(answer("second", 2.0));
  RunJournal journal(journal_path);
  ReplayBackbone replay_model(model, journal);
  ReplayEvaluator replay_eval(evaluator, journal);
  const int evaluated_before = evaluator.evaluated;
  const auto out = optimize(replay_model, replay_eval, f.prompts, library, f.task, s);
  EXPECT_EQ(journal.replayed(), 2u);
  EXPECT_EQ(model.requests().size(), 1u) << "only turn 2 reaches the backbone";
  EXPECT_EQ(evaluator.evaluated - evaluated_before, 1);
  EXPECT_DOUBLE_EQ(out.best_turn()->speedup(), 2.0);
  EXPECT_EQ(out.rollouts[0].turns[0].strategy, "first");
  // The torn line was cut off, not glued onto: every line of the journal is a whole record.
  const auto lines = vinci::core::read_jsonl_lines(journal_path);
  EXPECT_EQ(lines.size(), 4u);  // two calls before the kill, two after
  for (const auto& line : lines) EXPECT_TRUE(nlohmann::json::accept(line.text)) << "line " << line.number;
}

}  // namespace optimizer_test
