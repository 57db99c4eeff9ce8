#include "core/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::core {

namespace fs = std::filesystem;

namespace {

// The system a Python with torch and a compiler needs, read-only. /etc is an allow-list: it also
// holds host keys and password hashes.
constexpr const char* kSystemPaths[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys"};
constexpr const char* kEtcFiles[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",   "/etc/alternatives",
                                     "/etc/passwd",      "/etc/group",      "/etc/nsswitch.conf",  "/etc/localtime",
                                     "/etc/hosts",       "/etc/os-release", "/etc/debian_version", "/etc/lsb-release",
                                     "/etc/gai.conf"};

// Calls a candidate has no business making: other processes' memory, new namespaces and mounts,
// kernel modules and keyrings, io_uring (whose operations bypass this filter), BPF and perf.
constexpr const char* kDeniedCalls[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "bpf", "perf_event_open", "userfaultfd",
    // A /proc/PID directory's descriptor names a process outside
    // the caller's pid namespace (a runner's zygote: zygote.py).
    "pidfd_send_signal", "keyctl", "add_key", "request_key", "mount", "umount2", "pivot_root", "chroot", "move_mount",
    "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "swapon", "swapoff", "reboot", "setns",
    "unshare", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "acct", "quotactl", "syslog", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "lookup_dcookie", "vhangup", "fanotify_init", "personality"};
constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,   CLONE_NEWNET,
                                        CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};

// The zygote's filter leaves out unshare and mount, which it needs to give each runner it forks a
// namespace of its own; each runner then installs the whole filter above it (filters stack).
scmp_filter_ctx build_filter(bool zygote = false, bool runner = false) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) throw std::runtime_error("seccomp_init failed");
  auto add = [&](uint32_t action, int nr, unsigned count, scmp_arg_cmp cmp) {
    const int rc = count ? seccomp_rule_add(ctx, action, nr, 1, cmp) : seccomp_rule_add(ctx, action, nr, 0);
    if (rc != 0) throw std::runtime_error(fmt::format("seccomp_rule_add for syscall {}: {}", nr, std::strerror(-rc)));
  };
  for (const char* name : kDeniedCalls) {
    if (zygote && (std::strcmp(name, "unshare") == 0 || std::strcmp(name, "mount") == 0)) continue;
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr != __NR_SCMP_ERROR) add(SCMP_ACT_ERRNO(EPERM), nr, 0, {});
  }
  for (uint64_t flag : kNamespaceFlags)
    add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
  // A thread or process cloned untraced is not reported to the judge's tracer, which starts the
  // CPU sampler's events on every new thread at its birth (eval/perf_sampler.h).
  add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_UNTRACED, CLONE_UNTRACED));
  // A runner's process that shares its memory but not its thread group (CLONE_VM without CLONE_THREAD,
  // vfork) maps and unmaps the runner's code where the sampler's history of the runner's mappings never
  // hears of it (its records go to its own): red-team round 30 mapped OpenBLAS back over the candidate's
  // own library from such a helper before each call, and the library's samples counted as its own.
  // Threads keep CLONE_VM; CPython's subprocess falls back to fork when vfork fails. Builds keep both:
  // gcc's driver and ninja start their children by vfork and posix_spawn, with no fall-back.
  if (runner) {
    add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM | CLONE_THREAD, CLONE_VM));
    add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(vfork), 0, {});
  }
  // mremap moves or grows a mapping without telling perf (no mapping record), so code could come to
  // lie where the sampler's history names another file (red-team round 11: a BLAS moved over the
  // address of the candidate's own library). glibc's realloc copies instead when it fails.
  add(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mremap), 0, {});
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes glibc fall back to clone.
  add(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0, {});
  add(SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
  return ctx;
}

