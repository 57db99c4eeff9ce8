#include "agents/episode.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::agents {

using nlohmann::json;

const char* role_name(Role role) {
  switch (role) {
    case Role::selection: return "selection";
    case Role::policy: return "policy";
    case Role::summary: return "summary";
    case Role::verify: return "verify";
  }
  return "?";
}

Role role_from_name(const std::string& name) {
  for (Role r : {Role::selection, Role::policy, Role::summary, Role::verify})
    if (name == role_name(r)) return r;
  throw std::invalid_argument(fmt::format("unknown role '{}': expected selection, policy, summary or verify", name));
}

AgentCall record_call(Role role, const llm::GenerationRequest& request, const llm::GenerationResult& result) {
  AgentCall c;
  c.role = role;
  c.messages = request.messages;
  c.prompt_ids = result.prompt_ids;
  c.response_ids = result.token_ids;
  c.logprobs = result.logprobs;
  c.loss_mask.assign(result.token_ids.size(), 1);
  c.trainable = result.token_ids_known && !result.error && c.logprobs.size() == c.response_ids.size();
  c.response_text = result.text;
  if (result.error) c.parse_failure = "backbone_" + result.error->kind;
  return c;
}

json to_json(const AgentCall& c) {
  json j;
  j["role"] = role_name(c.role);
  j["scheme"] = c.scheme;
  j["sample"] = c.sample;
  j["turn"] = c.turn;
  j["prompt_ids"] = c.prompt_ids;
  j["response_ids"] = c.response_ids;
  j["logprobs"] = c.logprobs;
  j["loss_mask"] = c.loss_mask;
  j["trainable"] = c.trainable;
  j["messages"] = c.messages;
  j["response_text"] = c.response_text;
  j["parse_failure"] = c.parse_failure;
  j["result"] = c.result ? eval::to_json(*c.result) : json(nullptr);
  j["reward_inputs"] = c.reward_inputs;
  return j;
}

json to_json(const Episode& e) {
  json calls = json::array();
  for (const auto& c : e.calls) calls.push_back(to_json(c));
  return {{"id", e.id}, {"task", e.task}, {"model", e.model}, {"meta", e.meta}, {"calls", std::move(calls)}};
}

namespace {

template <typename T>
T field(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) throw std::invalid_argument(fmt::format("{}: missing field '{}'", where, key));
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: field '{}' is malformed ({})", where, key, e.what()));
  }
}

AgentCall call_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": not a JSON object");
  AgentCall c;
  try {
    c.role = role_from_name(field<std::string>(j, "role", where));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", where, e.what()));
  }
  c.scheme = field<int>(j, "scheme", where);
  c.sample = field<int>(j, "sample", where);
  c.turn = field<int>(j, "turn", where);
  c.prompt_ids = field<std::vector<int32_t>>(j, "prompt_ids", where);
  c.response_ids = field<std::vector<int32_t>>(j, "response_ids", where);
  c.logprobs = field<std::vector<float>>(j, "logprobs", where);
  c.loss_mask = field<std::vector<uint8_t>>(j, "loss_mask", where);
  c.trainable = field<bool>(j, "trainable", where);
  c.messages = nlohmann::ordered_json::parse(field<json>(j, "messages", where).dump());
  c.response_text = field<std::string>(j, "response_text", where);
  c.parse_failure = field<std::string>(j, "parse_failure", where);
  if (const json r = field<json>(j, "result", where); !r.is_null()) {
    try {
      c.result = eval::result_from_json(r);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: result: {}", where, e.what()));
    }
  }
  c.reward_inputs = field<json>(j, "reward_inputs", where);
  if (c.trainable) {
    // What training relies on: one logprob and one mask bit per response token.
    if (c.logprobs.size() != c.response_ids.size() || c.loss_mask.size() != c.response_ids.size())
      throw std::invalid_argument(fmt::format("{}: {} response ids, {} logprobs, {} mask entries: a trainable call "
                                              "needs one of each per token",
                                              where, c.response_ids.size(), c.logprobs.size(), c.loss_mask.size()));
  }
  return c;
}

}  // namespace

Episode episode_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("episode: not a JSON object");
  Episode e;
  e.id = field<std::string>(j, "id", "episode");
  const std::string where = "episode " + e.id;
  e.task = field<std::string>(j, "task", where);
  e.model = field<std::string>(j, "model", where);
  e.meta = field<json>(j, "meta", where);
  const json calls = field<json>(j, "calls", where);
  if (!calls.is_array()) throw std::invalid_argument(where + ": 'calls' is not an array");
  for (size_t i = 0; i < calls.size(); ++i) e.calls.push_back(call_from_json(calls[i], fmt::format("{}, call {}", where, i)));
  return e;
}

std::vector<Episode> load_episodes(const std::filesystem::path& path) {
  std::vector<Episode> out;
  for (const auto& [n, line] : core::read_jsonl_lines(path)) {  // a run killed mid-write tears the last line
    try {
      out.push_back(episode_from_json(json::parse(line)));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: {}", path.string(), n, e.what()));
    }
  }
  return out;
}

}  // namespace vinci::agents
