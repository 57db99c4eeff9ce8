// The policy agent (agents/policy_agent.h) on a scripted backbone and evaluator: the conversation a
// turn sends (code and stated strategy kept, reasoning dropped, memory only after the last result),
// and what one lockstep turn writes, evaluates and records for answers with a kernel, without one,
// and for a failed generation.
#include "agents/policy_agent.h"

#include <gtest/gtest.h>

#include "core/files.h"
#include "support/fake_backbone.h"
#include "support/scripted_evaluator.h"
#include "support/temp_dir.h"

namespace policy_agent_test {
namespace fs = std::filesystem;
using namespace vinci::agents;
using vinci::eval::Verdict;

// Templates whose rendering is easy to write out by hand.
struct Fixture {
  vinci::test::TempDir dir{"policy-agent"};
  Prompts prompts;
  PolicyTask task;
  Fixture() : prompts(make_prompts(dir.path() / "prompts")) {
    task.task.id = "level1/1_Relu";
    task.task.level = 1;
    task.task.number = 1;
    task.task.name = "Relu";
    task.task.file = dir.path() / "1_Relu.py";
    task.source = "class Model: relu";
    task.candidates_dir = dir.path() / "candidates";
    fs::create_directories(task.candidates_dir);
  }
  static fs::path make_prompts(const fs::path& d) {
    vinci::core::write_file_atomic(d / "policy_system.md", "SYSTEM[{{skills_section}}]");
    vinci::core::write_file_atomic(d / "policy_skills_section.md", "SKILLS:{{skills}}");
    vinci::core::write_file_atomic(d / "policy_user.md", "TASK {{task_id}}: {{task_source}}");
    vinci::core::write_file_atomic(d / "policy_feedback.md", "R{{turn}}: {{result}}|{{memory}}");
    return d;
  }
};

std::vector<std::pair<std::string, std::string>> role_content(const std::vector<vinci::llm::ChatMessage>& messages) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& m : messages) out.emplace_back(m.role, m.content);
  return out;
}

TEST(PolicyAgent, MessagesKeepCodeAndStrategyAndDropReasoning) {
  Fixture f;
  Rollout r;
  r.skills.push_back({});
  r.skills[0].name = "warp_rows";
  r.skills[0].description = "one warp per row";
  r.skills[0].content = "use shfl";
  PolicyTurn t0;
  t0.turn = 0;
  t0.strategy = "tile rows";
  t0.code = "CODE";
  t0.feedback = "F0";
  PolicyTurn t1;
  t1.turn = 1;
  t1.feedback = "F1";
  r.turns = {t0, t1};
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(role_content(policy_messages(f.prompts, f.task, r, "MEM")),
            (std::vector<P>{{"system", "SYSTEM[SKILLS:### warp_rows\none warp per row\n\nuse shfl\n\n]"},
                            {"user", "TASK level1/1_Relu: class Model: relu"},
                            {"assistant", "Strategy: tile rows\n\n```python\nCODE\n```"},
                            {"user", "R1: F0|"},
                            {"assistant", "(this answer held no usable kernel file)"},
                            {"user", "R2: F1|MEM"}}));
  r.skills.clear();
  r.turns.clear();
  EXPECT_EQ(role_content(policy_messages(f.prompts, f.task, r, "MEM")),
            (std::vector<P>{{"system", "SYSTEM[]"}, {"user", "TASK level1/1_Relu: class Model: relu"}}));
}

TEST(PolicyAgent, TurnSeedsAreReproducibleAndDistinctPerCoordinate) {
  const uint64_t s = turn_seed(7, 1, 2, 3);
  EXPECT_EQ(s, turn_seed(7, 1, 2, 3));
  EXPECT_LT(s, 1ull << 31);
  for (uint64_t other : {turn_seed(8, 1, 2, 3), turn_seed(7, 0, 2, 3), turn_seed(7, 1, 0, 3), turn_seed(7, 1, 2, 0)})
    EXPECT_NE(s, other);
}

