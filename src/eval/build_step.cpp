#include "eval/build_step.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::eval {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

BuildStep::BuildStep(const EvalConfig& config, int id)
    : config_(config),
      scratch_(config.cache_dir / "scratch" / fmt::format("build-server-{}-{}", ::getpid(), id)),
      log_(config.cache_dir / "logs" / fmt::format("build-server-{}.log", id)) {}

BuildStep::~BuildStep() {
  stop();
  std::error_code ec;
  fs::remove_all(scratch_, ec);
}

void BuildStep::start() {
  fs::create_directories(scratch_);
  fs::create_directories(log_.parent_path());
  core::SpawnOptions o;
  o.argv = {config_.python, "-m", "vinci_worker", "build-server", "--cache", fs::absolute(config_.cache_dir).string()};
  o.env["PYTHONPATH"] = config_.worker_path.string();
  o.env["PYTHONDONTWRITEBYTECODE"] = "1";
  o.env["TRITON_CACHE_DIR"] = (config_.cache_dir / "triton").string();
  o.env["TORCH_EXTENSIONS_DIR"] = (config_.cache_dir / "torch_extensions").string();
  // Builds run side by side, so each gets a share of the cores rather than all of them.
  o.env["MAX_JOBS"] = std::to_string(std::max(1, config_.build_jobs > 1 ? 2 : 1));
  o.env["HOME"] = scratch_.string();
  if (config_.device == "cpu") o.env["CUDA_VISIBLE_DEVICES"] = "";
  o.cwd = scratch_;
  o.stderr_path = log_;
  o.isolate_network = true;
  o.limits.file_size_bytes = 2ull << 30;  // object files and libraries, not candidate output
  o.limits.max_processes = 4096;
  server_.emplace(core::Process::spawn(o));
  std::string hello;
  if (server_->read_line(hello, std::chrono::seconds(300)) != core::Process::Read::line) {
    stop();
    throw std::runtime_error(fmt::format("the build server did not start ({} -m vinci_worker build-server); see {}",
                                         config_.python, log_.string()));
  }
}

void BuildStep::stop() {
  if (!server_) return;
  server_->kill_group();
  server_->wait();
  server_.reset();
}

BuildOutcome BuildStep::run(const fs::path& candidate_file, const Task& task, const fs::path& log) {
  const auto t0 = Clock::now();
  // Under this step's own folder: two steps may build the same candidate at once (agents often
  // write identical files), and each removes its scratch when done.
  const fs::path scratch = scratch_ / ("build-" + candidate_file.stem().string());
  fs::create_directories(scratch);
  fs::create_directories(log.parent_path());
  BuildOutcome out;
  auto finish = [&] {
    std::error_code ec;
    fs::remove_all(scratch, ec);
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
  };
  try {
    if (!server_ || !server_->running()) start();
  } catch (const std::exception& e) {
    out.verdict = Verdict::runtime_error;
    out.reason = "build_not_started";
    out.message = e.what();
    return finish();
  }
  // Absolute paths: the build runs in its own scratch directory.
  const nlohmann::json request = {
      {"candidate", fs::absolute(candidate_file).string()},
      {"task", fs::absolute(task.file).string()},
      {"scale", config_.scale},
      {"scratch", fs::absolute(scratch).string()},
      {"log", fs::absolute(log).string()},
      {"policy", {{"torch_ops", config_.torch_ops}, {"allow_precision_drop", config_.allow_precision_drop}}}};
  std::string line;
  pid_t child = -1;
  auto lost_server = [&](const std::string& what) {
    if (child > 0) ::kill(-child, SIGKILL);
    stop();
    out.verdict = Verdict::runtime_error;
    out.reason = "build_crashed";
    out.message = fmt::format("the build server {}; see {}", what, log.string());
    return finish();
  };
  if (!server_->write(request.dump() + "\n") ||
      server_->read_line(line, std::chrono::seconds(60)) != core::Process::Read::line)
    return lost_server("stopped before it started the build");
  try {
    child = nlohmann::json::parse(line).at("child").get<pid_t>();
  } catch (const nlohmann::json::exception&) {
    return lost_server("answered out of protocol: " + line.substr(0, 200));
  }
  switch (server_->read_line(line, config_.compile_timeout)) {
    case core::Process::Read::line:
      break;
    case core::Process::Read::timeout:
      ::kill(-child, SIGKILL);  // the child leads its own group: its compiler processes go too
      stop();
      out.verdict = Verdict::timeout;
      out.reason = "compile_timeout";
      out.message = fmt::format("building took longer than {} s (log: {})", config_.compile_timeout.count(), log.string());
      return finish();
    case core::Process::Read::eof:
      return lost_server("died during the build (the candidate may have killed it)");
  }
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    return lost_server("answered out of protocol: " + line.substr(0, 200));
  }
  const nlohmann::json& report = reply["report"];
  if (!report.is_object()) {
    const std::string status = reply.value("status", "?");
    const bool exited = status.rfind("exit", 0) == 0;
    out.verdict = exited ? Verdict::compile_error : Verdict::runtime_error;
    out.reason = exited ? "build_exited" : "build_crashed";
    out.message = fmt::format("the build process ended ({}) without a report; see {}", status, log.string());
    return finish();
  }
  out.static_report = report.value("static", nlohmann::json::object());
  out.ok = report.value("ok", false);
  if (!out.ok) {
    out.verdict = verdict_from_string(report.value("class", "compile_error"));
    out.reason = report.value("reason", "");
    out.message = report.value("message", "");
  }
  return finish();
}

}  // namespace vinci::eval
