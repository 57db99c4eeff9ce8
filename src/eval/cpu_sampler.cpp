#include "eval/cpu_sampler.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"
#include "eval/perf_sampler.h"
#include "eval/process_view.h"

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

using namespace process_view;

char run_state(pid_t pid, pid_t tid) {
  const auto fields = task_stat(pid, tid);
  return fields.empty() || fields[0].empty() ? '?' : fields[0][0];
}

uint64_t boot_ticks_now() {
  timespec now{};
  ::clock_gettime(CLOCK_BOOTTIME, &now);
  const uint64_t ns_per_tick = 1'000'000'000ULL / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
  return (static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(now.tv_nsec)) / ns_per_tick;
}

class Sampler {
 public:
  Sampler(pid_t root, CpuSamples& out) : root_(root), out_(out), started_ticks_(boot_ticks_now()) {
    // Without these a sample can be neither weighed nor told from a private copy; the host lacks
    // them altogether (a kernel without CONFIG_SCHED_INFO or CONFIG_PROC_PAGE_MONITOR), not a thread.
    if (!cpu_ns("/proc/thread-self"))
      out_.error = "no per-thread CPU time on this host (/proc/PID/task/TID/schedstat)";
    else if (::access("/proc/self/pagemap", R_OK) != 0)
      out_.error = fmt::format("no page map on this host (/proc/PID/pagemap: {})", std::strerror(errno));
  }
  ~Sampler() {
    if (!leave_to_exit_) detach_all();
    for (const auto& [pid, fd] : maps_fds_)
      if (fd >= 0) ::close(fd);
  }
  // Detaching waits for each thread to stop, which a thread the judge has frozen never does; the
  // kernel detaches every tracee of a tracer that exits, whatever state they are in.
  void leave_to_exit() { leave_to_exit_ = true; }