TEST(PolicyAgent, OneTurnWritesEvaluatesAndRecordsEachAnswer) {
  Fixture f;
  vinci::test::FakeBackbone model;
  model.push_text(
      "<think>maybe a loop</think>Strategy: fuse the ops\n```python\nclass ModelNew: pass  # eager=2.5\n```");
  model.push_text("I cannot write this one.");
  vinci::llm::GenerationResult failed;
  failed.error = vinci::llm::GenerationError{"timeout", "no answer in 600 s"};
  model.push(failed);
  vinci::test::ScriptedEvaluator evaluator;

  std::vector<Rollout> rollouts(3);
  std::vector<Rollout*> pointers;
  for (int i = 0; i < 3; ++i) {
    rollouts[i].label = "r" + std::to_string(i);
    rollouts[i].scheme = 0;
    rollouts[i].sample = i;
    pointers.push_back(&rollouts[i]);
  }
  StrategyMemory memory;
  PolicySettings settings;
  settings.seed = 11;
  policy_turn(model, evaluator, f.prompts, f.task, pointers, memory, settings);

  ASSERT_EQ(model.requests().size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(model.requests()[i].sampling.seed, turn_seed(11, 0, i, 0));
  ASSERT_EQ(evaluator.calls.size(), 1u) << "one batched evaluation";
  ASSERT_EQ(evaluator.calls[0].size(), 1u) << "only the answer with a kernel is evaluated";

  const PolicyTurn good = rollouts[0].turns.at(0);  // a copy: the next turn grows the vector
  EXPECT_EQ(good.strategy, "fuse the ops");
  EXPECT_EQ(good.code, "class ModelNew: pass  # eager=2.5\n");
  EXPECT_EQ(good.file, f.task.candidates_dir / "r0_t0.py");
  EXPECT_EQ(vinci::core::read_file(good.file), good.code);
  ASSERT_TRUE(good.result);
  EXPECT_DOUBLE_EQ(good.speedup(), 2.5);
  const auto& inputs = std::get<TurnInputs>(rollouts[0].calls.at(0).reward_inputs);
  EXPECT_EQ(inputs.verdict, Verdict::correct);
  EXPECT_DOUBLE_EQ(inputs.speedup, 2.5);

  const PolicyTurn& empty = rollouts[1].turns.at(0);
  EXPECT_FALSE(empty.result);
  EXPECT_FALSE(empty.parse_failure.empty());
  EXPECT_EQ(rollouts[1].calls.at(0).parse_failure, empty.parse_failure);
  EXPECT_FALSE(std::get<TurnInputs>(rollouts[1].calls.at(0).reward_inputs).verdict) << "no kernel, no verdict";
  EXPECT_FALSE(fs::exists(f.task.candidates_dir / "r1_t0.py"));

  const PolicyTurn& error = rollouts[2].turns.at(0);
  EXPECT_FALSE(error.result);
  EXPECT_NE(error.feedback.find("(timeout): no answer in 600 s"), std::string::npos) << error.feedback;

  ASSERT_EQ(memory.entries().size(), 3u);
  EXPECT_EQ(memory.entries()[0].strategy, "fuse the ops");

  // The next turn: every rollout sees the same memory text, rendered before this turn adds to it,
  // and the earlier answer without its reasoning.
  for (int i = 0; i < 3; ++i) model.push_text("Strategy: again\n```python\nclass ModelNew: wrong\n```");
  policy_turn(model, evaluator, f.prompts, f.task, pointers, memory, settings);
  ASSERT_EQ(model.requests().size(), 6u);
  for (int i = 3; i < 6; ++i) {
    const auto& messages = model.requests()[i].messages;
    EXPECT_EQ(model.requests()[i].sampling.seed, turn_seed(11, 0, i - 3, 1));
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[2].content.find("maybe a loop"), std::string::npos);
  }
  // memory now holds this turn's entries too; the prompt was rendered from the first three
  StrategyMemory first_three;
  for (size_t i = 0; i < 3; ++i) first_three.add(memory.entries()[i].strategy, memory.entries()[i].outcome);
  EXPECT_EQ(model.requests()[3].messages[3].content,
            "R1: " + good.feedback + "|" + first_three.render(settings.max_memory_entries));
  EXPECT_EQ(rollouts[0].turns.at(1).file, f.task.candidates_dir / "r0_t1.py");
  EXPECT_EQ(rollouts[0].turns.at(1).result->verdict, Verdict::incorrect);
  EXPECT_EQ(rollouts[0].best_turn(), 0u);
  EXPECT_DOUBLE_EQ(rollouts[0].best_speedup(), 2.5);
  EXPECT_FALSE(rollouts[1].best_turn());
}

TEST(PolicyAgent, BestTurnIsTheFastestCorrectOne) {
  Rollout r;
  for (auto [verdict, speedup] : std::vector<std::pair<Verdict, double>>{
           {Verdict::correct, 1.5}, {Verdict::incorrect, 0}, {Verdict::correct, 3.0}, {Verdict::correct, 2.0}}) {
    PolicyTurn t;
    vinci::eval::Result res;
    res.verdict = verdict;
    if (verdict == Verdict::correct) res.speedup_eager = speedup;
    t.result = res;
    r.turns.push_back(t);
  }
  EXPECT_EQ(r.best_turn(), 2u);
  EXPECT_DOUBLE_EQ(r.best_speedup(), 3.0);
}

}  // namespace policy_agent_test
