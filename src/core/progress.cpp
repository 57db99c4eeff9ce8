#include "core/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "core/utf8.h"

namespace vinci::core {

Progress::Progress(std::string label, size_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      tty_(::isatty(2)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(const std::string& note) {
  std::lock_guard lock(mu_);
  ++done_;
  note_ = note;
  draw(done_ == total_);
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  if (finished_ || !enabled_) return;
  finished_ = true;
  if (tty_) std::fputc('\n', stderr);
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const auto since = now - last_draw_;
  if (!force && since < (tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000))) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double frac = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  const double eta = done_ ? elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) : 0.0;
  constexpr int width = 30;
  const int filled = static_cast<int>(frac * width);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(width, '.');
  std::string note = note_.size() > 40 ? "…" + std::string(utf8_suffix(note_, 39)) : note_;
  const std::string line =
      fmt::format("{} [{}] {}/{} {:.0f}s elapsed, ~{:.0f}s left  {}", label_, bar, done_, total_, elapsed, eta, note);
  if (tty_) {
    fmt::print(stderr, "\r\033[K{}", line);
  } else {
    fmt::print(stderr, "{}\n", line);
  }
  std::fflush(stderr);
}

}  // namespace vinci::core
