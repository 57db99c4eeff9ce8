// The skills an agent can retrieve from: skill records with their BM25 index.
//
// The skills an agent can retrieve from: a set of skill records with their BM25 index, built at
// load and updated on insert. It is a value in memory; SkillStore persists it.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "skills/bm25.h"
#include "skills/skill.h"

namespace vinci::skills {

struct SearchFilter {
  std::vector<Status> statuses = {Status::admitted};  // empty: any status
  std::string backend;                                // "cuda" or "triton"; empty: any
  std::string gpu_arch;                               // e.g. "sm_90": skills whose arch does not admit it are left out
};

struct SearchHit {
  const Skill* skill;
  double score;
};

class Library {
 public:
  explicit Library(Bm25Params params = {}, FieldWeights weights = kDefaultFieldWeights);
  explicit Library(std::vector<Skill> skills, Bm25Params params = {}, FieldWeights weights = kDefaultFieldWeights);
  Library(Library&&) = default;

  // Adds a skill and indexes it; a name already present is an error.
  const Skill& add(Skill skill);
  size_t size() const { return skills_.size(); }
  const std::vector<Skill>& skills() const { return skills_; }
  const Skill* find(const std::string& name) const;

  std::vector<SearchHit> search(const std::string& query, size_t k, const SearchFilter& filter = {}) const;

  // The tokens a skill is indexed under, per field.
  static std::array<std::vector<std::string>, kFieldCount> fields_of(const Skill& s);

 private:
  std::vector<Skill> skills_;
  std::unordered_map<std::string, size_t> by_name_;
  Bm25Index index_;
};

}  // namespace vinci::skills
