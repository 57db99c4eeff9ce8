#include "agents/episode.h"

#include <stdexcept>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "core/enum_names.h"
#include "core/files.h"

namespace vinci::agents {

using nlohmann::json;

namespace {
constexpr std::array<core::EnumName<Role>, 4> kRoles{
    {{Role::selection, "selection"}, {Role::policy, "policy"}, {Role::summary, "summary"}, {Role::verify, "verify"}}};
}  // namespace

std::string_view to_string(Role role) { return core::enum_to_string(kRoles, role); }

Role role_from_string(std::string_view s) { return core::enum_from_string(kRoles, s, "role"); }

AgentCall record_call(Role role, const llm::GenerationRequest& request, const llm::GenerationResult& result) {
  AgentCall c;
  c.role = role;
  // A request sent as raw ids (no messages) keeps none.
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

namespace {

// The JSON form of each record, as episodes.jsonl has always held it ("correct" beside a turn's
// verdict included: files are read by people and scripts too).
json reward_inputs_json(const RewardInputs& inputs) {
  return std::visit(
      [](const auto& r) -> json {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, TurnInputs>) {
          json j = {{"correct", r.correct()},
                    {"verdict", r.verdict ? std::string(eval::to_string(*r.verdict)) : std::string("no_answer")},
                    {"speedup", r.speedup},
                    {"coverage", r.coverage}};
          if (r.speedup_compile) j["speedup_compile"] = *r.speedup_compile;
          return j;
        } else if constexpr (std::is_same_v<T, SelectionInputs>) {
          return {{"skills", r.skills}, {"dropped", r.dropped}};
        } else if constexpr (std::is_same_v<T, SummaryInputs>) {
          json admitted = json::array();
          for (const auto& a : r.admitted) admitted.push_back({{"skill", a.skill}, {"speedup", a.speedup}});
          return {{"proposed", r.proposed}, {"refused", r.refused}, {"admitted", std::move(admitted)}};
        } else {
          return json::object();
        }
      },
      inputs);
}

}  // namespace

json to_json(const AgentCall& c) {
  json j;
  j["role"] = to_string(c.role);
  j["scheme"] = c.scheme;
  j["sample"] = c.sample;
  j["turn"] = c.turn;
  j["prompt_ids"] = c.prompt_ids;
  j["response_ids"] = c.response_ids;
  j["logprobs"] = c.logprobs;
  j["loss_mask"] = c.loss_mask;
  j["trainable"] = c.trainable;
  j["messages"] = llm::to_json(c.messages);
  j["response_text"] = c.response_text;
  j["parse_failure"] = c.parse_failure;
  j["result"] = c.result ? eval::to_json(*c.result) : json(nullptr);
  j["reward_inputs"] = reward_inputs_json(c.reward_inputs);
  return j;
}

json to_json(const Episode& e) {
  json calls = json::array();
  for (const auto& c : e.calls) calls.push_back(to_json(c));
  return {{"id", e.id}, {"task", e.task}, {"model", e.model}, {"meta", to_json(e.meta)}, {"calls", std::move(calls)}};
}

json to_json(const EpisodeMeta& m) {
  json j = {{"protocol", m.protocol}, {"turns", m.turns}, {"samples", m.samples}, {"seed", m.seed}};
  if (!m.strategy.empty()) j["strategy"] = m.strategy;
  if (m.protocol != "kernelbench") {
    j["schemes"] = m.schemes;
    j["skills_shown"] = m.skills_shown;
    j["library_size"] = m.library_size;
  }
  if (m.temperature) j["temperature"] = *m.temperature;
  if (m.max_new_tokens) j["max_new_tokens"] = *m.max_new_tokens;
  return j;
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

// One of the record's numbers; absent or null reads as 0, as the policy agent writes 0 for a turn
// without a measurement.
double reward_number(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return 0.0;
  if (!it->is_number())
    throw std::invalid_argument(fmt::format("{}: reward_inputs.{} must be a number, got {}", where, key, it->dump()));
  return it->get<double>();
}

std::vector<std::string> reward_names(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    throw std::invalid_argument(fmt::format("{}: reward_inputs.{} must be an array of names", where, key));
  std::vector<std::string> out;
  for (const auto& name : *it) {
    if (!name.is_string())
      throw std::invalid_argument(fmt::format("{}: reward_inputs.{} holds {}, not a name", where, key, name.dump()));
    out.push_back(name.get<std::string>());
  }
  return out;
}

TurnInputs turn_inputs_from_json(const json& j, const std::optional<eval::Result>& result, const std::string& where) {
  TurnInputs t;
  if (const auto it = j.find("verdict"); it != j.end()) {
    if (!it->is_string())
      throw std::invalid_argument(fmt::format("{}: reward_inputs.verdict must be a string, got {}", where, it->dump()));
    if (*it != "no_answer") {
      try {
        t.verdict = eval::verdict_from_string(it->get<std::string>());
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("{}: reward_inputs.verdict: {}", where, e.what()));
      }
    }
  } else if (result) {
    t.verdict = result->verdict;
  } else {
    throw std::invalid_argument(
        fmt::format("{}: reward_inputs has no 'verdict' and the call no result to take it from", where));
  }
  t.speedup = reward_number(j, "speedup", where);
  t.coverage = reward_number(j, "coverage", where);
  if (j.contains("speedup_compile") && !j["speedup_compile"].is_null())
    t.speedup_compile = reward_number(j, "speedup_compile", where);
  return t;
}

SummaryInputs summary_inputs_from_json(const json& j, const std::string& where) {
  SummaryInputs s;
  s.proposed = reward_names(j, "proposed", where);
  s.refused = reward_names(j, "refused", where);
  if (const auto it = j.find("admitted"); it != j.end()) {  // absent until verification ran
    if (!it->is_array()) throw std::invalid_argument(fmt::format("{}: reward_inputs.admitted must be an array", where));
    for (const auto& a : *it) {
      if (!a.is_object() || !a.contains("skill") || !a["skill"].is_string() || !a.contains("speedup") ||
          !a["speedup"].is_number())
        throw std::invalid_argument(
            fmt::format("{}: reward_inputs.admitted entries need a 'skill' name and a numeric "
                        "'speedup', got {}",
                        where, a.dump()));
      s.admitted.push_back({a["skill"].get<std::string>(), a["speedup"].get<double>()});
    }
  }
  return s;
}

// Which record a call holds follows from its role; {} is a call whose inputs were never recorded.
RewardInputs reward_inputs_from_json(const json& j, Role role, const std::optional<eval::Result>& result,
                                     const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(fmt::format("{}: reward_inputs is not a JSON object", where));
  if (j.empty()) return std::monostate{};
  switch (role) {
    case Role::policy:
    case Role::verify: return turn_inputs_from_json(j, result, where);
    case Role::selection: return SelectionInputs{reward_names(j, "skills", where), reward_names(j, "dropped", where)};
    case Role::summary: return summary_inputs_from_json(j, where);
  }
  return std::monostate{};
}

AgentCall call_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": not a JSON object");
  AgentCall c;
  try {
    c.role = role_from_string(field<std::string>(j, "role", where));
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
  c.messages =
      llm::chat_messages_from_json(nlohmann::ordered_json::parse(field<json>(j, "messages", where).dump()), where);
  c.response_text = field<std::string>(j, "response_text", where);
  c.parse_failure = field<std::string>(j, "parse_failure", where);
  if (const json r = field<json>(j, "result", where); !r.is_null()) {
    try {
      c.result = eval::result_from_json(r);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: result: {}", where, e.what()));
    }
  }
  c.reward_inputs = reward_inputs_from_json(field<json>(j, "reward_inputs", where), c.role, c.result, where);
  if (c.trainable) {
    // What training relies on: one logprob and one mask bit per response token.
    if (c.logprobs.size() != c.response_ids.size() || c.loss_mask.size() != c.response_ids.size())
      throw std::invalid_argument(
          fmt::format("{}: {} response ids, {} logprobs, {} mask entries: a trainable call "
                      "needs one of each per token",
                      where, c.response_ids.size(), c.logprobs.size(), c.loss_mask.size()));
  }
  return c;
}

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

