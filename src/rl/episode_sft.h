// SFT conversations from an episode's calls: what a teacher said, for a student to learn.
//
// SFT conversations (rl/sft_data.h's format) from an episode's calls: what a teacher said, in the
// prompts the agents send, for a student to learn. A policy answer is kept when its kernel was
// correct (a wrong one stays in later turns' context, but is never a target), a verifier's rerun
// likewise as a policy answer, and selection and summary answers when they parsed. Each keeps the
// messages as sent, the answer as the last assistant message, the role's tool schema, and meta
// (task, level, role).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/episode.h"

namespace vinci::rl {

std::vector<nlohmann::ordered_json> sft_records(const agents::Episode& episode);

// One policy conversation: the messages as the policy agent sends them and the answer as the last
// assistant message, with meta (task, level, role "policy").
nlohmann::ordered_json policy_record(const std::string& task, nlohmann::ordered_json messages,
                                     const std::string& answer);

}  // namespace vinci::rl
