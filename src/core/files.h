// Whole-file reads and crash-safe writes, and line-flushed JSONL files that survive a kill.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vinci::core {

// Throws std::runtime_error naming the path when the file cannot be read.
std::string read_file(const std::filesystem::path& path);
std::optional<std::string> try_read_file(const std::filesystem::path& path);

// vinci's cache folder: $VINCI_CACHE, else $XDG_CACHE_HOME/vinci, else ~/.cache/vinci, else
// /tmp/vinci-cache; absolute.
std::filesystem::path cache_root();

// Writes to a temporary sibling, fsyncs and renames, so readers see the old file or the new one,
// never half of either.
void write_file_atomic(const std::filesystem::path& path, std::string_view data);

// Creates the folder `path` whole or not at all: `fill` writes into a hidden staging sibling, which
// is renamed into place only when fill returns, and removed when it throws, so an interrupted or
// failed run leaves nothing half-written under the name a user asked for. Throws core::SetupError
// when `path` exists already, since a second run over a first would mix their files.
void write_new_folder(const std::filesystem::path& path, const std::function<void(const std::filesystem::path&)>& fill);

// Appends and flushes one line; used for results files that must survive an interrupted run.
// Opened with append=true on a file whose last line is torn (no trailing '\n': a run killed in the
// middle of a write), it first cuts that tail off, with a warning naming the file and the bytes
// dropped: every record is written whole with its newline, so the tail was never a record, and
// appending after it would glue the next record onto it and spoil both lines. One writer at a time
// appends to a file (the tail is cut under an exclusive flock, but other writers do not take it).
class LineWriter {
 public:
  explicit LineWriter(const std::filesystem::path& path, bool append);
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  void write_line(std::string_view line);

 private:
  void drop_torn_tail();

  int fd_ = -1;
  std::filesystem::path path_;
};

// One complete line of a JSONL file: its text without the '\n', and its number in the file
// (counted from 1, blank lines included), so that a caller's parse error can name file and line.
struct JsonlLine {
  size_t number = 0;
  std::string text;
};

// The complete, non-blank lines of a JSONL file (results, metrics, journals, and files people
// write: skills, SFT data). A last line without its '\n' is kept when it is a whole JSON value (a
// hand-written file's last record); otherwise it is a record torn by a kill, skipped with a warning
// naming the file and the bytes skipped. What a complete line holds is the caller's to check; a malformed one is
// damage, not a kill, and callers report it by file and line. Throws std::runtime_error naming the path when the file
// cannot be read.
std::vector<JsonlLine> read_jsonl_lines(const std::filesystem::path& path);

}  // namespace vinci::core
