#include "skills/bm25.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::skills {

Bm25Variant bm25_variant_from_string(const std::string& s) {
  if (s == "lucene") return Bm25Variant::lucene;
  if (s == "robertson" || s == "okapi") return Bm25Variant::robertson;
  throw std::invalid_argument(fmt::format("'{}' is not a BM25 variant (lucene, robertson)", s));
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
  std::unordered_map<uint32_t, float> tf;
  double length = 0;
  for (size_t f = 0; f < kFieldCount; ++f) {
    const auto w = static_cast<float>(weights_[f]);
    length += weights_[f] * static_cast<double>(fields[f].size());
    for (const auto& token : fields[f]) {
      auto [it, inserted] = vocabulary_.try_emplace(token, static_cast<uint32_t>(postings_.size()));
      if (inserted) postings_.emplace_back();
      tf[it->second] += w;
    }
  }
  for (const auto& [term, f] : tf) postings_[term].push_back({doc, f});
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
  // Per-thread scratch reused across calls: only the documents a query touches are reset.
  thread_local std::vector<double> score;
  thread_local std::vector<uint32_t> stamp;
  thread_local uint32_t generation = 0;
  thread_local std::vector<uint32_t> touched;
  if (score.size() < doc_len_.size()) {
    score.resize(doc_len_.size());
    stamp.resize(doc_len_.size(), 0);
  }
  if (++generation == 0) {  // wrapped: no stamp may look current
    std::fill(stamp.begin(), stamp.end(), 0);
    generation = 1;
  }
  touched.clear();
  const uint32_t gen = generation;
  accumulate(query, [&](uint32_t doc, double s) {
    if (stamp[doc] != gen) {
      stamp[doc] = gen;
      score[doc] = 0;
      touched.push_back(doc);
    }
    score[doc] += s;
  });
  const auto better = [&](const Bm25Hit& a, const Bm25Hit& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  };
  std::vector<Bm25Hit> heap;  // the k best so far, worst on top
  heap.reserve(k + 1);
  for (const uint32_t doc : touched) {
    const Bm25Hit hit{doc, score[doc]};
    if (hit.score <= 0 || k == 0) continue;
    if (heap.size() == k && !better(hit, heap.front())) continue;
    if (accept && !accept(doc)) continue;
    heap.push_back(hit);
    std::push_heap(heap.begin(), heap.end(), better);
    if (heap.size() > k) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.pop_back();
    }
  }
  std::sort(heap.begin(), heap.end(), better);
  return heap;
}

}  // namespace vinci::skills
