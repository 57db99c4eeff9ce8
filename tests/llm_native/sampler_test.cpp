// The sampler (llm_native/sampler.h) on logits made by hand: top-k 1 is greedy, and draws follow the
// temperature- and top-p-truncated distribution worked out in the comments.
#include "llm_native/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <ATen/ATen.h>

namespace sampler_test {
using namespace vinci::llm;

TEST(Sampler, TopKOneIsGreedyWithLogprobZero) {
  auto logits = at::tensor({0.3f, 2.0f, -1.0f, 1.5f}).unsqueeze(0);
  SamplingParams params;
  params.top_k = 1;
  const SamplingParams* p = &params;
  at::Generator* none = nullptr;
  auto shared = make_generator(at::kCPU, 1);
  auto out = sample(logits, {&p, 1}, {&none, 1}, shared);
  EXPECT_EQ(out.ids[0], 1);
  EXPECT_EQ(out.logprobs[0], 0.0f);
}

TEST(Sampler, DrawsFromTheTruncatedTemperedDistribution) {
  // probabilities 0.5, 0.3, 0.15, 0.05; top_p 0.8 keeps the first two (the mass before the third
  // is 0.8), renormalised to 0.625 / 0.375. Temperature 0.5 squares and renormalises first:
  // 0.25, 0.09, 0.0225, 0.0025 over 0.365 = 0.6849, 0.2466, 0.0616, 0.0068 → top_p 0.8 keeps two
  // (mass before the third 0.9315), giving 0.7353 / 0.2647.
  auto logits = at::log(at::tensor({0.5f, 0.3f, 0.15f, 0.05f})).unsqueeze(0).repeat({4000, 1});
  struct Case {
    double temperature, top_p;
    std::vector<double> expected;
  };
  for (const Case& c : {Case{1.0, 0.8, {0.625, 0.375, 0, 0}}, Case{0.5, 0.8, {0.7353, 0.2647, 0, 0}},
                        Case{1.0, 1.0, {0.5, 0.3, 0.15, 0.05}}}) {
    SamplingParams params;
    params.temperature = c.temperature;
    params.top_p = c.top_p;
    std::vector<const SamplingParams*> p(4000, &params);
    std::vector<at::Generator*> none(4000, nullptr);
    auto shared = make_generator(at::kCPU, 3);
    auto out = sample(logits, p, none, shared);
    std::vector<double> counts(4, 0);
    for (size_t i = 0; i < out.ids.size(); ++i) {
      counts[out.ids[i]] += 1;
      EXPECT_NEAR(out.logprobs[i], std::log(c.expected[out.ids[i]]), 1e-3);
    }
    for (int t = 0; t < 4; ++t) {
      // 4000 draws: the standard deviation of a frequency is at most 0.008; allow 4 of them.
      EXPECT_NEAR(counts[t] / 4000.0, c.expected[t], 0.032) << "temperature " << c.temperature << " token " << t;
    }
  }
}

}  // namespace sampler_test
