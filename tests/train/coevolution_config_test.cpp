// The co-evolution config file (src/train/coevolution_config): the shipped configs/coevolution.toml
// states exactly the defaults, every value lands where it belongs, and mistakes are refused with
// the file, line and key.
#include <gtest/gtest.h>

#include "train/coevolution_config.h"

namespace coevolution_config_test {

using vinci::train::parse_coevolution_config;

TEST(CoevolutionConfig, TheShippedFileStatesTheDefaults) {
  const auto shipped =
      vinci::train::load_coevolution_config(std::filesystem::path(VINCI_SOURCE_ROOT) / "configs/coevolution.toml");
  const auto defaults = parse_coevolution_config("", "empty");
  const auto& a = shipped.run;
  const auto& b = defaults.run;
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.tasks_per_step, b.tasks_per_step);
  EXPECT_EQ(a.parallel_tasks, b.parallel_tasks);
  EXPECT_EQ(a.checkpoint_every, b.checkpoint_every);
  EXPECT_EQ(a.agents.selection.schemes, b.agents.selection.schemes);
  EXPECT_EQ(a.agents.samples, b.agents.samples);
  EXPECT_EQ(a.agents.policy.turns, b.agents.policy.turns);
  EXPECT_EQ(a.agents.policy.sampling.max_new_tokens, b.agents.policy.sampling.max_new_tokens);
  EXPECT_EQ(a.agents.selection.sampling.max_new_tokens, b.agents.selection.sampling.max_new_tokens);
  EXPECT_EQ(a.agents.summary.sampling.max_new_tokens, b.agents.summary.sampling.max_new_tokens);
  EXPECT_EQ(a.agents.verify.repeats, b.agents.verify.repeats);
  EXPECT_EQ(a.samples.reward.kind, b.samples.reward.kind);
  EXPECT_EQ(a.samples.reward.speedup_cap, b.samples.reward.speedup_cap);
  EXPECT_EQ(a.samples.advantage.gamma, b.samples.advantage.gamma);
  EXPECT_EQ(a.samples.advantage.selection_scale, b.samples.advantage.selection_scale);
  EXPECT_EQ(a.samples.advantage.summary_scale, b.samples.advantage.summary_scale);
  EXPECT_EQ(a.update.loss.clip_low, b.update.loss.clip_low);
  EXPECT_EQ(a.update.loss.clip_high, b.update.loss.clip_high);
  EXPECT_EQ(a.update.micro_batch_tokens, b.update.micro_batch_tokens);
  EXPECT_EQ(a.update.mrs_config.delta, b.update.mrs_config.delta);
  EXPECT_EQ(a.prs_config.tau, b.prs_config.tau);
  EXPECT_EQ(a.optimizer.lr.peak, b.optimizer.lr.peak);
  EXPECT_EQ(a.optimizer.max_grad_norm, b.optimizer.max_grad_norm);
  EXPECT_EQ(shipped.training.mode, vinci::llm::Training::Mode::lora);
  EXPECT_EQ(shipped.training.lora.rank, defaults.training.lora.rank);
  EXPECT_EQ(shipped.eval_queue, "");
  EXPECT_EQ(defaults.eval_queue, "");
  // daVinci-kernel's published settings (design.md §5-§6)
  EXPECT_EQ(b.agents.selection.schemes, 3);
  EXPECT_EQ(b.agents.policy.turns, 3);
  EXPECT_EQ(b.update.loss.clip_low, 0.2);
  EXPECT_EQ(b.update.loss.clip_high, 0.28);
  EXPECT_EQ(b.samples.advantage.selection_scale, 0.3);
  EXPECT_EQ(b.samples.advantage.summary_scale, 0.5);
  EXPECT_EQ(b.update.mrs_config.delta, 0.001);
}

TEST(CoevolutionConfig, ValuesLandWhereTheyBelong) {
  const auto f = parse_coevolution_config(R"(
[run]
parallel_tasks = 3
[agents]
temperature = 0.7
max_new_tokens = 100
[reward]
kind = "tiered"
rejected_penalty = -2
[advantage]
estimator = "grpo"
group = "task"
[loss]
aggregation = "seq_mean_token_mean"
[optimizer]
schedule = "cosine"
total_steps = 50
[model]
training = "full"
[eval]
queue = "redis://vinci:secret@10.0.0.2:6380/1"
)",
                                          "t.toml");
  EXPECT_EQ(f.eval_queue, "redis://vinci:secret@10.0.0.2:6380/1");
  EXPECT_EQ(f.run.parallel_tasks, 3);
  EXPECT_EQ(f.run.agents.policy.sampling.temperature, 0.7);
  EXPECT_EQ(f.run.agents.selection.sampling.temperature, 0.7);
  EXPECT_EQ(f.run.agents.summary.sampling.temperature, 0.7);
  EXPECT_EQ(f.run.agents.verify.max_new_tokens, 100);
  EXPECT_EQ(f.run.samples.reward.kind, vinci::rl::RewardKind::tiered);
  EXPECT_EQ(f.run.samples.reward.rejected_penalty, -2.0);  // an integer where a number is asked is fine
  EXPECT_EQ(f.run.samples.advantage.policy_estimator, vinci::rl::Estimator::grpo);
  EXPECT_EQ(f.run.samples.advantage.policy_group, vinci::rl::GroupKey::task);
  EXPECT_EQ(f.run.update.loss.aggregation, vinci::train::LossAggregation::seq_mean_token_mean);
  EXPECT_EQ(f.run.optimizer.lr.shape, vinci::rl::LrSchedule::Shape::cosine);
  EXPECT_EQ(f.run.optimizer.lr.total_steps, 50);
  EXPECT_EQ(f.training.mode, vinci::llm::Training::Mode::full);
}

std::string refusal(const std::string& text) {
  try {
    parse_coevolution_config(text, "c.toml");
    return "accepted";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(CoevolutionConfig, MistakesNameTheFileLineAndKey) {
  EXPECT_EQ(refusal("[run]\nsteps = 2\n[agents]\nturn = 3\n"),
            "c.toml:4: agents.turn is not a setting (configs/coevolution.toml lists them all)");
  EXPECT_EQ(refusal("[agents]\nturns = \"three\"\n"), "c.toml:2: agents.turns: expected an integer >= 1");
  EXPECT_EQ(refusal("[agents]\nturns = 0\n"), "c.toml:2: agents.turns: expected an integer >= 1");
  EXPECT_EQ(refusal("[reward]\nkind = \"grpo\"\n"),
            "c.toml:2: reward.kind: expected one of \"davinci\", \"kevin\", \"tiered\"");
  EXPECT_EQ(refusal("[training]\nlr = 1\n").substr(0, 39), "c.toml:1: [training] is not a section (");
  EXPECT_EQ(refusal("[run\n").substr(0, 9), "c.toml:1:");
  EXPECT_EQ(refusal("[eval]\nqueue = \"localhost:6379\"\n"),
            "c.toml:2: eval.queue: expected a redis://[user:password@]HOST:PORT[/DB] URL");
}

}  // namespace coevolution_config_test
