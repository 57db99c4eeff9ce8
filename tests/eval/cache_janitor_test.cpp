// eval/cache_janitor: a temporary cache of hand-made entries with pinned ages, and the exact entries
// a sweep must evict, in order; the log cap on hand-written logs.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/files.h"
#include "eval/cache_janitor.h"

namespace cache_janitor_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using vinci::eval::cap_log_file;
using vinci::eval::JanitorSettings;
using vinci::eval::sweep_cache;

// A cache root with entries made by hand, their ages counted back from a pinned now.
class Cache {
 public:
  Cache() : root(fs::temp_directory_path() / ("vinci-janitor-test-" + std::to_string(::getpid()))) {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Cache() { fs::remove_all(root); }

  // A file of `bytes` bytes last written `age` ago.
  fs::path file(const std::string& rel, size_t bytes, std::chrono::minutes age) {
    const fs::path p = root / rel;
    vinci::core::write_file_atomic(p, std::string(bytes, 'x'));
    fs::last_write_time(p, now - age);
    return p;
  }
  // A folder with the given files in it, its own mtime `age` ago (set last: its files' creation moved it).
  fs::path folder(const std::string& rel, const std::vector<std::pair<std::string, size_t>>& files,
                  std::chrono::minutes age) {
    for (const auto& [name, bytes] : files) file(rel + "/" + name, bytes, age);
    fs::create_directories(root / rel);
    fs::last_write_time(root / rel, now - age);
    return root / rel;
  }

  const fs::file_time_type now = fs::file_time_type::clock::now();
  const fs::path root;
};

// The cache every sweep test starts from: 1400 bytes in all.
struct Entries {
  fs::path ext_old, ext_stamped, result, baseline, candidate, build_log, worker_log, live_scratch, inductor;
};

Entries make_entries(Cache& c) {
  Entries e;
  e.ext_old = c.folder("ext/aaaa", {{"vinci_a.so", 300}, {"main.cpp", 100}}, 50h);
  c.file("ext/aaaa.lock", 0, 50h);
  // Built 10 hours ago, loaded an hour ago: its .used stamp makes it one of the most recently used.
  e.ext_stamped = c.folder("ext/bbbb", {{"vinci_b.so", 300}}, 10h);
  c.file("ext/bbbb/.used", 0, 1h);
  fs::last_write_time(e.ext_stamped, c.now - 10h);
  e.result = c.file("results/ab/abkey.json", 50, 40h);
  e.baseline = c.file("baselines/cd/cdkey.json", 50, 30h);
  e.candidate = c.file("candidates/0123.py", 100, 20h);
  e.build_log = c.file("logs/build-0123.log", 200, 45h);
  e.worker_log = c.file("logs/worker-cpu.log", 100, 2h);
  // This process is alive, so its scratch stays however old; inductor/ is not the janitor's.
  e.live_scratch = c.folder("scratch/worker-cpu-" + std::to_string(::getpid()), {{"f", 100}}, 100h);
  e.inductor = c.file("inductor/blob", 100, 100h);
  return e;
}

JanitorSettings budget(uint64_t bytes, std::chrono::seconds min_age = 0s) {
  JanitorSettings s;
  s.budget_bytes = bytes;
  s.min_age = min_age;
  return s;
}

TEST(CacheJanitor, UnderBudgetEvictsNothing) {
  Cache c;
  make_entries(c);
  const auto r = sweep_cache(c.root, budget(1400), c.now);
  EXPECT_EQ(r.bytes_before, 1400u);
  EXPECT_EQ(r.bytes_after, 1400u);
  EXPECT_TRUE(r.evicted_paths.empty());
  EXPECT_TRUE(r.under_budget());
}

TEST(CacheJanitor, EvictsLeastRecentlyUsedUntilUnderNinetyPercent) {
  Cache c;
  const Entries e = make_entries(c);
  // Budget 1000, target 900: the 50-hour-old extension (400) and the 45-hour-old build log (200) go.
  const auto r = sweep_cache(c.root, budget(1000), c.now);
  EXPECT_EQ(r.evicted_paths, (std::vector<fs::path>{e.ext_old, e.build_log}));
  EXPECT_EQ(r.bytes_before, 1400u);
  EXPECT_EQ(r.bytes_after, 800u);
  EXPECT_EQ(r.evicted.at("ext").entries, 1u);
  EXPECT_EQ(r.evicted.at("ext").bytes, 400u);
  EXPECT_EQ(r.evicted.at("logs").bytes, 200u);
  EXPECT_EQ(r.entries(), 2u);
  EXPECT_EQ(r.bytes(), 600u);
  EXPECT_FALSE(fs::exists(e.ext_old));
  EXPECT_TRUE(fs::exists(c.root / "ext/aaaa.lock")) << "the lock file stays: a waiter may hold it open";
  EXPECT_TRUE(fs::exists(e.result));
  EXPECT_EQ(r.describe(), "cache 1400 -> 800 bytes (budget 1000): evicted 1 ext (400 bytes), 1 logs (200 bytes)");
}

TEST(CacheJanitor, UsedStampOrdersExtensionsAndLiveScratchAndForeignFoldersStay) {
  Cache c;
  const Entries e = make_entries(c);
  // Budget 500, target 450: everything of the janitor's goes but the live scratch and inductor/,
  // and the extension built 10 hours ago goes last, after the log written 2 hours ago, by its stamp.
  const auto r = sweep_cache(c.root, budget(500), c.now);
  EXPECT_EQ(r.evicted_paths, (std::vector<fs::path>{e.ext_old, e.build_log, e.result, e.baseline, e.candidate,
                                                    e.worker_log, e.ext_stamped}));
  EXPECT_EQ(r.bytes_after, 200u);
  EXPECT_TRUE(fs::exists(e.live_scratch));
  EXPECT_TRUE(fs::exists(e.inductor));
  EXPECT_EQ(r.evicted.at("results").entries, 1u);
  EXPECT_EQ(r.evicted.at("baselines").entries, 1u);
  EXPECT_EQ(r.evicted.at("candidates").bytes, 100u);
  EXPECT_EQ(r.evicted.count("scratch"), 0u);
}

TEST(CacheJanitor, HeldLocksAndRecentEntriesAreKept) {
  Cache c;
  const Entries e = make_entries(c);
  // Another open file description holds ext/aaaa's lock, as a loader building it would.
  const int fd = ::open((c.root / "ext/aaaa.lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  // Nothing used in the last 25 hours may go: of the older entries all but the locked extension go,
  // and the sweep cannot reach its target.
  const auto r = sweep_cache(c.root, budget(500, 25h), c.now);
  ::close(fd);
  EXPECT_EQ(r.evicted_paths, (std::vector<fs::path>{e.build_log, e.result, e.baseline}));
  EXPECT_EQ(r.skipped_locked, 1u);
  EXPECT_TRUE(fs::exists(e.ext_old / "vinci_a.so"));
  EXPECT_EQ(r.bytes_after, 1100u);
  EXPECT_FALSE(r.under_budget());
  EXPECT_EQ(r.describe(),
            "cache 1400 -> 1100 bytes (budget 500): evicted 1 baselines (50 bytes), 1 logs (200 bytes), 1 results (50 "
            "bytes); 1 extension folders in use were kept; still over budget (the rest was in use or recently used)");
}

TEST(CacheJanitor, ScratchOfAFinishedProcessGoesFirst) {
  Cache c;
  const Entries e = make_entries(c);
  // A pid that was alive and is not any more: a child that exited and was reaped.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  // Newer than everything else, yet first to go; a name with no pid in it is nobody's to judge.
  const fs::path dead = c.folder("scratch/build-server-" + std::to_string(child) + "-0", {{"x.o", 150}}, 1h);
  const fs::path unknown = c.folder("scratch/leftover", {{"y", 50}}, 100h);
  const auto r = sweep_cache(c.root, budget(1400), c.now);  // 1600 in all, target 1260
  EXPECT_EQ(r.evicted_paths, (std::vector<fs::path>{dead, e.ext_old}));
  EXPECT_EQ(r.evicted.at("scratch").bytes, 150u);
  EXPECT_TRUE(fs::exists(unknown));
  EXPECT_TRUE(fs::exists(e.live_scratch));
}

TEST(CacheJanitor, MissingRootIsEmpty) {
  const auto r = sweep_cache(fs::temp_directory_path() / "vinci-janitor-test-no-such-root", budget(0));
  EXPECT_EQ(r.bytes_before, 0u);
  EXPECT_TRUE(r.evicted_paths.empty());
}

// ---------------------------------------------------------------------------------------------------------------
// cap_log_file

std::string numbered_lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "line " + std::string(3 - std::to_string(i).size(), '0') + std::to_string(i) + "\n";
  return s;  // 9 bytes a line
}

TEST(CapLogFile, KeepsWholeLinesOfTheHeadAndTail) {
  Cache c;
  const fs::path log = c.file("logs/worker-cpu.log", 0, 0min);
  vinci::core::write_file_atomic(log, numbered_lines(100));  // 900 bytes
  // The first 100 bytes end inside line 11 and the last 100 begin at line 88's newline: lines 0-10
  // and 89-99 stay.
  EXPECT_EQ(cap_log_file(log, 100), 702u);
  const std::string all = numbered_lines(100);
  EXPECT_EQ(vinci::core::read_file(log),
            all.substr(0, 99) +
                "[vinci: 702 bytes cut from the middle of this log, which kept its first and last 100 bytes]\n" +
                all.substr(801));
  EXPECT_EQ(cap_log_file(log, 100), 0u) << "a capped log stays as it is";
}

TEST(CapLogFile, ShortLogsAndMissingOnesAreLeft) {
  Cache c;
  const fs::path log = c.file("logs/a.log", 200, 0min);
  EXPECT_EQ(cap_log_file(log, 100), 0u);
  EXPECT_EQ(fs::file_size(log), 200u);
  // Up to 2 x 100 + 256 bytes are room for the marker: not worth a cut.
  vinci::core::write_file_atomic(log, std::string(456, 'x'));
  EXPECT_EQ(cap_log_file(log, 100), 0u);
  EXPECT_EQ(fs::file_size(log), 456u);
  EXPECT_EQ(cap_log_file(c.root / "logs/none.log", 100), 0u);
}

TEST(CapLogFile, WithoutLineEndsCutsBetweenCharacters) {
  Cache c;
  const fs::path log = c.file("logs/b.log", 0, 0min);
  std::string text;
  for (int i = 0; i < 500; ++i) text += "\xc3\xa9";  // 'e' with an acute accent, 2 bytes: 1000 bytes
  vinci::core::write_file_atomic(log, text);
  // 101 bytes of head or tail would end or begin inside a character: 100 are kept.
  EXPECT_EQ(cap_log_file(log, 101), 800u);
  EXPECT_EQ(vinci::core::read_file(log),
            text.substr(0, 100) +
                "\n[vinci: 800 bytes cut from the middle of this log, which kept its first and last 101 bytes]\n" +
                text.substr(900));
}

}  // namespace cache_janitor_test
