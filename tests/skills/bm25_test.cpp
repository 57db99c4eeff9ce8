#include "skills/bm25.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "skills/code_tokenizer.h"

using namespace vinci::skills;
using Tokens = std::vector<std::string>;

namespace bm25_test {

Bm25Index content_index(const std::vector<Tokens>& docs, Bm25Params params) {
  Bm25Index index(params, {1, 1, 1, 1});
  for (const auto& d : docs) index.add({Tokens{}, Tokens{}, Tokens{}, d});
  return index;
}

// N = 2, n = 1, f = 1, dl = avgdl: idf = ln(1 + 1.5/1.5) = ln 2, tf part = 1/(1 + 1.2) → 0.3150669.
TEST(Bm25, LuceneHandComputed) {
  const auto index = content_index({{"a"}, {"b"}}, {1.2, 0.75, Bm25Variant::lucene});
  EXPECT_NEAR(index.scores({"a"})[0], 0.3150669, 1e-7);
  EXPECT_EQ(index.scores({"a"})[1], 0.0);
}

// dl = 3, avgdl = 2: K = 1.2·(0.25 + 0.75·1.5) = 1.65, score = ln 2 · 1/(1 + 1.65) = 0.2615650.
TEST(Bm25, LuceneLengthNormalization) {
  const auto index = content_index({{"a", "x", "y"}, {"b"}}, {1.2, 0.75, Bm25Variant::lucene});
  EXPECT_NEAR(index.scores({"a"})[0], 0.2615650, 1e-7);
  // f = 2 in a document of average length: ln 2 · 2/(2 + 1.2) = 0.4332169.
  const auto twice = content_index({{"a", "a"}, {"b", "c"}}, {1.2, 0.75, Bm25Variant::lucene});
  EXPECT_NEAR(twice.scores({"a"})[0], 0.4332169, 1e-7);
}

// N = 3, n = 1: idf = ln(2.5/1.5) = 0.5108256; dl = avgdl, k1 = 1.5: tf part = 2.5/2.5 = 1.
TEST(Bm25, RobertsonHandComputed) {
  const auto index = content_index({{"a", "b"}, {"b", "c"}, {"b", "d"}}, {1.5, 0.75, Bm25Variant::robertson, 0.25});
  EXPECT_NEAR(index.scores({"a"})[0], 0.5108256, 1e-7);
  // "b" is in all 3 documents: raw idf ln(0.5/3.5) = −1.9459101 < 0, floored to ε·mean idf, where the
  // mean over {a, b, c, d} = (3·0.5108256 − 1.9459101)/4 = −0.1033583, so the floor is −0.0258396
  // (negative, as rank_bm25 computes it).
  EXPECT_NEAR(index.idf("b"), -0.0258396, 1e-7);
  EXPECT_NEAR(index.scores({"b"})[1], -0.0258396, 1e-7);
}

TEST(Bm25, RepeatedQueryTermsCountEachTime) {
  const auto index = content_index({{"a"}, {"b"}}, {1.2, 0.75, Bm25Variant::lucene});
  EXPECT_NEAR(index.scores({"a", "a"})[0], 2 * 0.3150669, 2e-7);
}

TEST(Bm25, FieldWeightsScaleTermFrequencyAndLength) {
  // Weight 3 on the name: "a" in the name counts as f = 3 in a document of length 3.
  Bm25Index index({1.2, 0.75, Bm25Variant::lucene}, {3, 1, 1, 1});
  index.add({Tokens{"a"}, Tokens{}, Tokens{}, Tokens{}});
  index.add({Tokens{}, Tokens{}, Tokens{}, Tokens{"b", "c", "d"}});
  // avgdl = 3 = dl, K = 1.2: ln 2 · 3/(3 + 1.2) = 0.4951051.
  EXPECT_NEAR(index.scores({"a"})[0], 0.4951051, 1e-7);
}

TEST(Bm25, SearchRanksFiltersAndBreaksTiesByOrder) {
  const auto index = content_index({{"x", "a"}, {"a", "a", "y"}, {"z"}, {"a", "q"}}, {});
  const auto hits = index.search({"a"}, 10);
  ASSERT_EQ(hits.size(), 3u);  // the document without "a" is not returned
  EXPECT_EQ(hits[0].doc, 1u);
  EXPECT_EQ(hits[1].doc, 0u);  // docs 0 and 3 tie: the earlier first
  EXPECT_EQ(hits[2].doc, 3u);
  EXPECT_EQ(index.search({"a"}, 1).size(), 1u);
  const auto filtered = index.search({"a"}, 10, [](uint32_t d) { return d != 1; });
  ASSERT_EQ(filtered.size(), 2u);
  EXPECT_EQ(filtered[0].doc, 0u);
  EXPECT_TRUE(index.search({"nothing"}, 5).empty());
}

TEST(Bm25, InsertUpdatesStatistics) {
  Bm25Index index({1.2, 0.75, Bm25Variant::lucene}, {1, 1, 1, 1});
  index.add({Tokens{}, Tokens{}, Tokens{}, Tokens{"a"}});
  EXPECT_NEAR(index.idf("a"), std::log(1 + 0.5 / 1.5), 1e-12);  // N = 1, n = 1
  index.add({Tokens{}, Tokens{}, Tokens{}, Tokens{"b"}});
  EXPECT_NEAR(index.scores({"a"})[0], 0.3150669, 1e-7);  // now the N = 2 case above
}

// Scores and rankings against rank_bm25's BM25Okapi on 240 documents (make_bm25_golden.py).
TEST(Bm25, MatchesRankBm25Golden) {
  const auto golden = nlohmann::json::parse(
      vinci::core::read_file(std::string(VINCI_SOURCE_ROOT) + "/tests/fixtures/skills/bm25_golden.json"));
  const auto& documents = golden["documents"];
  ASSERT_GE(documents.size(), 200u);
  std::vector<Tokens> docs;
  for (size_t i = 0; i < documents.size(); ++i) {
    docs.push_back(tokenize_code_text(documents[i].get<std::string>()));
    ASSERT_EQ(docs.back(), golden["document_tokens"][i].get<Tokens>()) << "document " << i;
  }
  const auto index = content_index(docs, {golden["k1"].get<double>(), golden["b"].get<double>(), Bm25Variant::robertson,
                                          golden["epsilon"].get<double>()});
  for (const auto& q : golden["queries"]) {
    const Tokens query = tokenize_code_text(q["text"].get<std::string>());
    ASSERT_EQ(query, q["tokens"].get<Tokens>()) << q["text"];
    const auto expected = q["scores"].get<std::vector<double>>();
    const auto actual = index.scores(query);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t d = 0; d < expected.size(); ++d)
      ASSERT_NEAR(actual[d], expected[d], 1e-9 * std::max(1.0, std::abs(expected[d]))) << q["text"] << " doc " << d;
    // The ranking: search() must list the positive-score documents in the golden order, wherever
    // the golden scores are not tied.
    std::vector<uint32_t> order(expected.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return expected[a] > expected[b]; });
    const auto hits = index.search(query, 20);
    for (size_t r = 0; r < hits.size(); ++r) {
      EXPECT_NEAR(hits[r].score, expected[order[r]], 1e-9) << q["text"] << " rank " << r;
      if (r + 1 < hits.size() && expected[order[r]] - expected[order[r + 1]] > 1e-9) {
        EXPECT_GT(hits[r].score, hits[r + 1].score);
      }
    }
  }
}

