// The fused decode kernels' CPU-side contract: which shapes they take, how attention splits the keys,
// that no CPU device gets them, and that their source compiles with NVRTC, which
// needs no GPU. Their numerics run on a GPU, in benchmarks/decode_kernels_check.cpp.
#include "llm_native/decode_kernels.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/files.h"

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

bool is_elf(const std::string& bytes) {
  return bytes.rfind(
             "\x7f"
             "ELF",
             0) == 0;
}

// Through the cache folder get() uses, so that one NVRTC compile (seconds on the CI machine) serves
// both the source's check and the cache's: what a file holds is read back, a file that is no ELF is
// compiled over.
TEST(DecodeKernels, SourceCompilesForHopperWithEveryKernelTheHostLaunchesAndIsCached) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("vinci-decode-cubins-{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::string cubin;
  try {
    cubin = DecodeKernels::compile_cached(9, 0, dir);
  } catch (const std::logic_error& e) {
    GTEST_SKIP() << e.what();
  }
  EXPECT_TRUE(is_elf(cubin));
  for (const char* name : {"add_rms_norm", "rope_write_kv", "silu_mul"})
    EXPECT_NE(cubin.find(name), std::string::npos) << name;
  for (int dim : {8, 16, 32, 64, 128, 256})
    for (const char* kernel : {"attention_head_", "attention_group_", "attention_combine_"})
      EXPECT_NE(cubin.find(kernel + std::to_string(dim)), std::string::npos) << kernel << dim;

  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".cubin");
  EXPECT_TRUE(vinci::core::read_file(files[0]) == cubin) << "the cached file is not the cubin returned";
  const std::string marked =
      "\x7f"
      "ELF marked";
  vinci::core::write_file_atomic(files[0], marked);
  EXPECT_EQ(DecodeKernels::compile_cached(9, 0, dir), marked);
  vinci::core::write_file_atomic(files[0], "half a cubin");
  const std::string again = DecodeKernels::compile_cached(9, 0, dir);
  EXPECT_TRUE(is_elf(again) && again.find("attention_head_128") != std::string::npos) << "not compiled over";
  EXPECT_TRUE(vinci::core::read_file(files[0]) == again) << "the torn file was not replaced";
  std::filesystem::remove_all(dir);
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
