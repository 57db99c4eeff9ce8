#include "train/sft_trainer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <stdexcept>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "core/hash.h"
#include "train/checkpoint.h"

namespace vinci::train {

llm::TrainSequence sft_sequence(const llm::TrainableBackbone& backbone, const rl::SftConversation& c) {
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

SftOutcome train_sft(llm::TrainableBackbone& backbone, std::span<const rl::SftConversation> conversations,
                     const SftConfig& config, const std::function<void(const SftStepLog&)>& on_step,
                     const parallel::DataParallel& parallel) {
  SftOutcome out;
  std::vector<llm::TrainSequence> sequences;
  std::vector<std::string> fingerprint;
  for (const auto& c : conversations) {
    auto s = sft_sequence(backbone, c);
    if (static_cast<int64_t>(s.ids.size()) > config.max_sequence_tokens) {
      ++out.skipped_too_long;
      continue;
    }
    fingerprint.push_back(nlohmann::json(s.ids).dump() + nlohmann::json(s.loss_mask).dump());
    sequences.push_back(std::move(s));
  }
  if (sequences.empty()) throw std::invalid_argument("SFT: no conversation to train on");
  std::string joined;
  for (const auto& f : fingerprint) joined += f + "\n";
  const std::string data_hash = core::content_hash(joined);
  AdamW optimizer(backbone.trainable_parameters(), config.optimizer);

  // Where to start: the cursor is (epoch, position in that epoch's order), and each epoch's order
  // depends on the seed and the epoch alone, so a resumed run sees the batches the first one would.
  int start_epoch = 1;
  size_t start_position = 0;
  if (config.resume && !config.checkpoint_dir.empty()) {
    if (const auto latest = latest_checkpoint(config.checkpoint_dir)) {
      const auto state = load_checkpoint(*latest, backbone, optimizer);
      if (state.value("data", std::string()) != data_hash)
        throw std::runtime_error(
            fmt::format("{}: the training data (or the template, or the filter) differs from the "
                        "data this checkpoint was trained on",
                        latest->string()));
      start_epoch = state.at("epoch").get<int>();
      start_position = state.at("position").get<size_t>();
      out.resumed_from_step = state.at("step").get<int64_t>();
    }
  }
  parallel.broadcast_(backbone.trainable_parameters());  // a LoRA adapter's random start included
  const auto checkpoint = [&](int epoch, size_t position) {
    if (config.checkpoint_dir.empty() || !parallel.is_main()) return;
    if (position >= sequences.size()) ++epoch, position = 0;
    save_checkpoint(config.checkpoint_dir, optimizer.steps(), backbone, optimizer,
                    {{"epoch", epoch}, {"position", position}, {"data", data_hash}, {"kind", "sft"}});
  };

  std::vector<size_t> order(sequences.size());
  for (int epoch = start_epoch; epoch <= config.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), size_t{0});
    std::mt19937_64 rng(config.seed * 1000003 + static_cast<uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t begin = epoch == start_epoch ? start_position : 0; begin < order.size();) {
      if (config.max_steps > 0 && optimizer.steps() >= config.max_steps) {
        checkpoint(epoch, begin);
        return out;
      }
      const auto start = std::chrono::steady_clock::now();
      std::vector<llm::TrainSequence> batch;
      int64_t length = 0;
      while (
          begin < order.size() &&
          (batch.empty() || length + static_cast<int64_t>(sequences[order[begin]].ids.size()) <= config.batch_tokens)) {
        length += static_cast<int64_t>(sequences[order[begin]].ids.size());
        batch.push_back(sequences[order[begin++]]);
      }
      // This rank's share of the batch (all of it in one process). The loss is the batch's mean over
      // its trained tokens on every rank together.
      std::vector<int64_t> lengths;
      for (const auto& s : batch) lengths.push_back(static_cast<int64_t>(s.ids.size()));
      std::vector<llm::TrainSequence> mine;
      int64_t mine_length = 0, longest = 0, trained = 0;
      for (const size_t i : parallel::rank_share(lengths, parallel.rank(), parallel.world_size())) {
        mine.push_back(batch[i]);
        mine_length += lengths[i];
        longest = std::max(longest, lengths[i]);
        trained += std::count(batch[i].loss_mask.begin(), batch[i].loss_mask.end(), uint8_t{1});
      }
      const double batch_trained = parallel.sum({static_cast<double>(trained)})[0];
      double loss = 0;
      if (!mine.empty()) {
        // Rows are padded to their length: no longer than the share needs, no shorter than its longest sequence.
        const llm::LogprobOptions packed{
            .pack = true, .max_tokens_per_row = std::max(longest, std::min(config.row_tokens, mine_length))};
        const at::Tensor share_loss = -backbone.logprobs(mine, packed).sum() / batch_trained;
        share_loss.backward();
        loss = share_loss.item<double>();
      }
      parallel.sum_gradients(backbone.trainable_parameters());
      SftStepLog log;
      log.epoch = epoch;
      log.loss = parallel.sum({loss})[0];
      log.tokens = static_cast<int64_t>(batch_trained);
      log.sequences = static_cast<int64_t>(batch.size());
      log.optimizer = optimizer.step();
      log.step = log.optimizer.step;
      log.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      out.steps.push_back(log);
      if (on_step && parallel.is_main()) on_step(log);
      if (config.checkpoint_every > 0 && log.step % config.checkpoint_every == 0) checkpoint(epoch, begin);
    }
  }
  checkpoint(config.epochs + 1, 0);
  out.complete = true;
  return out;
}

}  // namespace vinci::train