  // A thread born since the sampling started is weighed from its birth, so that short-lived threads
  // (a BLAS's workers started per call) keep their time; any other is weighed from now on, so that
  // what ran before the sampling (warm-up calls) is not.
  void attach_new() {
    for (pid_t pid : processes(root_)) {
      for (pid_t tid : numeric_entries(fmt::format("/proc/{}/task", pid))) {
        if (traced_.count(tid)) continue;
        if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0) {
          const auto fields = task_stat(pid, tid);
          const bool born_since = fields.size() > 19 && std::stoull(fields[19]) >= started_ticks_;
          const std::string task = fmt::format("/proc/{}/task/{}", pid, tid);
          traced_[tid] = Traced{pid, born_since ? 0 : cpu_ns(task).value_or(0)};
        } else if (traced_.empty() && (errno == EPERM || errno == EACCES) && out_.error.empty()) {
          out_.error =
              fmt::format("ptrace refused ({}): run as root or with kernel.yama.ptrace_scope=0", std::strerror(errno));
        }
      }
    }
  }

  // Samples the running threads; returns how long they stood stopped for it, from each stop's report
  // to its continuation (not the wait for the stop, which on a loaded host is the scheduler's and
  // costs the thread nothing).
  std::chrono::nanoseconds sample_running() {
    std::chrono::nanoseconds stopped{0};
    for (auto it = traced_.begin(); it != traced_.end();) {
      const char state = run_state(it->second.pid, it->first);
      // A traced thread that ended stays a zombie, holding a place in the sandbox's pids limit, until
      // its tracer reaps it (a thread group's leader only once its group is gone).
      int status = 0;
      if ((state == 'Z' || state == '?') && ::waitpid(it->first, &status, __WALL | WNOHANG) != 0) {
        it = traced_.erase(it);
        continue;
      }
      if (state == 't') pass_on_stop(it->first);
      if (state != 'R') {
        ++it;
        continue;
      }
      if (::ptrace(PTRACE_INTERRUPT, it->first, nullptr, nullptr) != 0 ||
          !take_sample(it->first, it->second, stopped)) {
        it = traced_.erase(it);
        continue;
      }
      ++it;
    }
    return stopped;
  }

  bool traced_any() const { return !traced_.empty(); }

 private:
  struct Traced {
    pid_t pid;
    uint64_t cpu_ns;  // the thread's CPU time at its previous sample (or where its weighing starts)
  };

  // A signal sent to a traced thread stops it until its tracer passes the signal on, and a group stop
  // (SIGSTOP) is reported to its tracer too, which must let SIGCONT end it: whatever the thread was
  // doing, it must not wait for its next sample.
  static void pass_on_stop(pid_t tid) {
    int status = 0;
    if (::waitpid(tid, &status, __WALL | WNOHANG) != tid || !WIFSTOPPED(status)) return;
    if ((status >> 16) == PTRACE_EVENT_STOP)
      ::ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);
    else
      ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(WSTOPSIG(status))));
  }

  // Waits for the interrupt's stop, records the instruction pointer and lets the thread go on;
  // a signal that arrives first is passed on. False when the thread is gone.
  bool take_sample(pid_t tid, Traced& thread, std::chrono::nanoseconds& stopped) {
    for (;;) {
      int status = 0;
      if (::waitpid(tid, &status, __WALL) != tid || WIFEXITED(status) || WIFSIGNALED(status)) return false;
      if (!WIFSTOPPED(status)) continue;
      if ((status >> 16) == PTRACE_EVENT_STOP) {
        const auto since = std::chrono::steady_clock::now();
        user_regs_struct regs{};
        if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) == 0) record(tid, thread, regs.rip);
        // Measured up to the continuation, not past it: the thread it wakes may take this CPU.
        stopped += std::chrono::steady_clock::now() - since;
        ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
        return true;
      }
      ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(WSTOPSIG(status))));
    }
  }

  // The sample weighs the CPU time its thread ran since its previous one: a thread that is always
  // runnable but yields at once is caught as often as one that computes, and weighs what it ran.
  void record(pid_t tid, Traced& thread, uint64_t ip) {
    std::optional<MappedObject> m = query_mapping(thread.pid, ip);
    const std::optional<uint64_t> file_offset = m ? std::optional(ip - m->low + m->offset) : std::nullopt;
    if (!m) {
      m.emplace();
      m->pid = thread.pid;
      m->path = "[unmapped]";
    } else {
      // Every mapping's page, the kernel's [vdso] included (see perf_sampler.cpp).
      m->private_copy = page_map(thread.pid).private_page(ip);
    }
    const uint64_t now = cpu_ns(fmt::format("/proc/{}/task/{}", thread.pid, tid)).value_or(thread.cpu_ns);
    const uint64_t ran = now > thread.cpu_ns ? now - thread.cpu_ns : 0;
    thread.cpu_ns = std::max(now, thread.cpu_ns);
    taken_.push_back({monotonic_ns(), std::move(*m), ran, file_offset});
  }

 public:
  // The samples outside each set's excluded spans, by mapping.
  void tally(const std::vector<Spans>& sets) {
    for (const Taken& sample : taken_)
      count_sample(out_, sets, sample.time, sample.object, sample.file_offset, sample.ns);
    taken_.clear();
  }

 private:
  struct Taken {
    uint64_t time;  // CLOCK_MONOTONIC
    MappedObject object;
    uint64_t ns;                          // the CPU time the sample weighs
    std::optional<uint64_t> file_offset;  // of the sampled instruction, in a mapping
  };
  std::vector<Taken> taken_;

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
                            .offset = q.vma_offset,
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
    std::vector<pid_t> tids;
    for (const auto& [tid, thread] : traced_) tids.push_back(tid);
    detach_threads(tids);
    traced_.clear();
  }

  PageMap& page_map(pid_t pid) {
    auto& m = page_maps_[pid];
    if (!m) m = std::make_unique<PageMap>(pid);
    return *m;
  }

  pid_t root_;
  CpuSamples& out_;
  uint64_t started_ticks_;  // when the sampling started, as a thread's start time counts
  bool leave_to_exit_ = false;
  std::map<pid_t, Traced> traced_;  // thread -> its process and CPU time
  std::map<pid_t, int> maps_fds_;   // an open /proc/PID/maps per process, for PROCMAP_QUERY
  std::map<pid_t, std::unique_ptr<PageMap>> page_maps_;
  bool query_unsupported_ = false;
};

}  // namespace

