#include "eval/cpu_sampler.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
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
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::eval {

namespace fs = std::filesystem;

namespace {

// PROCMAP_QUERY (Linux 6.11): the one mapping covering an address, asked of the kernel while the
// sampled thread is stopped. Debian's kernel headers may predate it; the ABI is fixed.
struct ProcmapQuery {
  uint64_t size, query_flags, query_addr;
  uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
  uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
  uint64_t vma_name_addr, build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104);
constexpr unsigned long kProcmapQuery = 0xC0686611;  // _IOWR('f', 17, struct procmap_query)
constexpr uint64_t kQueryExecutable = 0x04;

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

// The executable mapping of pid covering ip, read from /proc/PID/maps: the fallback where the kernel
// lacks PROCMAP_QUERY. Read afresh for every sample, so that no mapping swapped in since is
// mistaken for the one that was there before.
std::optional<MappedObject> mapping_from_maps(pid_t pid, uint64_t ip) {
  std::ifstream in(fmt::format("/proc/{}/maps", pid));
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode;
    std::getline(fields >> std::ws, path);
    const auto dash = range.find('-'), colon = device.find(':');
    if (perms.size() < 3 || perms[2] != 'x' || dash == std::string::npos || colon == std::string::npos) continue;
    MappedObject m;
    m.pid = pid;
    m.low = std::stoull(range.substr(0, dash), nullptr, 16);
    m.high = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (ip < m.low || ip >= m.high) continue;
    m.dev_major = static_cast<unsigned>(std::stoul(device.substr(0, colon), nullptr, 16));
    m.dev_minor = static_cast<unsigned>(std::stoul(device.substr(colon + 1), nullptr, 16));
    m.inode = std::stoull(inode);
    m.path = path.empty() ? "[anonymous]" : path;
    return m;
  }
  return std::nullopt;
}

class Sampler {
 public:
  Sampler(pid_t root, CpuSamples& out) : root_(root), out_(out) {}
  ~Sampler() {
    if (!leave_to_exit_) detach_all();
    for (const auto& [pid, fd] : maps_fds_)
      if (fd >= 0) ::close(fd);
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
    std::optional<MappedObject> m = query_mapping(pid, ip);
    if (!m) {
      m.emplace();
      m->pid = pid;
      m->path = "[unmapped]";
    }
    ++out_.by_object[*m];
    ++out_.total;
  }

  // The mapping covering ip, asked while the thread is stopped: PROCMAP_QUERY where the kernel has it.
  std::optional<MappedObject> query_mapping(pid_t pid, uint64_t ip) {
    if (!query_unsupported_) {
      auto [it, fresh] = maps_fds_.try_emplace(pid, -1);
      if (fresh) it->second = ::open(fmt::format("/proc/{}/maps", pid).c_str(), O_RDONLY | O_CLOEXEC);
      char name[8192];
      ProcmapQuery q{};
      q.size = sizeof q;
      q.query_flags = kQueryExecutable;
      q.query_addr = ip;
      q.vma_name_addr = reinterpret_cast<uint64_t>(name);
      q.vma_name_size = sizeof name;
      if (it->second >= 0 && ::ioctl(it->second, kProcmapQuery, &q) == 0) {
        out_.lookup = "query";
        return MappedObject{.pid = pid,
                            .low = q.vma_start,
                            .high = q.vma_end,
                            .dev_major = q.dev_major,
                            .dev_minor = q.dev_minor,
                            .inode = q.inode,
                            .path = q.vma_name_size > 1 ? std::string(name) : "[anonymous]"};
      }
      if (it->second >= 0 && errno == ENOENT) return std::nullopt;  // no executable mapping covers ip
      if (it->second >= 0 && errno == ENOTTY) {
        query_unsupported_ = true;
        out_.lookup = "maps";
      }
    }
    return mapping_from_maps(pid, ip);
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
  std::map<pid_t, int> maps_fds_;  // an open /proc/PID/maps per process, for PROCMAP_QUERY
  bool query_unsupported_ = false;
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
    const auto began = std::chrono::steady_clock::now();
    sampler.sample_running();
    // The threads stand stopped while they are sampled; a slow lookup (maps read afresh) stretches
    // the pause, so at most a twentieth of the time goes to sampling, whatever hz asks.
    std::this_thread::sleep_for(
        std::max<std::chrono::nanoseconds>(period, 19 * (std::chrono::steady_clock::now() - began)));
  }
  if (stop && *stop) sampler.leave_to_exit();  // the caller exits right after printing
  return out;
}

}  // namespace vinci::eval