std::optional<std::string> find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return ::access(name.c_str(), X_OK) == 0 ? std::optional(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

size_t depth(const fs::path& p) { return static_cast<size_t>(std::distance(p.begin(), p.end())); }

const fs::path kPidsCgroupRoot = "/sys/fs/cgroup/pids";
const fs::path kCpuCgroupRoot = "/sys/fs/cgroup/cpuacct";
const fs::path kFreezerCgroupRoot = "/sys/fs/cgroup/freezer";

// Whether a cgroup of this (v1) controller can be made here, with `file` in it.
bool cgroup_usable(const fs::path& root, const char* file) {
  std::error_code ec;
  if (!fs::is_directory(root, ec) || ::access(root.c_str(), W_OK) != 0) return false;
  const fs::path probe = root / fmt::format("vinci-probe-{}", ::getpid());
  if (::mkdir(probe.c_str(), 0755) != 0) return false;
  const bool has = fs::exists(probe / file, ec);
  ::rmdir(probe.c_str());
  return has;
}

bool write_cgroup_file(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Kills whatever is left in the cgroup (a pid namespace's processes die with its init; these are
// the seccomp-only mode's escapees) and removes it.
void dispose_cgroup(const fs::path& dir) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::ifstream in(dir / "cgroup.procs");
    bool any = false;
    for (pid_t pid; in >> pid;) {
      any = true;
      ::kill(pid, SIGKILL);
    }
    if (!any && ::rmdir(dir.c_str()) == 0) return;
    ::usleep(20000);
  }
  ::rmdir(dir.c_str());
}

}  // namespace

bool make_fresh_cgroup(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0) return true;
  if (errno != EEXIST) return false;
  write_cgroup_file(dir / "freezer.state", "THAWED");  // a freezer's: its killed processes must run to die
  dispose_cgroup(dir);
  return ::mkdir(dir.c_str(), 0755) == 0;
}

