// Okapi BM25 over an in-memory inverted index, with per-field weights (BM25F's simple form).
//
// Okapi BM25 over an in-memory inverted index, with per-field weights (BM25F's simple form: a
// term's frequency and a document's length are the weighted sums over its fields).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vinci::skills {

// lucene:    Lucene's BM25Similarity: idf = ln(1 + (N − n + 0.5)/(n + 0.5)), tf part f/(f + K).
// robertson: Robertson–Spärck Jones idf = ln((N − n + 0.5)/(n + 0.5)), tf part f·(k1+1)/(f + K),
//            with negative idfs floored to epsilon × the mean idf of the vocabulary, exactly as
//            rank_bm25's BM25Okapi does. K = k1·(1 − b + b·dl/avgdl) in both.
enum class Bm25Variant { lucene, robertson };
std::string_view to_string(Bm25Variant v);
Bm25Variant bm25_variant_from_string(std::string_view s);

struct Bm25Params {
  double k1 = 1.2;
  double b = 0.75;
  Bm25Variant variant = Bm25Variant::lucene;
  double epsilon = 0.25;  // robertson only
};

// The fields of a skill that retrieval reads, in this order.
enum Field : size_t { kName, kDescription, kTags, kContent, kFieldCount };
using FieldWeights = std::array<double, kFieldCount>;
// Name and tags are short and chosen with care, so a match there says more than one in the body.
constexpr FieldWeights kDefaultFieldWeights = {3.0, 2.0, 2.0, 1.0};

struct Bm25Hit {
  uint32_t doc;
  double score;
};

class Bm25Index {
 public:
  explicit Bm25Index(Bm25Params params = {}, FieldWeights weights = kDefaultFieldWeights);
  Bm25Index(Bm25Index&& other) noexcept;

  // Adds a document given as already-tokenized fields; returns its number (0, 1, 2, …).
  uint32_t add(const std::array<std::vector<std::string>, kFieldCount>& fields);
  size_t size() const { return doc_len_.size(); }
  size_t vocabulary_size() const { return postings_.size(); }

  // Every query token counts, repeated ones as often as they appear (as rank_bm25 does).
  // Returns the k best documents with a positive score that accept() admits, best first; ties go
  // to the earlier document. Concurrent searches are safe; add() must not run beside them.
  // Exact, but pruned: terms are scored in order of their best possible contribution, and once
  // the terms left cannot lift an unseen document into the top k, they are only looked up for the
  // documents that still can (MaxScore, term at a time).
  std::vector<Bm25Hit> search(const std::vector<std::string>& query, size_t k,
                              const std::function<bool(uint32_t)>& accept = {}) const;
  // The score of every document (0 where no query term occurs).
  std::vector<double> scores(const std::vector<std::string>& query) const;
  double idf(const std::string& term) const;

 private:
  struct Posting {
    uint32_t doc;
    float tf;  // weighted term frequency
  };
  void refresh() const;  // norms and the mean idf, after adds
  double idf_of(size_t doc_freq) const;
  template <class Visit>
  void accumulate(const std::vector<std::string>& query, Visit&& visit) const;

  Bm25Params params_;
  FieldWeights weights_;
  std::unordered_map<std::string, uint32_t> vocabulary_;
  std::vector<std::vector<Posting>> postings_;  // sorted by doc
  std::vector<double> doc_len_;
  double total_len_ = 0;
  mutable std::mutex refresh_mutex_;
  mutable std::atomic<bool> stale_{false};
  mutable std::vector<double> norm_;      // K per document
  mutable std::vector<double> max_part_;  // per term: the largest tf/(tf + K) over its postings
  mutable double mean_idf_ = 0;           // robertson's floor
};

}  // namespace vinci::skills
