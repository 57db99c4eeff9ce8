// What a scripted model answers each agent role on the CPU fixture task
// (tests/fixtures/agents/level1/1_RowwiseRelu.py, slow by construction), for the tests that drive
// the agents end to end: selection picks the first skill it is shown (plus an unknown one), the
// policy writes a slow kernel (32 launches) and then a fast one (1 launch, ~30x faster on the
// fixture's shape, and ~50x faster than eager; the null scheme first answers without code), the
// summary proposes one sound skill and one that bypasses the kernel, and a greedy call (the
// verifier's rerun) writes the fast kernel.
//
// The kernels reuse tasks/solutions/cpu/level1/13_ReLU.py's extension, which the pipeline tests build
// into the same extension cache ($VINCI_TEST_CACHE): no extra compile.
#pragma once

#include <filesystem>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"

namespace vinci::test {

// A CPU reference solution (ReLU unless named) with ModelNew's forward replaced.
inline std::string kernel_with_forward(const std::string& forward_body,
                                       const std::string& solution_id = "level1/13_ReLU") {
  const std::string solution =
      core::read_file(std::filesystem::path(VINCI_SOURCE_ROOT) / "tasks/solutions/cpu" / (solution_id + ".py"));
  const size_t cls = solution.find("class ModelNew");
  return solution.substr(0, cls) +
         "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
         "    def forward(self, x):\n" +
         forward_body;
}

inline const std::string kSlowKernel = kernel_with_forward(
    "        x = x.contiguous()\n        for _ in range(31):\n            _ext.relu_cpu(x)\n        return "
    "_ext.relu_cpu(x)\n");
inline const std::string kFastKernel = kernel_with_forward("        return _ext.relu_cpu(x.contiguous())\n");

// The same two kernels in a file of ~300 tokens instead of ~10,000, for tests that train on the
// policy's answers (at the price of one more extension build).
inline std::string small_kernel(const std::string& forward_body) {
  return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n"
         "_CPP_SRC = r\"\"\"\n#include <torch/extension.h>\n\n"
         "torch::Tensor relu_all(torch::Tensor x) {\n"
         "  TORCH_CHECK(x.is_contiguous(), \"relu_all: x must be contiguous\");\n"
         "  auto out = torch::empty_like(x);\n"
         "  const float* in = x.data_ptr<float>();\n"
         "  float* o = out.data_ptr<float>();\n"
         "  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] > 0.f ? in[i] : 0.f;\n"
         "  return out;\n}\n\"\"\"\n\n"
         "_ext = load_inline(name=\"vinci_test_relu_all\", cpp_sources=_CPP_SRC, functions=[\"relu_all\"],\n"
         "                   extra_cflags=[\"-O2\"], verbose=False)\n\n\n"
         "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
         "    def forward(self, x):\n" +
         forward_body;
}

struct ScriptedKernels {
  std::string slow, fast;
};

// A KernelBench solution made slow: ModelNew.forward computes its returned expression `repeats`
// times (the kernel launched again and again), and returns the last.
inline std::string repeated_forward(const std::string& solution, int repeats) {
  const size_t cls = solution.find("class ModelNew");
  std::smatch m;
  static const std::regex ret(R"(\n([ \t]+)return ([^\n]+))");
  const std::string tail = solution.substr(cls);
  if (cls == std::string::npos || !std::regex_search(tail, m, ret)) return solution;
  const std::string loop = fmt::format("\n{0}for _ in range({1}):\n{0}    {2}", m[1].str(), repeats - 1, m[2].str());
  return solution.substr(0, cls) + tail.substr(0, static_cast<size_t>(m.position(0))) + loop +
         tail.substr(static_cast<size_t>(m.position(0)));
}
inline const ScriptedKernels kSharedSourceKernels{kSlowKernel, kFastKernel};
inline const ScriptedKernels kSmallKernels{small_kernel("        x = x.contiguous()\n        for _ in range(31):\n     "
                                                        "       _ext.relu_all(x)\n        return _ext.relu_all(x)\n"),
                                           small_kernel("        return _ext.relu_all(x.contiguous())\n")};

inline const char* const kSkillContent =
    "## Motivation\nWhen a reference applies an elementwise op slice by slice, launch and dispatch overhead, not "
    "arithmetic, sets the time.\n## Key Idea\nMake the input contiguous and cover every element in one launch; a row "
    "index, where needed, is computed inside the kernel from the flat index.\n## Example\n```cpp\nfor (int64_t i = 0; "
    "i < n; ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;\n```\n";
inline const char* const kSoundSkillName = "single_launch_elementwise";

inline std::string policy_answer(const std::string& strategy, const std::string& code, int id) {
  // A draft inside the reasoning: the next turn must see the answer's code, not this.
  return fmt::format(
      "<think>draft:\n```python\nclass ModelNew: pass  # draft {}\n```\n</think>\nStrategy: {} (reply {})\n"
      "```python\n{}```\n",
      id, strategy, id, code);
}

inline std::string selection_answer(const std::string& user, int id) {
  std::smatch m;
  static const std::regex first(R"(\n1\. (\S+))");
  const std::string name = std::regex_search(user, m, first) ? m[1].str() : "none";
  return nlohmann::json{
      {"name", "select_skills"},
      {"arguments",
       {{"think", fmt::format("reply {}", id)},
        {"selected_skills", {{{"name", name}, {"reason", "fits"}}, {{"name", "made_up_skill"}, {"reason", "?"}}}}}}}
      .dump();
}

inline std::string summary_answer(int id) {
  const nlohmann::json sound = {
      {"name", kSoundSkillName},
      {"description", "Replace per-slice launches of an elementwise op with one launch over the whole tensor."},
      {"scope", "elementwise and row-independent ops whose reference loops over slices"},
      {"tags", {"elementwise", "launch_overhead"}},
      {"content", kSkillContent}};
  const nlohmann::json bypass = {
      {"name", "use_torch_relu"},
      {"description", "Call PyTorch's own operator."},
      {"scope", "any elementwise op"},
      {"tags", {"elementwise"}},
      {"content",
       "## Motivation\nFast.\n## Key Idea\nCall torch.relu(x) on the whole tensor.\n"
       "## Example\n`return torch.relu(x)`, which PyTorch already vectorizes well enough.\n"}};
  return fmt::format("<think>reply {}</think><tool_call>{}</tool_call>", id,
                     nlohmann::json{{"name", "update_skill_library"},
                                    {"arguments", {{"think", "one launch"}, {"new_skills", {sound, bypass}}}}}
                         .dump());
}

// The script: the answer to a chat request, by its system prompt, the assistant turns so far and
// the temperature. id numbers the replies, so every answer is distinct.
template <typename Messages>
std::string scripted_answer(const Messages& messages, double temperature, int id,
                            const ScriptedKernels& kernels = kSharedSourceKernels) {
  const std::string system = messages.at(0).at("content");
  int assistant_turns = 0;
  for (const auto& m : messages) assistant_turns += m.at("role") == "assistant";
  if (system.starts_with("You choose optimization skills")) return selection_answer(messages.at(1).at("content"), id);
  if (system.starts_with("You maintain a library")) return summary_answer(id);
  if (temperature == 0.0) return policy_answer("one launch over the whole tensor, verifying", kernels.fast, id);
  if (assistant_turns == 0 && system.find("## Skills to apply") == std::string::npos)
    return fmt::format("<think>no idea yet (reply {})</think>I would rather not write code today.", id);
  if (assistant_turns == 0) return policy_answer("call the kernel repeatedly", kernels.slow, id);
  return policy_answer("one launch over the whole tensor", kernels.fast, id);
}

}  // namespace vinci::test
