#include "eval/cpu_sampler.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::eval {

namespace fs = std::filesystem;

namespace {

struct Mapping {
  uint64_t low = 0, high = 0;
  std::string object;
};

std::vector<pid_t> numeric_entries(const fs::path& dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) out.push_back(std::stoi(name));
  }
  return out;
}

// root and its descendants; a process's children are listed under the thread that forked them.
std::vector<pid_t> processes(pid_t root) {
  std::vector<pid_t> out;
  std::set<pid_t> seen;
  std::deque<pid_t> queue{root};
  while (!queue.empty()) {
    const pid_t pid = queue.front();
    queue.pop_front();
    if (!seen.insert(pid).second) continue;
    out.push_back(pid);
    for (pid_t tid : numeric_entries(fmt::format("/proc/{}/task", pid))) {
      std::ifstream in(fmt::format("/proc/{}/task/{}/children", pid, tid));
      for (pid_t child; in >> child;) queue.push_back(child);
    }
  }
  return out;
}

char run_state(pid_t pid, pid_t tid) {
  const auto stat = core::try_read_file(fmt::format("/proc/{}/task/{}/stat", pid, tid));
  if (!stat) return '?';
  const auto close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() ? (*stat)[close + 2] : '?';
}

std::vector<Mapping> executable_mappings(pid_t pid) {
  std::vector<Mapping> out;
  std::ifstream in(fmt::format("/proc/{}/maps", pid));
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode;
    std::getline(fields >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x') continue;
    const auto dash = range.find('-');
    Mapping m;
    m.low = std::stoull(range.substr(0, dash), nullptr, 16);
    m.high = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.object = path.empty() ? "[anonymous]" : path;
    out.push_back(std::move(m));
  }
  return out;
}

class Sampler {
 public:
  Sampler(pid_t root, CpuSamples& out) : root_(root), out_(out) {}
  ~Sampler() {
    if (!leave_to_exit_) detach_all();
  }
  // Detaching waits for each thread to stop, which a thread the judge has frozen never does; the
  // kernel detaches every tracee of a tracer that exits, whatever state they are in.
  void leave_to_exit() { leave_to_exit_ = true; }

  void attach_new() {
    for (pid_t pid : processes(root_)) {
      for (pid_t tid : numeric_entries(fmt::format("/proc/{}/task", pid))) {
        if (traced_.count(tid)) continue;
        if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0) {
          traced_[tid] = pid;
        } else if (traced_.empty() && (errno == EPERM || errno == EACCES) && out_.error.empty()) {
          out_.error =
              fmt::format("ptrace refused ({}): run as root or with kernel.yama.ptrace_scope=0", std::strerror(errno));
        }
      }
    }
  }

  void sample_running() {
    for (auto it = traced_.begin(); it != traced_.end();) {
      const auto [tid, pid] = *it;
      if (run_state(pid, tid) != 'R') {
        ++it;
        continue;
      }
      if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0 || !take_sample(tid, pid)) {
        it = traced_.erase(it);
        continue;
      }
      ++it;
    }
  }

  bool traced_any() const { return !traced_.empty(); }

 private:
  // Waits for the interrupt's stop, records the instruction pointer and lets the thread go on;
  // a signal that arrives first is passed on. False when the thread is gone.
  bool take_sample(pid_t tid, pid_t pid) {
    for (;;) {
      int status = 0;
      if (::waitpid(tid, &status, __WALL) != tid || WIFEXITED(status) || WIFSIGNALED(status)) return false;
      if (!WIFSTOPPED(status)) continue;
      if ((status >> 16) == PTRACE_EVENT_STOP) {
        user_regs_struct regs{};
        if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) == 0) record(pid, regs.rip);
        ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
        return true;
      }
      ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(WSTOPSIG(status))));
    }
  }

  void record(pid_t pid, uint64_t ip) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto& maps = maps_[pid];
      if (attempt == 1 || maps.empty()) maps = executable_mappings(pid);  // a library loaded since
      for (const auto& m : maps) {
        if (ip >= m.low && ip < m.high) {
          ++out_.by_object[m.object];
          ++out_.total;
          return;
        }
      }
    }
    ++out_.by_object["[unmapped]"];
    ++out_.total;
  }

  void detach_all() {
    for (const auto& [tid, pid] : traced_) {
      if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) continue;
      int status = 0;
      while (::waitpid(tid, &status, __WALL) == tid && WIFSTOPPED(status) && (status >> 16) != PTRACE_EVENT_STOP)
        ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(WSTOPSIG(status))));
      ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    }
    traced_.clear();
  }

  pid_t root_;
  CpuSamples& out_;
  bool leave_to_exit_ = false;
  std::map<pid_t, pid_t> traced_;  // thread -> its process
  std::map<pid_t, std::vector<Mapping>> maps_;
};

}  // namespace

CpuSamples sample_cpu(pid_t root, std::chrono::milliseconds duration, int hz, const volatile sig_atomic_t* stop) {
  CpuSamples out;
  Sampler sampler(root, out);
  const auto period = std::chrono::microseconds(1'000'000 / std::max(1, hz));
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < deadline && !(stop && *stop)) {
    sampler.attach_new();
    if (!sampler.traced_any() && !out.error.empty()) break;
    sampler.sample_running();
    std::this_thread::sleep_for(period);
  }
  if (stop && *stop) sampler.leave_to_exit();  // the caller exits right after printing
  return out;
}

}  // namespace vinci::eval
