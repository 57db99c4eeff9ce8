// The run journal on its own: keys per repeated call, what a reopened journal replays, damaged
// lines, and the replaying backbone and evaluator (what reaches the live side, what is recorded).
#include "agents/run_journal.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/fake_backbone.h"
#include "support/temp_dir.h"

namespace run_journal_test {
using namespace vinci::agents;
using nlohmann::json;
namespace fs = std::filesystem;

vinci::llm::GenerationRequest ask(const std::string& text) {
  vinci::llm::GenerationRequest r;
  r.messages = {{"user", text}};
  return r;
}

// Counts its calls and answers every job with a result naming the job's task.
class CountingEvaluator final : public KernelEvaluator {
 public:
  std::vector<vinci::eval::Result> evaluate(const std::vector<vinci::eval::Job>& jobs) override {
    std::vector<vinci::eval::Result> out;
    for (const auto& j : jobs) {
      ++evaluated;
      vinci::eval::Result r;
      r.task = j.task.id;
      r.verdict = vinci::eval::Verdict::correct;
      r.speedup_eager = 1.0 + evaluated;
      out.push_back(r);
    }
    return out;
  }
  std::string device() const override { return "test"; }
  int evaluated = 0;
};

vinci::eval::Job job(const std::string& task, const std::string& hash) {
  vinci::eval::Job j;
  j.task.id = task;
  j.candidate.hash = hash;
  return j;
}

TEST(RunJournal, KeysCountIdenticalCallsSeparately) {
  const vinci::test::TempDir dir("run-journal");
  RunJournal journal(dir.path() / "j.jsonl");
  EXPECT_EQ(journal.next_key("generate", "abc"), "generate:abc#0");
  EXPECT_EQ(journal.next_key("generate", "abc"), "generate:abc#1");
  EXPECT_EQ(journal.next_key("evaluate", "abc"), "evaluate:abc#0");
  EXPECT_EQ(journal.next_key("generate", "def"), "generate:def#0");
}

TEST(RunJournal, AReopenedJournalFindsWhatWasRecorded) {
  const vinci::test::TempDir dir("run-journal");
  const fs::path path = dir.path() / "j.jsonl";
  {
    RunJournal journal(path);
    EXPECT_FALSE(journal.find("k#0"));
    journal.record("k#0", {{"x", 1}});
    EXPECT_EQ(journal.find("k#0").value(), (json{{"x", 1}}));
    EXPECT_EQ(journal.recorded(), 1u);
  }
  RunJournal reopened(path);
  EXPECT_EQ(reopened.recorded(), 1u);
  EXPECT_EQ(reopened.find("k#0").value(), (json{{"x", 1}}));
  EXPECT_EQ(reopened.replayed(), 0u);
}

TEST(RunJournal, DamagedLinesAreDroppedNotFatal) {
  const vinci::test::TempDir dir("run-journal");
  const fs::path path = dir.path() / "j.jsonl";
  std::ofstream(path) << R"({"key": "a#0", "value": 1})"
                         "\n"
                      << R"({"no_key": true})"
                         "\n"
                      << "not json at all\n"
                      << R"({"key": "b#0", "value": 2})"
                         "\n"
                      << R"({"key": "c#0", "val)";  // torn by a kill
  RunJournal journal(path);
  EXPECT_EQ(journal.recorded(), 2u);
  EXPECT_EQ(journal.find("b#0").value(), 2);
  EXPECT_FALSE(journal.find("c#0"));
}

TEST(RunJournal, GenerationResultsRoundTrip) {
  vinci::llm::GenerationResult r;
  r.prompt_ids = {1, 2};
  r.token_ids = {3};
  r.text = "h\xC3\xA9";
  r.logprobs = {-0.25f};
  r.finish_reason = vinci::llm::FinishReason::stop;
  r.matched_stop = "</s>";
  r.token_ids_known = false;
  r.tool_calls = nlohmann::ordered_json::array({{{"name", "f"}}});
  r.reasoning = "because";
  const auto back = generation_from_json(to_json(r));
  EXPECT_EQ(back.prompt_ids, r.prompt_ids);
  EXPECT_EQ(back.token_ids, r.token_ids);
  EXPECT_EQ(back.text, r.text);
  EXPECT_EQ(back.logprobs, r.logprobs);
  EXPECT_EQ(back.finish_reason, vinci::llm::FinishReason::stop);
  EXPECT_EQ(back.matched_stop, "</s>");
  EXPECT_FALSE(back.token_ids_known);
  EXPECT_EQ(back.tool_calls, r.tool_calls);
  EXPECT_EQ(back.reasoning, "because");
  r.finish_reason = vinci::llm::FinishReason::length;
  EXPECT_EQ(generation_from_json(to_json(r)).finish_reason, vinci::llm::FinishReason::length);
}

TEST(RunJournal, ReplayBackboneAsksOnlyForWhatIsNotRecorded) {
  const vinci::test::TempDir dir("run-journal");
  const fs::path path = dir.path() / "j.jsonl";
  {
    vinci::test::FakeBackbone model;
    model.push_text("one");
    RunJournal journal(path);
    ReplayBackbone replay(model, journal);
    const std::vector<vinci::llm::GenerationRequest> first = {ask("q")};
    EXPECT_EQ(replay.generate(first)[0].text, "one");
  }
  vinci::test::FakeBackbone model;
  model.push_text("two");
  RunJournal journal(path);
  ReplayBackbone replay(model, journal);
  // The same question twice: the first is the recorded call, the second a new one (its #1).
  const std::vector<vinci::llm::GenerationRequest> both = {ask("q"), ask("q")};
  const auto out = replay.generate(both);
  EXPECT_EQ(out[0].text, "one");
  EXPECT_EQ(out[1].text, "two");
  EXPECT_EQ(model.requests().size(), 1u);
  EXPECT_EQ(journal.replayed(), 1u);
  EXPECT_EQ(journal.recorded(), 2u);
  EXPECT_EQ(replay.model_name(), "fake");
}

TEST(RunJournal, FailedGenerationsAreNotRecorded) {
  const vinci::test::TempDir dir("run-journal");
  vinci::test::FakeBackbone model;
  vinci::llm::GenerationResult failed;
  failed.error = vinci::llm::GenerationError{"timeout", "no answer"};
  model.push(failed);
  RunJournal journal(dir.path() / "j.jsonl");
  ReplayBackbone replay(model, journal);
  const std::vector<vinci::llm::GenerationRequest> one = {ask("q")};
  EXPECT_TRUE(replay.generate(one)[0].error);
  // A resumed run must try it again rather than replay the failure.
  EXPECT_EQ(journal.recorded(), 0u);
}

TEST(RunJournal, ReplayEvaluatorKeysOnTaskCandidateAndFreshness) {
  const vinci::test::TempDir dir("run-journal");
  const fs::path path = dir.path() / "j.jsonl";
  {
    CountingEvaluator evaluator;
    RunJournal journal(path);
    ReplayEvaluator replay(evaluator, journal);
    replay.evaluate({job("level1/1_A", "h1")});
  }
  CountingEvaluator evaluator;
  RunJournal journal(path);
  ReplayEvaluator replay(evaluator, journal);
  vinci::eval::Job fresh = job("level1/1_A", "h1");
  fresh.fresh = true;
  const auto out = replay.evaluate({job("level1/1_A", "h1"), job("level1/1_A", "h2"), fresh});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].speedup_eager.value_or(0), 2.0);  // replayed from the first run's only evaluation
  EXPECT_EQ(evaluator.evaluated, 2);                 // another candidate, and a fresh measurement
  EXPECT_EQ(journal.replayed(), 1u);
  EXPECT_EQ(replay.device(), "test");
}
}  // namespace run_journal_test
