#include "eval/cache_janitor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "core/utf8.h"

namespace vinci::eval {

namespace fs = std::filesystem;

namespace {

struct JanitorEntry {
  std::string kind;
  fs::path path;
  uint64_t bytes = 0;
  fs::file_time_type last_use;
  bool dead_scratch = false;
};

// The apparent size of a file, or of everything under a folder (symlinks count nothing: they are
// not followed, so nothing outside the cache is measured).
uint64_t entry_bytes(const fs::path& p) {
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (ec) return 0;
  if (fs::is_regular_file(st)) {
    const auto n = fs::file_size(p, ec);
    return ec ? 0 : n;
  }
  if (!fs::is_directory(st)) return 0;
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e;
    if (it->is_regular_file(e) && !it->is_symlink(e)) {
      const auto n = it->file_size(e);
      if (!e) total += n;
    }
  }
  return total;
}

std::optional<fs::file_time_type> entry_mtime(const fs::path& p) {
  std::error_code ec;
  const auto t = fs::last_write_time(p, ec);
  if (ec) return std::nullopt;
  return t;
}

// Every regular file under dir (recursively), as entries of one kind.
void add_file_entries(const fs::path& dir, const std::string& kind, std::vector<JanitorEntry>& out) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e;
    if (!it->is_regular_file(e) || it->is_symlink(e)) continue;
    const auto t = entry_mtime(it->path());
    const auto n = it->file_size(e);
    if (t && !e) out.push_back({kind, it->path(), n, *t});
  }
}

// ext/<key>/: last used at the newer of the folder's mtime and its .used stamp's.
void add_extension_entries(const fs::path& dir, std::vector<JanitorEntry>& out) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e;
    if (!it->is_directory(e) || it->is_symlink(e)) continue;
    auto t = entry_mtime(it->path());
    if (!t) continue;
    if (const auto used = entry_mtime(it->path() / ".used")) t = std::max(*t, *used);
    out.push_back({"ext", it->path(), entry_bytes(it->path()), *t});
  }
}

// The pid a scratch entry belongs to: its name's first all-digit '-'-separated field.
std::optional<pid_t> scratch_owner_pid(const std::string& name) {
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('-', start), name.size());
    const std::string_view field(name.data() + start, end - start);
    if (!field.empty() && field.size() <= 9 && field.find_first_not_of("0123456789") == std::string_view::npos) {
      const long pid = std::stol(std::string(field));
      if (pid > 1) return static_cast<pid_t>(pid);  // 0 and 1 name no worker: never "dead"
      return std::nullopt;
    }
    start = end + 1;
  }
  return std::nullopt;
}

bool owner_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

void add_dead_scratch_entries(const fs::path& dir, std::vector<JanitorEntry>& out) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto owner = scratch_owner_pid(it->path().filename().string());
    if (!owner || owner_alive(*owner)) continue;
    const auto t = entry_mtime(it->path());
    if (!t) continue;
    out.push_back({"scratch", it->path(), entry_bytes(it->path()), *t, /*dead_scratch=*/true});
  }
}

// Deletes ext/<key>/ under its lock; false when another process holds the lock (or it cannot be taken).
bool evict_extension(const fs::path& folder, bool& locked) {
  locked = false;
  const fs::path lock = folder.string() + ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    locked = errno == EWOULDBLOCK;
    ::close(fd);
    return false;
  }
  std::error_code ec;
  fs::remove_all(folder, ec);
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return !ec;
}

}  // namespace

size_t SweepReport::entries() const {
  size_t n = 0;
  for (const auto& [kind, e] : evicted) n += e.entries;
  return n;
}

uint64_t SweepReport::bytes() const {
  uint64_t n = 0;
  for (const auto& [kind, e] : evicted) n += e.bytes;
  return n;
}

std::string SweepReport::describe() const {
  std::string kinds;
  for (const auto& [kind, e] : evicted)
    kinds += fmt::format("{}{} {} ({} bytes)", kinds.empty() ? "" : ", ", e.entries, kind, e.bytes);
  std::string line = fmt::format("cache {} -> {} bytes (budget {}): evicted {}", bytes_before, bytes_after,
                                 budget_bytes, kinds.empty() ? "nothing" : kinds);
  if (skipped_locked) line += fmt::format("; {} extension folders in use were kept", skipped_locked);
  if (!under_budget()) line += "; still over budget (the rest was in use or recently used)";
  return line;
}

