#include "llm_native/paged_kv_cache.h"

#include <algorithm>
#include <stdexcept>

#include <ATen/ATen.h>

namespace vinci::llm {

PagedKvCache::PagedKvCache(Shape shape, int64_t block_tokens, int64_t initial_tokens, int64_t max_tokens)
    : shape_(shape), block_tokens_(block_tokens) {
  if (block_tokens < 1) throw std::invalid_argument("a KV cache block holds at least one token");
  if (max_tokens < 0) throw std::invalid_argument("a KV cache's token limit is 0 (none) or more");
  if (max_tokens > 0) {
    max_blocks_ = 1 + blocks_for(max_tokens);
    initial_tokens = std::min(initial_tokens, max_tokens);
  }
  grow(1 + blocks_for(std::max<int64_t>(initial_tokens, 1)));
}

void PagedKvCache::grow(int64_t blocks) {
  if (blocks <= pool_blocks_) return;
  const auto options = at::TensorOptions().dtype(shape_.dtype).device(shape_.device);
  const int64_t slots = blocks * block_tokens_;
  // Zeroed, not merely allocated: masked keys are read too, and their zero attention weight times
  // a NaN left in reused memory would be NaN.
  const auto fresh = [&](const at::Tensor& old) {
    auto t = at::zeros({slots, shape_.kv_heads, shape_.head_dim}, options);
    if (old.defined()) t.narrow(0, 0, old.size(0)).copy_(old);
    return t;
  };
  keys_.resize(static_cast<size_t>(shape_.layers));
  values_.resize(static_cast<size_t>(shape_.layers));
  for (size_t i = 0; i < keys_.size(); ++i) {
    keys_[i] = fresh(keys_[i]);
    values_[i] = fresh(values_[i]);
  }
  for (int64_t b = std::max<int64_t>(pool_blocks_, 1); b < blocks; ++b) free_.push_back(b);
  std::sort(free_.begin(), free_.end(), std::greater<>());
  pool_blocks_ = blocks;
}

bool PagedKvCache::reserve(uint64_t sequence, int64_t tokens) {
  const auto held = tables_.find(sequence);
  const int64_t need = blocks_for(tokens) - (held == tables_.end() ? 0 : static_cast<int64_t>(held->second.size()));
  if (need <= 0) return true;
  const int64_t missing = need - static_cast<int64_t>(free_.size());
  if (missing > 0) {
    if (max_blocks_ > 0 && pool_blocks_ + missing > max_blocks_) return false;
    int64_t blocks = std::max(pool_blocks_ * 2, pool_blocks_ + missing);
    if (max_blocks_ > 0) blocks = std::min(blocks, max_blocks_);
    grow(blocks);
  }
  auto& table = tables_[sequence];
  for (int64_t i = 0; i < need; ++i) {
    table.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void PagedKvCache::release(uint64_t sequence) {
  const auto it = tables_.find(sequence);
  if (it == tables_.end()) return;
  free_.insert(free_.end(), it->second.begin(), it->second.end());
  std::sort(free_.begin(), free_.end(), std::greater<>());
  tables_.erase(it);
}

at::Tensor PagedKvCache::block_table(std::span<const uint64_t> rows, int64_t width) const {
  auto table = at::zeros({static_cast<int64_t>(rows.size()), width}, at::kLong);
  auto* out = table.data_ptr<int64_t>();
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto it = tables_.find(rows[r]);
    if (it == tables_.end()) continue;
    const auto n = std::min<int64_t>(width, static_cast<int64_t>(it->second.size()));
    std::copy_n(it->second.begin(), n, out + static_cast<int64_t>(r) * width);
  }
  return table;
}

}  // namespace vinci::llm
