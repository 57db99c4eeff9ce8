// vinci-sandbox: the one door through which candidate code runs (core/sandbox.h).
//
// The evaluation worker (Python, trusted) starts every candidate process, and every compile of a
// candidate's sources, through this launcher: libseccomp has no binding in the worker's Python, and
// keeping the policy's mechanics in one small native program keeps them out of reach of the
// interpreters they guard.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/sandbox.h"

using vinci::core::SandboxMode;

namespace {

std::pair<std::string, std::string> split_pair(const std::string& text, const std::string& option) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw CLI::ValidationError(option, "expected A=B, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Runs a command in vinci's sandbox: bubblewrap namespaces (read-only system allow-list, private tmpfs, "
      "no network, own pid namespace), a seccomp filter, rlimits and a pids cgroup; or, where bubblewrap "
      "cannot run, seccomp and rlimits alone (--probe tells which)."};
  bool probe = false;
  vinci::core::SandboxPolicy policy;
  std::vector<std::string> ro, ro_as, rw, tmpfs, env, command;
  std::vector<int> keep;
  uint64_t fsize = 0, as = 0, cpu = 0, max_pids = 0;
  app.add_flag("--probe", probe, "print the mode this host allows as JSON and exit");
  app.add_option("--ro", ro, "bind PATH read-only at the same place (skipped when missing)")->allow_extra_args(false);
  app.add_option("--ro-as", ro_as, "bind SRC read-only at DST (SRC=DST)")->allow_extra_args(false);
  app.add_option("--rw", rw, "bind PATH read-write at the same place")->allow_extra_args(false);
  app.add_option("--tmpfs", tmpfs,
                 "a private tmpfs at PATH of BYTES (PATH=BYTES)->allow_extra_args(false); PATH must exist");
  app.add_flag("--gpu", policy.gpu, "expose the NVIDIA device nodes");
  app.add_option("--gpu-node", policy.gpu_nodes,
                 "with --gpu: a numbered node (e.g. nvidia1) to expose; the others of a multi-GPU host are left out "
                 "(default: every one)")
      ->allow_extra_args(false);
  app.add_flag("--runner", policy.runner,
               "a runner's filter: no process sharing the command's memory outside its thread group (no vfork)");
  app.add_flag("--zygote", policy.zygote,
               "run a runners' zygote: it may make a user, mount and pid namespace per runner it forks, and gets "
               "the runners' seccomp filter as an open memfd named vinci-runner-seccomp");
  pid_t adopt = 0;
  int status_fd = -1, ready_fd = -1;
  app.add_option("--adopt", adopt,
                 "instead of a command: the sandbox's cgroups for PID, a runner a zygote forked; exits with the "
                 "status written on --status-fd");
  app.add_option("--status-fd", status_fd, "with --adopt: where the runner's exit status comes, as decimal text");
  app.add_option("--ready-fd", ready_fd, "with --adopt: where \"ready\" is written once PID is in the cgroups");
  app.add_option("--cwd", policy.cwd, "working directory inside the sandbox");
  app.add_option("--env", env, "an environment variable K=V (nothing else is inherited)")->allow_extra_args(false);
  app.add_option("--keep-fd", keep, "a descriptor the command inherits (besides 0, 1, 2)")->allow_extra_args(false);
  app.add_option("--fsize", fsize, "RLIMIT_FSIZE in bytes");
  app.add_option("--as", as, "RLIMIT_AS in bytes (CPU work only: CUDA maps huge ranges)");
  app.add_option("--cpu", cpu, "RLIMIT_CPU in seconds");
  app.add_option("--max-pids", max_pids, "processes and threads at most, where a pids cgroup can be made");
  // One value per occurrence above, so a repeated option never swallows the command after "--".
  app.add_option("command", command, "the command, after --");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto& p = vinci::core::probe_sandbox();
    if (probe) {
      fmt::print("{}\n", nlohmann::json{{"mode", p.mode == SandboxMode::bwrap ? "bwrap" : "seccomp_only"},
                                        {"bwrap", p.bwrap},
                                        {"pids_cgroup", p.pids_cgroup},
                                        {"cpu_cgroup", p.cpu_cgroup},
                                        {"freezer_cgroup", p.freezer_cgroup},
                                        {"detail", p.detail},
                                        {"describe", p.describe()}}
                             .dump());
      return 0;
    }
    if (adopt > 0) {
      if (status_fd < 0 || ready_fd < 0) throw std::runtime_error("--adopt needs --status-fd and --ready-fd");
      return vinci::core::adopt_sandboxed(adopt, status_fd, ready_fd,
                                          max_pids ? std::optional<uint64_t>(max_pids) : std::nullopt);
    }
    if (command.empty()) throw std::runtime_error("no command given (put it after --)");
    for (const auto& r : ro) policy.read_only.emplace_back(r);
    for (const auto& r : rw) policy.read_write.emplace_back(r);
    for (const auto& r : ro_as) {
      auto [src, dst] = split_pair(r, "--ro-as");
      policy.read_only_as.emplace_back(src, dst);
    }
    for (const auto& t : tmpfs) {
      auto [path, bytes] = split_pair(t, "--tmpfs");
      policy.tmpfs.emplace_back(path, std::stoull(bytes));
    }
    for (const auto& e : env) {
      auto [k, v] = split_pair(e, "--env");
      policy.env[k] = v;
    }
    if (fsize) policy.limits.file_size_bytes = fsize;
    if (as) policy.limits.address_space_bytes = as;
    if (cpu) policy.limits.cpu_seconds = cpu;
    policy.limits.open_files = 4096;
    if (max_pids) policy.max_pids = max_pids;
    return vinci::core::run_sandboxed(policy, command, keep);
  } catch (const std::exception& e) {
    fmt::print(stderr, "vinci-sandbox: {}\n", e.what());
    return 125;
  }
}
