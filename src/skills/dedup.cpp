#include "skills/dedup.h"

#include <algorithm>
#include <set>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "skills/code_tokenizer.h"

namespace vinci::skills {

namespace {

// SplitMix64: turns one shingle hash into kMinHashSize independent-looking hashes.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::set<std::string> name_words(const std::string& name) {
  std::set<std::string> words;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('_', start), name.size());
    if (end > start) words.insert(name.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

}  // namespace

MinHash minhash_of(const std::string& text, size_t shingle_words) {
  MinHash sig;
  sig.fill(UINT64_MAX);
  const auto tokens = tokenize_code_text(text);
  const size_t w = std::max<size_t>(1, std::min(shingle_words, tokens.size()));
  for (size_t i = 0; i + w <= tokens.size(); ++i) {
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    for (size_t j = i; j < i + w; ++j) XXH3_64bits_update(&state, tokens[j].data(), tokens[j].size() + 1);
    const uint64_t h = XXH3_64bits_digest(&state);
    for (size_t k = 0; k < kMinHashSize; ++k) sig[k] = std::min(sig[k], mix(h ^ (k * 0x2545f4914f6cdd1dULL)));
  }
  return sig;
}

double estimated_jaccard(const MinHash& a, const MinHash& b) {
  size_t same = 0;
  for (size_t k = 0; k < kMinHashSize; ++k) same += a[k] == b[k] && a[k] != UINT64_MAX;
  return static_cast<double>(same) / kMinHashSize;
}

double name_similarity(const std::string& a, const std::string& b) {
  const auto wa = name_words(a), wb = name_words(b);
  size_t common = 0;
  for (const auto& w : wa) common += wb.count(w);
  const size_t all = wa.size() + wb.size() - common;
  return all ? static_cast<double>(common) / static_cast<double>(all) : 0.0;
}

void DuplicateFinder::add(const Skill& s) {
  names_.push_back(s.name);
  signatures_.push_back(minhash_of(s.content, params_.shingle_words));
}

std::optional<DuplicateMatch> DuplicateFinder::find(const Skill& s) const {
  const MinHash sig = minhash_of(s.content, params_.shingle_words);
  std::optional<DuplicateMatch> best;
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const double content = estimated_jaccard(sig, signatures_[i]);
    const double name = name_similarity(s.name, names_[i]);
    const bool near = content >= params_.content_similarity ||
                      (name >= params_.name_similarity && content >= params_.content_similarity_with_name);
    if (near && (!best || content > best->content_similarity)) best = DuplicateMatch{i, content, name};
  }
  return best;
}

void merge_evidence(Skill& into, const Skill& duplicate) {
  into.verifications.insert(into.verifications.end(), duplicate.verifications.begin(), duplicate.verifications.end());
  auto& ids = into.provenance.episode_ids;
  for (const auto& id : duplicate.provenance.episode_ids)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  Usage& u = into.usage;
  const Usage& d = duplicate.usage;
  u.selected += d.selected;
  u.injected += d.injected;
  u.reward_injected_sum += d.reward_injected_sum;
  u.reward_injected_count += d.reward_injected_count;
  u.reward_not_injected_sum += d.reward_not_injected_sum;
  u.reward_not_injected_count += d.reward_not_injected_count;
}

}  // namespace vinci::skills
