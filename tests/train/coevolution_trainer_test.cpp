// The training side of a co-evolution step (train/coevolution_trainer.h) on the tiny Qwen2 fixture:
// which steps checkpoint, what a resume restores (weights, step, the task cursor) and refuses (another
// suite), and an update's token count and MFU. tests/train/coevolution_test.cpp runs it inside the loop.
#include "train/coevolution_trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "llm/model_config.h"
#include "llm/safetensors.h"
#include "llm_native/native_backbone.h"
#include "support/temp_dir.h"

namespace coevolution_trainer_test {

namespace fs = std::filesystem;
using namespace vinci;

const fs::path kModel = fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm/models/qwen2";

std::unique_ptr<llm::TrainableBackbone> tiny_model() {
  llm::NativeOptions native;
  native.device = "cpu";
  native.dtype = "float32";
  native.training.mode = llm::Training::Mode::full;
  return llm::open_native_backbone(kModel, native);
}

std::vector<std::string> folders(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

train::CoevolutionRun run_in(const fs::path& out, bool resume = false) {
  train::CoevolutionRun run;
  run.out = out;
  run.resume = resume;
  return run;
}

train::RunPosition at_step(int64_t step) {
  train::RunPosition p;
  p.step = step;
  p.tasks.epoch = static_cast<int>(step / 2);
  p.tasks.position = static_cast<size_t>(10 * step + 1);
  return p;
}

TEST(CoevolutionTrainer, CheckpointsAtTheCadenceAndTheLastStepThenResumesFromTheNewest) {
  test::TempDir dir("coevolution-trainer");
  train::CoevolutionConfig config;
  config.steps = 5;
  config.checkpoint_every = 2;
  const parallel::DataParallel single;
  auto model = tiny_model();
  {
    const train::CoevolutionRun run = run_in(dir.path());
    train::CoevolutionTrainer trainer(*model, config, run, single);
    EXPECT_EQ(trainer.start("suite-a").step, 0) << "nothing to resume: a fresh start";
    // Weights unlike the fixture's, so that a restore is seen in them.
    c10::NoGradGuard no_grad;
    for (auto& p : model->trainable_parameters()) p.add_(0.5);
    for (int64_t step = 1; step <= 5; ++step) trainer.checkpoint(at_step(step), "");
  }
  EXPECT_EQ(folders(dir.path() / "checkpoints"), (std::vector<std::string>{"latest", "step-2", "step-4", "step-5"}));

  const train::CoevolutionRun resume = run_in(dir.path(), true);
  auto fresh = tiny_model();
  train::CoevolutionTrainer resumed(*fresh, config, resume, single);
  const auto position = resumed.start("suite-a");
  EXPECT_EQ(position.step, 5);
  EXPECT_EQ(position.tasks.epoch, 2);
  EXPECT_EQ(position.tasks.position, 51u);
  const auto trained = model->trainable_parameters(), restored = fresh->trainable_parameters();
  ASSERT_EQ(trained.size(), restored.size());
  for (size_t i = 0; i < trained.size(); ++i) EXPECT_TRUE(at::equal(trained[i], restored[i])) << "parameter " << i;

  auto other = tiny_model();
  train::CoevolutionTrainer elsewhere(*other, config, resume, single);
  try {
    elsewhere.start("suite-b");
    ADD_FAILURE() << "a checkpoint of another suite was resumed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("step-5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("task suite differs"), std::string::npos) << e.what();
  }
}

TEST(CoevolutionTrainer, NoCadenceCheckpointsOnlyTheLastStepAndFinishWritesTheModel) {
  test::TempDir dir("coevolution-trainer");
  train::CoevolutionConfig config;
  config.steps = 3;
  config.checkpoint_every = 0;
  const parallel::DataParallel single;
  auto model = tiny_model();
  const train::CoevolutionRun run = run_in(dir.path());
  train::CoevolutionTrainer trainer(*model, config, run, single);
  trainer.start("suite");
  for (int64_t step = 1; step <= 3; ++step) trainer.checkpoint(at_step(step), "");
  EXPECT_EQ(folders(dir.path() / "checkpoints"), (std::vector<std::string>{"latest", "step-3"}));
  trainer.finish();
  EXPECT_TRUE(fs::exists(dir.path() / "final" / "config.json"));
  EXPECT_EQ(llm::Checkpoint::open(dir.path() / "final").names(), llm::Checkpoint::open(kModel).names());
}

rl::TrainingSample sample(std::vector<int32_t> ids, size_t masked, double advantage) {
  rl::TrainingSample s;
  s.ids = std::move(ids);
  s.loss_mask.assign(s.ids.size(), 0);
  for (size_t i = s.ids.size() - masked; i < s.ids.size(); ++i) s.loss_mask[i] = 1;
  s.rollout_logprobs.assign(masked, -1.0f);
  s.advantage = advantage;
  return s;
}

TEST(CoevolutionTrainer, AnUpdateTrainsEveryMaskedTokenAndReportsItsThroughput) {
  test::TempDir dir("coevolution-trainer");
  train::CoevolutionConfig config;
  config.update.mrs = false;  // the rollout logprobs here are made up
  config.optimizer.lr.peak = 1e-2;
  config.optimizer.lr.warmup_steps = 0;
  const parallel::DataParallel single;
  auto model = tiny_model();
  const auto before = model->trainable_parameters()[0].detach().clone();
  train::CoevolutionRun run = run_in(dir.path());
  run.model = llm::load_model_config(kModel);
  train::CoevolutionTrainer trainer(*model, config, run, single);
  trainer.start("suite");
  rl::CoevolutionBatch batch;
  batch.samples = {sample({1, 2, 3, 4, 5, 6}, 3, 1.0), sample({7, 8, 9, 10}, 2, -1.0)};
  const auto stats = trainer.train(batch);
  EXPECT_EQ(stats.update.tokens, 5);
  EXPECT_EQ(stats.update.sequences, 2u);
  EXPECT_TRUE(stats.update.has_gradient);
  EXPECT_GT(stats.tokens_per_s, 0.0);
  EXPECT_GT(stats.mfu, 0.0) << "the model's shape was given, so the update's FLOPs are known";
  EXPECT_FALSE(at::equal(before, model->trainable_parameters()[0])) << "opposite advantages move the weights";
}

}  // namespace coevolution_trainer_test
