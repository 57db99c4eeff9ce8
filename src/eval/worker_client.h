// One python evaluation worker (python/vinci_worker) and its JSON-lines pipe.
//
// The worker is started lazily, sandboxed (own process group, rlimits, network namespace,
// scratch directory), and restarted after it crashes, hangs, or says its state is no longer
// clean; the caller never sees a dead worker, only a classified reply.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/process.h"
#include "eval/config.h"

namespace vinci::eval {

struct WorkerSpec {
  std::string device;              // "cpu" or "cuda"
  std::optional<std::string> gpu;  // the entry exported as CUDA_VISIBLE_DEVICES
  std::filesystem::path scratch;   // the worker's working directory
  std::filesystem::path log;       // the worker's stderr
};

struct WorkerReply {
  enum class Kind { ok, failed, timeout, crashed } kind = Kind::ok;
  nlohmann::json body;      // the worker's reply (ok and failed)
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

 private:
  void start();
  std::string log_tail() const;
  WorkerSpec spec_;
  const EvalConfig& config_;
  std::optional<core::Process> process_;
  nlohmann::json info_;
  int restarts_ = 0;
};

}  // namespace vinci::eval
