#include "curriculum/task_spec.h"

#include "curriculum/ops.h"

namespace vinci::curriculum {

std::string_view to_string(Family f) {
  return f == Family::elementwise ? "elementwise" : f == Family::rowwise ? "rowwise" : "matmul";
}

bool TaskSpec::long_rows() const { return family == Family::rowwise && cols > kLongRowCols; }

bool TaskSpec::short_rows() const { return family == Family::rowwise && cols > 0 && cols <= kShortRowCols; }

std::string TaskSpec::family_name() const {
  if (long_rows()) return "long-rows";
  if (short_rows()) return "short-rows";
  return std::string(to_string(family));
}

std::vector<std::string> TaskSpec::tokens() const {
  std::vector<std::string> out;
  if (long_rows()) out.push_back("long_rows");
  if (short_rows()) out.push_back("short_rows");
  if (family == Family::matmul) out.push_back("linear");
  for (const auto& s : chain) out.push_back(s.op);
  if (family == Family::rowwise) {
    out.push_back(kind);
    if (row_kind(kind).takes_affine) out.push_back("affine_" + affine);
  }
  return out;
}

std::string TaskSpec::camel_name() const {
  std::string out = long_rows() ? "LongRows" : short_rows() ? "ShortRows" : family == Family::matmul ? "Linear" : "";
  for (const auto& s : chain) out += elementwise_op(s.op).camel;
  if (family == Family::rowwise) {
    out += row_kind(kind).camel;
    if (affine == "scale") out += "Scale";
    if (affine == "scale_bias") out += "ScaleBias";
  }
  return out;
}

int TaskSpec::level() const {
  const size_t ops = chain.size() + (family == Family::elementwise ? 0 : 1) + (affine == "none" ? 0 : 1);
  return ops <= 1 ? 1 : 2;
}

}  // namespace vinci::curriculum
