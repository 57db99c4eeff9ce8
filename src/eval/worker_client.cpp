#include "eval/worker_client.h"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace vinci::eval {

namespace fs = std::filesystem;

WorkerClient::WorkerClient(WorkerSpec spec, const EvalConfig& config) : spec_(std::move(spec)), config_(config) {}

void WorkerClient::start() {
  fs::create_directories(spec_.log.parent_path());
  core::SpawnOptions o;
  o.argv = {config_.python, "-m",
            "vinci_worker", "judge",
            "--device",     spec_.device == "cuda" ? "cuda:0" : "cpu",
            "--cache",      config_.cache_dir.string(),
            "--sandbox",    config_.sandbox_path.string(),
            "--max-pids",   std::to_string(config_.max_pids)};
  o.env["PYTHONPATH"] = config_.worker_path.string();
  o.env["PYTHONUNBUFFERED"] = "1";
  o.env["PYTHONDONTWRITEBYTECODE"] = "1";
  if (spec_.gpu)
    o.env["CUDA_VISIBLE_DEVICES"] = *spec_.gpu;
  else if (spec_.device == "cpu")
    o.env["CUDA_VISIBLE_DEVICES"] = "";
  o.stderr_path = spec_.log;
  o.isolate_network = true;
  child_.start(o);
  info_ = nlohmann::json();
  WorkerReply r = request({{"op", "hello"}}, std::chrono::seconds(300));
  if (r.kind != WorkerReply::Kind::ok)
    throw std::runtime_error(fmt::format("the {} judge did not start: {} {}", spec_.device, r.description,
                                         r.body.is_null() ? "" : r.body.dump()));
  info_ = r.body;
  spdlog::debug("judge {} ready: {}", spec_.device, info_.dump());
}

const nlohmann::json& WorkerClient::info() {
  if (!child_.running()) start();
  return info_;
}

void WorkerClient::kill_async() const { child_.kill_async(); }

void WorkerClient::restart() {
  if (child_.stop()) ++restarts_;
}

std::string WorkerClient::log_tail() const {
  std::ifstream in(spec_.log, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<long long>(in.tellg());
  const long long from = std::max(0LL, size - 3000);
  in.seekg(from);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (from > 0) {
    const auto nl = tail.find('\n');
    if (nl != std::string::npos) tail.erase(0, nl + 1);
  }
  // Keep the last dozen lines: enough for a traceback's end.
  size_t pos = tail.size();
  for (int lines = 0; lines < 12 && pos > 0; ++lines) {
    pos = tail.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  return tail.substr(pos);
}

WorkerReply WorkerClient::request(const nlohmann::json& req, std::chrono::seconds timeout) {
  if (!child_.running()) {
    if (req.value("op", "") != "hello") start();
  }
  WorkerReply reply;
  std::string line;
  switch (child_.exchange(req.dump(), timeout, line)) {
    case core::Process::Read::line:
      try {
        reply.body = nlohmann::json::parse(line);
        reply.kind = reply.body.value("ok", false) ? WorkerReply::Kind::ok : WorkerReply::Kind::failed;
        if (reply.body.value("fatal", false)) restart();
        return reply;
      } catch (const nlohmann::json::exception& e) {
        reply.kind = WorkerReply::Kind::crashed;
        reply.description =
            fmt::format("the worker wrote a line that is not JSON ({}): {}", e.what(), line.substr(0, 200));
      }
      break;
    case core::Process::Read::timeout:
      reply.kind = WorkerReply::Kind::timeout;
      reply.description = fmt::format("no reply to '{}' within {} s; the worker was killed and restarted",
                                      req.value("op", "?"), timeout.count());
      restart();
      return reply;
    case core::Process::Read::eof: reply.kind = WorkerReply::Kind::crashed; break;
  }
  // The worker is gone (or talking nonsense): find out how it ended.
  const core::ExitStatus st = child_.stop().value_or(core::ExitStatus{});
  ++restarts_;
  reply.signal = st.exited ? 0 : st.signal;
  const std::string how = fmt::format("the worker died during '{}' ({})", req.value("op", "?"), st.describe());
  reply.description = reply.description.empty() ? how : reply.description + "; " + how;
  const std::string tail = log_tail();
  if (!tail.empty()) reply.description += "\nlast lines of its log:\n" + tail;
  return reply;
}

}  // namespace vinci::eval
