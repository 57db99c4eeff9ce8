// One judge (python -m vinci_worker judge) and its JSON-lines pipe.
//
// The judge is trusted: it never imports candidate code, which runs in sandboxed processes the
// judge starts per candidate. It is started lazily and restarted after it crashes or hangs; the
// caller never sees a dead judge, only a classified reply.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/config.h"
#include "eval/json_lines_child.h"

namespace vinci::eval {

struct WorkerSpec {
  std::string device;              // "cpu" or "cuda"
  std::optional<std::string> gpu;  // the entry exported as CUDA_VISIBLE_DEVICES
  std::filesystem::path log;       // the judge's stderr
};

// A reply as the pipe delivered it; eval/judge_protocol reads the body into the op's record.
struct WorkerReply {
  enum class Kind { ok, failed, timeout, crashed } kind = Kind::ok;
  nlohmann::json body;      // the worker's reply line (ok and failed)
  std::string description;  // for timeout and crashed: what happened, with the log's tail
  int signal = 0;           // crashed: the signal that killed the worker, if any
};

class WorkerClient {
 public:
  WorkerClient(WorkerSpec spec, const EvalConfig& config);

  // Sends one request; a timeout or crash kills the worker, which restarts on the next request.
  WorkerReply request(const nlohmann::json& req, std::chrono::seconds timeout);
  // The hello reply of the running worker (starting it if needed); throws when it cannot start.
  const nlohmann::json& info();
  void restart();  // kill now; the next request starts a fresh worker
  int restarts() const { return restarts_; }
  // Kills the judge from another thread (a request in flight then returns crashed).
  void kill_async() const;

 private:
  void start();
  std::string log_tail() const;
  WorkerSpec spec_;
  const EvalConfig& config_;
  JsonLinesChild child_;
  nlohmann::json info_;
  int restarts_ = 0;
};

}  // namespace vinci::eval
