// The SFT cold start (train/sft_trainer.h) on a bigram model small enough to reason about by hand: which
// tokens are trained, how conversations are batched by the token budget, and the first step's loss
// and gradient, which at zero weights (a uniform model) follow from counting. tests/cli/train_sft_test.py
// runs the whole command on a real model (resume, duplicates, data parallel).
#include "train/sft_trainer.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>

namespace sft_trainer_test {
using namespace vinci::rl;
using namespace vinci::train;
using vinci::llm::TrainSequence;

constexpr int64_t kVocab = 16;

// Renders each message as its role's id, one id per character (4 + byte % 12) and an end id 0; the
// generation prompt is the assistant's role id. log p(next | previous) = log_softmax(W[previous]).
class BigramBackbone final : public vinci::llm::TrainableBackbone {
 public:
  explicit BigramBackbone(bool prefix_stable = true)
      : weights_(at::zeros({kVocab, kVocab}, at::kFloat).requires_grad_()), prefix_stable_(prefix_stable) {}

  std::vector<int32_t> render_chat(const nlohmann::ordered_json& messages, const nlohmann::ordered_json&,
                                   bool add_generation_prompt) const override {
    std::vector<int32_t> ids;
    for (const auto& m : messages) {
      ids.push_back(m["role"] == "user" ? 1 : 2);
      for (unsigned char c : m["content"].get<std::string>()) ids.push_back(4 + c % 12);
      ids.push_back(0);
    }
    if (add_generation_prompt) ids.push_back(prefix_stable_ ? 2 : 3);
    return ids;
  }
  at::Tensor logprobs(std::span<const TrainSequence> sequences, const vinci::llm::LogprobOptions&) override {
    std::vector<int64_t> previous, next;
    for (const auto& s : sequences)
      for (size_t i = 1; i < s.ids.size(); ++i)
        if (s.loss_mask[i]) previous.push_back(s.ids[i - 1]), next.push_back(s.ids[i]);
    const auto rows = at::log_softmax(weights_.index_select(0, at::tensor(previous, at::kLong)), 1);
    return rows.gather(1, at::tensor(next, at::kLong).unsqueeze(1)).squeeze(1);
  }
  std::vector<at::Tensor> trainable_parameters() override { return {weights_}; }

  std::vector<vinci::llm::GenerationResult> generate(std::span<const vinci::llm::GenerationRequest>) override {
    throw std::logic_error("BigramBackbone does not generate");
  }
  std::string model_name() const override { return "bigram"; }
  void save(const std::filesystem::path&) const override { throw std::logic_error("not saved"); }
  void load(const std::filesystem::path&) override { throw std::logic_error("not loaded"); }
  const vinci::text::Tokenizer& tokenizer() const override { throw std::logic_error("no tokenizer"); }

 private:
  at::Tensor weights_;
  bool prefix_stable_;
};

SftConversation conversation(const std::string& question, const std::string& answer, size_t line = 1) {
  SftConversation c;
  c.line = line;
  c.role = "policy";
  c.messages = {{{"role", "user"}, {"content", question}}, {{"role", "assistant"}, {"content", answer}}};
  return c;
}

TEST(SftTrainer, TheAnswerAndItsEndAreTrainedNotThePrompt) {
  BigramBackbone model;
  // 'a' = 97 -> 4 + 1, 'x' = 120 -> 4 + 0
  const TrainSequence s = sft_sequence(model, conversation("a", "xx"));
  EXPECT_EQ(s.ids, (std::vector<int32_t>{1, 5, 0, 2, 4, 4, 0}));
  EXPECT_EQ(s.loss_mask, (std::vector<uint8_t>{0, 0, 0, 0, 1, 1, 1}));

  BigramBackbone unstable(false);
  try {
    sft_sequence(unstable, conversation("a", "xx", 7));
    ADD_FAILURE() << "a template whose prompt is not a prefix was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("line 7: the chat template's rendering of the earlier messages (4 tokens)", 0), 0u)
        << e.what();
  }
}

TEST(SftTrainer, FirstStepOfAUniformModelHasLossLogVAndTheCountedGradient) {
  const std::vector<SftConversation> data{conversation("ab", "xyz"), conversation("b", "xx"), conversation("a", "y")};
  // The gradient of -mean log softmax(W[p])[t] at W = 0 is (n_p / V - count(p, t)) / N, from the
  // trained (previous, next) pairs alone.
  std::map<std::pair<int, int>, double> count;
  std::map<int, double> from;
  double trained = 0;
  BigramBackbone model;
  for (const auto& c : data) {
    const auto s = sft_sequence(model, c);
    for (size_t i = 1; i < s.ids.size(); ++i)
      if (s.loss_mask[i]) ++count[{s.ids[i - 1], s.ids[i]}], ++from[s.ids[i - 1]], ++trained;
  }
  double squared = 0;
  for (const auto& [p, n] : from)
    for (int t = 0; t < kVocab; ++t) {
      const auto it = count.find({p, t});
      const double g = (n / kVocab - (it == count.end() ? 0.0 : it->second)) / trained;
      squared += g * g;
    }
  ASSERT_EQ(trained, 4 + 3 + 2);

  SftConfig config;
  config.epochs = 3;
  config.batch_tokens = 1000;  // every conversation in one batch
  config.optimizer.lr.peak = 0.05;
  config.optimizer.max_grad_norm = 0;
  std::vector<SftStepLog> seen;
  const SftOutcome out = train_sft(model, data, config, [&](const SftStepLog& s) { seen.push_back(s); });
  ASSERT_EQ(out.steps.size(), 3u);
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_TRUE(out.complete);
  EXPECT_NEAR(out.steps[0].loss, std::log(static_cast<double>(kVocab)), 1e-6);
  EXPECT_NEAR(out.steps[0].optimizer.grad_norm, std::sqrt(squared), 1e-6);
  EXPECT_EQ(out.steps[0].tokens, 9);
  EXPECT_EQ(out.steps[0].sequences, 3);
  EXPECT_LT(out.steps[1].loss, out.steps[0].loss);
  EXPECT_LT(out.steps[2].loss, out.steps[1].loss);
}

TEST(SftTrainer, BatchesFollowTheTokenBudgetAndLongOnesAreSkipped) {
  // Each "aaa" -> "bbb" conversation renders to 10 tokens, 4 of them trained.
  std::vector<SftConversation> data(4, conversation("aaa", "bbb"));
  data.push_back(conversation(std::string(31, 'a'), "b"));  // 36 tokens
  BigramBackbone model;
  SftConfig config;
  config.epochs = 2;
  config.batch_tokens = 20;
  config.max_sequence_tokens = 35;
  const SftOutcome out = train_sft(model, data, config);
  EXPECT_EQ(out.skipped_too_long, 1u);
  ASSERT_EQ(out.steps.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out.steps[i].step, static_cast<int64_t>(i + 1));
    EXPECT_EQ(out.steps[i].epoch, i < 2 ? 1 : 2);
    EXPECT_EQ(out.steps[i].sequences, 2);
    EXPECT_EQ(out.steps[i].tokens, 8);
  }

  // A conversation longer than the budget still gets a batch of its own; max_steps stops early.
  config.max_sequence_tokens = 100;
  config.max_steps = 2;
  BigramBackbone fresh;
  const SftOutcome cut = train_sft(fresh, data, config);
  EXPECT_FALSE(cut.complete);
  ASSERT_EQ(cut.steps.size(), 2u);

  config.max_sequence_tokens = 5;
  BigramBackbone none;
  EXPECT_THROW(train_sft(none, data, config), std::invalid_argument);
}

}  // namespace sft_trainer_test
