// The fused decode kernels (llm_native/decode_kernels) against ATen's path, on a GPU: each kernel on random
// inputs against the ATen ops it replaces, then whole decode steps of a random model of a given
// shape, fused against unfused, from the same cache. Prints one line a check and exits 1 when one is
// past its tolerance. A kernel's difference is its largest, relative to the reference's largest
// magnitude, within one bf16 rounding (2^-8); a whole step's is the RMS of the final hidden states'
// difference relative to theirs, within 10%: the two paths round attention and the norms in
// different orders through 28 layers of a random model (about 5% apart on the 7B shape), so they
// are compared as well by the share of rows whose greedy token agrees (a random model's logits are
// close to ties, so a few rows differ). The backbone's bf16 GPU test bounds decoding against fp32
// truth, but its fixtures' head sizes (8, 16) take ATen's path.
//
//   decode_kernels_check --config-dir benchmarks/llm/qwen2_5_7b --batch 1,5 --prompt 300 --steps 4
#include <cmath>
#include <sstream>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "llm/model_config.h"
#include "llm_native/decode_kernels.h"
#include "llm_native/paged_kv_cache.h"
#include "llm_native/transformer.h"

namespace {

using vinci::llm::DecodeKernels;

int failures = 0;

// max |got - want| / max |want|, in float.
double relative_difference(const at::Tensor& got, const at::Tensor& want) {
  const auto g = got.to(at::kFloat), w = want.to(at::kFloat);
  return (g - w).abs().max().item<double>() / std::max(w.abs().max().item<double>(), 1e-30);
}

void report(const std::string& what, double difference, double tolerance) {
  const bool ok = difference <= tolerance && std::isfinite(difference);
  failures += ok ? 0 : 1;
  fmt::print("{:<58} {:>10.2e}  (tolerance {:.0e})  {}\n", what, difference, tolerance, ok ? "ok" : "FAILED");
}

at::Tensor randn(at::IntArrayRef shape, at::Device device) {
  return at::randn(shape, at::TensorOptions().dtype(at::kBFloat16).device(device));
}

// attention over a shuffled block table, rows at different positions, against SDPA on the gathered
// keys with the mask transformer.cpp builds.
void check_attention(const DecodeKernels& kernels, int64_t rows, int64_t heads, int64_t kv_heads, int64_t dim,
                     int64_t kv_length, at::Device device) {
  const int64_t block = 16;
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(device);
  const int64_t width = kv_length / block, pool_blocks = rows * width + 8;
  const auto keys = randn({pool_blocks * block, kv_heads, dim}, device);
  const auto values = randn({pool_blocks * block, kv_heads, dim}, device);
  const auto table = at::randperm(pool_blocks - 1, long_options).narrow(0, 0, rows * width).add(1).view({rows, width});
  const auto query = randn({rows, heads, dim}, device);
  const auto attention_positions = at::tensor(std::vector<int64_t>{0, kv_length / 3, kv_length - 1}, long_options);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  const auto got = kernels.attention(query, keys, values, table, attention_positions, block, kv_length, scale);
  const auto gathered = [&](const at::Tensor& pool) {
    return pool.view({-1, block, kv_heads, dim})
        .index_select(0, table.reshape(-1))
        .view({rows, kv_length, kv_heads, dim})
        .transpose(1, 2);
  };
  const auto visible =
      (at::arange(kv_length, long_options).view({1, 1, kv_length}) <= attention_positions.view({rows, 1, 1}))
          .unsqueeze(1);
  const auto want = at::scaled_dot_product_attention(query.unsqueeze(2), gathered(keys), gathered(values), visible, 0.0,
                                                     false, scale, /*enable_gqa=*/true);
  report(fmt::format("attention, {} heads on {} kv heads, {} keys", heads, kv_heads, kv_length),
         relative_difference(got, want.reshape({rows, heads * dim})), 2e-2);
}

void check_kernels(const DecodeKernels& kernels, const vinci::llm::ModelConfig& c, at::Device device) {
  const int64_t rows = 3, n = c.hidden_size, dim = c.head_dim, heads = c.num_attention_heads,
                kv_heads = c.num_key_value_heads;
  // add_rms_norm: the sum exactly as ATen's add rounds it, the norm within one rounding.
  auto residual = randn({rows, n}, device), x = randn({rows, n}, device), weight = randn({n}, device);
  const auto want_sum = residual + x;
  const auto want_norm = at::rms_norm(want_sum, {n}, weight, c.rms_norm_eps);
  const auto got_norm = kernels.add_rms_norm(residual, x, weight, c.rms_norm_eps);
  report("add_rms_norm: residual + x", relative_difference(residual, want_sum), 0.0);
  report("add_rms_norm: rms_norm(residual) * weight", relative_difference(got_norm, want_norm), 1e-2);

  const auto gate_up = randn({rows, 2 * c.intermediate_size}, device);
  const auto gate = gate_up.narrow(1, 0, c.intermediate_size),
             up = gate_up.narrow(1, c.intermediate_size, c.intermediate_size);
  report("silu_mul", relative_difference(kernels.silu_mul(gate_up), at::silu(gate) * up), 1e-2);

  // rope_write_kv against transformer.cpp's formula: x·cos + roll(x, half)·[-sin, sin].
  const int64_t block = 16, blocks = 40;
  auto keys = at::zeros({blocks * block, kv_heads, dim}, residual.options());
  auto values = at::zeros_like(keys);
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(device);
  const auto positions = at::tensor(std::vector<int64_t>{0, 17, 301}, long_options);
  const auto slots = at::tensor(std::vector<int64_t>{16, 77, 600}, long_options);
  const auto inv_freq = at::tensor(vinci::llm::rope_inv_freq(c), at::kFloat).to(device);
  const auto qkv = randn({rows, (heads + 2 * kv_heads) * dim}, device);
  const auto q = kernels.rope_write_kv(qkv, positions, inv_freq, slots, keys, values, heads, kv_heads);
  const auto freqs = positions.to(at::kFloat).unsqueeze(-1) * inv_freq;
  const auto cos = at::cat({freqs.cos(), freqs.cos()}, -1).to(at::kBFloat16).unsqueeze(1);
  const auto sin = at::cat({-freqs.sin(), freqs.sin()}, -1).to(at::kBFloat16).unsqueeze(1);
  const auto qk = qkv.narrow(1, 0, (heads + kv_heads) * dim).view({rows, heads + kv_heads, dim});
  const auto rotated = at::addcmul(qk * cos, qk.roll(dim / 2, -1), sin);
  report("rope_write_kv: q", relative_difference(q, rotated.narrow(1, 0, heads)), 1e-2);
  report("rope_write_kv: k in the pool",
         relative_difference(keys.index_select(0, slots), rotated.narrow(1, heads, kv_heads)), 1e-2);
  report("rope_write_kv: v in the pool",
         relative_difference(values.index_select(0, slots),
                             qkv.narrow(1, (heads + kv_heads) * dim, kv_heads * dim).view({rows, kv_heads, dim})),
         0.0);

  // At the 7B shape on an H100 or H200 (132 SMs, 50 MiB of L2): 320 keys take attention_head, a
  // block a query head, in 4 splits of 80, where row 0's last three are empty; 16,000 take
  // attention_group in tiles of 7 query heads and 22 splits of 728. 20 query heads on 2 kv heads over
  // 8,000 keys take tiles of 8 heads and of 2.
  for (const int64_t kv_length : {int64_t{320}, int64_t{16000}})
    check_attention(kernels, rows, heads, kv_heads, dim, kv_length, device);
  check_attention(kernels, rows, 20, 2, dim, 8000, device);
}

// Whole steps: a prompt prefilled once, then decode steps each run unfused and then fused from the
// same cache (both write the same slot; the fused write stays for the next step).
void check_steps(const vinci::llm::ModelConfig& c, at::Device device, int64_t batch, int64_t prompt, int64_t steps) {
  using vinci::llm::AttentionSpec;
  const auto model = vinci::llm::Transformer::random(c, {device, at::kBFloat16}, 1);
  vinci::llm::PagedKvCache cache(model.cache_shape(), 16, batch * (prompt + steps + 16));
  std::vector<uint64_t> rows;
  for (int64_t b = 0; b < batch; ++b) {
    rows.push_back(static_cast<uint64_t>(b + 1));
    if (!cache.reserve(rows.back(), prompt + steps)) throw std::runtime_error("the cache has no room");
  }
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(device);
  const auto table = cache.block_table(rows, cache.blocks_for(prompt + steps)).to(device);
  c10::NoGradGuard no_grad;
  AttentionSpec prefill;
  prefill.block_table = table;
  const auto ids = at::randint(c.vocab_size, {batch, prompt}, long_options);
  model.hidden(ids, at::arange(prompt, long_options).expand({batch, prompt}).contiguous(), prefill, &cache);
  double worst = 0;
  int64_t agree = 0;
  for (int64_t s = 0; s < steps; ++s) {
    AttentionSpec spec;
    spec.kind = AttentionSpec::Kind::kDecode;
    spec.kv_length = prompt + s + 1;
    spec.block_table = table;
    const auto step_ids = at::randint(c.vocab_size, {batch, 1}, long_options);
    const auto positions = at::full({batch, 1}, prompt + s, long_options);
    DecodeKernels::set_enabled(false);
    const auto want = model.hidden(step_ids, positions, spec, &cache);
    DecodeKernels::set_enabled(true);
    const auto got = model.hidden(step_ids, positions, spec, &cache);
    const auto g = got.to(at::kFloat), w = want.to(at::kFloat);
    worst = std::max(worst, ((g - w).norm() / w.norm()).item<double>());
    agree += model.logits(got.view({batch, -1}))
                 .argmax(-1)
                 .eq(model.logits(want.view({batch, -1})).argmax(-1))
                 .sum()
                 .item<int64_t>();
  }
  report(fmt::format("{} decode steps, batch {}, prompt {}: final hidden (RMS)", steps, batch, prompt), worst, 1e-1);
  report(fmt::format("{} decode steps, batch {}: rows whose greedy token differs", steps, batch),
         1.0 - static_cast<double>(agree) / static_cast<double>(batch * steps), 0.25);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the fused decode kernels against ATen's path, on a GPU"};
  std::string config_dir, batches = "1,5";
  int64_t prompt = 300, steps = 4;
  app.add_option("--config-dir", config_dir, "a directory with config.json")->required();
  app.add_option("--batch", batches, "comma-separated batch sizes of the whole-step check");
  app.add_option("--prompt", prompt, "prompt tokens before the decode steps")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "decode steps compared")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (!at::hasCUDA()) {
    fmt::print(stderr, "decode_kernels_check needs a GPU\n");
    return 1;
  }
  const at::Device device(at::kCUDA, 0);
  const auto config = vinci::llm::load_model_config(config_dir);
  const auto* kernels = DecodeKernels::get(device);
  if (!kernels) {
    fmt::print(stderr, "the fused decode kernels are not available here (see the message above)\n");
    return 1;
  }
  at::manual_seed(0);
  check_kernels(*kernels, config, device);
  std::stringstream list(batches);
  std::string item;
  while (std::getline(list, item, ',')) check_steps(config, device, std::stoll(item), prompt, steps);
  fmt::print("{}\n", failures == 0 ? "all checks passed" : fmt::format("{} checks FAILED", failures));
  return failures == 0 ? 0 : 1;
}
