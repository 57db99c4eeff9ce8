#include "train/run_folder.h"

#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "train/checkpoint.h"

namespace vinci::train {

namespace fs = std::filesystem;

void refuse_earlier_run(const fs::path& out, bool resume) {
  if (!resume && (latest_checkpoint(out / "checkpoints") || fs::exists(out / "final")))
    throw std::runtime_error(
        fmt::format("{} holds an earlier run: pass --resume to continue it, or another --out", out.string()));
}

void drop_metrics_after_checkpoint(const fs::path& out) {
  int64_t resumed = 0;
  if (const auto latest = latest_checkpoint(out / "checkpoints"))
    resumed = read_trainer_state(*latest).at("step").get<int64_t>();
  const fs::path file = out / "metrics.jsonl";
  std::string kept;
  if (fs::exists(file))
    for (const auto& line : core::read_jsonl_lines(file)) {
      nlohmann::json row;
      try {
        row = nlohmann::json::parse(line.text);
      } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(fmt::format("{}:{}: not JSON: {}", file.string(), line.number, e.what()));
      }
      if (row.value("step", int64_t{0}) <= resumed) kept += line.text + "\n";
    }
  core::write_file_atomic(file, kept);
}

}  // namespace vinci::train
