// The policy agent (design.md §5): writes the kernel over T turns. The selected skills' full text
// sits in the system prompt; each later turn sees the earlier kernels with their results and stated
// strategies (reasoning dropped: Kevin's context management) and the task's short-term memory.
//
// Turns advance in lockstep over many rollouts, so that a turn is one batched generation and one
// batched evaluation whatever the strategy that created the rollouts.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agents/episode.h"
#include "agents/kernel_evaluator.h"
#include "agents/prompts.h"
#include "agents/strategy_memory.h"
#include "eval/task.h"
#include "llm/backbone.h"
#include "skills/skill.h"

namespace vinci::agents {

struct PolicyTurn {
  int turn = 0;
  std::string strategy;        // as the answer stated it
  std::string code;            // empty when the answer held no usable file
  std::filesystem::path file;  // where the code was written and evaluated from
  std::string parse_failure;   // output_parser's (or the backbone's) classification
  std::optional<eval::Result> result;
  std::string feedback;    // what the next turn shows for this one
  double speedup() const;  // over eager when correct, else 0
};

struct Rollout {
  std::string label;  // names its files: <label>_t<turn>.py
  int scheme = -1;
  int sample = 0;
  std::vector<skills::Skill> skills;  // injected into the system prompt
  std::vector<PolicyTurn> turns;
  std::vector<AgentCall> calls;             // one per turn
  std::optional<size_t> best_turn() const;  // the fastest correct turn
  double best_speedup() const;
};

struct PolicySettings {
  int turns = 5;  // design.md §5: 3 in training, 5 at test time
  llm::SamplingParams sampling = [] {
    llm::SamplingParams s;
    s.temperature = 1.0;
    s.max_new_tokens = 8192;
    return s;
  }();
  uint64_t seed = 0;
  size_t max_log_chars = 3000;
  size_t max_memory_entries = 12;
  size_t max_answer_chars = 400'000;
};

// What every turn on one task needs.
struct PolicyTask {
  eval::Task task;
  std::string source;                    // the problem file's text
  std::filesystem::path candidates_dir;  // every attempt is written here
};

std::string skills_section(const Prompts& prompts, const std::vector<skills::Skill>& skills);

// The conversation for the rollout's next turn.
std::vector<llm::ChatMessage> policy_messages(const Prompts& prompts, const PolicyTask& task, const Rollout& rollout,
                                              const std::string& memory);

// The seed of a rollout's turn: distinct per (scheme, sample, turn) and reproducible.
uint64_t turn_seed(uint64_t base, int scheme, int sample, int turn);

struct TurnOptions {
  Role role = Role::policy;
  bool fresh = false;  // evaluate again even when the result cache holds the file
};

// One rollout's place in a turn that may hold rollouts of several tasks.
struct PolicySlot {
  const PolicyTask* task = nullptr;
  Rollout* rollout = nullptr;
  StrategyMemory* memory = nullptr;  // never null; rollouts that share one see each other's strategies
  // The base of this rollout's turn seeds when it is not settings.seed: a suite run gives each task
  // its own, so that the same sample of different tasks does not draw the same random stream.
  std::optional<uint64_t> seed;
};

// Advances every slot's rollout by one turn: one batched generation over all slots, whatever their
// tasks, and one batched evaluation. Each memory is rendered once, before this turn adds to it, so
// the rollouts sharing it see the same text whatever their order. Appends the turn and its agent
// call to each rollout, and one entry per slot to its memory.
void policy_turn(llm::Backbone& backbone, KernelEvaluator& evaluator, const Prompts& prompts,
                 std::span<const PolicySlot> slots, const PolicySettings& settings, const TurnOptions& options = {});

// The same for rollouts of one task sharing one memory.
void policy_turn(llm::Backbone& backbone, KernelEvaluator& evaluator, const Prompts& prompts, const PolicyTask& task,
                 std::span<Rollout* const> rollouts, StrategyMemory& memory, const PolicySettings& settings,
                 const TurnOptions& options = {});

}  // namespace vinci::agents
