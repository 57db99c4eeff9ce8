#include "skills/skill.h"

#include <chrono>
#include <ctime>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/enum_names.h"

namespace vinci::skills {

using nlohmann::json;

namespace {
constexpr std::array<core::EnumName<Status>, 3> kStatuses{
    {{Status::candidate, "candidate"}, {Status::admitted, "admitted"}, {Status::retired, "retired"}}};
}  // namespace

std::string_view to_string(Status s) { return core::enum_to_string(kStatuses, s); }

Status status_from_string(std::string_view s) {
  try {
    return core::enum_from_string(kStatuses, s, "status");
  } catch (const std::invalid_argument& e) {
    throw SkillError("status", e.what());
  }
}

SkillError::SkillError(std::string field, const std::string& message)
    : std::runtime_error(fmt::format("field '{}': {}", field, message)), field_(std::move(field)) {}

std::optional<double> Usage::mean_reward_injected() const {
  if (reward_injected_count == 0) return std::nullopt;
  return reward_injected_sum / static_cast<double>(reward_injected_count);
}

std::optional<double> Usage::mean_reward_not_injected() const {
  if (reward_not_injected_count == 0) return std::nullopt;
  return reward_not_injected_sum / static_cast<double>(reward_not_injected_count);
}

bool is_snake_case(const std::string& name) {
  static const std::regex pattern("[a-z][a-z0-9]*(_[a-z0-9]+)*");
  return name.size() <= 128 && std::regex_match(name, pattern);
}

namespace {

bool has_section(const std::string& content, const std::string& heading) {
  std::istringstream lines(content);
  std::string line;
  while (std::getline(lines, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) line.pop_back();
    if (line == "## " + heading) return true;
  }
  return false;
}

const std::regex& arch_pattern() {
  static const std::regex pattern("any|sm_[0-9]{2,3}a?\\+?");
  return pattern;
}

int arch_number(const std::string& arch) { return std::stoi(arch.substr(3)); }

}  // namespace

bool arch_supports(const std::string& arch, const std::string& gpu_arch) {
  if (arch == "any" || gpu_arch.empty()) return true;
  if (!std::regex_match(gpu_arch, arch_pattern()) || gpu_arch == "any") return true;
  const int need = arch_number(arch), have = arch_number(gpu_arch);
  return arch.back() == '+' ? have >= need : have == need;
}

void validate(const Skill& s) {
  if (s.name.empty()) throw SkillError("name", "is empty");
  if (!is_snake_case(s.name))
    throw SkillError("name", fmt::format("'{}' is not snake_case (lowercase words joined by '_', at most 128 "
                                         "characters, e.g. warp_shuffle_reduction)",
                                         s.name));
  if (s.description.find_first_not_of(" \t\n") == std::string::npos) throw SkillError("description", "is empty");
  if (s.content.find_first_not_of(" \t\n") == std::string::npos) throw SkillError("content", "is empty");
  for (const char* section : {"Motivation", "Key Idea", "Example"})
    if (!has_section(s.content, section))
      throw SkillError("content", fmt::format("has no '## {}' section (a skill's content needs ## Motivation, "
                                              "## Key Idea and ## Example)",
                                              section));
  for (size_t i = 0; i < s.tags.size(); ++i)
    if (s.tags[i].empty()) throw SkillError(fmt::format("tags[{}]", i), "is empty");
  if (s.backends.empty()) throw SkillError("backends", "is empty (cuda, triton)");
  for (size_t i = 0; i < s.backends.size(); ++i)
    if (s.backends[i] != "cuda" && s.backends[i] != "triton")
      throw SkillError(fmt::format("backends[{}]", i), fmt::format("'{}' is not cuda or triton", s.backends[i]));
  if (!std::regex_match(s.arch, arch_pattern()))
    throw SkillError("arch", fmt::format("'{}' is not any, sm_NN or sm_NN+ (e.g. sm_80+)", s.arch));
}

json to_json(const Verification& v) {
  return {{"task", v.task},
          {"base_speedup", v.base_speedup},
          {"skill_speedup", v.skill_speedup},
          {"repeats", v.repeats},
          {"correct", v.correct},
          {"gpu", v.gpu},
          {"at", v.at}};
}

json to_json(const Provenance& p) {
  json j = {{"task", p.task}, {"episode_ids", p.episode_ids}, {"model", p.model}};
  j["training_step"] = p.training_step ? json(*p.training_step) : json(nullptr);
  return j;
}

json to_json(const Skill& s) {
  json verifications = json::array();
  for (const auto& v : s.verifications) verifications.push_back(to_json(v));
  const Usage& u = s.usage;
  json j = {{"name", s.name},
            {"description", s.description},
            {"scope", s.scope},
            {"tags", s.tags},
            {"content", s.content},
            {"status", to_string(s.status)},
            {"backends", s.backends},
            {"arch", s.arch},
            {"provenance", to_json(s.provenance)},
            {"verifications", verifications},
            {"usage",
             {{"selected", u.selected},
              {"injected", u.injected},
              {"reward_injected_sum", u.reward_injected_sum},
              {"reward_injected_count", u.reward_injected_count},
              {"reward_not_injected_sum", u.reward_not_injected_sum},
              {"reward_not_injected_count", u.reward_not_injected_count}}},
            {"created_at", s.created_at},
            {"updated_at", s.updated_at}};
  if (s.id) j["id"] = s.id;
  return j;
}

namespace {

// Typed access that names the field on a mismatch; absent or null keys keep the default.
template <class T>
void read(const json& j, const std::string& key, T& out, const std::string& prefix = "") {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    throw SkillError(prefix + key, fmt::format("has the wrong type ({})", it->type_name()));
  }
}

const json& object_at(const json& j, const std::string& key, const std::string& prefix = "") {
  static const json empty = json::object();
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return empty;
  if (!it->is_object()) throw SkillError(prefix + key, fmt::format("must be an object, not {}", it->type_name()));
  return *it;
}

}  // namespace

