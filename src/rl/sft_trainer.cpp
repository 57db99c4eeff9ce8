#include "rl/sft_trainer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <stdexcept>

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace vinci::rl {

llm::TrainSequence sft_sequence(const llm::TrainableBackbone& backbone, const SftConversation& c) {
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  if (c.tools.is_array()) extra["tools"] = c.tools;
  nlohmann::ordered_json earlier = c.messages;
  earlier.erase(earlier.size() - 1);
  const auto prompt = backbone.render_chat(earlier, extra, /*add_generation_prompt=*/true);
  const auto full = backbone.render_chat(c.messages, extra, /*add_generation_prompt=*/false);
  if (prompt.empty() || full.size() <= prompt.size() || !std::equal(prompt.begin(), prompt.end(), full.begin()))
    throw std::invalid_argument(fmt::format(
        "line {}: the chat template's rendering of the earlier messages ({} tokens) is not a prefix of the whole "
        "conversation's ({} tokens), so the answer's tokens cannot be told apart; use a template that renders "
        "earlier turns unchanged (--chat-template)",
        c.line, prompt.size(), full.size()));
  llm::TrainSequence s;
  s.ids = full;
  s.loss_mask.assign(prompt.size(), 0);
  s.loss_mask.resize(full.size(), 1);
  return s;
}

SftOutcome train_sft(llm::TrainableBackbone& backbone, std::span<const SftConversation> conversations,
                     const SftConfig& config, const std::function<void(const SftStepLog&)>& on_step) {
  SftOutcome out;
  std::vector<llm::TrainSequence> sequences;
  for (const auto& c : conversations) {
    auto s = sft_sequence(backbone, c);
    if (static_cast<int64_t>(s.ids.size()) > config.max_sequence_tokens) {
      ++out.skipped_too_long;
      continue;
    }
    sequences.push_back(std::move(s));
  }
  if (sequences.empty()) throw std::invalid_argument("SFT: no conversation to train on");
  AdamW optimizer(backbone.trainable_parameters(), config.optimizer);
  std::mt19937_64 rng(config.seed);
  std::vector<size_t> order(sequences.size());
  for (int epoch = 1; epoch <= config.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), size_t{0});
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t begin = 0; begin < order.size();) {
      const auto start = std::chrono::steady_clock::now();
      std::vector<llm::TrainSequence> batch;
      int64_t length = 0;
      while (begin < order.size() &&
             (batch.empty() || length + static_cast<int64_t>(sequences[order[begin]].ids.size()) <= config.batch_tokens)) {
        length += static_cast<int64_t>(sequences[order[begin]].ids.size());
        batch.push_back(sequences[order[begin++]]);
      }
      // Rows are padded to their length: no longer than the batch needs, no shorter than its longest sequence.
      int64_t longest = 0;
      for (const auto& s : batch) longest = std::max(longest, static_cast<int64_t>(s.ids.size()));
      const llm::LogprobOptions packed{.pack = true, .max_tokens_per_row = std::max(longest, std::min(config.row_tokens, length))};
      const at::Tensor logprobs = backbone.logprobs(batch, packed);
      const at::Tensor loss = -logprobs.mean();
      loss.backward();
      SftStepLog log;
      log.epoch = epoch;
      log.loss = loss.item<double>();
      log.tokens = logprobs.numel();
      log.sequences = static_cast<int64_t>(batch.size());
      log.optimizer = optimizer.step();
      log.step = log.optimizer.step;
      log.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      out.steps.push_back(log);
      if (on_step) on_step(log);
    }
  }
  return out;
}

}  // namespace vinci::rl
