// The episode record: every agent call of one task's optimization, token-level, as training reads
// it. One episode is one JSON line of episodes.jsonl.
//
// Rollouts stay token-in, token-out (design.md §6): a call keeps the exact prompt and response ids
// and the sampler's logprobs. A call made through a server that returned no ids keeps its text and
// is marked not trainable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/reward_inputs.h"
#include "eval/result.h"
#include "llm/backbone.h"
#include "llm/chat_message.h"

namespace vinci::agents {

enum class Role { selection, policy, summary, verify };
std::string_view to_string(Role role);
Role role_from_string(std::string_view s);  // throws std::invalid_argument naming the value

struct AgentCall {
  Role role = Role::policy;
  int scheme = -1;  // the skill scheme (selection sample k, or the null scheme); -1: none
  int sample = 0;   // the rollout within its scheme
  int turn = 0;     // the policy turn, from 0

  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> response_ids;
  std::vector<float> logprobs;     // one per response id, under the sampling distribution
  std::vector<uint8_t> loss_mask;  // one per response id: 1 where the model's own token is trained
  bool trainable = true;           // false when the backbone returned no token ids

  std::vector<llm::ChatMessage> messages;  // the prompt, as sent
  std::string response_text;
  std::string parse_failure;  // output_parser's classification; empty when the answer was usable

  std::optional<eval::Result> result;  // policy and verify calls
  RewardInputs reward_inputs;          // the record of the call's role
};

// How the episode was run, for people and scripts reading episodes.jsonl; training reads none of it.
struct EpisodeMeta {
  std::string protocol;  // "optimize" (vinci optimize, co-evolution) or "kernelbench" (bench-model)
  std::string strategy;  // optimize's search strategy; empty under kernelbench
  int turns = 0;
  int samples = 0;
  int schemes = 0;  // skill schemes tried; 0 under kernelbench, which injects none
  uint64_t seed = 0;
  std::vector<std::string> skills_shown;  // the skill headers selection saw
  size_t library_size = 0;
  std::optional<double> temperature;  // kernelbench's sampling
  std::optional<int> max_new_tokens;
  bool operator==(const EpisodeMeta&) const = default;
};

struct Episode {
  std::string id;
  std::string task;
  std::string model;
  std::vector<AgentCall> calls;
  EpisodeMeta meta;
};

// The record of one backbone call: its ids and logprobs, every response token masked in (the
// response is all the model's own), trainable when the backbone returned ids and no error.
AgentCall record_call(Role role, const llm::GenerationRequest& request, const llm::GenerationResult& result);

nlohmann::json to_json(const AgentCall& call);
nlohmann::json to_json(const Episode& episode);
nlohmann::json to_json(const EpisodeMeta& meta);
// Throws std::invalid_argument naming the missing or malformed field, and which call holds it.
// reward_inputs are read by the call's role; a policy or verify record without "verdict" (an older
// form) takes it from the call's result.
Episode episode_from_json(const nlohmann::json& j);

// Reads episodes.jsonl; an error names the file and line.
std::vector<Episode> load_episodes(const std::filesystem::path& path);

}  // namespace vinci::agents