// The pruned search must return exactly the brute-force top k (scores() ranked), filters included.
TEST(Bm25, PrunedSearchEqualsBruteForce) {
  std::mt19937 rng(7);
  for (const auto variant : {Bm25Variant::lucene, Bm25Variant::robertson}) {
    Bm25Index index({1.2, 0.75, variant}, {1, 1, 1, 1});
    std::vector<std::string> vocabulary;
    for (int w = 0; w < 300; ++w) vocabulary.push_back("t" + std::to_string(w));
    // Zipf-like: term w drawn with weight 1/(w+1), so a few terms are in every document.
    std::vector<double> frequency;
    for (int w = 0; w < 300; ++w) frequency.push_back(1.0 / (w + 1));
    std::discrete_distribution<int> zipf(frequency.begin(), frequency.end());
    for (int d = 0; d < 2000; ++d) {
      Tokens doc;
      const int length = 5 + static_cast<int>(rng() % 120);
      for (int j = 0; j < length; ++j) doc.push_back(vocabulary[zipf(rng)]);
      index.add({Tokens{}, Tokens{}, Tokens{}, doc});
    }
    for (int q = 0; q < 200; ++q) {
      Tokens query;
      for (int j = 0; j < 1 + q % 10; ++j) query.push_back(vocabulary[zipf(rng)]);
      const size_t k = 1 + q % 25;
      const auto accept = [&](uint32_t d) { return q % 3 != 0 || d % 4 != 1; };
      const auto scores = index.scores(query);
      std::vector<uint32_t> order;
      for (uint32_t d = 0; d < scores.size(); ++d)
        if (scores[d] > 0 && accept(d)) order.push_back(d);
      std::sort(order.begin(), order.end(),
                [&](uint32_t a, uint32_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; });
      order.resize(std::min(order.size(), k));
      const auto hits = index.search(query, k, accept);
      ASSERT_EQ(hits.size(), order.size()) << "query " << q;
      for (size_t r = 0; r < hits.size(); ++r) {
        // Documents may swap only within a rounding-level tie (terms are summed in another order).
        EXPECT_NEAR(hits[r].score, scores[order[r]], 1e-9) << "query " << q << " rank " << r;
        EXPECT_NEAR(scores[hits[r].doc], scores[order[r]], 1e-9) << "query " << q << " rank " << r;
        EXPECT_TRUE(accept(hits[r].doc));
      }
    }
  }
}
}  // namespace bm25_test