namespace {

// Marks every descriptor but 0-2 and keep close-on-exec, so nothing the launcher inherited by
// accident (a parent's pipe, a log) reaches the candidate.
void seal_descriptors(const std::vector<int>& keep) {
  std::vector<int> open;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) open.push_back(std::atoi(e.path().filename().c_str()));
  for (int fd : open) {
    if (fd <= 2 || std::find(keep.begin(), keep.end(), fd) != keep.end()) continue;
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_child_pidfd = -1;  // an adopted runner (adopt_sandboxed)
volatile sig_atomic_t g_stop = 0;
char g_thaw_path[256] = {0};  // the sandbox's freezer.state, written from the signal handler

// A frozen process dies of SIGKILL only once thawed: whoever froze it (the judge) may be gone.
void thaw_sandbox() {
  if (g_thaw_path[0] == 0) return;
  const int fd = ::open(g_thaw_path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)!::write(fd, "THAWED", 6);
  ::close(fd);
}

// The launcher's SIGTERM/SIGINT/SIGHUP end the sandbox at once: bwrap dies with its parent and
// takes the pid namespace along; the seccomp-only child leads its own session.
void kill_child(int) {
  g_stop = 1;
  thaw_sandbox();
  if (g_child > 0) {
    ::kill(-g_child, SIGKILL);
    ::kill(g_child, SIGKILL);
  }
  if (g_child_pidfd >= 0) ::syscall(SYS_pidfd_send_signal, g_child_pidfd, SIGKILL, nullptr, 0);
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string SandboxProbe::describe() const {
  std::string out = mode == SandboxMode::bwrap ? "bwrap+seccomp" : "seccomp only (NO namespaces: " + detail + ")";
  if (!pids_cgroup) out += ", no pids cgroup";
  if (!cpu_cgroup) out += ", no cpu accounting cgroup";
  if (!freezer_cgroup) out += ", no freezer cgroup";
  return out;
}

int export_seccomp_program(bool zygote, const char* name, bool runner) {
  scmp_filter_ctx ctx = build_filter(zygote, runner);
  const int fd = ::memfd_create(name, 0);
  if (fd < 0) {
    seccomp_release(ctx);
    throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
  }
  const int rc = seccomp_export_bpf(ctx, fd);
  seccomp_release(ctx);
  if (rc != 0) throw std::runtime_error(fmt::format("seccomp_export_bpf: {}", std::strerror(-rc)));
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

void install_seccomp(bool runner) {
  scmp_filter_ctx ctx = build_filter(false, runner);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  const int rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) throw std::runtime_error(fmt::format("seccomp_load: {}", std::strerror(-rc)));
}

std::vector<std::string> gpu_node_names(const std::vector<std::string>& dev_names,
                                        const std::vector<std::string>& numbered_allowed) {
  std::vector<std::string> out;
  for (const auto& name : dev_names) {
    if (name.rfind("nvidia", 0) != 0) continue;
    const std::string_view rest = std::string_view(name).substr(6);
    const bool numbered =
        !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (numbered && !numbered_allowed.empty() &&
        std::find(numbered_allowed.begin(), numbered_allowed.end(), name) == numbered_allowed.end())
      continue;
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> bwrap_arguments(const SandboxPolicy& policy, const std::string& bwrap, int seccomp_fd) {
  std::vector<std::string> a = {bwrap,
                                "--die-with-parent",
                                "--new-session",
                                "--unshare-all",
                                "--unshare-user",
                                "--cap-drop",
                                "ALL",
                                "--uid",
                                "65534",
                                "--gid",
                                "65534",
                                "--proc",
                                "/proc",
                                "--dev",
                                "/dev"};
  // A zygote makes a user namespace per runner (zygote.py); a runner's own filter forbids more.
  if (!policy.zygote) a.insert(a.begin() + 5, "--disable-userns");
  std::error_code ec;
  for (const char* p : kSystemPaths) {
    if (fs::is_symlink(p, ec))
      a.insert(a.end(), {"--symlink", fs::read_symlink(p, ec).string(), p});
    else if (fs::is_directory(p, ec))
      a.insert(a.end(), {"--ro-bind", p, p});
  }
  for (const char* f : kEtcFiles) a.insert(a.end(), {"--ro-bind-try", f, f});
  if (policy.gpu) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator("/dev", ec)) names.push_back(e.path().filename().string());
    for (const auto& name : gpu_node_names(names, policy.gpu_nodes))
      a.insert(a.end(), {"--dev-bind", "/dev/" + name, "/dev/" + name});
  }
  // One list of mounts, parents before children, so a bind inside a tmpfs (or another bind) lands
  // on top of it whatever order the policy named them in.
  struct Mount {
    fs::path path;
    std::vector<std::string> args;
  };
  std::vector<Mount> mounts;
  for (const auto& [path, bytes] : policy.tmpfs)
    mounts.push_back({path, {"--size", std::to_string(bytes), "--tmpfs", path.string()}});
  for (const auto& p : policy.read_only) mounts.push_back({p, {"--ro-bind-try", p.string(), p.string()}});
  for (const auto& p : policy.read_write) mounts.push_back({p, {"--bind", p.string(), p.string()}});
  for (const auto& [src, dst] : policy.read_only_as) mounts.push_back({dst, {"--ro-bind", src.string(), dst.string()}});
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const Mount& x, const Mount& y) { return depth(x.path) < depth(y.path); });
  for (const auto& m : mounts) a.insert(a.end(), m.args.begin(), m.args.end());
  // The root is bwrap's own tmpfs, which the sandbox's user owns: read-only, so that only the policy's
  // tmpfs mounts and binds take writes (a runner forked by a zygote shares its root with the next).
  a.insert(a.end(), {"--remount-ro", "/"});
  if (!policy.cwd.empty()) a.insert(a.end(), {"--chdir", policy.cwd.string()});
  a.push_back("--clearenv");
  for (const auto& [k, v] : policy.env) a.insert(a.end(), {"--setenv", k, v});
  a.insert(a.end(), {"--seccomp", std::to_string(seccomp_fd)});
  return a;
}

const SandboxProbe& probe_sandbox() {
  static const SandboxProbe probe = [] {
    SandboxProbe p;
    p.pids_cgroup = cgroup_usable(kPidsCgroupRoot, "pids.max");
    p.cpu_cgroup = cgroup_usable(kCpuCgroupRoot, "cpuacct.usage");
    // A host without a freezer cgroup freezes runners by SIGSTOP and samples a coverage phase instead of
    // the timed windows; VINCI_SANDBOX_FREEZER=off takes that path on any host, to check it.
    const char* freezer = std::getenv("VINCI_SANDBOX_FREEZER");
    p.freezer_cgroup =
        !(freezer && std::string(freezer) == "off") && cgroup_usable(kFreezerCgroupRoot, "freezer.state");
    if (const char* off = std::getenv("VINCI_SANDBOX"); off && std::string(off) == "off") {
      p.detail = "VINCI_SANDBOX=off";
      return p;
    }
    const auto bwrap = find_on_path(std::getenv("VINCI_BWRAP") ? std::getenv("VINCI_BWRAP") : "bwrap");
    if (!bwrap) {
      p.detail = "no bwrap on PATH (Debian package bubblewrap)";
      return p;
    }
    const int seccomp_fd = export_seccomp_program();
    SandboxPolicy minimal;
    SpawnOptions o;
    o.argv = bwrap_arguments(minimal, *bwrap, seccomp_fd);
    o.argv.insert(o.argv.end(), {"--", "/bin/sh", "-c", "exit 0"});
    const fs::path err = fs::temp_directory_path() / fmt::format("vinci-bwrap-probe-{}.log", ::getpid());
    o.stderr_path = err;
    try {
      const Completed c = run_to_completion(o, std::chrono::seconds(20));
      if (c.status.exited && c.status.code == 0) {
        p.mode = SandboxMode::bwrap;
        p.bwrap = *bwrap;
      } else {
        std::string why = try_read_file(err).value_or("");
        while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
        p.detail = fmt::format("{} refused: {} ({})", *bwrap, why.empty() ? "no message" : why, c.status.describe());
      }
    } catch (const std::exception& e) {
      p.detail = e.what();
    }
    ::close(seccomp_fd);
    std::error_code ec;
    fs::remove(err, ec);
    return p;
  }();
  return probe;
}

fs::path sandbox_cpu_cgroup(pid_t launcher) { return kCpuCgroupRoot / fmt::format("vinci-sandbox-{}", launcher); }
fs::path sandbox_freezer_cgroup(pid_t launcher) {
  return kFreezerCgroupRoot / fmt::format("vinci-sandbox-{}", launcher);
}

namespace {

// The cgroups of one sandbox, named by its launcher's pid (sandbox_cpu_cgroup and the others), made
// where the host allows each; the freezer's state file is kept for the signal handler's thaw.
struct SandboxCgroups {
  fs::path pids, cpu, freezer;

