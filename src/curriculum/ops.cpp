#include "curriculum/ops.h"

#include <stdexcept>

#include <fmt/format.h>

namespace vinci::curriculum {

const std::vector<ElementwiseOp>& elementwise_ops() {
  // Bounded or gently growing ops only: a chain of six stays finite for the evaluator's larger
  // out-of-distribution inputs (no exp).
  static const std::vector<ElementwiseOp> ops{
      {"relu", "Relu", "torch.relu(v)"},
      {"gelu", "Gelu", "torch.nn.functional.gelu(v, approximate=\"tanh\")"},
      {"sigmoid", "Sigmoid", "torch.sigmoid(v)"},
      {"tanh", "Tanh", "torch.tanh(v)"},
      {"silu", "Silu", "torch.nn.functional.silu(v)"},
      {"square", "Square", "v * v"},
      {"abs", "Abs", "torch.abs(v)"},
      {"neg", "Neg", "-v"},
      {"scale", "Scale", "v * {c}", true},
      {"shift", "Shift", "v + {c}", true},
  };
  return ops;
}

const ElementwiseOp& elementwise_op(std::string_view name) {
  for (const auto& op : elementwise_ops())
    if (op.name == name) return op;
  throw std::invalid_argument(fmt::format("'{}' is not an elementwise op of the curriculum", name));
}

const std::vector<RowKind>& row_kinds() {
  static const std::vector<RowKind> kinds{
      {"sum", "RowSum", "v = v.sum(dim=-1)", true},
      {"max", "RowMax", "v = v.amax(dim=-1)", true},
      {"mean", "RowMean", "v = v.mean(dim=-1)", true},
      {"softmax", "Softmax", "v = torch.softmax(v, dim=-1)"},
      {"log_softmax", "LogSoftmax", "v = torch.log_softmax(v, dim=-1)"},
      {"rms_norm", "RmsNorm", "v = v * torch.rsqrt(v.pow(2).mean(dim=-1, keepdim=True) + self.eps)", false, true},
      {"layer_norm", "LayerNorm", "v = torch.nn.functional.layer_norm(v, (v.shape[-1],), eps=self.eps)", false, true},
  };
  return kinds;
}

const RowKind& row_kind(std::string_view name) {
  for (const auto& k : row_kinds())
    if (k.name == name) return k;
  throw std::invalid_argument(fmt::format("'{}' is not a row-wise kind of the curriculum", name));
}

}  // namespace vinci::curriculum
