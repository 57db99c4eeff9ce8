// A trusted Python child spoken to in JSON lines: one request line out, one reply line back.
//
// The judge (worker_client) and the build server (build_step) are both such a child: started
// lazily, killed with their whole process group when they overrun or die, and killable from another
// thread when a run is stopped. What a line means, the timeouts and the restart policy stay with
// them; this holds only the process.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "core/process.h"

namespace vinci::eval {

class JsonLinesChild {
 public:
  JsonLinesChild() = default;
  ~JsonLinesChild() { stop(); }
  JsonLinesChild(const JsonLinesChild&) = delete;
  JsonLinesChild& operator=(const JsonLinesChild&) = delete;

  // Starts the child (stopping one still running); throws std::runtime_error when it cannot start.
  void start(const core::SpawnOptions& options);
  // Started and not yet exited.
  bool running();
  // Writes one line (a newline is added) and reads the next: eof when the child is gone or could
  // not take the line, timeout when it said nothing in time (it is left running: the caller decides).
  core::Process::Read exchange(const std::string& line, std::chrono::seconds timeout, std::string& reply);
  // Reads one line the child writes unasked (the build server's greeting).
  core::Process::Read read_line(std::string& line, std::chrono::seconds timeout);
  // Kills the child's process group and reaps it; how it ended (nothing when none was running).
  std::optional<core::ExitStatus> stop();
  // Kills the child from another thread: a request in flight then reads eof.
  void kill_async() const;

 private:
  std::optional<core::Process> process_;
  std::atomic<pid_t> live_pid_{-1};  // for kill_async, which must not touch process_
};

}  // namespace vinci::eval
