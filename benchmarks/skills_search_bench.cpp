// Skill retrieval at scale: index build time and search latency over 1k, 10k and 100k synthetic
// skills of about 300 words, for 10-term queries. The goal is a p50 search latency of 1 ms or less
// at 100k. Run: build/benchmarks/skills_search_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "skills/library.h"

using namespace vinci::skills;

namespace {

// A Zipf(1.0) vocabulary of 30k words: a few words are everywhere, most are rare, as in prose.
class Vocabulary {
 public:
  explicit Vocabulary(size_t size) {
    // Words are letters only (syllables), as prose is: a word like "w123" would split into parts
    // that every document shares. Some ranks carry CUDA identifiers, which split on purpose.
    const char* technical[] = {"float4",    "__shfl_down_sync", "sm_90",  "blockDim.x",    "cp.async",
                               "wgmma",     "BLOCK_M",          "tl.dot", "__syncthreads", "half2",
                               "num_warps", "__launch_bounds__"};
    const char* consonants = "bcdfghjklmnprstvwxyz";
    const char* vowels = "aeiou";
    for (size_t i = 0; i < size; ++i) {
      std::string word;
      for (size_t v = i + 1; v > 0; v /= 100) {
        word += consonants[(v % 100) / 5];
        word += vowels[v % 5];
      }
      if (i % 50 == 7 && i / 50 < std::size(technical)) word = technical[i / 50];
      words_.push_back(word);
      total_ += 1.0 / static_cast<double>(i + 1);
      cdf_.push_back(total_);
    }
  }
  const std::string& draw(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, total_)(rng);
    return words_[std::min(words_.size() - 1,
                           static_cast<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()))];
  }

 private:
  std::vector<std::string> words_;
  std::vector<double> cdf_;
  double total_ = 0;
};

std::string sentence(const Vocabulary& v, std::mt19937_64& rng, size_t words) {
  std::string out;
  for (size_t i = 0; i < words; ++i) out += (i ? " " : "") + v.draw(rng);
  return out;
}

std::vector<Skill> synthetic_skills(size_t n) {
  static const Vocabulary vocabulary(30000);
  std::mt19937_64 rng(n);
  std::vector<Skill> skills(n);
  for (size_t i = 0; i < n; ++i) {
    Skill& s = skills[i];
    s.name = fmt::format("skill_{}", i);
    s.description = sentence(vocabulary, rng, 25);
    s.scope = sentence(vocabulary, rng, 8);
    for (int t = 0; t < 5; ++t) s.tags.push_back(vocabulary.draw(rng));
    s.content = "## Motivation\n" + sentence(vocabulary, rng, 90) + "\n## Key Idea\n" + sentence(vocabulary, rng, 110) +
                "\n## Example\n```cuda\n" + sentence(vocabulary, rng, 60) + "\n```\n";
    s.status = Status::admitted;
    s.backends = {"cuda"};
  }
  return skills;
}

std::vector<std::string> queries(size_t count) {
  static const Vocabulary vocabulary(30000);
  std::mt19937_64 rng(12345);
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.push_back(sentence(vocabulary, rng, 10));
  return out;
}

const Library& library_of(size_t n) {
  static std::map<size_t, std::unique_ptr<Library>> cache;
  auto& slot = cache[n];
  if (!slot) slot = std::make_unique<Library>(synthetic_skills(n));
  return *slot;
}

void BM_BuildIndex(benchmark::State& state) {
  const auto skills = synthetic_skills(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    Library library(skills);
    benchmark::DoNotOptimize(library.size());
  }
  state.counters["skills"] = static_cast<double>(skills.size());
}

void BM_Search(benchmark::State& state) {
  const Library& library = library_of(static_cast<size_t>(state.range(0)));
  const auto qs = queries(1000);
  std::vector<double> latencies_us;
  size_t i = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto hits = library.search(qs[i++ % qs.size()], 20);
    latencies_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    benchmark::DoNotOptimize(hits.data());
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  const auto pct = [&](double p) { return latencies_us[static_cast<size_t>(p * (latencies_us.size() - 1))]; };
  state.counters["p50_us"] = pct(0.5);
  state.counters["p99_us"] = pct(0.99);
}

}  // namespace

BENCHMARK(BM_BuildIndex)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Search)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_MAIN();
