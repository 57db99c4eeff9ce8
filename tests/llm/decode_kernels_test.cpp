// The fused decode kernels' CPU-side contract: which shapes they take (bounds computed by hand from
// the attention kernel's shared memory: q, a slot and a score per key, and 512 threads' partial
// sums), that no CPU device gets them, and that their source compiles with NVRTC, which needs no GPU.
// Their numerics run on a GPU, in benchmarks/decode_kernels_check.cpp.
#include "llm/decode_kernels.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace vinci::llm {
namespace {

TEST(DecodeKernels, FitsTheShapesTheirKernelsWereBuiltFor) {
  // The 7B shape at head_dim 128: (128 + kv + max(kv, 32 phases · 128)) floats within 48 KiB.
  EXPECT_TRUE(DecodeKernels::fits(3584, 18944, 128, 1));
  EXPECT_TRUE(DecodeKernels::fits(3584, 18944, 128, 6080));
  EXPECT_FALSE(DecodeKernels::fits(3584, 18944, 128, 6081));
  EXPECT_TRUE(DecodeKernels::fits(256, 768, 64, 6112));  // 64 phases · 64 = 4,096 partial sums
  EXPECT_FALSE(DecodeKernels::fits(256, 768, 64, 6113));
  EXPECT_TRUE(DecodeKernels::fits(4096, 11008, 256, 6016));
  EXPECT_FALSE(DecodeKernels::fits(4096, 11008, 256, 6017));
  // Sizes the 16-byte loads or the templated attention do not take.
  EXPECT_FALSE(DecodeKernels::fits(3584, 18944, 96, 512));
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
  for (const char* name : {"add_rms_norm", "rope_write_kv", "silu_mul", "paged_attention_64", "paged_attention_128",
                           "paged_attention_256"})
    EXPECT_NE(cubin.find(name), std::string::npos) << name;
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
