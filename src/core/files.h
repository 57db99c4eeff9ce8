// Whole-file reads and crash-safe writes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace vinci::core {

// Throws std::runtime_error naming the path when the file cannot be read.
std::string read_file(const std::filesystem::path& path);
std::optional<std::string> try_read_file(const std::filesystem::path& path);

// Writes to a temporary sibling, fsyncs and renames, so readers see the old file or the new one,
// never half of either.
void write_file_atomic(const std::filesystem::path& path, std::string_view data);

// Appends and flushes one line; used for results files that must survive an interrupted run.
class LineWriter {
 public:
  explicit LineWriter(const std::filesystem::path& path, bool append);
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  void write_line(std::string_view line);

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace vinci::core
