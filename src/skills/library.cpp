#include "skills/library.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "skills/code_tokenizer.h"

namespace vinci::skills {

Library::Library(Bm25Params params, FieldWeights weights) : index_(params, weights) {}

Library::Library(std::vector<Skill> skills, Bm25Params params, FieldWeights weights) : index_(params, weights) {
  skills_.reserve(skills.size());
  for (auto& s : skills) add(std::move(s));
}

std::array<std::vector<std::string>, kFieldCount> Library::fields_of(const Skill& s) {
  std::array<std::vector<std::string>, kFieldCount> fields;
  fields[kName] = tokenize_code_text(s.name);
  fields[kDescription] = tokenize_code_text(s.description);
  for (const auto& tag : s.tags)
    for (auto& t : tokenize_code_text(tag)) fields[kTags].push_back(std::move(t));
  fields[kContent] = tokenize_code_text(s.content);
  return fields;
}

const Skill& Library::add(Skill skill) {
  if (by_name_.count(skill.name))
    throw std::invalid_argument(fmt::format("skill '{}' is already in the library", skill.name));
  index_.add(fields_of(skill));
  by_name_.emplace(skill.name, skills_.size());
  skills_.push_back(std::move(skill));
  return skills_.back();
}

const Skill* Library::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &skills_[it->second];
}

std::vector<SearchHit> Library::search(const std::string& query, size_t k, const SearchFilter& filter) const {
  const auto accept = [&](uint32_t doc) {
    const Skill& s = skills_[doc];
    if (!filter.statuses.empty() &&
        std::find(filter.statuses.begin(), filter.statuses.end(), s.status) == filter.statuses.end())
      return false;
    if (!filter.backend.empty() && std::find(s.backends.begin(), s.backends.end(), filter.backend) == s.backends.end())
      return false;
    return arch_supports(s.arch, filter.gpu_arch);
  };
  std::vector<SearchHit> hits;
  for (const auto& h : index_.search(tokenize_code_text(query), k, accept)) hits.push_back({&skills_[h.doc], h.score});
  return hits;
}

}  // namespace vinci::skills
