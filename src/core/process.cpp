#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

extern char** environ;

namespace vinci::core {

std::string ExitStatus::describe() const {
  if (exited) return fmt::format("exit code {}", code);
  return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
}

namespace {

// Everything the child needs, prepared before fork: only async-signal-safe calls run after it.
struct ChildPlan {
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::string cwd, stderr_path, uid_map, gid_map;
  ResourceLimits limits;
  bool isolate_network = false;
};

[[noreturn]] void child_fail(int err_fd, const char* what) {
  const int e = errno;
  (void)!::write(err_fd, what, std::strlen(what));
  (void)!::write(err_fd, ": ", 2);
  const char* msg = strerror(e);
  (void)!::write(err_fd, msg, std::strlen(msg));
  _exit(127);
}

bool write_proc_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Returns whether the network was isolated. A plain network namespace needs CAP_SYS_ADMIN; an
// unprivileged user can still get one inside a user namespace of its own.
bool isolate_network(const ChildPlan& plan) {
  if (::unshare(CLONE_NEWNET) == 0) return true;
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return false;
  write_proc_file("/proc/self/setgroups", "deny");
  return write_proc_file("/proc/self/uid_map", plan.uid_map) && write_proc_file("/proc/self/gid_map", plan.gid_map);
}

[[noreturn]] void run_child(ChildPlan& plan, int in_read, int out_write, int err_fd, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(126);  // the parent died before prctl took effect
  for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  if (::dup2(in_read, 0) < 0 || ::dup2(out_write, 1) < 0) child_fail(err_fd, "dup2");
  const int err = plan.stderr_path.empty() ? ::open("/dev/null", O_WRONLY)
                                           : ::open(plan.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (err >= 0) ::dup2(err, 2);
  if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) != 0) child_fail(err_fd, "chdir");

  bool isolated = false;
  if (plan.isolate_network) isolated = isolate_network(plan);
  for (char*& e : plan.envp) {
    if (e && std::strncmp(e, "VINCI_NETNS=", 12) == 0)
      e = const_cast<char*>(isolated ? "VINCI_NETNS=1" : "VINCI_NETNS=0");
  }

  apply_resource_limits(plan.limits);

  ::execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
  child_fail(err_fd, plan.argv[0]);
}

}  // namespace

void apply_resource_limits(const ResourceLimits& l) {
  auto set = [](int resource, std::optional<uint64_t> value) {
    if (!value) return;
    rlimit rl{static_cast<rlim_t>(*value), static_cast<rlim_t>(*value)};
    ::setrlimit(resource, &rl);
  };
  set(RLIMIT_AS, l.address_space_bytes);
  set(RLIMIT_CPU, l.cpu_seconds);
  set(RLIMIT_NPROC, l.max_processes);
  set(RLIMIT_FSIZE, l.file_size_bytes);
  set(RLIMIT_NOFILE, l.open_files);
  if (!l.core_dumps) set(RLIMIT_CORE, 0);
}

namespace {

// Children die with this process (PR_SET_PDEATHSIG in run_child), but the kernel sends that signal
// when the thread that forked them ends, not the process: a judge forked by one of an evaluator
// pool run's threads was killed when the run ended, and the next run's first request met a dead
// worker. So every fork happens on one thread that lasts as long as the process.
class ForkThread {
 public:
  static ForkThread& instance() {
    static ForkThread* thread = new ForkThread;  // never destroyed: it must outlive every caller
    return *thread;
  }

  // fork() on the lasting thread; in the child, runs in_child (which must not return). The
  // parent's errno is kept for the caller when fork fails.
  pid_t fork(const std::function<void()>& in_child, int& error) {
    std::packaged_task<pid_t()> task([&] {
      const pid_t pid = ::fork();
      if (pid == 0) in_child();
      error = errno;
      return pid;
    });
    auto forked = task.get_future();
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(&task);
    }
    cv_.notify_one();
    return forked.get();
  }

 private:
  ForkThread() {
    std::thread([this] {
      for (;;) {
        std::packaged_task<pid_t()>* task;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [&] { return !tasks_.empty(); });
          task = tasks_.front();
          tasks_.pop_front();
        }
        (*task)();
      }
    }).detach();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<pid_t()>*> tasks_;
};

}  // namespace

