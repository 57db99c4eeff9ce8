// Fused CUDA kernels for a bf16 decode step of one new token per row, built by NVRTC.
//
// Fused CUDA kernels for a decode step of one new token per row, in bf16: issue 17's profile of the
// 7B shape at batch 1 found 24 kernels a layer, 15 of them small elementwise, gather and mask
// kernels that together took a third of the step. These make them six a layer around the four
// GEMMs: a residual add with the RMSNorm after it (twice), RoPE with the key and value writes into
// the paged cache, attention reading the paged cache in place (split over the keys, then combined),
// and SiLU with the gate product.
//
// They are compiled with NVRTC when first used on a device, so the build needs no CUDA compiler and
// a CPU build has none of this. The ATen path in transformer.cpp stays the reference:
// benchmarks/decode_kernels_check.cpp compares each kernel and whole steps against it on a GPU.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

namespace vinci::llm {

class DecodeKernels {
 public:
  // The kernels for this CUDA device, compiled at the first call; nullptr where they cannot run: a
  // build without the CUDA runtime's headers and NVRTC, a CPU device, VINCI_DECODE_KERNELS=0 in the
  // environment, set_enabled(false), or a compile that failed (said once on stderr).
  static const DecodeKernels* get(const at::Device& device);
  // For checks and benchmarks that compare both paths in one process.
  static void set_enabled(bool enabled);
  // The kernels' cubin for compute capability major.minor, from NVRTC, which needs no GPU; throws
  // with NVRTC's log when the source does not compile, or when this build has no NVRTC.
  static std::string compile(int major, int minor);
  // compile()'s cubin through a cache folder (get() uses $VINCI_CACHE/decode_kernels), keyed by the
  // source, the architecture and NVRTC's version: the compile takes seconds, which every process's
  // first decode step paid. A cached file that is not an ELF is compiled again; a folder that
  // cannot be written only costs the next process the compile.
  static std::string compile_cached(int major, int minor, const std::filesystem::path& dir);

  // Whether the kernels take a model of these sizes: hidden and intermediate sizes multiples of 8
  // (16-byte loads), head_dim a power of two from 8 to 256 (the attention kernel is built for each).
  static bool fits(int64_t hidden, int64_t inter, int64_t head_dim);

  // How many of a kv head's query heads a block of attention takes: up to 8, so that each key and
  // value is loaded once for them, when the step's keys and values (rows · kv_length · kv_heads ·
  // head_dim · 4 bytes) outgrow a quarter of the l2_bytes of L2; otherwise 1, since the heads' repeated
  // loads then come from L2 and one block a query head spreads the step over more SMs. Measured at the
  // 7B shape (7 query heads a kv head) on an H200: batch 1 took 5.07 ms a step in tiles of 7 and 4.80
  // in tiles of 1 at 512 keys; batch 16 at 4,096 keys took 9.12 ms in tiles of 7 and 12.74 in tiles of 1.
  static int64_t attention_head_tile(int64_t rows, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t kv_length,
                                     int64_t l2_bytes);

  // How attention divides kv_length keys among its blocks, of which each split has blocks_per_split
  // (one a row, kv head and tile of its query heads): enough splits that the blocks fill each of
  // sm_count SMs twice (one block a head kept 28 of an H200's 132 SMs busy at batch 1), but at most
  // one per 64 keys, and at least one per 1,024 keys, which bounds the shared memory; the keys are
  // then shared evenly, and a split left empty is dropped.
  struct AttentionSplit {
    int64_t splits = 1, keys = 1;
  };
  static AttentionSplit attention_split(int64_t blocks_per_split, int64_t kv_length, int64_t sm_count);

  // residual [rows, n] += x, rounded to bf16 as an ATen add would; returns
  // rms_norm(residual) · weight, computed in fp32 and rounded once, as at::rms_norm does.
  at::Tensor add_rms_norm(at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight, double eps) const;
  // qkv [B, (heads + 2 kv_heads) · dim] (q, k, v heads in turn), one token per row at positions [B]:
  // rotates q and k by RoPE (rotate-half layout, angles position · inv_freq in fp32, cos and sin
  // rounded to bf16 as transformers rounds its tables), writes k and v at the rows' slots [B] of the
  // pools [slots, kv_heads, dim], and returns the rotated q [B, heads, dim].
  at::Tensor rope_write_kv(const at::Tensor& qkv, const at::Tensor& positions, const at::Tensor& inv_freq,
                           const at::Tensor& slots, at::Tensor& keys, at::Tensor& values, int64_t heads,
                           int64_t kv_heads) const;
  // q [B, heads, dim] attends to its row's keys 0..position in the paged pools, found through
  // block_table [B, width] (blocks of block_tokens slots); returns [B, heads · dim]. kv_length bounds
  // every row's position + 1, as AttentionSpec::kv_length does.
  at::Tensor attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                       const at::Tensor& block_table, const at::Tensor& positions, int64_t block_tokens,
                       int64_t kv_length, double scale) const;
  // gate_up [rows, 2 · inter] (gate, then up) → silu(gate) · up [rows, inter], silu rounded to bf16
  // before the product, as the two ATen kernels round.
  at::Tensor silu_mul(const at::Tensor& gate_up) const;

  struct Compiled;

 private:
  explicit DecodeKernels(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace vinci::llm
