// The rollout side of a co-evolution step (train/coevolution_orchestrator.h), with scripted answers on
// the tiny Qwen2 fixture's tokenizer and verdicts read from the kernels' text
// (tests/support/scripted_evaluator.h): every task of the step runs in batch order (or in lockstep, the
// same every run) into its own
// candidates folder, the episodes are written, the counts add up over tasks, PRS thins correct turns by their
// coverage, and the library a step sees is the last snapshot's.
#include "train/coevolution_orchestrator.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "eval/task.h"
#include "llm_native/native_backbone.h"
#include "skills/skill_jsonl.h"
#include "support/agent_script.h"
#include "support/jsonl.h"
#include "support/scripted_evaluator.h"
#include "support/scripted_trainable_backbone.h"
#include "support/temp_dir.h"

namespace coevolution_orchestrator_test {

namespace fs = std::filesystem;
using namespace vinci;

const fs::path kRoot = VINCI_SOURCE_ROOT;

// The slow kernel measures 0.5x eager and the fast one 4x, by the scripted evaluator's markers.
const test::ScriptedKernels kMarkedKernels{"# eager=0.5\nclass ModelNew: pass\n",
                                           "# eager=4.0\nclass ModelNew: pass\n"};

struct Step {
  test::TempDir dir{"coevolution-orchestrator"};
  test::ScriptedTrainableBackbone backbone;
  test::ScriptedEvaluator evaluator;
  agents::Prompts prompts;
  skills::SkillStore store;
  std::vector<eval::Task> tasks;
  size_t seeds = 0;

  Step()
      : backbone(tiny_model(),
                 [](const llm::GenerationRequest& r, int id) {
                   return test::scripted_answer(llm::to_json(r.messages),
                                                r.sampling.greedy ? 0.0 : r.sampling.temperature, id, kMarkedKernels);
                 }),
        store(dir.path() / "skills.db") {
    seeds = store.import(skills::read_skills_jsonl(kRoot / "skills/seed.jsonl"), false).imported;
    const auto fixture = eval::load_suite(kRoot / "tests/fixtures/agents").tasks.at(0);
    // Two tasks whose ids hold a '/', as KernelBench's do.
    for (const char* id : {"level1/1_RowwiseRelu", "level1/7_Again"}) {
      tasks.push_back(fixture);
      tasks.back().id = id;
    }
  }

  static std::unique_ptr<llm::TrainableBackbone> tiny_model() {
    llm::NativeOptions native;
    native.device = "cpu";
    native.dtype = "float32";
    native.chat_template = kRoot / "tests/fixtures/llm/templates/qwen2_5.jinja";
    return llm::open_native_backbone(kRoot / "tests/fixtures/llm/models/qwen2", native);
  }

  static train::CoevolutionConfig config(bool prs) {
    train::CoevolutionConfig c;
    c.parallel_tasks = 1;
    c.agents.selection.schemes = 1;
    c.agents.samples = 1;
    c.agents.policy.turns = 2;
    c.agents.verify.repeats = 1;
    c.prs = prs;
    return c;
  }

  rl::CoevolutionBatch rollout(const train::CoevolutionConfig& config, int64_t step) {
    train::CoevolutionOrchestrator orchestrator(backbone, evaluator, prompts, store, config, dir.path(), {}, single);
    std::vector<const eval::Task*> batch;
    for (const auto& t : tasks) batch.push_back(&t);
    return orchestrator.rollout(step, 3, batch);
  }