template <typename T>
void optional_field(const json& j, const char* key, const std::string& where, T& into) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    if constexpr (is_optional<T>::value)
      into = it->get<typename T::value_type>();
    else
      into = it->get<T>();
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: meta.{} is malformed ({})", where, key, e.what()));
  }
}

// Every key is optional: the record is informational, and older files lack "protocol".
EpisodeMeta meta_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": 'meta' is not an object");
  EpisodeMeta m;
  optional_field(j, "protocol", where, m.protocol);
  optional_field(j, "strategy", where, m.strategy);
  optional_field(j, "turns", where, m.turns);
  optional_field(j, "samples", where, m.samples);
  optional_field(j, "schemes", where, m.schemes);
  optional_field(j, "seed", where, m.seed);
  optional_field(j, "skills_shown", where, m.skills_shown);
  optional_field(j, "library_size", where, m.library_size);
  optional_field(j, "temperature", where, m.temperature);
  optional_field(j, "max_new_tokens", where, m.max_new_tokens);
  return m;
}

}  // namespace

Episode episode_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("episode: not a JSON object");
  Episode e;
  e.id = field<std::string>(j, "id", "episode");
  const std::string where = "episode " + e.id;
  e.task = field<std::string>(j, "task", where);
  e.model = field<std::string>(j, "model", where);
  e.meta = meta_from_json(field<json>(j, "meta", where), where);
  const json calls = field<json>(j, "calls", where);
  if (!calls.is_array()) throw std::invalid_argument(where + ": 'calls' is not an array");
  for (size_t i = 0; i < calls.size(); ++i)
    e.calls.push_back(call_from_json(calls[i], fmt::format("{}, call {}", where, i)));
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
