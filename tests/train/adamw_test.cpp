// The optimizer (src/train/adamw): two AdamW steps against the update worked out by hand, clipping by
// global norm, a state round trip, and training steps through the policy loss on a LoRA model,
// after which every trainable parameter has moved and no frozen one has.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "llm/model_config.h"
#include "llm/safetensors.h"
#include "llm_native/transformer.h"
#include "train/adamw.h"
#include "train/policy_loss.h"

namespace adamw_test {

using vinci::train::AdamW;
using vinci::train::AdamWConfig;

at::Tensor scalar_param(double value) { return at::tensor({value}, at::kDouble).requires_grad_(true); }

void set_grad(at::Tensor& p, std::vector<double> g) { p.mutable_grad() = at::tensor(g, at::kDouble); }

TEST(AdamW, TwoStepsAsWorkedOutByHand) {
  // p = 1, g = 0.5 twice, lr 0.1, b1 0.9, b2 0.999, eps 1e-8, wd 0.01:
  //   step 1: m 0.05, v 0.00025; m^ 0.5, v^ 0.25; p = 1 x 0.999 - 0.1 x 0.5 / (0.5 + 1e-8)
  //   step 2: m 0.095, v 0.00049975; m^ 0.5, v^ 0.25; p = p1 x 0.999 - 0.1 x 0.5 / (0.5 + 1e-8)
  auto p = scalar_param(1.0);
  AdamWConfig c;
  c.lr.peak = 0.1;
  c.weight_decay = 0.01;
  c.max_grad_norm = 0;
  AdamW opt({p}, c);
  const double update = 0.1 * 0.5 / (0.5 + 1e-8);
  set_grad(p, {0.5});
  auto stats = opt.step();
  const double p1 = 1.0 * 0.999 - update;
  EXPECT_NEAR(p.item<double>(), p1, 1e-12);
  EXPECT_DOUBLE_EQ(stats.grad_norm, 0.5);
  EXPECT_DOUBLE_EQ(stats.lr, 0.1);
  EXPECT_FALSE(p.grad().defined());  // cleared for the next step
  set_grad(p, {0.5});
  opt.step();
  EXPECT_NEAR(p.item<double>(), p1 * 0.999 - update, 1e-12);
  EXPECT_EQ(opt.steps(), 2);
}

TEST(AdamW, ClipsByTheGlobalNorm) {
  // gradients 3 and 4 over two parameters: norm 5, clipped to 1 -> 0.6 and 0.8 (x 5 / (5 + 1e-6));
  // Adam's first step moves each by lr x sign whatever the scale, so the clipped values show in m.
  // The divisor reaches the fused kernel as a float32 scalar: m agrees to float32's precision.
  auto a = scalar_param(0.0), b = scalar_param(0.0);
  AdamWConfig c;
  c.lr.peak = 0.1;
  c.max_grad_norm = 1.0;
  AdamW opt({a, b}, c);
  set_grad(a, {3.0});
  set_grad(b, {4.0});
  const auto stats = opt.step();
  EXPECT_DOUBLE_EQ(stats.grad_norm, 5.0);
  const double scale = 1.0 / (5.0 + 1e-6);
  EXPECT_NEAR(opt.state().at("m.0").item<double>(), 0.1 * 3.0 * scale, 2e-8);
  EXPECT_NEAR(opt.state().at("m.1").item<double>(), 0.1 * 4.0 * scale, 2e-8);
}

TEST(AdamW, StateRoundTripContinuesIdentically) {
  auto p = scalar_param(1.0), q = scalar_param(1.0);
  AdamWConfig c;
  c.lr.peak = 0.05;
  c.lr.warmup_steps = 3;
  AdamW first({p}, c), second({q}, c);
  for (int i = 0; i < 2; ++i) {
    set_grad(p, {0.3 + i});
    first.step();
  }
  {
    c10::NoGradGuard no_grad;
    q.copy_(p);
  }
  second.load_state(first.state());
  set_grad(p, {-0.7});
  set_grad(q, {-0.7});
  first.step();
  second.step();
  EXPECT_EQ(p.item<double>(), q.item<double>());
  EXPECT_EQ(second.steps(), 3);
  auto broken = first.state();
  broken.erase("v.0");
  EXPECT_THROW(second.load_state(broken), std::invalid_argument);
}

TEST(AdamW, PolicyLossStepsMoveEveryAdapterAndNoFrozenWeight) {
  const auto dir = std::filesystem::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm/models/qwen2";
  const auto config = vinci::llm::load_model_config(dir);
  auto model = vinci::llm::Transformer::load(config, vinci::llm::Checkpoint::open(dir), {});
  vinci::llm::Training training;
  training.mode = vinci::llm::Training::Mode::lora;
  training.lora.rank = 4;
  model.enable_training(training, 3);
  std::map<std::string, at::Tensor> base_before, adapters_before;
  for (auto& [name, t] : model.named_weights()) base_before[name] = t.detach().clone();
  for (auto& [name, t] : model.named_adapters()) adapters_before[name] = t.detach().clone();

  const auto golden = nlohmann::json::parse(vinci::core::read_file(dir / "golden.json"));
  auto ids = at::tensor(golden["forced"][3].get<std::vector<int64_t>>()).unsqueeze(0);
  const int64_t length = ids.size(1);
  const auto token_logprobs = [&] {
    auto hidden = model.hidden(ids, at::arange(length).unsqueeze(0), {}, nullptr);
    auto logp = model.logits(hidden[0].narrow(0, 0, length - 1)).log_softmax(-1);
    return logp.gather(1, ids[0].narrow(0, 1, length - 1).unsqueeze(1)).squeeze(1);
  };
  AdamWConfig c;
  c.lr.peak = 1e-2;
  AdamW opt(model.trainable_parameters(), c);
  const std::vector<double> advantage = {1.0};
  const std::vector<int64_t> tokens = {length - 1};
  // Two steps: B starts at zero, so A's gradient (through B) appears only on the second.
  for (int step = 0; step < 2; ++step) {
    auto lp = token_logprobs();
    vinci::train::policy_loss(lp, lp.detach(), advantage, tokens, {}).backward();
    opt.step();
  }
  for (auto& [name, t] : model.named_weights()) EXPECT_TRUE(at::equal(t, base_before[name])) << name;
  for (auto& [name, t] : model.named_adapters()) EXPECT_FALSE(at::equal(t, adapters_before[name])) << name;
  EXPECT_EQ(model.named_adapters().size(), 2u * 7 * config.num_hidden_layers);
}

}  // namespace adamw_test
