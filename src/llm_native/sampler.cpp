#include "llm_native/sampler.h"

#include <limits>

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>

namespace vinci::llm {
namespace {

bool is_greedy(const SamplingParams& p) { return p.greedy || p.temperature <= 0.0; }

}  // namespace

at::Generator make_generator(at::Device device, uint64_t seed) {
  at::Generator generator = device.is_cuda() ? at::detail::getCUDAHooks().getNewGenerator(device.index())
                                             : at::make_generator<at::CPUGeneratorImpl>(seed);
  generator.set_current_seed(seed);
  return generator;
}

SampledTokens sample(const at::Tensor& logits, std::span<const SamplingParams* const> params,
                     std::span<at::Generator* const> generators, at::Generator& shared) {
  const int64_t batch = logits.size(0), vocab = logits.size(1);
  auto cpu_float = at::TensorOptions().dtype(at::kFloat);
  std::vector<float> inv_temperature(batch), top_p(batch);
  std::vector<int64_t> top_k(batch);
  std::vector<uint8_t> greedy(batch);
  bool any_truncation = false, any_sampled = false;
  for (int64_t b = 0; b < batch; ++b) {
    const auto& p = *params[b];
    greedy[b] = is_greedy(p);
    inv_temperature[b] = greedy[b] ? 1.0f : static_cast<float>(1.0 / p.temperature);
    top_k[b] = (greedy[b] || p.top_k <= 0 || p.top_k >= vocab) ? vocab : p.top_k;
    const bool nucleus = !greedy[b] && p.top_p < 1.0;
    top_p[b] = nucleus ? static_cast<float>(p.top_p) : 2.0f;  // 2: a mass never reached
    any_truncation |= top_k[b] < vocab || nucleus;
    any_sampled |= !greedy[b];
  }
  const auto device = logits.device();
  auto scaled = logits.to(at::kFloat) * at::tensor(inv_temperature, cpu_float).to(device).unsqueeze(1);
  at::Tensor logp, order;  // order: vocabulary id of each column of logp (when sorted)
  if (any_truncation) {
    auto [sorted, indices] = scaled.sort(-1, /*descending=*/true);
    order = indices;
    auto probs = sorted.softmax(-1);
    auto rank = at::arange(vocab, at::TensorOptions().dtype(at::kLong).device(device)).unsqueeze(0);
    auto k = at::tensor(top_k, at::kLong).to(device).unsqueeze(1);
    auto p = at::tensor(top_p, cpu_float).to(device).unsqueeze(1);
    // top-p keeps the smallest prefix whose mass reaches p: a token goes when the mass before it
    // already does. The first token always stays.
    auto mass_before = probs.cumsum(-1) - probs;
    auto removed = (rank >= k) | ((mass_before >= p) & (rank > 0));
    logp = sorted.masked_fill(removed, -std::numeric_limits<float>::infinity()).log_softmax(-1);
  } else {
    logp = scaled.log_softmax(-1);
  }
  at::Tensor choice = logp.argmax(-1);
  if (any_sampled) {
    auto uniform = at::empty({batch, vocab}, logp.options());
    bool need_shared = false;
    for (int64_t b = 0; b < batch; ++b) need_shared |= !greedy[b] && !generators[b];
    if (need_shared) uniform.uniform_(0.0, 1.0, shared);
    // Seeded rows draw after the shared fill, from their own generator only, so their stream
    // does not depend on the rest of the batch.
    for (int64_t b = 0; b < batch; ++b)
      if (!greedy[b] && generators[b]) uniform[b].uniform_(0.0, 1.0, *generators[b]);
    auto gumbel = -at::log(-at::log(uniform));
    auto drawn = (logp + gumbel).argmax(-1);
    auto greedy_mask = at::tensor(std::vector<int64_t>(greedy.begin(), greedy.end())).to(device).to(at::kBool);
    choice = at::where(greedy_mask, choice, drawn);
  }
  auto chosen_logp = logp.gather(1, choice.unsqueeze(1)).squeeze(1);
  auto ids = any_truncation ? order.gather(1, choice.unsqueeze(1)).squeeze(1) : choice;
  auto ids_cpu = ids.to(at::kCPU).to(at::kInt).contiguous();
  auto logp_cpu = chosen_logp.to(at::kCPU).contiguous();
  SampledTokens out;
  out.ids.assign(ids_cpu.data_ptr<int32_t>(), ids_cpu.data_ptr<int32_t>() + batch);
  out.logprobs.assign(logp_cpu.data_ptr<float>(), logp_cpu.data_ptr<float>() + batch);
  return out;
}

}  // namespace vinci::llm