Process Process::spawn(const SpawnOptions& options) {
  if (options.argv.empty()) throw std::invalid_argument("spawn: empty argv");
  ChildPlan plan;
  plan.argv_storage = options.argv;
  for (auto& a : plan.argv_storage) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  for (const auto& [k, v] : options.env) env[k] = v;
  if (options.isolate_network) env["VINCI_NETNS"] = "0";
  for (const auto& [k, v] : env) plan.env_storage.push_back(k + "=" + v);
  for (auto& e : plan.env_storage) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  plan.cwd = options.cwd.string();
  plan.stderr_path = options.stderr_path.string();
  plan.limits = options.limits;
  plan.isolate_network = options.isolate_network;
  plan.uid_map = fmt::format("{0} {0} 1\n", ::getuid());
  plan.gid_map = fmt::format("{0} {0} 1\n", ::getgid());

  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC))
    throw std::runtime_error(fmt::format("spawn {}: pipe: {}", options.argv[0], std::strerror(errno)));
  const pid_t parent = ::getpid();
  int fork_error = 0;
  const pid_t pid =
      ForkThread::instance().fork([&] { run_child(plan, in_pipe[0], out_pipe[1], err_pipe[1], parent); }, fork_error);
  if (pid < 0) throw std::runtime_error(fmt::format("spawn {}: fork: {}", options.argv[0], std::strerror(fork_error)));

  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  // exec succeeded iff the CLOEXEC error pipe closes without a message.
  std::string failure;
  char buf[512];
  ssize_t n;
  while ((n = ::read(err_pipe[0], buf, sizeof buf)) > 0) failure.append(buf, static_cast<size_t>(n));
  ::close(err_pipe[0]);
  Process p;
  p.pid_ = pid;
  p.stdin_fd_ = in_pipe[1];
  p.stdout_fd_ = out_pipe[0];
  if (!failure.empty()) {
    p.wait();
    throw std::runtime_error(fmt::format("cannot start {}: {}", options.argv[0], failure));
  }
  return p;
}

Process::Process(Process&& o) noexcept { *this = std::move(o); }

Process& Process::operator=(Process&& o) noexcept {
  if (this != &o) {
    reset();
    pid_ = std::exchange(o.pid_, -1);
    stdin_fd_ = std::exchange(o.stdin_fd_, -1);
    stdout_fd_ = std::exchange(o.stdout_fd_, -1);
    buffer_ = std::move(o.buffer_);
    status_ = std::move(o.status_);
  }
  return *this;
}

Process::~Process() { reset(); }

void Process::reset() {
  if (pid_ > 0 && !status_) {
    kill_group();
    wait();
  }
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  stdin_fd_ = stdout_fd_ = -1;
  pid_ = -1;
}

bool Process::running() {
  if (pid_ <= 0 || status_) return false;
  return !wait_for(std::chrono::milliseconds(0)).has_value();
}

bool Process::write(std::string_view data) {
  if (stdin_fd_ < 0) return false;
  while (!data.empty()) {
    const ssize_t n = ::write(stdin_fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;  // EPIPE: the child is gone (SIGPIPE is ignored by the evaluator)
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Process::close_stdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

Process::Read Process::read_line(std::string& line, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Read::line;
    }
    if (stdout_fd_ < 0) return Read::eof;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Read::timeout;
    pollfd pfd{stdout_fd_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) return Read::eof;
    if (r <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n > 0) {
      buffer_.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      ::close(stdout_fd_);
      stdout_fd_ = -1;
      if (!buffer_.empty()) {  // a last line without its newline
        line = std::exchange(buffer_, {});
        return Read::line;
      }
      return Read::eof;
    }
  }
}

void Process::kill_group() {
  if (pid_ > 0 && !status_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
}

static ExitStatus decode(int raw) {
  ExitStatus s;
  if (WIFEXITED(raw)) {
    s.exited = true;
    s.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    s.signal = WTERMSIG(raw);
  }
  return s;
}

ExitStatus Process::wait() {
  if (status_) return *status_;
  int raw = 0;
  while (::waitpid(pid_, &raw, 0) < 0) {
    if (errno != EINTR) {
      status_ = ExitStatus{};
      return *status_;
    }
  }
  status_ = decode(raw);
  ::kill(-pid_, SIGKILL);  // descendants left in the group die with their leader
  return *status_;
}

std::optional<ExitStatus> Process::wait_for(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int raw = 0;
    const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
    if (r == pid_) {
      status_ = decode(raw);
      ::kill(-pid_, SIGKILL);
      return status_;
    }
    if (r < 0 && errno != EINTR) {
      status_ = ExitStatus{};
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Completed run_to_completion(const SpawnOptions& options, std::chrono::milliseconds timeout) {
  Process p = Process::spawn(options);
  p.close_stdin();
  Completed c;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string line;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto r = p.read_line(line, std::max(left, std::chrono::milliseconds(0)));
    if (r == Process::Read::line) {
      c.out += line;
      c.out += '\n';
    } else if (r == Process::Read::eof) {
      break;
    } else {
      c.timed_out = true;
      p.kill_group();
      break;
    }
  }
  c.status = p.wait();
  return c;
}

bool network_isolation_available() {
  static const bool available = [] {
    SpawnOptions o;
    o.argv = {"sh", "-c", "test \"$VINCI_NETNS\" = 1"};
    o.isolate_network = true;
    try {
      const Completed c = run_to_completion(o, std::chrono::seconds(10));
      return c.status.exited && c.status.code == 0;
    } catch (const std::exception&) {
      return false;
    }
  }();
  return available;
}

}  // namespace vinci::core
