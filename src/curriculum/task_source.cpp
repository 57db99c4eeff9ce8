#include "curriculum/task_source.h"

#include <fmt/format.h>

#include "curriculum/ops.h"

namespace vinci::curriculum {

namespace {

// The op's PyTorch expression over v with its constant filled in; repr-exact, so the file computes
// with the very constant the manifest records.
std::string expression(const OpStep& step) {
  std::string e(elementwise_op(step.op).torch_expr);
  if (const auto at = e.find("{c}"); at != std::string::npos) e.replace(at, 3, fmt::format("{:.17g}", step.constant));
  return e;
}

std::string applied(const OpStep& step, const std::string& inner) {
  const std::string e = expression(step);
  // An operator expression goes in as one operand: relu(x) + 1 scaled is (relu(x) + 1) * 2.
  int depth = 0;
  bool compound = inner.rfind('-', 0) == 0;
  for (const char ch : inner) {
    depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
    compound = compound || (ch == ' ' && depth == 0);
  }
  const std::string operand = compound && e.find('(') != 0 && e.rfind("torch.", 0) != 0 ? "(" + inner + ")" : inner;
  std::string out;
  for (size_t i = 0; i < e.size(); ++i) {
    const bool is_v = e[i] == 'v' && (i == 0 || !std::isalnum(static_cast<unsigned char>(e[i - 1]))) &&
                      (i + 1 == e.size() || !std::isalnum(static_cast<unsigned char>(e[i + 1])));
    out += is_v ? operand : std::string(1, e[i]);
  }
  return out;
}

}  // namespace

std::string describe(const TaskSpec& spec) {
  std::string v = spec.family == Family::matmul ? "linear(x)" : "x";
  for (const auto& s : spec.chain) v = applied(s, v);
  if (spec.family != Family::rowwise) return v;
  std::string out = fmt::format("{}({}) over each row", spec.kind, v);
  if (spec.affine == "scale") out += ", times a learned per-column scale";
  if (spec.affine == "scale_bias") out += ", times a learned per-column scale plus a learned bias";
  return out;
}

namespace {

// A Linear layer and its epilogue: the weight and bias nn.Linear draws, the input (rows, inner).
std::string matmul_source(const TaskSpec& spec) {
  std::string forward = "        v = self.linear(x)\n";
  for (const auto& s : spec.chain) forward += fmt::format("        v = {}\n", expression(s));
  return fmt::format(
      "\"\"\"Curriculum task (matmul): {what}.\"\"\"\n"
      "import torch\n"
      "import torch.nn as nn\n\n"
      "ROWS = {rows}\n"
      "COLS = {cols}\n"
      "INNER = {inner}\n"
      "SCALABLE = (\"ROWS\", \"COLS\", \"INNER\")\n\n\n"
      "class Model(nn.Module):\n"
      "    def __init__(self, inner, cols):\n"
      "        super().__init__()\n"
      "        self.linear = nn.Linear(inner, cols)\n\n"
      "    def forward(self, x):\n"
      "{forward}"
      "        return v\n\n\n"
      "def get_inputs():\n"
      "    return [torch.randn(ROWS, INNER)]\n\n\n"
      "def get_init_inputs():\n"
      "    return [INNER, COLS]\n",
      fmt::arg("what", describe(spec)), fmt::arg("rows", spec.rows), fmt::arg("cols", spec.cols),
      fmt::arg("inner", spec.inner), fmt::arg("forward", forward));
}

}  // namespace

std::string task_source(const TaskSpec& spec) {
  if (spec.family == Family::matmul) return matmul_source(spec);
  const bool rowwise = spec.family == Family::rowwise;
  const RowKind* kind = rowwise ? &row_kind(spec.kind) : nullptr;
  const bool norm = kind && kind->takes_affine;
  std::string init_params = "self", init_body, init_inputs;
  if (norm) {
    init_params += ", cols, eps";
    init_body += "        self.eps = eps\n";
    // Random, not all-ones or zero, so that a kernel ignoring them is caught.
    if (spec.affine != "none") init_body += "        self.weight = nn.Parameter(torch.rand(cols) + 0.5)\n";
    if (spec.affine == "scale_bias") init_body += "        self.bias = nn.Parameter(torch.randn(cols))\n";
    init_inputs = "COLS, EPS";
  }
  std::string forward = "        v = x\n";
  for (const auto& s : spec.chain) forward += fmt::format("        v = {}\n", expression(s));
  if (kind) forward += fmt::format("        {}\n", kind->torch_statement);
  if (spec.affine != "none") forward += "        v = v * self.weight\n";
  if (spec.affine == "scale_bias") forward += "        v = v + self.bias\n";
  forward += "        return v\n";
  return fmt::format(
      "\"\"\"Curriculum task ({family}): {what}.\"\"\"\n"
      "import torch\n"
      "import torch.nn as nn\n\n"
      "ROWS = {rows}\n"
      "COLS = {cols}\n"
      "{eps}"
      "SCALABLE = (\"ROWS\", \"COLS\")\n\n\n"
      "class Model(nn.Module):\n"
      "    def __init__({init_params}):\n"
      "        super().__init__()\n"
      "{init_body}\n"
      "    def forward(self, x):\n"
      "{forward}\n\n"
      "def get_inputs():\n"
      "    return [torch.randn(ROWS, COLS)]\n\n\n"
      "def get_init_inputs():\n"
      "    return [{init_inputs}]\n",
      fmt::arg("family", to_string(spec.family)), fmt::arg("what", describe(spec)), fmt::arg("rows", spec.rows),
      fmt::arg("cols", spec.cols), fmt::arg("eps", norm ? "EPS = 1e-5\n" : ""), fmt::arg("init_params", init_params),
      fmt::arg("init_body", init_body), fmt::arg("forward", forward), fmt::arg("init_inputs", init_inputs));
}

}  // namespace vinci::curriculum