void count_sample(CpuSamples& out, const std::vector<Spans>& sets, uint64_t time, const MappedObject& m,
                  std::optional<uint64_t> file_offset, uint64_t ns) {
  for (size_t i = 0; i < sets.size(); ++i) {
    if (within(sets[i], time)) continue;
    CpuSamples& into = i == 0 ? out : out.further_sets[i - 1];
    ObjectTime& t = into.by_object[m];
    ++t.samples;
    t.cpu_ns += ns;
    if (file_offset) {
      OffsetTime& at = t.by_offset[*file_offset];
      ++at.samples;
      at.cpu_ns += ns;
    }
    ++into.total;
    into.cpu_ns += ns;
  }
}

std::vector<Spans> tallies_for(CpuSamples& out, const ExcludedSpans& excluded) {
  std::vector<Spans> sets = excluded ? excluded() : std::vector<Spans>{};
  if (sets.empty()) sets.emplace_back();
  out.further_sets.assign(sets.size() - 1, CpuSamples{});
  return sets;
}

uint64_t outside(const Spans& spans, const Spans& excluded) {
  // The exclusions merged into disjoint sorted spans with the running total of their lengths, so that
  // each span's covered part is two binary searches: a round holds as many unarmed spans as samples.
  Spans merged;
  Spans sorted(excluded);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [a, b] : sorted) {
    if (b <= a) continue;
    if (!merged.empty() && a <= merged.back().second)
      merged.back().second = std::max(merged.back().second, b);
    else
      merged.emplace_back(a, b);
  }
  std::vector<uint64_t> before(merged.size() + 1, 0);
  for (size_t i = 0; i < merged.size(); ++i) before[i + 1] = before[i] + (merged[i].second - merged[i].first);
  // The excluded length below t.
  const auto covered_below = [&](uint64_t t) {
    const size_t k = static_cast<size_t>(
        std::upper_bound(merged.begin(), merged.end(), t, [](uint64_t x, const auto& m) { return x < m.first; }) -
        merged.begin());
    if (k == 0) return uint64_t{0};
    return before[k] - (merged[k - 1].second > t ? merged[k - 1].second - t : 0);
  };
  uint64_t total = 0;
  for (const auto& [from, to] : spans)
    if (to > from) total += (to - from) - (covered_below(to) - covered_below(from));
  return total;
}

void share_sampling_state(CpuSamples& out) {
  for (CpuSamples& set : out.further_sets) {
    set.error = out.error;
    set.evaded = out.evaded;
    set.lookup = out.lookup;
  }
}

CpuSamples sample_cpu(pid_t root, std::chrono::milliseconds duration, int hz, const volatile sig_atomic_t* stop,
                      const std::function<void()>& attached, const ExcludedSpans& excluded) {
  if (auto perf = sample_cpu_perf(root, duration, hz, stop, attached, excluded)) return *perf;
  return sample_cpu_ptrace(root, duration, hz, stop, attached, excluded);
}

CpuSamples sample_cpu_ptrace(pid_t root, std::chrono::milliseconds duration, int hz, const volatile sig_atomic_t* stop,
                             const std::function<void()>& attached, const ExcludedSpans& excluded) {
  CpuSamples out;
  Sampler sampler(root, out);
  if (!out.error.empty()) {
    if (attached) attached();
    return out;
  }
  const auto period = std::chrono::microseconds(1'000'000 / std::max(1, hz));
  const auto deadline = std::chrono::steady_clock::now() + duration;
  // The pause between rounds is drawn at random, so that no candidate can keep its library calls
  // between the rounds.
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  for (bool first = true; std::chrono::steady_clock::now() < deadline && !(stop && *stop); first = false) {
    sampler.attach_new();
    if (first && attached) attached();
    if (!sampler.traced_any() && !out.error.empty()) break;
    // The threads stand stopped while they are sampled; a slow lookup (maps read afresh) stretches
    // the pause, so that at most a twentieth of their time goes to sampling, whatever hz asks.
    const auto stopped = sampler.sample_running();
    std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::nanoseconds>(
        jitter(rng) * std::max<std::chrono::nanoseconds>(period, 19 * stopped)));
  }
  sampler.tally(tallies_for(out, excluded));
  share_sampling_state(out);
  if (stop && *stop) sampler.leave_to_exit();  // the caller exits right after printing
  return out;
}

}  // namespace vinci::eval
