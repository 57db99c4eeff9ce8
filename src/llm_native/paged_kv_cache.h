// Every sequence's keys and values in fixed-size blocks of one pool per layer, as in vLLM.
//
// Keys and values of every sequence in flight, in fixed-size blocks of one pool per layer, as
// vLLM's PagedAttention keeps them: a sequence holds the blocks its tokens fill, so the cache's
// memory follows the tokens actually live, not rows × the longest request, and a sequence joins or
// leaves the batch without a copy of anyone's cache.
//
// Block 0 is scratch, never a sequence's: a block table's unused entries point at it, so the
// writes of padding tokens land there and reads past a row's position (masked) come from there.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

namespace vinci::llm {

class PagedKvCache {
 public:
  struct Shape {
    int64_t layers = 0, kv_heads = 0, head_dim = 0;
    at::ScalarType dtype = at::kFloat;
    at::Device device = at::kCPU;
  };
  static constexpr int64_t kDefaultBlockTokens = 16;

  // The pool starts with room for `initial_tokens` and doubles when a reservation needs more, up to
  // `max_tokens` sequence tokens (0: no limit).
  explicit PagedKvCache(Shape shape, int64_t block_tokens = kDefaultBlockTokens, int64_t initial_tokens = 256,
                        int64_t max_tokens = 0);

  // Gives the sequence blocks for positions [0, tokens); it keeps those it has. False, with nothing
  // changed, when the limit leaves no room for them.
  [[nodiscard]] bool reserve(uint64_t sequence, int64_t tokens);
  // Its blocks go back to the pool for others.
  void release(uint64_t sequence);

  // [rows, width] int64 on the host: row b's block for positions [j·block, (j+1)·block) in column
  // j, scratch (0) past its blocks. A row id not reserved (padding) is all scratch.
  at::Tensor block_table(std::span<const uint64_t> rows, int64_t width) const;
  // Blocks a table needs to address positions [0, tokens).
  int64_t blocks_for(int64_t tokens) const { return (tokens + block_tokens_ - 1) / block_tokens_; }
  // Whether the limit leaves room for one sequence of this many tokens in an otherwise empty cache.
  bool fits_alone(int64_t tokens) const { return max_blocks_ == 0 || blocks_for(tokens) <= max_blocks_ - 1; }

  // [slots, kv_heads, head_dim], slot = block · block_tokens + offset. Growing the pool replaces
  // these tensors (pool_tokens() tells when: it only grows).
  at::Tensor& keys(size_t layer) { return keys_[layer]; }
  at::Tensor& values(size_t layer) { return values_[layer]; }

  int64_t block_tokens() const { return block_tokens_; }
  int64_t pool_tokens() const { return pool_blocks_ * block_tokens_; }  // allocated, scratch included
  // Held by sequences: every block but scratch and the free ones.
  int64_t reserved_tokens() const { return (pool_blocks_ - 1 - static_cast<int64_t>(free_.size())) * block_tokens_; }

 private:
  void grow(int64_t blocks);  // to at least this many blocks, contents kept

  Shape shape_;
  int64_t block_tokens_;
  int64_t max_blocks_ = 0;  // scratch included; 0: no limit
  int64_t pool_blocks_ = 0;
  std::vector<at::Tensor> keys_, values_;
  std::vector<int64_t> free_;  // lowest on top, so that the same requests take the same blocks
  std::unordered_map<uint64_t, std::vector<int64_t>> tables_;
};

}  // namespace vinci::llm
