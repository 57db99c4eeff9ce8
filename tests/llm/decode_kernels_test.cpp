// The fused decode kernels' CPU-side contract: which shapes they take (bounds computed by hand from
// the attention kernel's shared memory: q, a slot and a score per key of its split, and 256 threads'
// partial sums; at most 32 splits), that no CPU device gets them, and that their source compiles with NVRTC, which
// needs no GPU. Their numerics run on a GPU, in benchmarks/decode_kernels_check.cpp.
#include "llm/decode_kernels.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace vinci::llm {
namespace {

TEST(DecodeKernels, FitsTheShapesTheirKernelsWereBuiltFor) {
  // The 7B shape at head_dim 128: a split of s = ceil(kv / 32) keys needs
  // (128 + s + max(s, 16 phases · 128)) floats within 48 KiB, so s <= 6,080.
  EXPECT_TRUE(DecodeKernels::fits(3584, 18944, 128, 1));
  EXPECT_TRUE(DecodeKernels::fits(3584, 18944, 128, 32 * 6080));
  EXPECT_FALSE(DecodeKernels::fits(3584, 18944, 128, 32 * 6080 + 1));
  EXPECT_TRUE(DecodeKernels::fits(256, 768, 64, 32 * 6112));  // 32 phases · 64 = 2,048 partial sums
  EXPECT_FALSE(DecodeKernels::fits(256, 768, 64, 32 * 6112 + 1));
  EXPECT_TRUE(DecodeKernels::fits(4096, 11008, 256, 32 * 6016));
  EXPECT_FALSE(DecodeKernels::fits(4096, 11008, 256, 32 * 6016 + 1));
  EXPECT_TRUE(DecodeKernels::fits(64, 128, 8, 32 * 6140));  // the llama golden fixture's head size
  EXPECT_FALSE(DecodeKernels::fits(64, 128, 8, 32 * 6140 + 1));
  // Sizes the 16-byte loads or the templated attention do not take.
  EXPECT_FALSE(DecodeKernels::fits(3584, 18944, 96, 512));
  EXPECT_FALSE(DecodeKernels::fits(64, 128, 4, 512));
  EXPECT_FALSE(DecodeKernels::fits(4096, 11008, 512, 512));
  EXPECT_FALSE(DecodeKernels::fits(3583, 18944, 128, 512));
  EXPECT_FALSE(DecodeKernels::fits(3584, 18943, 128, 512));
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
