// The co-evolution loop (train/coevolution) with every stage running: the tiny Qwen2 fixture trained
// on the CPU, its answers scripted (tests/support/agent_script.h, its small kernels: the policy's
// answers are trained on, and their length sets the step's cost) so that kernels build and win,
// the summary proposes skills and the verifier's reruns admit one. The evaluator is the real one on
// the CPU fixture task, so each speedup below was measured, against bars the task's shape clears by
// more than 10x.
//
// On the GPU machine (benchmarks/train_rl_gpu.sh) the same test runs on CUDA: with
// VINCI_COEVOLUTION_SOLUTION=tasks/solutions/cuda/levelN/X.py the task is tasks/levelN/X.py, the
// fast kernel that solution and the slow one the solution launching its kernel three times; the
// model trains on cuda in bf16 and the kernels are timed on cuda.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agents/kernel_evaluator.h"
#include "agents/prompts.h"
#include "core/files.h"
#include "eval/pool.h"
#include "eval/task.h"
#include "llm/model_config.h"
#include "llm_native/native_backbone.h"
#include "skills/skill_jsonl.h"
#include "skills/store.h"
#include "support/agent_script.h"
#include "support/cpu_eval_config.h"
#include "support/jsonl.h"
#include "support/scripted_trainable_backbone.h"
#include "support/test_cache.h"
#include "train/coevolution.h"

