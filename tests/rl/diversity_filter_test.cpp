// The diversity filter of the SFT data (src/rl/diversity_filter): comment-blind duplicates, the caps
// and the balancing, each decision checked on conversations built by hand (what a line must hold is
// tests/rl/sft_data_test.cpp's).
#include <gtest/gtest.h>

#include "rl/diversity_filter.h"
#include "rl/sft_data.h"

namespace diversity_filter_test {

using nlohmann::ordered_json;
using vinci::rl::DiversityConfig;
using vinci::rl::SftConversation;

std::string kernel_file(const std::string& body) {
  return "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n" + body;
}

ordered_json line(const std::string& task, int level, const std::string& role, const std::string& answer,
                  std::vector<std::string> skills = {}) {
  return {
      {"messages", {{{"role", "user"}, {"content", "optimize " + task}}, {{"role", "assistant"}, {"content", answer}}}},
      {"meta", {{"task", task}, {"level", level}, {"role", role}, {"skills", skills}}}};
}

SftConversation conversation(const ordered_json& j, size_t n) { return vinci::rl::parse_sft_conversation(j, n); }

TEST(DiversityFilter, NormalizedCodeDropsCommentsNotCode) {
  const std::string file =
      "import torch  # the model\nn = 7 // 2\nsrc = '''\n#include <cuda.h>\n// a comment\n__global__ void k() { /* "
      "body */ }\n'''\n";
  EXPECT_EQ(vinci::rl::normalized_code(file),
            "import torch n = 7 // 2 src = ''' #include <cuda.h> __global__ void k() { } '''");
  EXPECT_EQ(vinci::rl::normalized_code("s = '# not a comment'  # a comment"), "s = '# not a comment'");
}

// Distinct kernels: different words, so their shingles share nothing.
const std::string kRowSoftmax =
    kernel_file("        return row_softmax_warp_shuffle(x, blocks_per_row, vectorized_loads)\n");
const std::string kTiledMatmul =
    kernel_file("        return tiled_matmul_shared_memory(a, b, tile_m, tile_n, double_buffer)\n");
const std::string kFusedGelu =
    kernel_file("        return fused_gelu_tanh_approximation(x, elementwise, grid_stride_loop)\n");

std::string answer(const std::string& code) { return "```python\n" + code + "```"; }

TEST(DiversityFilter, DuplicatesThenCaps) {
  std::vector<SftConversation> items;
  const std::vector<ordered_json> lines = {
      line("A", 1, "policy", answer(kRowSoftmax)),
      // the same kernel, differently commented and spaced: a near duplicate of line 1
      line("A", 1, "policy", answer("# v2\n" + kRowSoftmax + "\n\n# end\n")),
      line("A", 1, "policy", answer(kTiledMatmul)),
      line("A", 1, "policy", answer(kFusedGelu)),   // A's third distinct policy answer: over the cap of 2
      line("B", 1, "policy", answer(kRowSoftmax)),  // another task: not a duplicate of A's
      line("B", 1, "selection", "s1", {"warp_reduce"}),
      line("C", 1, "selection", "s2", {"warp_reduce", "tiling"}),  // warp_reduce used once already: over its cap of 1
  };
  for (size_t i = 0; i < lines.size(); ++i) items.push_back(conversation(lines[i], i + 1));
  DiversityConfig c;
  c.max_per_task = 2;
  c.max_per_skill = 1;
  c.balance_ratio = 0;
  const auto report = vinci::rl::diversity_filter(items, c);
  EXPECT_EQ(report.kept, (std::vector<size_t>{0, 2, 4, 5}));
  ASSERT_EQ(report.removed.size(), 3u);
  EXPECT_EQ(report.removed[0].index, 1u);
  EXPECT_EQ(report.removed[0].rule, "near_duplicate");
  EXPECT_EQ(report.removed[0].detail, "repeats line 1 (estimated similarity 1.00)");
  EXPECT_EQ(report.removed[1].index, 3u);
  EXPECT_EQ(report.removed[1].rule, "task_cap");
  EXPECT_EQ(report.removed[2].index, 6u);
  EXPECT_EQ(report.removed[2].rule, "skill_cap");
  EXPECT_EQ(report.removed[2].detail, "skill 'warp_reduce' is in 1 kept conversations already");
  EXPECT_EQ(report.summary(),
            "kept 4 of 7 conversations\n  removed      1  near_duplicate\n  removed      1  skill_cap\n"
            "  removed      1  task_cap\n");
}

TEST(DiversityFilter, BalancesLevelsAndRoles) {
  std::vector<SftConversation> items;
  // five level-1 selection answers, one level-2 one; ratio 2: level 1 keeps its first 2
  for (int i = 0; i < 5; ++i) items.push_back(conversation(line("t" + std::to_string(i), 1, "selection", "x"), i + 1));
  items.push_back(conversation(line("u", 2, "selection", "y"), 6));
  DiversityConfig c;
  c.balance_ratio = 2;
  c.balance_roles = false;
  auto report = vinci::rl::diversity_filter(items, c);
  EXPECT_EQ(report.kept, (std::vector<size_t>{0, 1, 5}));
  EXPECT_EQ(report.removed_by_rule.at("level_balance"), 3u);
  EXPECT_EQ(report.removed[0].detail, "level 1 holds 5 conversations, more than 2 x the smallest group's 1");
  // roles: three selection answers and one summary; ratio 1 keeps one of each
  items.resize(3);
  items.push_back(conversation(line("v", 1, "summary", "z"), 7));
  c.balance_ratio = 1;
  c.balance_levels = false;
  c.balance_roles = true;
  report = vinci::rl::diversity_filter(items, c);
  EXPECT_EQ(report.kept, (std::vector<size_t>{0, 3}));
  EXPECT_EQ(report.removed_by_rule.at("role_balance"), 2u);
}

}  // namespace diversity_filter_test
