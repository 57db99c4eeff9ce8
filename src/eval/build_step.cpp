#include "eval/build_step.h"

#include <chrono>

#include <fmt/format.h>

#include "core/process.h"

namespace vinci::eval {

BuildOutcome run_build(const std::filesystem::path& candidate_file, const Task& task, const EvalConfig& config,
                       const std::filesystem::path& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::filesystem::path scratch = config.cache_dir / "scratch" / ("build-" + candidate_file.stem().string());
  std::filesystem::create_directories(scratch);
  std::filesystem::create_directories(log.parent_path());
  core::SpawnOptions o;
  // Absolute paths: the build runs in its own scratch directory.
  o.argv = {config.python, "-m", "vinci_worker", "build", "--candidate", std::filesystem::absolute(candidate_file).string(),
            "--task", std::filesystem::absolute(task.file).string(), "--cache", std::filesystem::absolute(config.cache_dir).string(), "--scale", std::to_string(config.scale), "--policy",
            nlohmann::json{{"torch_ops", config.torch_ops}, {"allow_precision_drop", config.allow_precision_drop}}.dump()};
  o.env["PYTHONPATH"] = config.worker_path.string();
  o.env["PYTHONDONTWRITEBYTECODE"] = "1";
  o.env["TRITON_CACHE_DIR"] = (config.cache_dir / "triton").string();
  o.env["TORCH_EXTENSIONS_DIR"] = (config.cache_dir / "torch_extensions").string();
  // Builds run side by side, so each gets a share of the cores rather than all of them.
  o.env["MAX_JOBS"] = std::to_string(std::max(1, config.build_jobs > 1 ? 2 : 1));
  o.env["HOME"] = scratch.string();
  if (config.device == "cpu") o.env["CUDA_VISIBLE_DEVICES"] = "";
  o.cwd = scratch;
  o.stderr_path = log;
  o.isolate_network = true;
  o.limits.file_size_bytes = 2ull << 30;  // object files and libraries, not candidate output
  o.limits.max_processes = 4096;

  BuildOutcome out;
  core::Completed c;
  try {
    c = core::run_to_completion(o, config.compile_timeout);
  } catch (const std::exception& e) {
    out.verdict = Verdict::runtime_error;
    out.reason = "build_not_started";
    out.message = e.what();
    return out;
  }
  std::filesystem::remove_all(scratch);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (c.timed_out) {
    out.verdict = Verdict::timeout;
    out.reason = "compile_timeout";
    out.message = fmt::format("building took longer than {} s (log: {})", config.compile_timeout.count(), log.string());
    return out;
  }
  // The report is the last line of stdout; the candidate's own prints went to the log.
  nlohmann::json j;
  std::string report = c.out;
  while (!report.empty() && report.back() == '\n') report.pop_back();
  if (const auto nl = report.rfind('\n'); nl != std::string::npos) report.erase(0, nl + 1);
  try {
    j = nlohmann::json::parse(report);
  } catch (const nlohmann::json::exception&) {
    out.verdict = c.status.exited ? Verdict::compile_error : Verdict::runtime_error;
    out.reason = c.status.exited ? "build_exited" : "build_crashed";
    out.message = fmt::format("the build process ended ({}) without a report; see {}", c.status.describe(), log.string());
    return out;
  }
  out.static_report = j.value("static", nlohmann::json::object());
  out.ok = j.value("ok", false);
  if (!out.ok) {
    out.verdict = verdict_from_string(j.value("class", "compile_error"));
    out.reason = j.value("reason", "");
    out.message = j.value("message", "");
  }
  return out;
}

}  // namespace vinci::eval
