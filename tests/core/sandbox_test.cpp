// vinci-sandbox (core/sandbox): what a sandboxed process can and cannot do, checked with real
// children (sh, the system's python3), not mocks. Where the host refuses bubblewrap the namespace
// cases are skipped, and say so; the seccomp cases hold in both modes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/process.h"
#include "core/sandbox.h"

namespace sandbox_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
namespace core = vinci::core;

const std::string kLauncher = VINCI_SANDBOX_BINARY;

struct Run {
  core::ExitStatus status;
  std::string out, err;
};

// How a sandboxed run ended, for a failure message: an empty output alone does not say whether the
// command ran, the launcher refused, or something killed it.
std::string ending(const Run& r) {
  return (r.status.exited ? "exit " + std::to_string(r.status.code) : "signal " + std::to_string(r.status.signal)) +
         ", stderr: " + (r.err.empty() ? "(empty)" : r.err);
}

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

// A multi-GPU host's /dev: with nvidia1 allowed, the other GPU's node is left out and every control
// node bound; with none named, every NVIDIA node; nothing else of /dev either way.
TEST(Sandbox, GpuNodesAreTheAllowedGpusAndTheControlNodes) {
  const std::vector<std::string> dev{
      "null",        "nvidia0",        "nvidia1",  "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
      "nvidia-caps", "nvidia-modeset", "nvidia10", "shm"};
  const std::vector<std::string> one{"nvidia-caps",      "nvidia-modeset", "nvidia-uvm",
                                     "nvidia-uvm-tools", "nvidia1",        "nvidiactl"};
  EXPECT_EQ(core::gpu_node_names(dev, {"nvidia1"}), one);
  const std::vector<std::string> all{"nvidia-caps", "nvidia-modeset", "nvidia-uvm", "nvidia-uvm-tools",
                                     "nvidia0",     "nvidia1",        "nvidia10",   "nvidiactl"};
  EXPECT_EQ(core::gpu_node_names(dev, {}), all);
}

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
  EXPECT_EQ(r.out, "scratch-ok\ntmpfs-full\ndone\n") << ending(r);
  EXPECT_FALSE(fs::exists(scratch / "ok")) << "the scratch tmpfs wrote through to the host";
  fs::remove_all(scratch);
}

TEST(Sandbox, OwnPidNamespaceAndOnlyTheGivenEnvironment) {
  REQUIRE_NAMESPACES();
  const auto r = sandboxed({"--env", "ONLY=this"}, {"/bin/sh", "-c", "echo $$; env | grep -v '^PWD=' | sort"},
                           {{"SECRET_TOKEN", "leak"}});
  EXPECT_EQ(r.out, "2\nONLY=this\n") << ending(r);
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
  EXPECT_EQ(r.out, "kept\n") << ending(r);
}

// The filter holds in both modes: no ptrace, no socket but AF_UNIX, no new namespaces, no untraced clone, no mremap;
// and a runner's, also no process that shares the caller's memory outside its thread group (clone(CLONE_VM)
// without CLONE_THREAD, vfork, so no posix_spawn), where threads and subprocesses still start (CPython falls back
// to fork). A build's keeps posix_spawn and vfork: gcc's driver and ninja need them.
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
      "import subprocess, threading\n"
      "t = threading.Thread(target=lambda: None); t.start(); t.join(); print('thread')\n"
      "print('spawn', subprocess.run(['/bin/true']).returncode)\n"
      "try:\n    os.waitpid(os.posix_spawn('/bin/true', ['/bin/true'], {}), 0); print('posix_spawn')\n"
      "except OSError as e: print('posix_spawn', e.errno)\n";
  // Only where they are refused: a raw vfork's child would run this interpreter on the parent's stack.
  const std::string shared_memory =
      "print('shared', libc.syscall(56, 0x100 | 0x4000 | 17, 0, 0, 0, 0), ctypes.get_errno())  # CLONE_VM|CLONE_VFORK\n"
      "print('vfork', libc.syscall(58), ctypes.get_errno())\n";
  for (const auto& env :
       {std::map<std::string, std::string>{}, std::map<std::string, std::string>{{"VINCI_SANDBOX", "off"}}})
    for (const bool runner : {false, true}) {
      const auto r = sandboxed(runner ? std::vector<std::string>{"--runner"} : std::vector<std::string>{},
                               {"/usr/bin/python3", "-c", script + (runner ? shared_memory : "")}, env);
      EXPECT_EQ(r.out,
                fmt::format("inet {}\nunix\nptrace -1 {}\nunshare -1 {}\nuntraced -1 {}\nmremap -1 {}\nthread\n"
                            "spawn 0\n{}",
                            EAFNOSUPPORT, EPERM, EPERM, EPERM, EPERM,
                            runner ? fmt::format("posix_spawn {}\nshared -1 {}\nvfork -1 {}\n", EPERM, EPERM, EPERM)
                                   : "posix_spawn\n"))
          << (env.empty() ? "bwrap" : "seccomp only") << (runner ? ", a runner's filter" : ", a build's filter") << ": "
          << ending(r);
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
  EXPECT_NE(r.err.find("fork"), std::string::npos) << "no fork failed under a limit of 16: " << r.out << ending(r);
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

// A sandbox's cgroups are named by its launcher's pid, and the judge reads them by that pid alone. A
// launcher killed before it removed them leaves them behind, and when its pid comes round again (a
// host with 32,768 pids held 98 such cpuacct cgroups after a day's runs) the new launcher's mkdir
// failed: the judge read the dead one's frozen counter, and every window of a baseline timed 0 ms.
// make_fresh_cgroup empties and removes such a cgroup, the processes left in it included, and makes it
// again, its counter from zero.
TEST(Sandbox, AStaleCgroupOfTheSameNameIsEmptiedAndMadeAfresh) {
  const fs::path root = "/sys/fs/cgroup/cpuacct";
  if (::access((root / "cgroup.procs").c_str(), W_OK) != 0) GTEST_SKIP() << "no writable cpuacct cgroup here";
  const fs::path dir = root / fmt::format("vinci-sandbox-test-{}", ::getpid());
  ::rmdir(dir.c_str());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir;
  const pid_t left = ::fork();
  if (left == 0) {
    ::usleep(50'000);  // moved into the cgroup by then
    const auto end = std::chrono::steady_clock::now() + 50ms;
    while (std::chrono::steady_clock::now() < end) {
    }
    for (;;) ::pause();
  }
  std::ofstream(dir / "cgroup.procs") << left << std::flush;
  std::this_thread::sleep_for(300ms);
  const auto usage = [&] { return std::stoull(core::read_file(dir / "cpuacct.usage")); };
  EXPECT_GT(usage(), 10'000'000u) << "the process left behind ran 50 ms in the cgroup";
  ASSERT_TRUE(core::make_fresh_cgroup(dir));
  EXPECT_EQ(usage(), 0u) << "the cgroup made afresh counts from zero";
  int status = 0;
  ASSERT_EQ(::waitpid(left, &status, 0), left);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the process left in it was killed";
  ::rmdir(dir.c_str());
}

}  // namespace sandbox_test
