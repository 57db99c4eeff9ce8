// Turns a batch of next-token logits into tokens and the logprobs they were drawn with.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include "llm/backbone.h"

namespace vinci::llm {

struct SampledTokens {
  std::vector<int32_t> ids;
  std::vector<float> logprobs;
};

// A generator on `device` seeded with `seed` (CPU or CUDA).
at::Generator make_generator(at::Device device, uint64_t seed);

// logits: [B, vocab] float32. params[b] and generators[b] belong to row b; a null generator
// draws from `shared`. Sampling is Gumbel-max over the (temperature-scaled, top-k/top-p
// truncated, renormalised) log-distribution, so it draws from exactly the distribution whose
// logprob is reported, and a row's noise comes from its own generator only.
SampledTokens sample(const at::Tensor& logits, std::span<const SamplingParams* const> params,
                     std::span<at::Generator* const> generators, at::Generator& shared);

}  // namespace vinci::llm
