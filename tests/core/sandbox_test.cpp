// vinci-sandbox (core/sandbox): what a sandboxed process can and cannot do, checked with real
// children (sh, the system's python3), not mocks. Where the host refuses bubblewrap the namespace
// cases are skipped, and say so; the seccomp cases hold in both modes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/process.h"

namespace sandbox_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
namespace core = vinci::core;

const std::string kLauncher = VINCI_SANDBOX_BINARY;

struct Run {
  core::ExitStatus status;
  std::string out, err;
};

Run sandboxed(std::vector<std::string> options, const std::vector<std::string>& command,
              std::map<std::string, std::string> env = {}) {
  static int n = 0;
  const fs::path err = fs::temp_directory_path() / fmt::format("sandbox-test-{}-{}.err", ::getpid(), n++);
  core::SpawnOptions o;
  o.argv = {kLauncher};
  o.argv.insert(o.argv.end(), options.begin(), options.end());
  o.argv.push_back("--");
  o.argv.insert(o.argv.end(), command.begin(), command.end());
  o.env = std::move(env);
  o.stderr_path = err;
  const auto c = core::run_to_completion(o, 60s);
  Run r{c.status, c.out, core::try_read_file(err).value_or("")};
  fs::remove(err);
  return r;
}

nlohmann::json probe(std::map<std::string, std::string> env = {}) {
  core::SpawnOptions o;
  o.argv = {kLauncher, "--probe"};
  o.env = std::move(env);
  return nlohmann::json::parse(core::run_to_completion(o, 60s).out);
}

bool namespaces() { return probe()["mode"] == "bwrap"; }

#define REQUIRE_NAMESPACES() \
  if (!namespaces()) GTEST_SKIP() << "bubblewrap is refused on this host: " << probe()["detail"].get<std::string>()

TEST(Sandbox, ProbeNamesTheMode) {
  const auto p = probe();
  EXPECT_TRUE(p["mode"] == "bwrap" || p["mode"] == "seccomp_only") << p.dump();
  const auto off = probe({{"VINCI_SANDBOX", "off"}});
  EXPECT_EQ(off["mode"], "seccomp_only");
  EXPECT_NE(off["describe"].get<std::string>().find("NO namespaces"), std::string::npos) << off.dump();
}

TEST(Sandbox, SystemIsReadOnlyHomeAndWorkAreHiddenScratchIsPrivate) {
  REQUIRE_NAMESPACES();
  const fs::path scratch = fs::temp_directory_path() / fmt::format("sandbox-scratch-{}", ::getpid());
  fs::create_directories(scratch);
  const fs::path here = fs::current_path();
  const auto r =
      sandboxed({"--tmpfs", scratch.string() + "=1048576", "--cwd", scratch.string(), "--env", "PATH=/usr/bin:/bin"},
                {"/bin/sh", "-c",
                 "touch /usr/vinci-x 2>/dev/null && echo usr-writable; "
                 "test -e " +
                     here.string() +
                     " && echo cwd-visible; "
                     "test -e /root/.bashrc && echo home-visible; test -e /etc/shadow && echo shadow-visible; "
                     "touch ok && echo scratch-ok; "
                     "dd if=/dev/zero of=big bs=1024 count=4096 2>/dev/null || echo tmpfs-full; echo done"});
  EXPECT_EQ(r.out, "scratch-ok\ntmpfs-full\ndone\n") << r.err;
  EXPECT_FALSE(fs::exists(scratch / "ok")) << "the scratch tmpfs wrote through to the host";
  fs::remove_all(scratch);
}

TEST(Sandbox, OwnPidNamespaceAndOnlyTheGivenEnvironment) {
  REQUIRE_NAMESPACES();
  const auto r = sandboxed({"--env", "ONLY=this"}, {"/bin/sh", "-c", "echo $$; env | grep -v '^PWD=' | sort"},
                           {{"SECRET_TOKEN", "leak"}});
  EXPECT_EQ(r.out, "2\nONLY=this\n") << r.err;
}

TEST(Sandbox, OnlyKeptDescriptorsReachTheCommand) {
  const int stray = ::open("/dev/null", O_RDONLY);  // inherited, not close-on-exec
  const int kept = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(stray, 3);
  const auto r = sandboxed({"--keep-fd", std::to_string(kept)},
                           {"/bin/sh", "-c",
                            fmt::format("test -e /proc/self/fd/{} && echo stray; test -e /proc/self/fd/{} "
                                        "&& echo kept",
                                        stray, kept)});
  ::close(stray);
  ::close(kept);
  EXPECT_EQ(r.out, "kept\n") << r.err;
}