Provenance provenance_from_json(const json& p) {
  Provenance out;
  read(p, "task", out.task, "provenance.");
  read(p, "episode_ids", out.episode_ids, "provenance.");
  if (p.contains("training_step") && !p["training_step"].is_null()) {
    int64_t step = 0;
    read(p, "training_step", step, "provenance.");
    out.training_step = step;
  }
  read(p, "model", out.model, "provenance.");
  return out;
}

Skill skill_from_json(const json& j) {
  if (!j.is_object()) throw SkillError("(line)", fmt::format("must be a JSON object, not {}", j.type_name()));
  for (const char* required : {"name", "description", "content"})
    if (!j.contains(required)) throw SkillError(required, "is missing");
  Skill s;
  s.backends = {"cuda"};
  read(j, "id", s.id);
  read(j, "name", s.name);
  read(j, "description", s.description);
  read(j, "scope", s.scope);
  read(j, "tags", s.tags);
  read(j, "content", s.content);
  std::string status = "candidate";
  read(j, "status", status);
  s.status = status_from_string(status);
  read(j, "backends", s.backends);
  read(j, "arch", s.arch);
  s.provenance = provenance_from_json(object_at(j, "provenance"));
  if (const auto it = j.find("verifications"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) throw SkillError("verifications", "must be an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string prefix = fmt::format("verifications[{}].", i);
      const json& v = (*it)[i];
      if (!v.is_object()) throw SkillError(prefix.substr(0, prefix.size() - 1), "must be an object");
      Verification r;
      read(v, "task", r.task, prefix);
      read(v, "base_speedup", r.base_speedup, prefix);
      read(v, "skill_speedup", r.skill_speedup, prefix);
      read(v, "repeats", r.repeats, prefix);
      read(v, "correct", r.correct, prefix);
      read(v, "gpu", r.gpu, prefix);
      read(v, "at", r.at, prefix);
      s.verifications.push_back(r);
    }
  }
  const json& u = object_at(j, "usage");
  read(u, "selected", s.usage.selected, "usage.");
  read(u, "injected", s.usage.injected, "usage.");
  read(u, "reward_injected_sum", s.usage.reward_injected_sum, "usage.");
  read(u, "reward_injected_count", s.usage.reward_injected_count, "usage.");
  read(u, "reward_not_injected_sum", s.usage.reward_not_injected_sum, "usage.");
  read(u, "reward_not_injected_count", s.usage.reward_not_injected_count, "usage.");
  read(j, "created_at", s.created_at);
  read(j, "updated_at", s.updated_at);
  validate(s);
  return s;
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

}  // namespace vinci::skills
