// The SFT cold start: masked cross-entropy on the answers, packed rows, AdamW.
//
// The SFT cold start: masked cross-entropy on the assistant's final answer of each conversation,
// sequences packed into rows, AdamW with the learning-rate schedule, batches of about a token budget.
//
// A conversation's ids are its chat-template rendering; the trained tokens are what the full
// rendering adds after the rendering of every earlier message with the generation prompt, i.e. the
// answer and the template's end-of-turn tokens. Tool calls in the answer are rendered by the template.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "llm/backbone.h"
#include "parallel/data_parallel.h"
#include "rl/sft_data.h"
#include "train/adamw.h"

namespace vinci::train {

// Throws std::invalid_argument "line N: ..." when the template's rendering of the prompt is not a
// prefix of the full conversation's (the answer's tokens could then not be told apart).
llm::TrainSequence sft_sequence(const llm::TrainableBackbone& backbone, const rl::SftConversation& conversation);

struct SftConfig {
  AdamWConfig optimizer = [] {
    AdamWConfig c;
    c.lr.peak = 1e-5;  // supervised: higher than RL's 1e-6
    return c;
  }();
  int epochs = 2;
  int64_t batch_tokens = 65536;         // sequence tokens per optimizer step (at least one conversation)
  int64_t row_tokens = 8192;            // packing row length
  int64_t max_sequence_tokens = 32768;  // longer conversations are skipped, and counted
  uint64_t seed = 0;                    // the order of conversations in each epoch
  // Checkpoints (model, optimizer, data cursor) go to checkpoint_dir every checkpoint_every steps
  // and at the end; empty: none. resume continues from the newest one there.
  std::filesystem::path checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool resume = false;
  int64_t max_steps = 0;  // stop (after checkpointing) once this many steps are done; 0: no limit
};

struct SftStepLog {
  int epoch = 0;
  int64_t step = 0;
  double loss = 0;  // mean negative log-likelihood per trained token
  int64_t tokens = 0, sequences = 0;
  StepStats optimizer;
  double seconds = 0;
};

struct SftOutcome {
  std::vector<SftStepLog> steps;  // this run's, after any it resumed from
  size_t skipped_too_long = 0;
  int64_t resumed_from_step = 0;
  bool complete = false;  // every epoch done (false: stopped by max_steps)
};

// on_step sees each step as it finishes (progress, metrics file, checkpoints).
//
// Data parallel: every rank forms the same batches; each trains its share of a batch (rank_share)
// with the loss divided by the batch's trained tokens over all ranks, and the gradients are summed,
// so the step is one process's. Rank 0 alone checkpoints and calls on_step.
SftOutcome train_sft(llm::TrainableBackbone& backbone, std::span<const rl::SftConversation> conversations,
                     const SftConfig& config, const std::function<void(const SftStepLog&)>& on_step = {},
                     const parallel::DataParallel& parallel = {});

}  // namespace vinci::train
