// The fused decode kernels' CPU-side contract: which shapes they take (bounds computed by hand from
// the attention kernel's shared memory: q, a slot and a score per key of its split, and 256 threads'
// partial sums; at most 32 splits), that no CPU device gets them, and that their source compiles with NVRTC, which
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
// 64 keys, at least one per 4,096, the keys then shared evenly.
TEST(DecodeKernels, AttentionSplitsFillTheSmsWithinTheirKeyBounds) {
  const auto split = [](int64_t rows, int64_t heads, int64_t kv_length) {
    const auto s = DecodeKernels::attention_split(rows, heads, kv_length, 132);
    return std::pair{s.splits, s.keys};
  };
  EXPECT_EQ(split(1, 28, 512), std::pair(int64_t{8}, int64_t{64}));     // 10 wanted, 512 / 64 allow 8
  EXPECT_EQ(split(1, 28, 5000), std::pair(int64_t{10}, int64_t{500}));  // ceil(264 / 28) = 10
  EXPECT_EQ(split(1, 28, 600), std::pair(int64_t{10}, int64_t{60}));    // 10 wanted, ceil(600 / 64) = 10
  EXPECT_EQ(split(1, 1, 1000), std::pair(int64_t{16}, int64_t{63}));    // 16 allowed: 16 · 63 = 1,008 keys
  // 264 wanted and allowed; 16,897 keys make 65 a split, which 260 splits hold.
  EXPECT_EQ(split(1, 1, 16897), std::pair(int64_t{260}, int64_t{65}));
  EXPECT_EQ(split(16, 28, 4096), std::pair(int64_t{1}, int64_t{4096}));  // 448 blocks already
  EXPECT_EQ(split(16, 28, 9000), std::pair(int64_t{3}, int64_t{3000}));  // no split over 4,096
  EXPECT_EQ(split(2, 4, 100), std::pair(int64_t{2}, int64_t{50}));
  EXPECT_EQ(split(1, 28, 1), std::pair(int64_t{1}, int64_t{1}));
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
    for (const char* kernel : {"attention_split_", "attention_combine_"})
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
