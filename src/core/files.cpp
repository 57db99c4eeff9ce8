#include "core/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

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

LineWriter::LineWriter(const std::filesystem::path& path, bool append) : path_(path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open {} for writing: {}", path.string(), std::strerror(errno)));
}

LineWriter::~LineWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void LineWriter::write_line(std::string_view line) {
  std::string buf(line);
  buf.push_back('\n');
  write_all(fd_, buf, path_);
}

}  // namespace vinci::core
