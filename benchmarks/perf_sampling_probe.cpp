// What perf_event_open offers a trusted sampler of another process's CPU time (threat model, red-team
// round 10: the ptrace sampler's stops are visible to the sampled code, which can then run a library
// in the safe part of the next gap). Checks, on this host, without root-only features:
//   1. task-clock sampling events on another process, one per CPU with inherit (a per-thread event
//      with inherit cannot be mmapped), see a thread born after the attach;
//   2. each thread is sampled once a period of its own CPU time, with no stop of the sampled
//      threads (the kernel reads the IP at its own timer interrupt);
//   3. PERF_EVENT_IOC_PERIOD changes the period of an attached event and of its inherited children;
//   4. an mprotect that makes anonymous memory executable is reported (PERF_RECORD_MMAP2), so a
//      sample's mapping can be known at the sample's time, not at the judge's next look.
// Usage: perf_sampling_probe   (prints one line per check, exits 1 when one fails)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <thread>
#include <vector>

namespace {

__attribute__((noinline)) void spin_a(volatile double* x) {
  for (int i = 0; i < 20'000'000; ++i) *x = *x + 1e-9 * i;
}
__attribute__((noinline)) void spin_b(volatile double* x) {
  for (int i = 0; i < 60'000'000; ++i) *x = *x + 1e-9 * i;
}
// Which of the two functions ip lies in: each reaches up to the next one's start (or 256 bytes).
int function_of(uint64_t ip) {
  const uint64_t a = reinterpret_cast<uint64_t>(&spin_a), b = reinterpret_cast<uint64_t>(&spin_b);
  const auto within = [](uint64_t ip, uint64_t start, uint64_t other) {
    const uint64_t end = other > start ? std::min(other, start + 256) : start + 256;
    return ip >= start && ip < end;
  };
  return within(ip, a, b) ? 0 : within(ip, b, a) ? 1 : -1;
}

uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(t.tv_nsec);
}

// The child's two threads each spin in one function and report the CPU time that took.
void child_work(int go, int report) {
  char c;
  if (read(go, &c, 1) != 1) _exit(2);
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  static_cast<unsigned char*>(page)[0] = 0xc3;  // ret
  mprotect(page, 4096, PROT_READ | PROT_EXEC);
  uint64_t ns[2] = {0, 0};
  std::thread born_later([&ns] {
    volatile double y = 0;
    const uint64_t t0 = thread_cpu_ns();
    spin_b(&y);
    ns[1] = thread_cpu_ns() - t0;
  });
  volatile double x = 0;
  const uint64_t t0 = thread_cpu_ns();
  spin_a(&x);
  ns[0] = thread_cpu_ns() - t0;
  born_later.join();
  _exit(write(report, ns, sizeof ns) == sizeof ns ? 0 : 2);
}

constexpr int kPages = 16;
constexpr uint64_t kPeriodNs = 100'000;

}  // namespace

int main() {
  int go[2], report[2];
  if (pipe(go) != 0 || pipe(report) != 0) return 2;
  const pid_t child = fork();
  if (child == 0) child_work(go[0], report[1]);
  const long page = sysconf(_SC_PAGESIZE);
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<int> fds;
  std::vector<char*> rings;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 4 * kPeriodNs;  // ns of the thread's CPU time; a quarter of it set below, attached
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.inherit = 1;
    a.mmap = 1;
    a.mmap2 = 1;
    const int fd = static_cast<int>(syscall(SYS_perf_event_open, &a, child, cpu, -1, 0));
    if (fd < 0) {
      std::printf("FAIL perf_event_open(task-clock, pid %d, cpu %d): %s\n", child, cpu, std::strerror(errno));
      kill(child, SIGKILL);
      return 1;
    }
    void* ring = mmap(nullptr, (1 + kPages) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
      std::printf("FAIL mmap of the ring: %s\n", std::strerror(errno));
      kill(child, SIGKILL);
      return 1;
    }
    fds.push_back(fd);
    rings.push_back(static_cast<char*>(ring));
  }
  for (int fd : fds) {
    uint64_t period = kPeriodNs;
    if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) != 0)
      std::printf("FAIL PERF_EVENT_IOC_PERIOD: %s\n", std::strerror(errno));
  }
  if (write(go[1], "g", 1) != 1) return 2;
  int a_samples = 0, b_samples = 0, elsewhere = 0, lost = 0, exec_mmaps = 0;
  std::set<uint32_t> threads;
  auto drain = [&] {
    for (char* ring : rings) {
      auto* meta = reinterpret_cast<perf_event_mmap_page*>(ring);
      const char* data = ring + page;
      const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
      for (uint64_t at = meta->data_tail; at < head;) {
        perf_event_header h;
        std::memcpy(&h, data + at % (kPages * page), sizeof h);
        // A record may wrap around the ring's end: copy it out byte by byte.
        std::vector<char> body(h.size);
        for (size_t i = 0; i < h.size; ++i) body[i] = data[(at + i) % (kPages * page)];
        if (h.type == PERF_RECORD_SAMPLE) {
          uint64_t ip;
          uint32_t pid_tid[2];
          std::memcpy(&ip, body.data() + sizeof h, 8);
          std::memcpy(pid_tid, body.data() + sizeof h + 8, 8);
          threads.insert(pid_tid[1]);
          const int f = function_of(ip);
          a_samples += f == 0;
          b_samples += f == 1;
          elsewhere += f < 0;
        } else if (h.type == PERF_RECORD_LOST) {
          ++lost;
        } else if (h.type == PERF_RECORD_MMAP2) {
          uint32_t prot;  // after pid, tid, addr, len, pgoff, maj, min, ino, ino_generation
          std::memcpy(&prot, body.data() + sizeof h + 8 + 24 + 8 + 8 + 8, 4);
          exec_mmaps += (prot & PROT_EXEC) != 0;
        }
        at += h.size;
      }
      __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    }
  };
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    drain();
    usleep(2000);
  }
  drain();
  uint64_t ns[2] = {0, 0};
  if (read(report[0], ns, sizeof ns) != sizeof ns) std::printf("FAIL the child's CPU times\n");
  bool ok = true;
  auto say = [&](bool pass, const char* what) {
    std::printf("%s %s\n", pass ? "ok  " : "FAIL", what);
    ok &= pass;
  };
  const double expect_a = static_cast<double>(ns[0]) / kPeriodNs, expect_b = static_cast<double>(ns[1]) / kPeriodNs;
  std::printf(
      "samples: spin_a %d (its CPU time / the period: %.0f), spin_b %d (%.0f), elsewhere %d, lost records %d, "
      "threads %zu, executable mappings reported %d\n",
      a_samples, expect_a, b_samples, expect_b, elsewhere, lost, threads.size(), exec_mmaps);
  say(threads.size() == 2, "a thread born after the attach is sampled (per-CPU inherited events)");
  say(a_samples > 0.85 * expect_a && a_samples < 1.15 * expect_a && b_samples > 0.85 * expect_b &&
          b_samples < 1.15 * expect_b,
      "each thread is sampled once a period of its own CPU time, at the period set while it ran");
  say(exec_mmaps >= 1, "an mprotect to PROT_EXEC is reported as a mapping record");
  return ok ? 0 : 1;
}
