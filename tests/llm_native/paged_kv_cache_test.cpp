// The paged KV cache's bookkeeping, by hand: which blocks a sequence holds, that released blocks are
// handed out again lowest first, that growing the pool keeps what it held, and that its memory
// follows the tokens reserved rather than the longest request. (Attention through it against a
// full forward is transformer_test's.)
#include "llm_native/paged_kv_cache.h"

#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace vinci::llm {
namespace {

PagedKvCache::Shape tiny() { return {/*layers=*/2, /*kv_heads=*/1, /*head_dim=*/2, at::kFloat, at::kCPU}; }

std::vector<int64_t> row(const PagedKvCache& cache, uint64_t sequence, int64_t width) {
  const at::Tensor t = cache.block_table(std::vector<uint64_t>{sequence}, width);
  return {t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + width};
}

TEST(PagedKvCache, SequencesTakeBlocksLowestFirstAndScratchFillsTheRest) {
  PagedKvCache cache(tiny(), /*block_tokens=*/4, /*initial_tokens=*/16);  // blocks 1-4, and scratch 0
  EXPECT_EQ(cache.pool_tokens(), 20);
  ASSERT_TRUE(cache.reserve(7, 5));  // positions 0-4: two blocks
  ASSERT_TRUE(cache.reserve(9, 1));
  ASSERT_TRUE(cache.reserve(7, 8));  // already has room for 8
  EXPECT_EQ(row(cache, 7, 4), (std::vector<int64_t>{1, 2, 0, 0}));
  EXPECT_EQ(row(cache, 9, 2), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(row(cache, 1234, 2), (std::vector<int64_t>{0, 0})) << "an unknown row is all scratch";
  EXPECT_EQ(cache.reserved_tokens(), 12);
  EXPECT_EQ(cache.blocks_for(8), 2);
  EXPECT_EQ(cache.blocks_for(9), 3);
}

TEST(PagedKvCache, ReleasedBlocksGoToTheNextSequenceAndMemoryFollowsLiveTokens) {
  PagedKvCache cache(tiny(), 4, 16);
  ASSERT_TRUE(cache.reserve(1, 8));  // blocks 1, 2
  ASSERT_TRUE(cache.reserve(2, 4));  // block 3
  cache.release(1);
  EXPECT_EQ(cache.reserved_tokens(), 4);
  ASSERT_TRUE(cache.reserve(3, 12));  // the two released, lowest first, then block 4
  EXPECT_EQ(row(cache, 3, 3), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(cache.pool_tokens(), 20) << "no growth while released blocks suffice";
  cache.release(2);
  cache.release(3);
  EXPECT_EQ(cache.reserved_tokens(), 0);
  cache.release(3);  // twice, or never reserved: nothing to give back
  EXPECT_EQ(cache.reserved_tokens(), 0);
  // A thousand requests of 16 tokens, two at a time, fit the same pool: memory follows the tokens
  // live, not the number of requests or the longest one.
  for (uint64_t s = 100; s < 1100; s += 2) {
    ASSERT_TRUE(cache.reserve(s, 8));
    ASSERT_TRUE(cache.reserve(s + 1, 8));
    cache.release(s);
    cache.release(s + 1);
  }
  EXPECT_EQ(cache.pool_tokens(), 20);
}

TEST(PagedKvCache, ALimitRefusesWhatWouldPassItAndChangesNothing) {
  PagedKvCache cache(tiny(), 4, /*initial_tokens=*/4, /*max_tokens=*/16);  // at most 4 blocks besides scratch
  ASSERT_TRUE(cache.reserve(1, 12));
  EXPECT_FALSE(cache.reserve(2, 8)) << "2 blocks wanted, 1 left";
  EXPECT_EQ(cache.reserved_tokens(), 12);
  EXPECT_EQ(row(cache, 2, 2), (std::vector<int64_t>{0, 0})) << "a refused sequence holds nothing";
  EXPECT_FALSE(cache.reserve(1, 17)) << "nor may one sequence outgrow the limit";
  EXPECT_TRUE(cache.fits_alone(16)) << "4 blocks of 4";
  EXPECT_FALSE(cache.fits_alone(17));
  EXPECT_TRUE(PagedKvCache(tiny(), 4, 4).fits_alone(1 << 20)) << "no limit";
  EXPECT_EQ(row(cache, 1, 4), (std::vector<int64_t>{1, 2, 3, 0}));
  ASSERT_TRUE(cache.reserve(2, 4));
  cache.release(1);
  ASSERT_TRUE(cache.reserve(2, 16));
  EXPECT_EQ(cache.pool_tokens(), 20);
}

TEST(PagedKvCache, GrowingThePoolKeepsWhatItHeld) {
  PagedKvCache cache(tiny(), 4, 4);  // scratch and one block
  ASSERT_TRUE(cache.reserve(5, 4));
  cache.keys(1).narrow(0, 4, 4).fill_(3.0f);  // block 1 of layer 1
  cache.values(0).narrow(0, 4, 4).fill_(-2.0f);
  ASSERT_TRUE(cache.reserve(6, 9));  // three more blocks: the pool doubles until they fit
  EXPECT_GE(cache.pool_tokens(), 4 * 5);
  EXPECT_EQ(row(cache, 6, 3), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(cache.keys(1).narrow(0, 4, 4).eq(3.0f).all().item<bool>());
  EXPECT_TRUE(cache.values(0).narrow(0, 4, 4).eq(-2.0f).all().item<bool>());
  EXPECT_TRUE(cache.keys(1).narrow(0, 8, cache.pool_tokens() - 8).eq(0.0f).all().item<bool>()) << "new slots zeroed";
  EXPECT_EQ(cache.keys(0).sizes(), (std::vector<int64_t>{cache.pool_tokens(), 1, 2}));
}

}  // namespace
}  // namespace vinci::llm
