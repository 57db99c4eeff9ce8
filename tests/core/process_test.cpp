// core::Process: pipes, deadlines, exit statuses, limits, process groups and network isolation,
// checked against real children (sh), not mocks.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/process.h"

using namespace vinci::core;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace process_test {

static SpawnOptions shell(const std::string& script) {
  SpawnOptions o;
  o.argv = {"sh", "-c", script};
  return o;
}

TEST(Process, ReadsLinesAndExitCode) {
  Process p = Process::spawn(shell("read x; echo got:$x; echo second; exit 3"));
  ASSERT_TRUE(p.write("hello\n"));
  std::string line;
  ASSERT_EQ(p.read_line(line, 5s), Process::Read::line);
  EXPECT_EQ(line, "got:hello");
  ASSERT_EQ(p.read_line(line, 5s), Process::Read::line);
  EXPECT_EQ(line, "second");
  EXPECT_EQ(p.read_line(line, 5s), Process::Read::eof);
  const ExitStatus st = p.wait();
  EXPECT_TRUE(st.exited);
  EXPECT_EQ(st.code, 3);
}

// A child outlives the thread that started it: the evaluator pool starts its judges from the
// threads of one run and uses them in the next. (The kernel sends PR_SET_PDEATHSIG when the
// forking thread ends, not the process; a judge forked by a run's thread was killed between runs.)
TEST(Process, AChildOutlivesTheThreadThatSpawnedIt) {
  std::optional<Process> p;
  std::thread([&] { p.emplace(Process::spawn(shell("read x; echo got:$x"))); }).join();
  std::this_thread::sleep_for(300ms);
  ASSERT_TRUE(p->running()) << "killed when its spawning thread ended: " << p->wait().describe();
  ASSERT_TRUE(p->write("late\n"));
  std::string line;
  ASSERT_EQ(p->read_line(line, 5s), Process::Read::line);
  EXPECT_EQ(line, "got:late");
}

TEST(Process, DeadlineThenKill) {
  Process p = Process::spawn(shell("sleep 30"));
  std::string line;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(p.read_line(line, 200ms), Process::Read::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  p.kill_group();
  const ExitStatus st = p.wait();
  EXPECT_FALSE(st.exited);
  EXPECT_EQ(st.signal, SIGKILL);
}

TEST(Process, ReportsTheKillingSignal) {
  Process p = Process::spawn(shell("kill -SEGV $$"));
  const ExitStatus st = p.wait();
  EXPECT_FALSE(st.exited);
  EXPECT_EQ(st.signal, SIGSEGV);
  EXPECT_NE(st.describe().find("signal 11"), std::string::npos);
}

TEST(Process, KillingTheGroupTakesDescendants) {
  Process p = Process::spawn(shell("sleep 60 & echo $!; wait"));
  std::string line;
  ASSERT_EQ(p.read_line(line, 5s), Process::Read::line);
  const pid_t grandchild = std::stoi(line);
  ASSERT_EQ(::kill(grandchild, 0), 0);
  p.kill_group();
  p.wait();
  for (int i = 0; i < 100 && ::kill(grandchild, 0) == 0; ++i) std::this_thread::sleep_for(20ms);
  // The grandchild may linger as a zombie of init for a moment; it must not be running sleep.
  const bool gone = ::kill(grandchild, 0) != 0 || !fs::exists(fs::path("/proc") / std::to_string(grandchild) / "exe");
  EXPECT_TRUE(gone);
}

TEST(Process, FileSizeLimitStopsWrites) {
  const fs::path dir = fs::temp_directory_path() / ("vinci-fsize-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SpawnOptions o = shell("head -c 3000000 /dev/zero > big.bin; echo done");
  o.cwd = dir;
  o.limits.file_size_bytes = 1 << 20;
  const Completed c = run_to_completion(o, 30s);
  EXPECT_LE(fs::file_size(dir / "big.bin"), 1u << 20);
  fs::remove_all(dir);
}

TEST(Process, EnvironmentAndWorkingDirectory) {
  SpawnOptions o = shell("echo $VINCI_PROBE; pwd");
  o.env["VINCI_PROBE"] = "42";
  o.cwd = "/";
  const Completed c = run_to_completion(o, 10s);
  EXPECT_EQ(c.out, "42\n/\n");
  EXPECT_TRUE(c.status.exited);
}

// The deadline is long enough for a loaded machine to start the shell and print, and far below
// the child's own 30 s.
TEST(Process, RunToCompletionTimesOut) {
  const Completed c = run_to_completion(shell("echo early; sleep 30"), 3s);
  EXPECT_TRUE(c.timed_out);
  EXPECT_EQ(c.out, "early\n");
  EXPECT_FALSE(c.status.exited);
}

TEST(Process, MissingProgramIsAnErrorNamingIt) {
  SpawnOptions o;
  o.argv = {"/nonexistent/vinci-no-such-program"};
  try {
    Process::spawn(o);
    FAIL() << "spawn should throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("vinci-no-such-program"), std::string::npos);
  }
}

TEST(Process, NetworkNamespaceHasOnlyLoopback) {
  SpawnOptions o = shell("echo $VINCI_NETNS; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
  o.isolate_network = true;
  const Completed c = run_to_completion(o, 10s);
  if (!network_isolation_available()) {
    EXPECT_EQ(c.out.substr(0, 2), "0\n");  // the worker then falls back to banning sockets
    GTEST_SKIP() << "this kernel refuses network namespaces";
  }
  EXPECT_EQ(c.out, "1\nlo\n");
}
}  // namespace process_test
