// Keeps the evaluator's cache within a byte budget: LRU eviction and capped logs.
//
// Keeps the evaluator's cache ($VINCI_CACHE, default ~/.cache/vinci) within a byte budget: every
// candidate of a long RL run adds a built extension, a candidate copy, a result and a build log,
// and nothing else ever removes them, so without this a run fills the disk.
//
// The janitor measures everything under the root and, when it is over budget, evicts the least
// recently used entries until it is under target x budget:
//   ext/<key>/            a built extension, as a whole folder. Last use: the newer of the folder's
//                         mtime (its build) and the mtime of ext/<key>/.used, a stamp the loader is
//                         to touch each time it loads the key. A folder whose ext/<key>.lock is held
//                         (a build or load in progress; tested with a non-blocking flock, and held
//                         while the folder is deleted) is skipped. The lock file itself stays: a
//                         process may already have it open and be waiting on it, and a new one
//                         would give two holders of "the" lock.
//   results/, baselines/  JSON entries (JsonCache touches an entry's mtime when it is read).
//   candidates/           content-addressed candidate copies (rewritten when used again).
//   logs/                 worker and build logs (their mtime is their last write).
//   scratch/<name>        only working folders whose process is gone: the first all-digit
//                         '-'-separated field of the name is the owner's pid (worker-<tag>-<pid>,
//                         build-server-<pid>-<n>), and while that pid is alive the entry stays. A name
//                         without such a field is never evicted. Dead scratch goes first: it is of use
//                         to no one.
// Anything else under the root (inductor/, other tools' folders) is counted but never evicted.
// Nothing used in the last min_age is evicted either, so a job's files are safe between their write
// and their use; the sweep then reports that it could not get under budget.
//
// Sizes are apparent sizes (st_size), so that a sweep is the same on every filesystem; the blocks
// of many small JSON entries are not counted.
//
// Use (EvaluatorPool, between batches, with the budget from the config):
//   const auto swept = eval::sweep_cache(config_.cache_dir, {.budget_bytes = config_.cache_budget_bytes});
//   if (swept.entries()) spdlog::info("{}", swept.describe());
// and, when a worker or build log is closed (or before it is shown in a crash report):
//   eval::cap_log_file(log, 64 * 1024);
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace vinci::eval {

struct JanitorSettings {
  uint64_t budget_bytes = 0;          // the cache may hold this much
  double target = 0.9;                // once over budget, evict down to target x budget_bytes
  std::chrono::seconds min_age{600};  // entries used more recently than this are never evicted
};

struct Eviction {
  size_t entries = 0;
  uint64_t bytes = 0;
};

struct SweepReport {
  uint64_t bytes_before = 0, bytes_after = 0;
  uint64_t budget_bytes = 0;
  std::map<std::string, Eviction> evicted;           // by kind: ext, results, baselines, candidates, logs, scratch
  std::vector<std::filesystem::path> evicted_paths;  // in the order they went
  size_t skipped_locked = 0;                         // ext folders passed over because their lock was held

  size_t entries() const;
  uint64_t bytes() const;
  bool under_budget() const { return bytes_after <= budget_bytes; }
  // One line: what went, by kind, and the size before and after.
  std::string describe() const;
};

// Measures the cache at root and evicts as described above. now is the clock's reading the ages
// are taken against (a parameter so that tests can pin it). A missing root is an empty cache.
SweepReport sweep_cache(const std::filesystem::path& root, const JanitorSettings& settings,
                        std::filesystem::file_time_type now = std::filesystem::file_time_type::clock::now());

// Caps one log in place: when it is longer than 2 x keep_bytes + 256 (the room for the marker, so
// that a capped log is left as it is), it becomes its first and last keep_bytes, cut at line ends
// where a line ends within them (else between UTF-8 characters, so the text stays writable as
// JSON), with a marker line between saying how many bytes were cut. Returns the number of bytes
// cut (0: left as it was, or missing). A process still appending to the log while it is cut may
// lose what it writes meanwhile.
uint64_t cap_log_file(const std::filesystem::path& log, size_t keep_bytes);

}  // namespace vinci::eval
