#include "curriculum/manifest.h"

#include <fmt/format.h>

#include "core/files.h"
#include "core/setup_error.h"
#include "curriculum/ops.h"

namespace vinci::curriculum {

nlohmann::ordered_json manifest_record(const CurriculumTask& t) {
  nlohmann::ordered_json chain = nlohmann::ordered_json::array();
  for (const auto& s : t.spec.chain) {
    nlohmann::ordered_json step{{"op", s.op}};
    if (elementwise_op(s.op).takes_constant) step["constant"] = s.constant;
    chain.push_back(step);
  }
  nlohmann::ordered_json j{{"id", t.id},
                           {"split", t.held_out ? "heldout" : "train"},
                           {"family", to_string(t.spec.family)},
                           {"chain", chain}};
  if (t.spec.family == Family::rowwise) {
    j["kind"] = t.spec.kind;
    j["affine"] = t.spec.affine;
  }
  j["rows"] = t.spec.rows;
  j["cols"] = t.spec.cols;
  if (t.spec.family == Family::matmul) j["inner"] = t.spec.inner;
  j["tokens"] = t.spec.tokens();
  return j;
}

namespace {

CurriculumTask task_of(const nlohmann::json& j) {
  const auto field = [&](const char* name) -> const nlohmann::json& {
    if (!j.contains(name)) throw std::invalid_argument(fmt::format("{}: missing", name));
    return j.at(name);
  };
  CurriculumTask t;
  t.id = field("id").get<std::string>();
  const std::string split = field("split").get<std::string>();
  if (split != "train" && split != "heldout")
    throw std::invalid_argument(fmt::format("split: '{}' is not train or heldout", split));
  t.held_out = split == "heldout";
  const std::string family = field("family").get<std::string>();
  if (family != "elementwise" && family != "rowwise" && family != "matmul")
    throw std::invalid_argument(fmt::format("family: '{}' is not elementwise, rowwise or matmul", family));
  t.spec.family = family == "elementwise" ? Family::elementwise
                  : family == "rowwise"   ? Family::rowwise
                                          : Family::matmul;
  for (const auto& step : field("chain")) {
    OpStep s{step.at("op").get<std::string>(), step.value("constant", 0.0)};
    try {
      elementwise_op(s.op);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("chain: {}", e.what()));
    }
    t.spec.chain.push_back(s);
  }
  if (t.spec.family == Family::rowwise) {
    t.spec.kind = field("kind").get<std::string>();
    try {
      row_kind(t.spec.kind);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("kind: {}", e.what()));
    }
    t.spec.affine = field("affine").get<std::string>();
  }
  t.spec.rows = field("rows").get<int64_t>();
  t.spec.cols = field("cols").get<int64_t>();
  if (t.spec.rows < 1 || t.spec.cols < 1) throw std::invalid_argument("rows, cols: must be positive");
  if (t.spec.family == Family::matmul) {
    t.spec.inner = field("inner").get<int64_t>();
    if (t.spec.inner < 1) throw std::invalid_argument("inner: must be positive");
  }
  return t;
}

}  // namespace

std::vector<CurriculumTask> read_manifest(const std::filesystem::path& dir) {
  const auto file = dir / "curriculum.jsonl";
  if (!std::filesystem::exists(file))
    throw core::SetupError(fmt::format("{}: no such file; make a curriculum with `vinci curriculum --out {}`",
                                       file.string(), dir.string()));
  std::vector<CurriculumTask> out;
  for (const auto& line : core::read_jsonl_lines(file)) {
    try {
      out.push_back(task_of(nlohmann::json::parse(line.text)));
    } catch (const std::exception& e) {
      throw core::SetupError(fmt::format("{}:{}: {}", file.string(), line.number, e.what()));
    }
  }
  return out;
}

}  // namespace vinci::curriculum
