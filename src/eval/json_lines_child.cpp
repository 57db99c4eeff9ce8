#include "eval/json_lines_child.h"

#include <csignal>

namespace vinci::eval {

void JsonLinesChild::start(const core::SpawnOptions& options) {
  stop();
  process_.emplace(core::Process::spawn(options));
  live_pid_ = process_->pid();
}

bool JsonLinesChild::running() { return process_ && process_->running(); }

core::Process::Read JsonLinesChild::exchange(const std::string& line, std::chrono::seconds timeout,
                                             std::string& reply) {
  if (!process_ || !process_->write(line + "\n")) return core::Process::Read::eof;
  return process_->read_line(reply, timeout);
}

core::Process::Read JsonLinesChild::read_line(std::string& line, std::chrono::seconds timeout) {
  if (!process_) return core::Process::Read::eof;
  return process_->read_line(line, timeout);
}

std::optional<core::ExitStatus> JsonLinesChild::stop() {
  live_pid_ = -1;
  if (!process_) return std::nullopt;
  process_->kill_group();
  const core::ExitStatus status = process_->wait();
  process_.reset();
  return status;
}

void JsonLinesChild::kill_async() const {
  // The group first (the child's own sandboxes and compilers), then the child, which may have
  // left it.
  if (const pid_t pid = live_pid_; pid > 0) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
}

}  // namespace vinci::eval