SweepReport sweep_cache(const fs::path& root, const JanitorSettings& settings, fs::file_time_type now) {
  SweepReport report;
  report.budget_bytes = settings.budget_bytes;
  report.bytes_before = report.bytes_after = entry_bytes(root);
  if (report.bytes_before <= settings.budget_bytes) return report;

  std::vector<JanitorEntry> entries;
  add_extension_entries(root / "ext", entries);
  add_file_entries(root / "results", "results", entries);
  add_file_entries(root / "baselines", "baselines", entries);
  add_file_entries(root / "candidates", "candidates", entries);
  add_file_entries(root / "logs", "logs", entries);
  add_dead_scratch_entries(root / "scratch", entries);
  // Dead scratch first, then least recently used first; the path breaks ties, so a sweep is repeatable.
  std::sort(entries.begin(), entries.end(), [](const JanitorEntry& a, const JanitorEntry& b) {
    if (a.dead_scratch != b.dead_scratch) return a.dead_scratch;
    if (a.last_use != b.last_use) return a.last_use < b.last_use;
    return a.path < b.path;
  });

  const auto target = static_cast<uint64_t>(settings.target * static_cast<double>(settings.budget_bytes));
  const auto newest = now - settings.min_age;
  for (const auto& e : entries) {
    if (report.bytes_after <= target) break;
    if (e.last_use > newest) continue;
    bool evicted = false;
    if (e.kind == "ext") {
      bool locked = false;
      evicted = evict_extension(e.path, locked);
      report.skipped_locked += locked;
    } else {
      std::error_code ec;
      fs::remove_all(e.path, ec);
      evicted = !ec;
    }
    if (!evicted) continue;
    report.bytes_after -= std::min(report.bytes_after, e.bytes);
    auto& count = report.evicted[e.kind];
    ++count.entries;
    count.bytes += e.bytes;
    report.evicted_paths.push_back(e.path);
  }
  return report;
}

uint64_t cap_log_file(const fs::path& log, size_t keep_bytes) {
  const int fd = ::open(log.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    throw std::runtime_error(fmt::format("cannot open log {} to cap it: {}", log.string(), std::strerror(errno)));
  }
  const auto fail = [&](const char* what) {
    const std::string message = fmt::format("{} {} failed: {}", what, log.string(), std::strerror(errno));
    ::close(fd);
    throw std::runtime_error(message);
  };
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < 0) fail("measuring");
  const auto total = static_cast<uint64_t>(size);
  // Room for the marker: a capped log is never cut again, to replace one marker by another.
  constexpr uint64_t kMarkerRoom = 256;
  if (total <= 2 * static_cast<uint64_t>(keep_bytes) + kMarkerRoom) {
    ::close(fd);
    return 0;
  }
  const auto read_at = [&](off_t at, size_t n) {
    std::string buf(n, '\0');
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd, buf.data() + done, n - done, at + static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("reading");
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    buf.resize(done);
    return buf;
  };
  // Each region with the byte beyond it (after the head, before the tail), to tell whether the cut
  // falls on a line end or a character boundary. The head is kept up to its last line end and the
  // tail from its first line start, where the regions hold one; else the cut falls between characters.
  const std::string head = read_at(0, keep_bytes + 1);
  const std::string tail = read_at(size - static_cast<off_t>(keep_bytes) - 1, keep_bytes + 1);
  const size_t head_nl = std::string_view(head).substr(0, keep_bytes).rfind('\n');
  const std::string_view kept_head = head_nl != std::string_view::npos ? std::string_view(head).substr(0, head_nl + 1)
                                                                       : core::utf8_prefix(head, keep_bytes);
  const size_t tail_nl = std::string_view(tail).substr(0, keep_bytes).find('\n');
  const std::string_view kept_tail = tail_nl != std::string_view::npos ? std::string_view(tail).substr(tail_nl + 1)
                                                                       : core::utf8_suffix(tail, keep_bytes);
  const uint64_t cut = total - kept_head.size() - kept_tail.size();
  const std::string marker =
      fmt::format("{}[vinci: {} bytes cut from the middle of this log, which kept its first and last {} bytes]\n",
                  kept_head.empty() || kept_head.back() == '\n' ? "" : "\n", cut, keep_bytes);
  if (cut <= marker.size()) {
    ::close(fd);
    return 0;
  }
  // The head stays where it is: the marker and the tail are written after it, and the file cut there.
  std::string rest = marker;
  rest.append(kept_tail);
  size_t done = 0;
  while (done < rest.size()) {
    const ssize_t n = ::pwrite(fd, rest.data() + done, rest.size() - done, static_cast<off_t>(kept_head.size() + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("writing");
    done += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(kept_head.size() + rest.size())) != 0) fail("truncating");
  ::close(fd);
  return cut;
}

}  // namespace vinci::eval
