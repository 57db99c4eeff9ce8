#include "eval/build_step.h"

#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

namespace vinci::eval {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

BuildStep::BuildStep(const EvalConfig& config, int id, bool static_only)
    : config_(config),
      static_only_(static_only),
      log_(config.cache_dir / "logs" / fmt::format("build-server-{}-{}.log", ::getpid(), id)) {}

void BuildStep::start() {
  fs::create_directories(log_.parent_path());
  core::SpawnOptions o;
  o.argv = {config_.python,      "-m",
            "vinci_worker",      "build-server",
            "--device",          config_.device == "cpu" ? "cpu" : "cuda",
            "--cache",           fs::absolute(config_.cache_dir).string(),
            "--sandbox",         config_.sandbox_path.string(),
            "--compile-timeout", std::to_string(config_.compile_timeout.count()),
            "--compile-memory",  std::to_string(config_.compile_memory_bytes),
            "--compile-cpu",     std::to_string(config_.compile_cpu_seconds),
            "--compile-disk",    std::to_string(config_.compile_disk_bytes),
            "--compile-output",  std::to_string(config_.compile_output_bytes),
            "--max-pids",        std::to_string(config_.max_pids)};
  o.env["PYTHONPATH"] = config_.worker_path.string();
  o.env["PYTHONDONTWRITEBYTECODE"] = "1";
  // Builds run side by side, so each gets a share of the cores rather than all of them.
  o.env["MAX_JOBS"] = std::to_string(std::max(1, config_.build_jobs > 1 ? 2 : 1));
  if (config_.device == "cpu") o.env["CUDA_VISIBLE_DEVICES"] = "";
  o.stderr_path = log_;
  o.isolate_network = true;
  server_.start(o);
  std::string hello;
  if (server_.read_line(hello, std::chrono::seconds(300)) != core::Process::Read::line) {
    server_.stop();
    throw std::runtime_error(fmt::format("the build server did not start ({} -m vinci_worker build-server); see {}",
                                         config_.python, log_.string()));
  }
}

void BuildStep::kill_async() const { server_.kill_async(); }

BuildRequest BuildStep::request(const fs::path& candidate_file, const Task& task, const fs::path& log) const {
  BuildRequest r;
  r.candidate = fs::absolute(candidate_file).string();
  r.task = fs::absolute(task.file).string();
  r.scale = config_.scale;
  r.log = fs::absolute(log).string();
  r.import_timeout = config_.import_timeout.count();
  r.cpu_seconds = config_.cpu_seconds;
  r.address_space = config_.device == "cpu" ? config_.cpu_memory_limit : 0;
  r.torch_ops = config_.torch_ops;
  r.allow_precision_drop = config_.allow_precision_drop;
  r.static_only = static_only_;
  return r;
}

BuildOutcome BuildStep::run(const fs::path& candidate_file, const Task& task, const fs::path& log) {
  const auto t0 = Clock::now();
  BuildOutcome out;
  auto finish = [&] {
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
  };
  try {
    if (!server_.running()) start();
  } catch (const std::exception& e) {
    out.verdict = Verdict::runtime_error;
    out.reason = "build_not_started";
    out.message = e.what();
    return finish();
  }
  auto lost_server = [&](const std::string& what) {
    server_.stop();
    out.verdict = Verdict::runtime_error;
    out.reason = "build_crashed";
    out.message = fmt::format("the build server {}; see {}", what, log_.string());
    return finish();
  };
  // The server bounds the import and each compile itself; this is the backstop for the server.
  const auto limit = config_.import_timeout + config_.compile_timeout * 4 + std::chrono::seconds(60);
  std::string line;
  switch (server_.exchange(to_json(request(candidate_file, task, log)).dump(), limit, line)) {
    case core::Process::Read::line: break;
    case core::Process::Read::timeout:
      server_.stop();
      out.verdict = Verdict::timeout;
      out.reason = "compile_timeout";
      out.message = fmt::format("building took longer than {} s (log: {})", limit.count(), log.string());
      return finish();
    case core::Process::Read::eof: return lost_server("died during the build");
  }
  const Parsed<BuildReply> reply = parse_reply_line(line, build_reply_from_json);
  if (!reply.value)
    return lost_server(fmt::format("answered out of protocol ({}): {}", reply.error, line.substr(0, 200)));
  out = *reply.value;
  return finish();
}

}  // namespace vinci::eval