namespace coevolution_test {

namespace fs = std::filesystem;
using namespace vinci;

const fs::path kRoot = VINCI_SOURCE_ROOT;

TEST(Coevolution, SummaryAndVerificationAdmitASkillThatTheNextStepSees) {
  const fs::path out = fs::temp_directory_path() / ("vinci-coevolution-test-" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);

  // The CPU fixture task with the small kernels, or a CUDA solution and its task.
  const char* solution_file = std::getenv("VINCI_COEVOLUTION_SOLUTION");
  const bool cuda = solution_file != nullptr && *solution_file != '\0';
  test::ScriptedKernels kernels = test::kSmallKernels;
  // The fixture task's shape makes the fast kernel win by ~50x over eager and ~30x over the slow
  // one (its docstring), far above the bars of 1.2x: no busy CPU turns the decisions below.
  fs::path suite = kRoot / "tests/fixtures/agents";
  if (cuda) {
    suite = out / "suite";
    const fs::path solution = fs::absolute(solution_file);
    const std::string source = core::read_file(solution);
    kernels = {test::repeated_forward(source, 3), source};
    const fs::path level = suite / solution.parent_path().filename();
    fs::create_directories(level);
    fs::copy_file(kRoot / "tasks" / solution.parent_path().filename() / solution.filename(),
                  level / solution.filename());
  }

  llm::NativeOptions native;
  native.device = cuda ? "cuda" : "cpu";
  native.dtype = cuda ? "bfloat16" : "float32";
  native.training.mode = llm::Training::Mode::full;
  native.chat_template = kRoot / "tests/fixtures/llm/templates/qwen2_5.jinja";
  const fs::path model_dir = kRoot / "tests/fixtures/llm/models/qwen2";
  test::ScriptedTrainableBackbone backbone(
      llm::open_native_backbone(model_dir, native), [&kernels](const llm::GenerationRequest& r, int id) {
        return test::scripted_answer(llm::to_json(r.messages), r.sampling.greedy ? 0.0 : r.sampling.temperature, id,
                                     kernels);
      });

  skills::SkillStore store(out / "skills.db");
  const auto seeds = store.import(skills::read_skills_jsonl(kRoot / "skills/seed.jsonl"), false).imported;
  eval::EvalConfig eval_config;
  eval_config.device = cuda ? "cuda" : "cpu";
  eval_config.scale = cuda ? 1.0 : 0.05;
  eval_config.compile_baseline = false;
  eval_config.timing.trials = 10;
  if (!cuda) eval_config.torch_ops = test::kAgentTestsTorchOps;
  eval_config.cache_dir = test::test_cache();
  eval::EvaluatorPool pool(eval_config);
  agents::PoolEvaluator evaluator(pool);
  const agents::Prompts prompts;
  const auto tasks = eval::load_suite(suite).tasks;

  train::CoevolutionConfig config;
  config.steps = 2;
  config.tasks_per_step = 1;
  config.checkpoint_every = 0;
  config.agents.selection.schemes = 1;
  config.agents.selection.top_n = 100;  // every skill's header shown, so step 2's selection sees the new one
  config.agents.samples = 1;
  config.agents.policy.turns = 2;
  config.agents.verify.repeats = 1;
  config.optimizer.lr.peak = 1e-3;
  config.update.mrs = false;  // the fp32 trainer is the sampler here: nothing drifts
  config.prs = false;         // a kernel's coverage decides PRS: keep every turn, so the counts are exact

  std::vector<rl::CoevolutionMetrics> steps;
  const train::CoevolutionRun run{.out = out,
                                  .resume = false,
                                  .model = llm::load_model_config(model_dir),
                                  .on_step = [&](const rl::CoevolutionMetrics& m) { steps.push_back(m); },
                                  .progress = {}};
  train::train_coevolution(backbone, evaluator, prompts, store, tasks, config, run);
  ASSERT_EQ(steps.size(), 2u);
  for (const auto& m : steps) std::cout << "metrics: " << rl::to_json(m).dump() << "\n";
  // What each policy turn measured, to read the decisions below by.
  for (int64_t step = 1; step <= 2; ++step) {
    for (const auto& episode : test::read_jsonl(out / "episodes" / fmt::format("step-{}.jsonl", step))) {
      for (const auto& call : episode.at("calls"))
        if (call.at("role") == "policy" && call.at("result").is_object())
          std::cout << fmt::format("step {} scheme {} turn {}: {} {:.2f}x eager\n", step, call.at("scheme").dump(),
                                   call.at("turn").dump(), call.at("result").value("class", "?"),
                                   call.at("result").value("speedup_eager", 0.0));
    }
  }

  // Step 1: the scheme's rollout went from the slow kernel to the fast one (the null scheme wrote no
  // code), the summary proposed the sound skill and the bypass, the verifier's rerun reproduced the
  // speedup for the sound one, and the flush wrote it into snapshot 1.
  const auto& first = steps[0];
  EXPECT_DOUBLE_EQ(first.fast_1, 1.0);
  EXPECT_EQ(first.skills_proposed, 2u);
  EXPECT_GE(first.skills_verified, 1u);
  EXPECT_EQ(first.skills_admitted, 1u);
  EXPECT_EQ(first.library_size, seeds + 1);
  EXPECT_GT(first.policy.reward_mean, 0.0);
  EXPECT_GT(first.summary.response_tokens, 0.0) << "the summary's call is a training sample";
  EXPECT_EQ(first.untrainable_calls, 0u);
  EXPECT_GT(first.grad_norm, 0.0) << "rewards differ, so the advantages and the update do not vanish";
  EXPECT_GT(first.entropy, 0.0);

  const auto admitted = store.find(test::kSoundSkillName);
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(admitted->status, skills::Status::admitted);
  ASSERT_FALSE(admitted->verifications.empty());
  EXPECT_TRUE(admitted->verifications.front().correct);
  EXPECT_GE(admitted->verifications.front().skill_speedup, 1.2);
  EXPECT_FALSE(store.find("use_torch_relu").has_value()) << "the bypass is refused before verification";
  EXPECT_EQ(store.snapshot_at(1).value_or(-1), int64_t{1});

  // Step 2's selection was shown the library of snapshot 1, the new skill in it; its own summary
  // proposes the same skill again, which is refused (the name is taken), so the library stays.
  bool shown = false;
  for (const auto& r : backbone.requests()) {
    const std::string system = r.messages.at(0).content;

    if (system.starts_with("You choose optimization skills") &&
        r.messages.at(1).content.find(test::kSoundSkillName) != std::string::npos)
      shown = true;
  }
  EXPECT_TRUE(shown) << "a step's admissions reach the next step's selection";
  EXPECT_EQ(steps[1].library_size, seeds + 1);
  fs::remove_all(out);
}

}  // namespace coevolution_test
