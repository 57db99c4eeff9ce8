// The fused decode kernels' CPU-side contract: which shapes they take, how attention splits the keys,
// that no CPU device gets them, and that their source compiles with NVRTC, which
// needs no GPU. Their numerics run on a GPU, in benchmarks/decode_kernels_check.cpp.
#include "llm/decode_kernels.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace vinci::llm {
namespace {

TEST(DecodeKernels, FitsTheShapesTheirKernelsWereBuiltFor) {
  EXPECT_TRUE(DecodeKernels::fits(3584, 18944, 128));  // Qwen2.5-7B
  EXPECT_TRUE(DecodeKernels::fits(64, 192, 8));        // the llama golden fixture
  EXPECT_TRUE(DecodeKernels::fits(4096, 11008, 256));
  // Sizes the 16-byte loads or the templated attention do not take.
  EXPECT_FALSE(DecodeKernels::fits(3584, 18944, 96));
  EXPECT_FALSE(DecodeKernels::fits(64, 128, 4));
  EXPECT_FALSE(DecodeKernels::fits(4096, 11008, 512));
  EXPECT_FALSE(DecodeKernels::fits(3583, 18944, 128));
  EXPECT_FALSE(DecodeKernels::fits(3584, 18943, 128));
}

// Splits for 132 SMs (an H100 SXM or H200), computed by hand: enough for 264 blocks, at most one per
// 64 keys, at least one per 1,024, the keys then shared evenly. At the 7B shape a split has a block
// for each row and each of the 28 query heads, or, in tiles of 7, each of the 4 kv heads.
TEST(DecodeKernels, AttentionSplitsFillTheSmsWithinTheirKeyBounds) {
  const auto split = [](int64_t blocks_per_split, int64_t kv_length) {
    const auto s = DecodeKernels::attention_split(blocks_per_split, kv_length, 132);
    return std::pair{s.splits, s.keys};
  };
  EXPECT_EQ(split(28, 512), std::pair(int64_t{8}, int64_t{64}));     // 10 wanted, 512 / 64 allow 8
  EXPECT_EQ(split(4, 512), std::pair(int64_t{8}, int64_t{64}));      // 66 wanted
  EXPECT_EQ(split(4, 5000), std::pair(int64_t{66}, int64_t{76}));    // 66 · 76 = 5,016 keys
  EXPECT_EQ(split(64, 4096), std::pair(int64_t{5}, int64_t{820}));   // batch 16: ceil(264 / 64) = 5
  EXPECT_EQ(split(64, 9000), std::pair(int64_t{9}, int64_t{1000}));  // no split over 1,024
  EXPECT_EQ(split(8, 100), std::pair(int64_t{2}, int64_t{50}));
  EXPECT_EQ(split(4, 1), std::pair(int64_t{1}, int64_t{1}));
  // 264 wanted and allowed; 16,897 keys make 65 a split, which 260 splits hold.
  EXPECT_EQ(split(1, 16897), std::pair(int64_t{260}, int64_t{65}));
}

// The 7B shape (28 query heads on 4 kv heads of 128) with an H200's 50 MiB of L2: keys and values
// take 2 KiB a token, so tiles of 7 heads from 6,400 tokens a step (12.5 MiB) on.
TEST(DecodeKernels, AttentionGroupsQueryHeadsWhenKeysAndValuesOutgrowL2) {
  const int64_t l2 = 50 << 20;
  EXPECT_EQ(DecodeKernels::attention_head_tile(1, 28, 4, 128, 512, l2), 1);
  EXPECT_EQ(DecodeKernels::attention_head_tile(1, 28, 4, 128, 6400, l2), 1);
  EXPECT_EQ(DecodeKernels::attention_head_tile(1, 28, 4, 128, 6401, l2), 7);
  EXPECT_EQ(DecodeKernels::attention_head_tile(16, 28, 4, 128, 512, l2), 7);
  EXPECT_EQ(DecodeKernels::attention_head_tile(16, 32, 2, 128, 4096, l2), 8);  // 16 a kv head: two tiles
  EXPECT_EQ(DecodeKernels::attention_head_tile(16, 8, 8, 128, 4096, l2), 1);   // no sharing
}

TEST(DecodeKernels, NoCpuDeviceGetsThem) { EXPECT_EQ(DecodeKernels::get(at::Device(at::kCPU)), nullptr); }

TEST(DecodeKernels, SourceCompilesForHopperWithEveryKernelTheHostLaunches) {
  std::string cubin;
  try {
    cubin = DecodeKernels::compile(9, 0);
  } catch (const std::logic_error& e) {
    GTEST_SKIP() << e.what();
  }
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  for (const char* name : {"add_rms_norm", "rope_write_kv", "silu_mul"})
    EXPECT_NE(cubin.find(name), std::string::npos) << name;
  for (int dim : {8, 16, 32, 64, 128, 256})
    for (const char* kernel : {"attention_head_", "attention_group_", "attention_combine_"})
      EXPECT_NE(cubin.find(kernel + std::to_string(dim)), std::string::npos) << kernel << dim;
}

TEST(DecodeKernels, AnArchitectureNvrtcDoesNotKnowIsRefusedWithItsLog) {
  try {
    DecodeKernels::compile(1, 0);
    FAIL() << "sm_10 compiled";
  } catch (const std::logic_error& e) {
    GTEST_SKIP() << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("sm_10"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vinci::llm
