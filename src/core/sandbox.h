// Running untrusted native code: bubblewrap namespaces, a seccomp filter, rlimits and a pids cgroup.
//
// The evaluator's candidates are arbitrary native code, so the boundary is the kernel's, not the
// interpreter's: a mount namespace that shows a read-only allow-list of the system (no $HOME, no
// caches, no task suite) plus what the policy binds, private tmpfs scratch, no network, its own pid
// namespace, and a seccomp filter (libseccomp) that refuses ptrace, namespace and mount calls,
// io_uring, kernel keyrings, and every socket family but AF_UNIX. Where bubblewrap cannot run (user
// namespaces off, no bwrap binary) the mode falls back to seccomp and rlimits alone, and the probe
// says so: callers report the mode with every result.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/process.h"

namespace vinci::core {

enum class SandboxMode { bwrap, seccomp_only };

struct SandboxProbe {
  SandboxMode mode = SandboxMode::seccomp_only;
  std::string bwrap;             // the binary used, when mode is bwrap
  bool pids_cgroup = false;      // a pids.max per sandbox can be set (fork bombs are bounded)
  bool cpu_cgroup = false;       // a cpuacct cgroup per sandbox counts its CPU time (sandbox_cpu_cgroup)
  bool freezer_cgroup = false;   // a freezer cgroup per sandbox stops it without a signal (sandbox_freezer_cgroup)
  std::string detail;            // why bwrap is not used, or what limits remain
  std::string describe() const;  // one line for logs and results
};

struct SandboxPolicy {
  std::vector<std::filesystem::path> read_only;  // bound read-only at the same path; missing ones skipped
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> read_only_as;  // source, destination
  std::vector<std::filesystem::path> read_write;                  // bound read-write at the same path
  std::vector<std::pair<std::filesystem::path, uint64_t>> tmpfs;  // private tmpfs of this many bytes
  bool gpu = false;                                               // the NVIDIA device nodes
  // With gpu: the numbered nodes (nvidia0, nvidia1, ...) bound, the rest of a multi-GPU host's left
  // out; the control nodes (nvidiactl, nvidia-uvm, ...) always. Empty: every one.
  std::vector<std::string> gpu_nodes;
  std::filesystem::path cwd;               // inside the sandbox
  std::map<std::string, std::string> env;  // the whole environment: nothing is inherited
  ResourceLimits limits;
  std::optional<uint64_t> max_pids;  // pids cgroup, where the host allows one
  // A runners' zygote (python/vinci_runner/zygote.py): its namespaces and filter let it make a user,
  // mount and pid namespace per runner it forks, and it gets the runners' whole filter as an open
  // memfd named kRunnerFilterName. Needs bwrap.
  bool zygote = false;
  // A runner's filter: also no process that shares the runner's memory outside its thread group
  // (clone(CLONE_VM) without CLONE_THREAD, vfork). A zygote's runners always get it; builds never do.
  bool runner = false;
};

// Of the names in /dev, the NVIDIA nodes a sandbox binds: every one whose name starts with nvidia,
// less the numbered ones (one GPU each) not in numbered_allowed when that is not empty. One GPU's
// judge then hands its candidates that GPU alone: no kernel of theirs reaches another judge's GPU.
std::vector<std::string> gpu_node_names(const std::vector<std::string>& dev_names,
                                        const std::vector<std::string>& numbered_allowed);

// Which mode works on this host: bwrap is tried once with a minimal view; the answer is cached.
const SandboxProbe& probe_sandbox();

// The bwrap command line for a policy (without the trailing "--" and command); seccomp_fd is the
// exported BPF program bwrap installs just before it runs the command.
std::vector<std::string> bwrap_arguments(const SandboxPolicy& policy, const std::string& bwrap, int seccomp_fd);

// The filter as a BPF program in an anonymous file, positioned at its start (for bwrap --seccomp).
// zygote: the zygote's filter, which allows unshare and mount (SandboxPolicy::zygote). name: the memfd's.
// runner: the runners' stricter filter (SandboxPolicy::runner).
int export_seccomp_program(bool zygote = false, const char* name = "vinci-seccomp", bool runner = false);
// The memfd a zygote finds the runners' whole filter in (python/vinci_runner/zygote.py).
inline constexpr const char* kRunnerFilterName = "vinci-runner-seccomp";
// Installs the filter on the calling thread and its future children (no_new_privs is set first).
void install_seccomp(bool runner = false);

// The cpuacct cgroup of the sandbox a launcher process runs (run_sandboxed's, named by the launcher's pid),
// where the host has the cpuacct controller: its cpuacct.usage counts every process that ever ran in
// the sandbox, those that ended and were never waited for included, which no process tree shows.
std::filesystem::path sandbox_cpu_cgroup(pid_t launcher);
// The freezer cgroup of that sandbox, where the host has the freezer controller: writing FROZEN to its
// freezer.state stops every process in it without a signal (none the candidate could catch, none that
// stops a tracer's view of it), THAWED lets them go on. The launcher thaws it before it ends them.
std::filesystem::path sandbox_freezer_cgroup(pid_t launcher);

// Makes a sandbox's cgroup at dir afresh: one already there is a dead launcher's (a launcher killed
// before it removed its cgroups, whose pid has come round again), and its counters would be read as
// this sandbox's, so it is thawed, emptied and removed first. False where the cgroup cannot be made.
bool make_fresh_cgroup(const std::filesystem::path& dir);

// Runs command under policy and returns its exit status (128 + signal when killed), cleaning up the
// pids cgroup it made. Only the descriptors in keep_fds (and 0, 1, 2) reach the command.
int run_sandboxed(const SandboxPolicy& policy, const std::vector<std::string>& command,
                  const std::vector<int>& keep_fds);

// Makes a sandbox's cgroups for a runner that a zygote forked (it is not this process's child),
// moves the runner into them, says "ready" on ready_fd, and returns the exit status the zygote
// writes on status_fd as decimal text once the runner's namespace is gone (128 + SIGKILL when none
// comes). SIGTERM kills the runner, and the runner's end takes its pid namespace along.
int adopt_sandboxed(pid_t runner, int status_fd, int ready_fd, std::optional<uint64_t> max_pids);

}  // namespace vinci::core