  explicit SandboxCgroups(std::optional<uint64_t> max_pids) {
    const SandboxProbe& probe = probe_sandbox();
    if (probe.pids_cgroup && max_pids) {
      pids = kPidsCgroupRoot / fmt::format("vinci-sandbox-{}", ::getpid());
      if (!make_fresh_cgroup(pids) || !write_cgroup_file(pids / "pids.max", std::to_string(*max_pids))) {
        ::rmdir(pids.c_str());
        pids.clear();
      }
    }
    if (probe.cpu_cgroup) {
      cpu = sandbox_cpu_cgroup(::getpid());
      if (!make_fresh_cgroup(cpu)) cpu.clear();
    }
    if (probe.freezer_cgroup) {
      freezer = sandbox_freezer_cgroup(::getpid());
      const std::string state = (freezer / "freezer.state").string();
      if (!make_fresh_cgroup(freezer) || state.size() >= sizeof g_thaw_path)
        freezer.clear();
      else
        std::memcpy(g_thaw_path, state.c_str(), state.size() + 1);
    }
  }

  bool enter(pid_t pid) const {
    bool ok = true;
    for (const fs::path* dir : {&pids, &cpu, &freezer})
      if (!dir->empty()) ok &= write_cgroup_file(*dir / "cgroup.procs", std::to_string(pid));
    return ok;
  }

  void dispose() const {
    thaw_sandbox();
    for (const fs::path* dir : {&freezer, &pids, &cpu})
      if (!dir->empty()) dispose_cgroup(*dir);
  }
};

int exit_status(int raw) { return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw); }

}  // namespace

