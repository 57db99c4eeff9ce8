#include "core/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/setup_error.h"

namespace vinci::core {

std::optional<std::string> try_read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_file(const std::filesystem::path& path) {
  auto text = try_read_file(path);
  if (!text) throw std::runtime_error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  return *text;
}

static void write_all(int fd, std::string_view data, const std::filesystem::path& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("writing {} failed: {}", path.string(), std::strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::filesystem::path cache_root() {
  std::filesystem::path root = "/tmp/vinci-cache";
  if (const char* c = std::getenv("VINCI_CACHE"); c && *c)
    root = c;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    root = std::filesystem::path(x) / "vinci";
  else if (const char* h = std::getenv("HOME"); h && *h)
    root = std::filesystem::path(h) / ".cache" / "vinci";
  return std::filesystem::absolute(root);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view data) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const std::filesystem::path tmp = path.string() + fmt::format(".{}.tmp", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot create {}: {}", tmp.string(), std::strerror(errno)));
  try {
    write_all(fd, data, tmp);
    ::fsync(fd);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  std::filesystem::rename(tmp, path);
}

void write_new_folder(const std::filesystem::path& path,
                      const std::function<void(const std::filesystem::path&)>& fill) {
  namespace fs = std::filesystem;
  if (fs::exists(path))
    throw SetupError(fmt::format("{}: exists; name a folder that does not exist yet", path.string()));
  fs::path target = fs::absolute(path).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/" names the folder "out"
  const fs::path staging = target.parent_path() / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
  fs::remove_all(staging);
  try {
    fs::create_directories(staging);
    fill(staging);
    fs::rename(staging, target);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
}

LineWriter::LineWriter(const std::filesystem::path& path, bool append) : path_(path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  // Appending reads the file's tail too (drop_torn_tail).
  fd_ = ::open(path.c_str(), O_CREAT | O_CLOEXEC | (append ? O_RDWR | O_APPEND : O_WRONLY | O_TRUNC), 0644);
  if (fd_ < 0)
    throw std::runtime_error(fmt::format("cannot open {} for writing: {}", path.string(), std::strerror(errno)));
  if (append) {
    try {
      drop_torn_tail();
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
}

void LineWriter::drop_torn_tail() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return;  // a pipe or /dev/stdout has no tail to cut
  ::flock(fd_, LOCK_EX);
  const auto unlock = [this] { ::flock(fd_, LOCK_UN); };
  try {
    const off_t size = ::lseek(fd_, 0, SEEK_END);
    // Back from the end, a block at a time, to the last newline: everything after it is the torn line.
    off_t keep = size;
    char block[4096];
    while (keep > 0) {
      const off_t start = keep > static_cast<off_t>(sizeof block) ? keep - static_cast<off_t>(sizeof block) : 0;
      const ssize_t n = ::pread(fd_, block, static_cast<size_t>(keep - start), start);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(fmt::format("reading {} failed: {}", path_.string(), std::strerror(errno)));
      }
      const ssize_t want = static_cast<ssize_t>(keep - start);
      if (n != want)
        throw std::runtime_error(fmt::format("{} shrank while it was opened for appending", path_.string()));
      ssize_t i = n;
      while (i > 0 && block[i - 1] != '\n') --i;
      if (i > 0) {
        keep = start + i;
        break;
      }
      keep = start;
    }
    if (keep < size) {
      if (::ftruncate(fd_, keep) != 0)
        throw std::runtime_error(
            fmt::format("cannot cut the torn last line off {}: {}", path_.string(), std::strerror(errno)));
      spdlog::warn(
          "{}: its last line was torn (no newline at the end, as an interrupted write leaves it); dropped its "
          "{} bytes before appending",
          path_.string(), size - keep);
    }
  } catch (...) {
    unlock();
    throw;
  }
  unlock();
}

LineWriter::~LineWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void LineWriter::write_line(std::string_view line) {
  std::string buf(line);
  buf.push_back('\n');
  write_all(fd_, buf, path_);
}

std::vector<JsonlLine> read_jsonl_lines(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  std::vector<JsonlLine> lines;
  size_t start = 0, number = 1;
  for (; start < text.size(); ++number) {
    const size_t end = text.find('\n', start);
    const bool complete = end != std::string::npos;
    std::string line = text.substr(start, complete ? end - start : std::string::npos);
    const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (!complete) {
      // A hand-written file's last record often lacks the newline: a whole JSON value is kept.
      if (!blank && nlohmann::json::accept(line))
        lines.push_back({number, std::move(line)});
      else if (!blank)
        spdlog::warn(
            "{}:{}: skipped a torn last line ({} bytes without the newline every record ends in, as an "
            "interrupted write leaves it)",
            path.string(), number, line.size());
      break;
    }
    if (!blank) lines.push_back({number, std::move(line)});
    start = end + 1;
  }
  return lines;
}

}  // namespace vinci::core
