#include "llm/paged_kv_cache.h"

#include <algorithm>
#include <stdexcept>

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace vinci::llm {

PagedKvCache::PagedKvCache(Shape shape, int64_t block_tokens, int64_t initial_tokens)
    : shape_(shape), block_tokens_(block_tokens) {
  if (block_tokens < 1) throw std::invalid_argument("a KV cache block holds at least one token");
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

void PagedKvCache::reserve(uint64_t sequence, int64_t tokens) {
  auto& table = tables_[sequence];
  const int64_t need = blocks_for(tokens) - static_cast<int64_t>(table.size());
  if (need <= 0) return;
  if (need > static_cast<int64_t>(free_.size()))
    grow(std::max(pool_blocks_ * 2, pool_blocks_ + need - static_cast<int64_t>(free_.size())));
  for (int64_t i = 0; i < need; ++i) {
    table.push_back(free_.back());
    free_.pop_back();
  }
  reserved_blocks_ += need;
}

void PagedKvCache::release(uint64_t sequence) {
  const auto it = tables_.find(sequence);
  if (it == tables_.end()) return;
  free_.insert(free_.end(), it->second.begin(), it->second.end());
  std::sort(free_.begin(), free_.end(), std::greater<>());
  reserved_blocks_ -= static_cast<int64_t>(it->second.size());
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