int run_sandboxed(const SandboxPolicy& given, const std::vector<std::string>& command,
                  const std::vector<int>& keep_fds) {
  if (command.empty()) throw std::invalid_argument("run_sandboxed: empty command");
  // The launcher dies with whoever started it, and its SIGTERM handler below takes the sandbox along.
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) return 128 + SIGTERM;
  const SandboxProbe& probe = probe_sandbox();
  SandboxPolicy policy = given;
  std::vector<int> keep = keep_fds;
  if (policy.zygote) {
    if (probe.mode != SandboxMode::bwrap)
      throw std::runtime_error("a zygote needs bubblewrap's namespaces: " + probe.detail);
    // Found by its name among the zygote's descriptors: an environment variable would stay readable in
    // every runner's /proc/self/environ.
    keep.push_back(export_seccomp_program(false, kRunnerFilterName, /*runner=*/true));
  }
  const SandboxCgroups cgroups(policy.max_pids);
  std::vector<std::string> argv;
  int seccomp_fd = -1;
  if (probe.mode == SandboxMode::bwrap) {
    seccomp_fd = export_seccomp_program(policy.zygote, "vinci-seccomp", policy.runner);
    argv = bwrap_arguments(policy, probe.bwrap, seccomp_fd);
    argv.push_back("--");
  }
  argv.insert(argv.end(), command.begin(), command.end());
  std::vector<std::string> env;
  for (const auto& [k, v] : policy.env) env.push_back(k + "=" + v);
  if (seccomp_fd >= 0) keep.push_back(seccomp_fd);
  seal_descriptors(keep);

  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, kill_child);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (child == 0) {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::setpgid(0, 0);
    cgroups.enter(::getpid());
    apply_resource_limits(policy.limits);
    auto args = c_strings(argv);
    if (probe.mode == SandboxMode::bwrap) {
      // bwrap's own processes (the sandbox's pid 1 among them) keep the environment they are started
      // with, readable inside through /proc/1/environ: they get none, and the command gets the
      // policy's through --setenv.
      char* no_environment[] = {nullptr};
      ::execve(args[0], args.data(), no_environment);
    } else {
      if (!policy.cwd.empty() && ::chdir(policy.cwd.c_str()) != 0) _exit(125);
      try {
        install_seccomp(policy.runner);
      } catch (const std::exception& e) {
        (void)!::write(2, e.what(), std::strlen(e.what()));
        _exit(125);
      }
      auto envp = c_strings(env);
      ::execvpe(args[0], args.data(), envp.data());
    }
    const std::string why = fmt::format("vinci-sandbox: cannot run {}: {}\n", argv[0], std::strerror(errno));
    (void)!::write(2, why.data(), why.size());
    _exit(127);
  }
  if (seccomp_fd >= 0) ::close(seccomp_fd);
  g_child = child;
  if (g_stop) kill_child(0);  // a signal that came before the child's pid was known
  int raw = 0;
  while (::waitpid(child, &raw, 0) < 0 && errno == EINTR) {
  }
  if (probe.mode != SandboxMode::bwrap) ::kill(-child, SIGKILL);
  cgroups.dispose();
  return exit_status(raw);
}

int adopt_sandboxed(pid_t runner, int status_fd, int ready_fd, std::optional<uint64_t> max_pids) {
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) return 128 + SIGTERM;
  // A pidfd names this runner and no process that might take its number after it ends.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, runner, 0));
  if (pidfd < 0) throw std::runtime_error(fmt::format("pidfd_open({}): {}", runner, std::strerror(errno)));
  g_child_pidfd = pidfd;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, kill_child);
  const SandboxCgroups cgroups(max_pids);
  if (!cgroups.enter(runner)) {
    ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    cgroups.dispose();
    throw std::runtime_error(fmt::format("could not move process {} into its sandbox's cgroups", runner));
  }
  (void)!::write(ready_fd, "ready\n", 6);
  ::close(ready_fd);
  if (g_stop) kill_child(0);
  // The zygote's process that waits for the runner's namespace writes its exit status here.
  std::string text;
  char buf[64];
  for (;;) {
    const ssize_t n = ::read(status_fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);  // an unreported end is a kill
  cgroups.dispose();
  const int status = std::atoi(text.c_str());
  return text.empty() || status < 0 || status > 255 ? 128 + SIGKILL : status;
}

}  // namespace vinci::core