// The filter holds in both modes: no ptrace, no socket but AF_UNIX, no new namespaces, no untraced clone, no mremap,
// no process that shares the caller's memory outside its thread group (clone(CLONE_VM) without CLONE_THREAD, vfork);
// threads and subprocesses still work (CPython falls back to fork).
TEST(Sandbox, SeccompRefusesPtraceInetSocketsAndNamespaces) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string script =
      "import ctypes, errno, os, socket\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "try:\n    socket.socket(socket.AF_INET); print('inet')\nexcept OSError as e: print('inet', e.errno)\n"
      "socket.socket(socket.AF_UNIX); print('unix')\n"
      "print('ptrace', libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno())\n"
      "print('unshare', libc.unshare(0x10000000), ctypes.get_errno())\n"
      "child = libc.syscall(56, 0x00800000 | 17, 0, 0, 0, 0)  # clone(CLONE_UNTRACED | SIGCHLD)\n"
      "if child == 0: os._exit(0)\n"
      "print('untraced', child, ctypes.get_errno())\n"
      "print('mremap', libc.syscall(25, 0, 4096, 8192, 1, 0), ctypes.get_errno())  # MREMAP_MAYMOVE\n"
      "shared = libc.syscall(56, 0x100 | 0x4000 | 17, 0, 0, 0, 0)  # clone(CLONE_VM | CLONE_VFORK | SIGCHLD)\n"
      "if shared == 0: os._exit(0)\n"
      "print('shared', shared, ctypes.get_errno())\n"
      "forked = libc.syscall(58)  # vfork\n"
      "if forked == 0: os._exit(0)\n"
      "print('vfork', forked, ctypes.get_errno())\n"
      "import subprocess, threading\n"
      "t = threading.Thread(target=lambda: None); t.start(); t.join(); print('thread')\n"
      "print('spawn', subprocess.run(['/bin/true']).returncode)\n";
  for (const auto& env :
       {std::map<std::string, std::string>{}, std::map<std::string, std::string>{{"VINCI_SANDBOX", "off"}}}) {
    const auto r = sandboxed({}, {"/usr/bin/python3", "-c", script}, env);
    EXPECT_EQ(r.out,
              fmt::format("inet {}\nunix\nptrace -1 {}\nunshare -1 {}\nuntraced -1 {}\nmremap -1 {}\nshared -1 {}\n"
                          "vfork -1 {}\nthread\nspawn 0\n",
                          EAFNOSUPPORT, EPERM, EPERM, EPERM, EPERM, EPERM, EPERM))
        << (env.empty() ? "bwrap" : "seccomp only") << ": " << r.err;
  }
}

TEST(Sandbox, PidsCgroupBoundsAForkBomb) {
  REQUIRE_NAMESPACES();
  if (!probe()["pids_cgroup"].get<bool>()) GTEST_SKIP() << "no pids cgroup on this host";
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = sandboxed({"--max-pids", "16", "--env", "PATH=/usr/bin:/bin"},
                           {"/bin/sh", "-c",
                            "n=0; for i in $(seq 64); do sleep 30 & n=$((n+1)); done; "
                            "echo started; kill $(jobs -p) 2>/dev/null; exit 0"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 25s);
  EXPECT_NE(r.err.find("fork"), std::string::npos) << "no fork failed under a limit of 16: " << r.out << r.err;
}

TEST(Sandbox, TheSandboxDiesWithItsLauncher) {
  REQUIRE_NAMESPACES();
  core::SpawnOptions o;
  o.argv = {kLauncher, "--", "/bin/sh", "-c", "exec sleep 61.2345"};
  core::Process p = core::Process::spawn(o);
  auto sleepers = [] {
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const auto cmd = core::try_read_file(e.path() / "cmdline");
      if (cmd && cmd->find("61.2345") != std::string::npos && cmd->rfind("sleep", 0) == 0) ++n;
    }
    return n;
  };
  for (int i = 0; i < 100 && sleepers() == 0; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(sleepers(), 1);
  ::kill(p.pid(), SIGKILL);  // no chance to clean up: the kernel's parent-death signals must do it
  p.wait();
  for (int i = 0; i < 100 && sleepers() > 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(sleepers(), 0);
}

}  // namespace sandbox_test
