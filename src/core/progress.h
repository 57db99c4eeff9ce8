// A progress bar on stderr: redrawn in place on a terminal, a line every few seconds in logs.
//
// A progress bar on stderr: redrawn in place on a terminal, a line every few seconds otherwise
// (CI logs), so long runs always show that they are alive.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace vinci::core {

class Progress {
 public:
  Progress(std::string label, size_t total, bool enabled = true);
  ~Progress();
  void advance(const std::string& note);  // one item done; note names it
  void finish();

 private:
  void draw(bool force);
  std::string label_;
  size_t total_, done_ = 0;
  bool enabled_, tty_, finished_ = false;
  std::string note_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::mutex mu_;
};

}  // namespace vinci::core
