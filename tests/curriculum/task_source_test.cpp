// The KernelBench file of a curriculum task (curriculum/task_source.h), for specs written by hand.
#include "curriculum/task_source.h"

#include <gtest/gtest.h>

namespace task_source_test {
using namespace vinci::curriculum;

TEST(TaskSource, AnElementwiseChainInFull) {
  TaskSpec s;
  s.chain = {{"shift", 0.5}, {"relu", 0}, {"scale", 1.5}};
  s.rows = 1024;
  s.cols = 256;
  EXPECT_EQ(s.tokens(), (std::vector<std::string>{"shift", "relu", "scale"}));
  EXPECT_EQ(s.camel_name(), "ShiftReluScale");
  EXPECT_EQ(s.level(), 2);
  EXPECT_EQ(describe(s), "torch.relu(x + 0.5) * 1.5");
  EXPECT_EQ(task_source(s),
            "\"\"\"Curriculum task (elementwise): torch.relu(x + 0.5) * 1.5.\"\"\"\n"
            "import torch\n"
            "import torch.nn as nn\n\n"
            "ROWS = 1024\n"
            "COLS = 256\n"
            "SCALABLE = (\"ROWS\", \"COLS\")\n\n\n"
            "class Model(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n\n"
            "    def forward(self, x):\n"
            "        v = x\n"
            "        v = v + 0.5\n"
            "        v = torch.relu(v)\n"
            "        v = v * 1.5\n"
            "        return v\n\n\n"
            "def get_inputs():\n"
            "    return [torch.randn(ROWS, COLS)]\n\n\n"
            "def get_init_inputs():\n"
            "    return []\n");
}

TEST(TaskSource, ALinearLayerWithItsEpilogueInFull) {
  TaskSpec s;
  s.family = Family::matmul;
  s.chain = {{"relu", 0}, {"scale", 1.5}};
  s.rows = 4096;
  s.cols = 1024;
  s.inner = 128;
  EXPECT_EQ(s.tokens(), (std::vector<std::string>{"linear", "relu", "scale"}));
  EXPECT_EQ(s.camel_name(), "LinearReluScale");
  EXPECT_EQ(s.family_name(), "matmul");
  EXPECT_EQ(s.level(), 2);
  EXPECT_EQ(describe(s), "torch.relu(linear(x)) * 1.5");
  EXPECT_EQ(task_source(s),
            "\"\"\"Curriculum task (matmul): torch.relu(linear(x)) * 1.5.\"\"\"\n"
            "import torch\n"
            "import torch.nn as nn\n\n"
            "ROWS = 4096\n"
            "COLS = 1024\n"
            "INNER = 128\n"
            "SCALABLE = (\"ROWS\", \"COLS\", \"INNER\")\n\n\n"
            "class Model(nn.Module):\n"
            "    def __init__(self, inner, cols):\n"
            "        super().__init__()\n"
            "        self.linear = nn.Linear(inner, cols)\n\n"
            "    def forward(self, x):\n"
            "        v = self.linear(x)\n"
            "        v = torch.relu(v)\n"
            "        v = v * 1.5\n"
            "        return v\n\n\n"
            "def get_inputs():\n"
            "    return [torch.randn(ROWS, INNER)]\n\n\n"
            "def get_init_inputs():\n"
            "    return [INNER, COLS]\n");
}

TEST(TaskSource, OperandsKeepTheirPrecedence) {
  TaskSpec s;
  s.chain = {{"neg", 0}, {"square", 0}, {"shift", -1}, {"scale", 2}};
  EXPECT_EQ(describe(s), "(((-x) * (-x)) + -1) * 2");
}

TEST(TaskSource, ANormalizationWithItsAffine) {
  TaskSpec s;
  s.family = Family::rowwise;
  s.chain = {{"gelu", 0}};
  s.kind = "rms_norm";
  s.affine = "scale_bias";
  s.rows = 2048;
  s.cols = 512;
  EXPECT_EQ(s.tokens(), (std::vector<std::string>{"gelu", "rms_norm", "affine_scale_bias"}));
  EXPECT_EQ(s.camel_name(), "GeluRmsNormScaleBias");
  const std::string src = task_source(s);
  for (const char* line : {"EPS = 1e-5\n", "    def __init__(self, cols, eps):\n", "        self.eps = eps\n",
                           "        self.weight = nn.Parameter(torch.rand(cols) + 0.5)\n",
                           "        self.bias = nn.Parameter(torch.randn(cols))\n",
                           "        v = torch.nn.functional.gelu(v, approximate=\"tanh\")\n",
                           "        v = v * torch.rsqrt(v.pow(2).mean(dim=-1, keepdim=True) + self.eps)\n",
                           "        v = v * self.weight\n", "        v = v + self.bias\n", "    return [COLS, EPS]\n"})
    EXPECT_NE(src.find(line), std::string::npos) << line << "\n" << src;

  TaskSpec r;
  r.family = Family::rowwise;
  r.kind = "max";
  EXPECT_EQ(r.tokens(), std::vector<std::string>{"max"});
  EXPECT_EQ(r.level(), 1);
  EXPECT_EQ(task_source(r).find("self.eps"), std::string::npos);
  EXPECT_NE(task_source(r).find("        v = v.amax(dim=-1)\n"), std::string::npos);
}

}  // namespace task_source_test