  parallel::DataParallel single;
};

TEST(CoevolutionOrchestrator, RunsEveryTaskInBatchOrderAndRecordsTheStep) {
  Step s;
  const auto config = Step::config(false);
  const auto batch = s.rollout(config, 1);

  EXPECT_EQ(batch.step, 1);
  EXPECT_EQ(batch.epoch, 3);
  EXPECT_EQ(batch.tasks, 2u);
  EXPECT_EQ(batch.solved, 2u) << "both tasks' best turn is the 4x kernel";
  // Per task, the summary proposes its two skills once, and the verifier reruns the sound one (the
  // bypass is screened out before any rerun).
  EXPECT_EQ(batch.skills_proposed, 4u);
  EXPECT_EQ(batch.skills_verified, 2u);
  EXPECT_EQ(batch.candidates, static_cast<size_t>(s.evaluator.evaluated)) << "every kernel sent to the evaluator";
  EXPECT_EQ(batch.measured, batch.candidates) << "the scripted evaluator caches nothing";
  EXPECT_GT(batch.candidates, 0u);
  EXPECT_EQ(batch.samples.size(), batch.built) << "PRS is off: every built sample is trained";
  EXPECT_EQ(batch.prs_rejected, 0u);
  EXPECT_EQ(batch.untrainable, 0u);
  EXPECT_GT(batch.policy.reward_mean, 0.0);

  const auto episodes = test::read_jsonl(s.dir.path() / "episodes" / "step-1.jsonl");
  ASSERT_EQ(episodes.size(), 2u);
  EXPECT_EQ(episodes[0].at("task"), "level1/1_RowwiseRelu");
  EXPECT_EQ(episodes[1].at("task"), "level1/7_Again");
  for (const char* folder : {"level1_1_RowwiseRelu", "level1_7_Again"})
    EXPECT_TRUE(fs::is_directory(s.dir.path() / "candidates" / "step-1" / folder)) << folder;

  // The sound skill was admitted by both tasks' verification and staged; the library the next step
  // sees is the snapshot publish_library writes, not the store's staging.
  train::CoevolutionOrchestrator orchestrator(s.backbone, s.evaluator, s.prompts, s.store, config, s.dir.path(), {},
                                              s.single);
  EXPECT_FALSE(s.store.snapshot_at(1).has_value());
  orchestrator.publish_library(1);
  const auto snapshot = s.store.snapshot_at(1);
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(s.store.load(*snapshot).size(), s.seeds + 1);
}

TEST(CoevolutionOrchestrator, TasksInLockstepMakeTheSameStepEveryRun) {
  // The step's two tasks run at once: their calls batch on the model and the evaluator, and the
  // scripted model numbers its answers in the order it gets them, so a batch formed by the
  // threads' timing would show as different answers in another run.
  auto config = Step::config(false);
  config.parallel_tasks = 2;
  std::vector<std::vector<std::vector<int32_t>>> runs;
  for (int run = 0; run < 3; ++run) {
    Step s;
    const auto batch = s.rollout(config, 1);
    EXPECT_EQ(batch.solved, 2u);
    std::vector<std::vector<int32_t>> ids;
    for (const auto& sample : batch.samples) ids.push_back(sample.ids);
    runs.push_back(ids);
    const auto episodes = test::read_jsonl(s.dir.path() / "episodes" / "step-1.jsonl");
    ASSERT_EQ(episodes.size(), 2u);
    EXPECT_EQ(episodes[0].at("task"), "level1/1_RowwiseRelu") << "episodes in the step's task order";
  }
  ASSERT_FALSE(runs[0].empty());
  EXPECT_EQ(runs[1], runs[0]);
  EXPECT_EQ(runs[2], runs[0]);
}

TEST(CoevolutionOrchestrator, PrsDropsCorrectTurnsWhoseKernelsDoNoneOfTheWork) {
  // The scripted evaluator measures no coverage (0): a correct policy turn is kept with probability
  // clip((0 - tau) / s, 0, 1) = 0, whatever the draw; every other sample is kept.
  Step without, with;
  const auto all = without.rollout(Step::config(false), 1);
  size_t correct_turns = 0;
  for (const auto& sample : all.samples) correct_turns += sample.role == agents::Role::policy && sample.correct;
  ASSERT_GT(correct_turns, 0u);
  ASSERT_LT(correct_turns, all.samples.size());
  const auto thinned = with.rollout(Step::config(true), 1);
  EXPECT_EQ(thinned.built, all.built);
  EXPECT_EQ(thinned.prs_rejected, correct_turns);
  EXPECT_EQ(thinned.samples.size(), all.samples.size() - correct_turns);
  for (const auto& sample : thinned.samples) EXPECT_FALSE(sample.role == agents::Role::policy && sample.correct);
  EXPECT_DOUBLE_EQ(thinned.policy.reward_mean, all.policy.reward_mean) << "role stats are of the built samples";
}

}  // namespace coevolution_orchestrator_test
