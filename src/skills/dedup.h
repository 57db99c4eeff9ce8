// Near-duplicate detection on admission: MinHash over word shingles, name words as backup.
//
// Near-duplicate detection on admission: MinHash over word shingles of the content estimates the
// Jaccard similarity of two skills' bodies; the overlap of their name words backs it up. A near
// duplicate is merged into the skill it repeats, as extra evidence, instead of becoming an entry.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "skills/skill.h"

namespace vinci::skills {

struct DedupParams {
  size_t shingle_words = 3;
  double content_similarity = 0.7;  // a near duplicate on its content alone
  // …or a looser content match when the names mostly share words (write_…/…_kernel variants)
  double content_similarity_with_name = 0.45;
  double name_similarity = 0.6;
};

constexpr size_t kMinHashSize = 128;
using MinHash = std::array<uint64_t, kMinHashSize>;

MinHash minhash_of(const std::string& text, size_t shingle_words);
double estimated_jaccard(const MinHash& a, const MinHash& b);
double name_similarity(const std::string& a, const std::string& b);  // Jaccard of the '_' words

struct DuplicateMatch {
  size_t index;  // into the skills searched
  double content_similarity, name_similarity;
};

class DuplicateFinder {
 public:
  explicit DuplicateFinder(DedupParams params = {}) : params_(params) {}
  void add(const Skill& s);
  // The closest near duplicate of s among those added, if any.
  std::optional<DuplicateMatch> find(const Skill& s) const;

 private:
  DedupParams params_;
  std::vector<std::string> names_;
  std::vector<MinHash> signatures_;
};

// Folds a duplicate's evidence into the skill it repeats: verifications, episode ids and usage.
void merge_evidence(Skill& into, const Skill& duplicate);

}  // namespace vinci::skills
