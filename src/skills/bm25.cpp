#include "skills/bm25.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "core/enum_names.h"

namespace vinci::skills {

namespace {
// "okapi" is another name for Robertson's: to_string gives the first spelling of a value.
constexpr std::array<core::EnumName<Bm25Variant>, 3> kVariants{
    {{Bm25Variant::lucene, "lucene"}, {Bm25Variant::robertson, "robertson"}, {Bm25Variant::robertson, "okapi"}}};
}  // namespace

std::string_view to_string(Bm25Variant v) { return core::enum_to_string(kVariants, v); }

Bm25Variant bm25_variant_from_string(std::string_view s) {
  return core::enum_from_string(kVariants, s, "BM25 variant");
}

Bm25Index::Bm25Index(Bm25Params params, FieldWeights weights) : params_(params), weights_(weights) {}

Bm25Index::Bm25Index(Bm25Index&& other) noexcept
    : params_(other.params_),
      weights_(other.weights_),
      vocabulary_(std::move(other.vocabulary_)),
      postings_(std::move(other.postings_)),
      doc_len_(std::move(other.doc_len_)),
      total_len_(other.total_len_),
      stale_(true) {}

uint32_t Bm25Index::add(const std::array<std::vector<std::string>, kFieldCount>& fields) {
  const auto doc = static_cast<uint32_t>(doc_len_.size());
  std::vector<std::pair<uint32_t, float>> terms;  // (term, weight) per occurrence, merged below
  double length = 0;
  for (size_t f = 0; f < kFieldCount; ++f) {
    const auto w = static_cast<float>(weights_[f]);
    length += weights_[f] * static_cast<double>(fields[f].size());
    for (const auto& token : fields[f]) {
      auto [it, inserted] = vocabulary_.try_emplace(token, static_cast<uint32_t>(postings_.size()));
      if (inserted) postings_.emplace_back();
      terms.emplace_back(it->second, w);
    }
  }
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < terms.size();) {
    float tf = 0;
    const uint32_t term = terms[i].first;
    for (; i < terms.size() && terms[i].first == term; ++i) tf += terms[i].second;
    postings_[term].push_back({doc, tf});
  }
  doc_len_.push_back(length);
  total_len_ += length;
  stale_.store(true, std::memory_order_release);
  return doc;
}

double Bm25Index::idf_of(size_t doc_freq) const {
  const double N = static_cast<double>(doc_len_.size()), n = static_cast<double>(doc_freq);
  if (params_.variant == Bm25Variant::lucene) return std::log(1.0 + (N - n + 0.5) / (n + 0.5));
  const double idf = std::log(N - n + 0.5) - std::log(n + 0.5);
  return idf < 0 ? params_.epsilon * mean_idf_ : idf;
}

