// The skill record: daVinci-kernel's JSONL fields plus what vinci keeps about each skill.
//
// The skill record: daVinci-kernel's JSONL fields (name, description, scope, tags, content) plus
// what vinci keeps about each skill (status, targets, provenance, verification evidence, usage).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::skills {

enum class Status { candidate, admitted, retired };
std::string_view to_string(Status s);
Status status_from_string(std::string_view s);  // throws SkillError naming the value

// A skill that is malformed; field() names the offending field ("name", "content", "tags[2]").
class SkillError : public std::runtime_error {
 public:
  SkillError(std::string field, const std::string& message);
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Where a skill came from.
struct Provenance {
  std::string task;                      // the task whose trajectory it was distilled from
  std::vector<std::string> episode_ids;  // the episodes that proposed or re-proposed it
  std::optional<int64_t> training_step;
  std::string model;  // the proposing model
  bool operator==(const Provenance&) const = default;
};

// One execution of the verifier: turn 1 rerun greedily with the skill appended.
struct Verification {
  std::string task;
  double base_speedup = 0;   // the original turn-1 speedup
  double skill_speedup = 0;  // the worst speedup over the repeats with the skill
  int repeats = 0;
  bool correct = false;
  std::string gpu;
  std::string at;  // ISO-8601 UTC
  bool operator==(const Verification&) const = default;
};

// Running sums; the means are derived so that merging two records stays exact.
struct Usage {
  int64_t selected = 0;  // chosen by the selection agent
  int64_t injected = 0;  // rollouts whose policy prompt carried it
  double reward_injected_sum = 0;
  int64_t reward_injected_count = 0;
  double reward_not_injected_sum = 0;  // rollouts of the same tasks without it
  int64_t reward_not_injected_count = 0;
  std::optional<double> mean_reward_injected() const;
  std::optional<double> mean_reward_not_injected() const;
  bool operator==(const Usage&) const = default;
};

struct Skill {
  int64_t id = 0;  // 0 until stored
  std::string name, description, scope;
  std::vector<std::string> tags;
  std::string content;  // markdown: ## Motivation, ## Key Idea, ## Example
  Status status = Status::candidate;
  std::vector<std::string> backends;  // "cuda", "triton"
  std::string arch = "any";           // "any", "sm_80+", "sm_90", …
  Provenance provenance;
  std::vector<Verification> verifications;
  Usage usage;
  std::string created_at, updated_at;  // ISO-8601 UTC, set by the store
  bool operator==(const Skill&) const = default;
};

// Throws SkillError for the first problem: an empty or non-snake_case name, an empty description,
// a missing content section, an unknown backend, a malformed arch.
void validate(const Skill& s);
bool is_snake_case(const std::string& name);
// True when arch ("any", "sm_80+", "sm_90") admits a GPU of the given compute capability ("sm_90").
bool arch_supports(const std::string& arch, const std::string& gpu_arch);

// JSON in daVinci-kernel's JSONL layout, with vinci's fields added. from_json accepts a bare
// daVinci line (only the five fields); what is missing takes the defaults above (backends: cuda).
nlohmann::json to_json(const Skill& s);
Skill skill_from_json(const nlohmann::json& j);  // throws SkillError naming the field
nlohmann::json to_json(const Verification& v);
nlohmann::json to_json(const Provenance& p);
Provenance provenance_from_json(const nlohmann::json& j);  // throws SkillError naming provenance.<field>

// The UTC time now, as stored in created_at/updated_at.
std::string utc_now();

}  // namespace vinci::skills