void Bm25Index::refresh() const {
  if (!stale_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(refresh_mutex_);
  if (!stale_.load(std::memory_order_relaxed)) return;
  const double N = static_cast<double>(doc_len_.size());
  const double avgdl = N > 0 ? total_len_ / N : 0;
  norm_.resize(doc_len_.size());
  for (size_t d = 0; d < doc_len_.size(); ++d)
    norm_[d] = params_.k1 * (1 - params_.b + (avgdl > 0 ? params_.b * doc_len_[d] / avgdl : 0));
  // The tightest bound on each term's contribution, for pruned search.
  max_part_.assign(postings_.size(), 0.0);
  for (size_t t = 0; t < postings_.size(); ++t)
    for (const Posting& p : postings_[t]) max_part_[t] = std::max(max_part_[t], p.tf / (p.tf + norm_[p.doc]));
  double idf_sum = 0;  // rank_bm25 averages the raw idfs, negative ones included
  for (const auto& p : postings_) idf_sum += std::log(N - p.size() + 0.5) - std::log(p.size() + 0.5);
  mean_idf_ = postings_.empty() ? 0 : idf_sum / static_cast<double>(postings_.size());
  stale_.store(false, std::memory_order_release);
}

double Bm25Index::idf(const std::string& term) const {
  refresh();
  const auto it = vocabulary_.find(term);
  return it == vocabulary_.end() ? 0 : idf_of(postings_[it->second].size());
}

template <class Visit>
void Bm25Index::accumulate(const std::vector<std::string>& query, Visit&& visit) const {
  refresh();
  const double numerator = params_.variant == Bm25Variant::lucene ? 1.0 : params_.k1 + 1.0;
  for (const auto& token : query) {
    const auto it = vocabulary_.find(token);
    if (it == vocabulary_.end()) continue;
    const auto& list = postings_[it->second];
    const double weight = idf_of(list.size()) * numerator;
    for (const Posting& p : list) visit(p.doc, weight * p.tf / (p.tf + norm_[p.doc]));
  }
}

std::vector<double> Bm25Index::scores(const std::vector<std::string>& query) const {
  std::vector<double> out(doc_len_.size(), 0.0);
  accumulate(query, [&](uint32_t doc, double s) { out[doc] += s; });
  return out;
}

std::vector<Bm25Hit> Bm25Index::search(const std::vector<std::string>& query, size_t k,
                                       const std::function<bool(uint32_t)>& accept) const {
  refresh();
  std::vector<Bm25Hit> hits;
  if (k == 0 || doc_len_.empty()) return hits;
  // Repeated query tokens are one term with a multiplied weight; same scores, one pass.
  struct Term {
    const std::vector<Posting>* list;
    double weight;  // multiplicity × idf × numerator
    double bound;   // the most this term can add to any document
  };
  std::vector<Term> terms;
  {
    std::unordered_map<uint32_t, int> count;
    for (const auto& token : query)
      if (const auto it = vocabulary_.find(token); it != vocabulary_.end()) ++count[it->second];
    const double numerator = params_.variant == Bm25Variant::lucene ? 1.0 : params_.k1 + 1.0;
    for (const auto& [term, n] : count) {
      const double weight = n * idf_of(postings_[term].size()) * numerator;
      // The slack covers rounding: the bound must never fall below a real contribution.
      terms.push_back({&postings_[term], weight, weight > 0 ? weight * max_part_[term] * (1 + 1e-12) : 0.0});
    }
  }
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.bound > b.bound; });
  // A negative weight (Robertson's floor can be) makes partial scores overestimate: no pruning.
  const bool prunable = std::all_of(terms.begin(), terms.end(), [](const Term& t) { return t.weight >= 0; });
  std::vector<double> rest(terms.size() + 1, 0.0);  // rest[i]: the bound of terms i, i+1, …
  for (size_t i = terms.size(); i-- > 0;) rest[i] = rest[i + 1] + terms[i].bound;

  // Per-thread scratch reused across calls: only the documents a query touches are reset.
  thread_local std::vector<double> score;
  thread_local std::vector<uint32_t> stamp;
  thread_local std::vector<int8_t> admitted;  // accept(), asked at most once per document
  thread_local uint32_t generation = 0;
  thread_local std::vector<uint32_t> touched;
  if (score.size() < doc_len_.size()) {
    score.resize(doc_len_.size());
    stamp.resize(doc_len_.size(), 0);
    admitted.resize(doc_len_.size());
  }
  if (++generation == 0) {  // wrapped: no stamp may look current
    std::fill(stamp.begin(), stamp.end(), 0);
    generation = 1;
  }
  touched.clear();
  const uint32_t gen = generation;
  const auto is_admitted = [&](uint32_t doc) {
    if (admitted[doc] < 0) admitted[doc] = !accept || accept(doc) ? 1 : 0;
    return admitted[doc] == 1;
  };
  const auto better = [&](const Bm25Hit& a, const Bm25Hit& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  };
  // The k-th best admitted score so far: documents that cannot reach it are out.
  const auto threshold = [&]() {
    std::vector<double> best;
    best.reserve(k + 1);
    for (const uint32_t doc : touched) {
      if (best.size() == k && score[doc] <= best.front()) continue;
      if (!is_admitted(doc)) continue;
      best.push_back(score[doc]);
      std::push_heap(best.begin(), best.end(), std::greater<>());
      if (best.size() > k) {
        std::pop_heap(best.begin(), best.end(), std::greater<>());
        best.pop_back();
      }
    }
    return best.size() == k ? best.front() : -std::numeric_limits<double>::infinity();
  };

  size_t i = 0;
  for (; i < terms.size(); ++i) {
    // Once the terms left cannot lift an unseen document to the k-th score, stop adding documents.
    if (prunable && i > 0 && !touched.empty() && rest[i] < threshold()) break;
    const double weight = terms[i].weight;
    for (const Posting& p : *terms[i].list) {
      if (stamp[p.doc] != gen) {
        stamp[p.doc] = gen;
        score[p.doc] = 0;
        admitted[p.doc] = -1;
        touched.push_back(p.doc);
      }
      score[p.doc] += weight * p.tf / (p.tf + norm_[p.doc]);
    }
  }
  std::vector<uint32_t> candidates;
  if (i < terms.size()) {
    const double theta = threshold();
    for (const uint32_t doc : touched)
      if (score[doc] + rest[i] >= theta && is_admitted(doc)) candidates.push_back(doc);
    std::sort(candidates.begin(), candidates.end());
    // The remaining terms are looked up for the candidates only, galloping through sorted lists.
    for (; i < terms.size(); ++i) {
      const auto& list = *terms[i].list;
      auto from = list.begin();
      for (const uint32_t doc : candidates) {
        from = std::lower_bound(from, list.end(), doc, [](const Posting& p, uint32_t d) { return p.doc < d; });
        if (from == list.end()) break;
        if (from->doc == doc) score[doc] += terms[i].weight * from->tf / (from->tf + norm_[doc]);
      }
    }
  } else {
    candidates = touched;
  }
  for (const uint32_t doc : candidates) {
    const Bm25Hit hit{doc, score[doc]};
    if (hit.score <= 0) continue;
    if (hits.size() == k && !better(hit, hits.front())) continue;
    if (!is_admitted(doc)) continue;
    hits.push_back(hit);
    std::push_heap(hits.begin(), hits.end(), better);
    if (hits.size() > k) {
      std::pop_heap(hits.begin(), hits.end(), better);
      hits.pop_back();
    }
  }
  std::sort(hits.begin(), hits.end(), better);
  return hits;
}

}  // namespace vinci::skills
