// The outside view of a process tree's CPU time: a child that spins in this binary's own code
// must be sampled there, by the file's identity, code in a memfd by the kernel's name for it, a page
// of it copied by a write as a private copy, and a sleeping child not at all. Samples weigh the CPU
// time their threads ran: runnable threads that barely run do not outvote one that computes, what ran
// before the sampling is not weighed, and threads born during it are, from their birth.
#include "eval/cpu_sampler.h"
#include "eval/perf_sampler.h"
#include "eval/process_view.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"

namespace cpu_sampler_test {
using namespace vinci::eval;
using vinci::eval::process_view::monotonic_ns;

// A child that runs `body` until killed (or for 20 s, should this process die first).
class Child {
 public:
  explicit Child(void (*body)()) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::alarm(20);
      body();
      ::_exit(0);
    }
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    // A thread the in-process sampler traced and that ended before the sampler let it go stays a zombie
    // that only this process can reap (__WALL), and the child's leader is not reaped before it: a plain
    // waitpid for the leader hung a clean-clone CI run for 13 minutes (session 24).
    for (int status = 0;;) {
      const pid_t got = ::waitpid(-1, &status, __WALL);
      if (got == pid_ || got < 0) break;
    }
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

void spin() {
  volatile unsigned long n = 0;
  for (;;) n = n + 1;
}

void sleep_forever() {
  for (;;) ::pause();
}

// The fields of /proc/PID/stat after the command name: the state first.
std::vector<std::string> stat_fields(pid_t pid) {
  const auto stat = vinci::core::try_read_file(fmt::format("/proc/{}/stat", pid));
  const auto close = stat ? stat->rfind(')') : std::string::npos;
  if (close == std::string::npos) return {};
  std::istringstream in(stat->substr(close + 1));
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

// The CPU time of a whole process, its ended threads included, in nanoseconds (clock-tick grained).
uint64_t process_cpu_ns(pid_t pid) {
  const auto fields = stat_fields(pid);
  const uint64_t ticks = std::stoull(fields.at(11)) + std::stoull(fields.at(12));  // utime, stime
  return ticks * 1'000'000'000ULL / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
}

// Code in a memfd, mapped executable and private: a jump to itself.
struct MemfdLoop {
  explicit MemfdLoop(const char* name) {
    fd = ::memfd_create(name, MFD_CLOEXEC);
    const unsigned char jump_to_self[] = {0xEB, 0xFE};
    if (fd < 0 || ::write(fd, jump_to_self, sizeof jump_to_self) != 2 || ::fstat(fd, &st) != 0) return;
    code = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  }
  ~MemfdLoop() {
    if (code != MAP_FAILED) ::munmap(code, 4096);
    if (fd >= 0) ::close(fd);
  }
  bool ok() const { return fd >= 0 && code != MAP_FAILED; }
  int fd = -1;
  struct stat st {};
  void* code = MAP_FAILED;
};

// Each test runs against both samplers: perf's (taken where the host allows it) and ptrace's (the
// fallback).
class CpuSampler : public ::testing::TestWithParam<std::string> {
 protected:
  bool perf() const { return GetParam() == "perf"; }
  CpuSamples sample(pid_t root, std::chrono::milliseconds duration, int hz, const volatile sig_atomic_t* stop = nullptr,
                    const std::function<void()>& attached = {}, const ExcludedSpans& excluded = {}) {
    if (!perf()) return sample_cpu_ptrace(root, duration, hz, stop, attached, excluded);
    if (auto s = sample_cpu_perf(root, duration, hz, stop, attached, excluded)) return *s;
    if (attached) attached();
    CpuSamples refused;
    refused.error = "perf events on another process are refused here";
    return refused;
  }
};
INSTANTIATE_TEST_SUITE_P(Method, CpuSampler, ::testing::Values("perf", "ptrace"),
                         [](const auto& info) { return info.param; });

TEST_P(CpuSampler, ASpinningChildIsSampledInItsOwnCode) {
  const Child child(spin);
  int attached = 0;
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(500), 100, nullptr, [&] { ++attached; });
  EXPECT_EQ(attached, 1) << "the judge starts its calls when told the sampler is attached, once";
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(s.total, 5) << "a busy child should be caught running";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  struct stat st {};
  ASSERT_EQ(::stat(self.c_str(), &st), 0);
  int in_self = 0, sum = 0;
  uint64_t sum_ns = 0;
  for (const auto& [object, t] : s.by_object) {
    sum += t.samples;
    sum_ns += t.cpu_ns;
    if (object.path != self) continue;
    in_self += t.samples;
    // The very file, by the identity the judge checks against its own view of the host.
    EXPECT_EQ(object.pid, child.pid());
    EXPECT_EQ(object.inode, st.st_ino);
    EXPECT_EQ(object.dev_major, major(st.st_dev));
    EXPECT_EQ(object.dev_minor, minor(st.st_dev));
    EXPECT_LT(object.low, object.high);
    EXPECT_FALSE(object.private_copy) << "the binary's own pages were never written";
  }
  // The loop is all it runs: nearly every sample lies in this binary.
  EXPECT_GE(in_self * 10, s.total * 9) << in_self << " of " << s.total;
  EXPECT_EQ(sum, s.total);
  EXPECT_EQ(sum_ns, s.cpu_ns);
  EXPECT_GT(s.cpu_ns, 0u);
  EXPECT_TRUE(perf() ? s.lookup == "perf" : s.lookup == "query" || s.lookup == "maps") << s.lookup;
  // A thread is unseen only while the sampler is late to re-arm all eight of its events.
  EXPECT_LT(s.unseen_ns, 25'000'000u) << "of 500 ms sampled";
}

#if defined(__x86_64__)
// Code in a memfd, mapped executable: what a candidate that hides a copied library behind an
// innocent name would run. The sample names the memfd and its inode, not any name it chose for it.
void* g_entry = nullptr;  // where a child jumps: code a test mapped before forking it

void run_entry() { reinterpret_cast<void (*)()>(g_entry)(); }

// The samples of a memfd's code, and whether each was taken on a private copy of its page.
struct InMemfd {
  int samples = 0, private_copies = 0;
};

InMemfd in_memfd(const CpuSamples& s, const MemfdLoop& loop) {
  InMemfd found;
  for (const auto& [object, t] : s.by_object) {
    if (object.inode != loop.st.st_ino) continue;
    found.samples += t.samples;
    found.private_copies += object.private_copy ? t.samples : 0;
    EXPECT_EQ(object.path.rfind("/memfd:x/libc.so.6", 0), 0u) << object.path;
    EXPECT_EQ(object.low, reinterpret_cast<uint64_t>(loop.code));
    EXPECT_EQ(object.offset, 0u);
  }
  return found;
}

TEST_P(CpuSampler, CodeInAMemfdIsNamedByTheKernelNotByItsAuthor) {
  const MemfdLoop loop("x/libc.so.6");
  ASSERT_TRUE(loop.ok());
  g_entry = loop.code;
  const Child child(run_entry);
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(500), 100);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(s.total, 5);
  const InMemfd found = in_memfd(s, loop);
  EXPECT_GE(found.samples * 10, s.total * 9) << found.samples << " of " << s.total;
  EXPECT_EQ(found.private_copies, 0) << "the memfd's page was never written: it is the file's";
}

// Each sample also says where in the mapping's file it fell, the mapping's own offset in the file
// counted: the judge names the function a library's sample ran by it (library_symbols.py). Here a
// jump to itself 16 bytes into a file's second page, mapped from that page: every sample is at 4112.
TEST_P(CpuSampler, SamplesSayWhereInTheFileTheyFell) {
  const int fd = ::memfd_create("two-pages", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<unsigned char> file(8192, 0x90);  // nop
  file[4096 + 16] = 0xEB;                       // jmp to itself
  file[4096 + 17] = 0xFE;
  ASSERT_EQ(::write(fd, file.data(), file.size()), 8192);
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 4096);
  ASSERT_NE(page, MAP_FAILED);
  g_entry = static_cast<char*>(page) + 16;
  const Child child(run_entry);
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(500), 500);
  ::munmap(page, 4096);
  ::close(fd);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  int in_file = 0, at_jump = 0;
  for (const auto& [object, t] : s.by_object) {
    if (object.path.find("two-pages") == std::string::npos) continue;
    in_file += t.samples;
    int by_offset = 0;
    for (const auto& [offset, at] : t.by_offset) {
      by_offset += at.samples;
      if (offset == 4096 + 16) at_jump += at.samples;
    }
    EXPECT_EQ(by_offset, t.samples) << "every sample of a mapping has its offset";
  }
  ASSERT_GT(in_file, 0) << "the loop ran half a second";  // how many, a loaded host decides; where, the test
  EXPECT_EQ(at_jump, in_file) << "the loop is one instruction, at file offset 4112";
}

// Round 5's attack: a file's code pages made writable and written (another library's code copied
// in) become the process's own anonymous copies, while the mapping still names the file.
TEST_P(CpuSampler, APageWrittenThroughAPrivateMappingIsAPrivateCopy) {
  const MemfdLoop loop("x/libc.so.6");
  ASSERT_TRUE(loop.ok());
  ASSERT_EQ(::mprotect(loop.code, 4096, PROT_READ | PROT_WRITE), 0);
  static_cast<volatile unsigned char*>(loop.code)[0] = 0xEB;  // the same byte: only the copy changes
  ASSERT_EQ(::mprotect(loop.code, 4096, PROT_READ | PROT_EXEC), 0);
  g_entry = loop.code;
  const Child child(run_entry);
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(500), 100);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(s.total, 5);
  const InMemfd found = in_memfd(s, loop);
  EXPECT_GE(found.samples * 10, s.total * 9) << found.samples << " of " << s.total;
  EXPECT_EQ(found.private_copies, found.samples);
}

// The kernel's [vdso], a code mapping of no file (inode 0) that counts as glue: red-team round 15 copied
// OpenBLAS's kernel into it (mprotect allows writing it) and ran it there. Written, its pages are
// anonymous copies still named [vdso]; as the kernel mapped them, they are not.
void vdso_clock_loop(bool write_first) {
  std::ifstream maps("/proc/self/maps");
  uint64_t low = 0, high = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.find("[vdso]") != std::string::npos) std::sscanf(line.c_str(), "%lx-%lx", &low, &high);
  if (write_first && low < high) {
    if (::mprotect(reinterpret_cast<void*>(low), high - low, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) ::_exit(3);
    for (uint64_t page = low; page < high; page += 4096) {
      volatile unsigned char* byte = reinterpret_cast<unsigned char*>(page);
      *byte = *byte;  // the same byte: only the copy changes
    }
    ::mprotect(reinterpret_cast<void*>(low), high - low, PROT_READ | PROT_EXEC);
  }
  for (timespec t{};;) ::clock_gettime(CLOCK_MONOTONIC, &t);
}

TEST_P(CpuSampler, AWrittenVdsoPageIsAPrivateCopy) {
  for (const bool written : {false, true}) {
    const Child child(written ? +[] { vdso_clock_loop(true); } : +[] { vdso_clock_loop(false); });
    const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(500), 500);
    if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
    int in_vdso = 0, copies = 0;
    for (const auto& [object, t] : s.by_object) {
      if (object.path != "[vdso]") continue;
      in_vdso += t.samples;
      copies += object.private_copy ? t.samples : 0;
    }
    ASSERT_GT(in_vdso, 5) << "clock_gettime runs in the vdso: " << in_vdso << " of " << s.total;
    EXPECT_EQ(copies, written ? in_vdso : 0) << (written ? "written" : "as the kernel mapped it");
  }
}

// Red-team round 16: a thread that seldom runs maps own code over a library's pages, and the thread
// that computes maps the library back and runs it. The sleeper's mapping record is read last (its
// ring is drained only at the end), yet the samples name what was mapped at their instant.
struct Remap {
  MemfdLoop own{"own"}, library{"library"};
  void* at = MAP_FAILED;
  std::atomic<int> step{0};
};
Remap* g_remap = nullptr;

// The samples of a Remap's two loops.
struct InLoops {
  int library = 0, own = 0;
};

InLoops in_loops(const CpuSamples& s, const Remap& remap) {
  InLoops found;
  for (const auto& [object, t] : s.by_object) {
    found.library += object.inode == remap.library.st.st_ino ? t.samples : 0;
    found.own += object.inode == remap.own.st.st_ino ? t.samples : 0;
  }
  return found;
}

struct RemapRun {
  bool made = false;          // both loops' memfds and the first mapping were made
  std::string sampler_error;  // the sampler's, where this machine refuses ptrace
  InLoops found;
};

using Sampling = std::function<CpuSamples(pid_t)>;

// A Remap whose page first maps the own loop (own_first) or the library's, run by run in a child
// the test's sampling watches.
RemapRun run_remapped(bool own_first, void (*run)(), const Sampling& sampling) {
  Remap remap;
  RemapRun out;
  if (!remap.own.ok() || !remap.library.ok()) return out;
  remap.at = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, (own_first ? remap.own : remap.library).fd, 0);
  if (remap.at == MAP_FAILED) return out;
  out.made = true;
  g_remap = &remap;
  {
    const Child child(run);
    const CpuSamples s = sampling(child.pid());
    out.sampler_error = s.error;
    out.found = in_loops(s, remap);
  }
  ::munmap(remap.at, 4096);
  g_remap = nullptr;
  return out;
}

void remap_then_run() {
  std::thread sleeper([] {
    ::usleep(150'000);  // the sampler is attached by now
    ::mmap(g_remap->at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, g_remap->own.fd, 0);
    g_remap->step = 1;
    for (;;) ::pause();
  });
  while (g_remap->step.load() == 0) {
  }
  ::mmap(g_remap->at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, g_remap->library.fd, 0);
  reinterpret_cast<void (*)()>(g_remap->at)();
}

TEST_P(CpuSampler, MappingsAreReplayedInTimeOrderWhateverThreadReportedThem) {
  const RemapRun run = run_remapped(/*own_first=*/false, remap_then_run,
                                    [this](pid_t pid) { return sample(pid, std::chrono::milliseconds(700), 500); });
  ASSERT_TRUE(run.made);
  if (!run.sampler_error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << run.sampler_error;
  const InLoops& found = run.found;
  EXPECT_GT(found.library, 20) << "the library's loop ran for about half a second";
  EXPECT_EQ(found.own, 0) << "the own code was mapped there only while nothing ran it";
}

// Red-team round 30's class: a process that shares the sampled one's memory outside its thread group
// (clone(CLONE_VM) without CLONE_THREAD; vfork until its exec) maps a library over code the other one
// then runs. Its mapping record arrives on its own ring, for its own history, yet the samples of the
// process that runs the code must name the library.
int remap_as_a_sharer(void*) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::usleep(150'000);  // the sampler is attached by now
  ::mmap(g_remap->at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, g_remap->library.fd, 0);
  g_remap->step = 1;
  for (;;) ::pause();
}

void run_what_a_sharer_mapped() {
  static std::vector<char> stack(256 * 1024);
  if (::clone(remap_as_a_sharer, stack.data() + stack.size(), CLONE_VM | SIGCHLD, nullptr) < 0) ::_exit(3);
  while (g_remap->step.load() == 0) {
  }
  reinterpret_cast<void (*)()>(g_remap->at)();
}

TEST_P(CpuSampler, AMappingByAProcessSharingTheMemoryNamesTheCodeThere) {
  const RemapRun run = run_remapped(/*own_first=*/true, run_what_a_sharer_mapped,
                                    [this](pid_t pid) { return sample(pid, std::chrono::milliseconds(700), 500); });
  ASSERT_TRUE(run.made);
  if (!run.sampler_error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << run.sampler_error;
  const InLoops& found = run.found;
  EXPECT_GT(found.library, 20) << "the library's loop ran for about half a second";
  EXPECT_EQ(found.own, 0) << "the own code was replaced before anything ran it";
}

// The other way: a vfork child shares its parent's memory only until its exec, and what its new image
// maps (here a Python that maps the library's memfd at the very address of the parent's own loop) is
// its own. The parent's samples there must keep naming its own code.
void vfork_then_run_own() {
  ::usleep(150'000);  // the sampler is attached by now, and sees the child born
  const std::string at = std::to_string(reinterpret_cast<uintptr_t>(g_remap->at));
  const std::string fd = std::to_string(g_remap->library.fd);
  const std::string script =
      "import ctypes, time\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "libc.mmap.restype = ctypes.c_void_p\n"
      "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, "
      "ctypes.c_long]\n"
      "got = libc.mmap(" +
      at + ", 4096, 5, 0x12, " + fd +
      ", 0)\n"  // PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED
      "print('mapped' if got == " +
      at +
      " else 'failed', flush=True)\n"
      "time.sleep(2)\n";
  ::fcntl(g_remap->library.fd, F_SETFD, 0);  // the exec'd image keeps the library's descriptor
  const pid_t child = ::vfork();
  if (child == 0) {
    ::execl("/usr/bin/python3", "python3", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  reinterpret_cast<void (*)()>(g_remap->at)();
}

TEST_P(CpuSampler, WhatAVforkChildMapsAfterItsExecIsItsOwn) {
  const RemapRun run = run_remapped(/*own_first=*/true, vfork_then_run_own,
                                    [this](pid_t pid) { return sample(pid, std::chrono::milliseconds(900), 500); });
  ASSERT_TRUE(run.made);
  if (!run.sampler_error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << run.sampler_error;
  const InLoops& found = run.found;
  EXPECT_GT(found.own, 20) << "the parent's own loop ran for over half a second";
  EXPECT_EQ(found.library, 0) << "the library was mapped there in the child's new image, not the parent's";
}

// Round 6's attack: one thread computes (here in a memfd's loop), eight more of the candidate's own
// only call sched_yield. All nine are always runnable, so each is caught about as often; the CPU time
// is nearly all the computing thread's. They share one CPU so that the yielding threads find nothing
// better to do only by yielding to it, however loaded the other CPUs are.
TEST_P(CpuSampler, ASampleWeighsTheCpuTimeItsThreadRan) {
  const MemfdLoop loop("x/libc.so.6");
  ASSERT_TRUE(loop.ok());
  g_entry = loop.code;
  const Child child([] {
    cpu_set_t allowed, one;
    CPU_ZERO(&one);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        CPU_SET(cpu, &one);
        ::sched_setaffinity(0, sizeof one, &one);
        break;
      }
    }
    for (int i = 0; i < 8; ++i)
      std::thread([] {
        for (;;) ::sched_yield();
      }).detach();
    run_entry();
  });
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(1000), 500);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(s.total, 50);
  ASSERT_GT(s.cpu_ns, 0u);
  uint64_t busy_ns = 0;
  int busy_samples = 0;
  for (const auto& [object, t] : s.by_object) {
    if (object.inode != loop.st.st_ino) continue;
    busy_ns += t.cpu_ns;
    busy_samples += t.samples;
  }
  const double cpu_share = static_cast<double>(busy_ns) / static_cast<double>(s.cpu_ns);
  const double sample_share = static_cast<double>(busy_samples) / s.total;
  EXPECT_GT(cpu_share, 0.6) << busy_samples << " of " << s.total << " samples";
  // Stops catch a runnable thread, which the weights must correct; perf samples threads in their CPU
  // time, so the samples themselves already fall where the time goes.
  if (perf())
    EXPECT_GT(sample_share, 0.6) << "samples of perf are taken in CPU time";
  else
    EXPECT_LT(sample_share, 0.4) << "the yielding threads were not caught runnable";
}

// What ran before the sampling is not weighed: a child that has spun for half a second weighs no more
// than it runs while sampled.
TEST_P(CpuSampler, TimeBeforeTheSamplingIsNotWeighed) {
  const Child child(spin);
  for (int i = 0; i < 500 && process_cpu_ns(child.pid()) < 500'000'000ULL; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t before = process_cpu_ns(child.pid());
  ASSERT_GE(before, 500'000'000ULL) << "the child did not get half a second of CPU time in 10 s";
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(200), 1000);
  const uint64_t after = process_cpu_ns(child.pid());
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(s.total, 0);
  // Clock ticks (10 ms) and a running thread's lagging count: a wide margin, still far below 500 ms.
  EXPECT_LT(s.cpu_ns, after - before + 100'000'000ULL) << "ran " << (after - before) << " ns while sampled";
}

// Threads born during the sampling are weighed from their birth: a child that computes only in
// threads of 20 ms each, one after another, is covered for most of its CPU time.
TEST_P(CpuSampler, ThreadsBornDuringTheSamplingAreWeighedFromBirth) {
  const Child child([] {
    for (;;)
      std::thread([] {
        timespec t{};
        do ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        while (t.tv_sec == 0 && t.tv_nsec < 20'000'000);
      }).join();
  });
  const uint64_t before = process_cpu_ns(child.pid());
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(1000), 1000);
  const uint64_t after = process_cpu_ns(child.pid());
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(after - before, 100'000'000ULL) << "the child barely ran";
  EXPECT_GT(s.cpu_ns * 2, after - before) << s.cpu_ns << " ns weighed of " << (after - before);
}
// Round 10's attack: a thread that notices its interruptions (a jump of its clock) runs other code
// right after each one, where a sampler with a floor on its gaps, or one that weighs a sample by the
// time since the previous one, barely looks, and its own code otherwise. Its own account of where its
// time went is the truth here: the sampler's weights must agree with it. Perf's samples, interrupts the
// thread can notice but whose next one it cannot foresee, do; ptrace's stops do not (round 10 measured
// 0.85-0.94 own for about half), so this holds of perf alone.
struct TimeAccount {
  std::atomic<uint64_t> own_ns{0}, other_ns{0};
};
TimeAccount* g_account = nullptr;
void* g_other = nullptr;  // a function in a memfd: a short counted loop

// The same loop as the other code's, so that the accounting around each chunk (its clock read and
// sum, in this file's code whichever chunk ran) is a small part of either. With 200 steps of the other
// code it was about a fifth of the other code's time, which the truth named the other's and the sampler
// rightly this file's: weighed own +0.07 to +0.19 above the truth, no fault of the sampler's. With 2000
// steps, +0.03 to +0.04 idle and +0.04 to +0.06 with both cores busy elsewhere (2026-12-02).
__attribute__((noinline)) void own_chunk() { asm volatile("mov $2000, %%ecx\n1: dec %%ecx\njnz 1b" ::: "ecx", "cc"); }

// Accounts its time by its wall clock between interruptions, which is user time: a CPU clock read
// would itself be kernel time, which the sampler names the kernel's.
void dodge_after_interruptions() {
  const auto other = reinterpret_cast<void (*)()>(g_other);
  uint64_t last = monotonic_ns(), dodge_until = 0;
  bool in_other = false;
  for (;;) {
    in_other ? other() : own_chunk();
    const uint64_t now = monotonic_ns(), gap = now - last;
    last = now;
    if (gap > 100'000) continue;  // descheduled: no CPU time to account for
    (in_other ? g_account->other_ns : g_account->own_ns).fetch_add(gap, std::memory_order_relaxed);
    if (gap > 1'500) dodge_until = now + 200'000;  // an interruption just ended
    in_other = now < dodge_until;
  }
}

TEST_P(CpuSampler, AThreadThatTimesItselfAgainstTheSamplesIsWeighedAsItRan) {
  if (!perf()) GTEST_SKIP() << "ptrace's stops are noticed and dodged (round 10): perf's sampler replaces them";
  const int fd = ::memfd_create("other", MFD_CLOEXEC);
  // mov ecx, 2000; dec ecx; jnz -4; ret: a chunk well under the 1.5 us that marks an interruption
  const unsigned char loop[] = {0xB9, 0xD0, 0x07, 0x00, 0x00, 0xFF, 0xC9, 0x75, 0xFC, 0xC3};
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, loop, sizeof loop), static_cast<ssize_t>(sizeof loop));
  g_other = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  ASSERT_NE(g_other, MAP_FAILED);
  struct stat other_file {};
  ASSERT_EQ(::fstat(fd, &other_file), 0);
  void* shared = ::mmap(nullptr, sizeof(TimeAccount), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  g_account = new (shared) TimeAccount;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  // The truth is the child's own wall clock, which a busy host skews (the child's clock then holds time
  // that was not its own). A sampler the dodging defeats is off by +0.3 to +0.4 (ptrace's stops) on
  // every attempt, so the bounds must hold on one of three attempts.
  std::string attempts;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const Child child(dodge_after_interruptions);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    uint64_t own0 = 0, other0 = 0;
    const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(1500), 4000, nullptr, [&] {
      own0 = g_account->own_ns.load();
      other0 = g_account->other_ns.load();
    });
    const double own = static_cast<double>(g_account->own_ns.load() - own0),
                 other = static_cast<double>(g_account->other_ns.load() - other0);
    if (!s.error.empty()) GTEST_SKIP() << s.error;
    ASSERT_GT(own + other, 1e8) << "the child barely ran";
    uint64_t own_weight = 0, other_weight = 0;
    for (const auto& [object, t] : s.by_object) {
      if (object.inode == other_file.st_ino) other_weight += t.cpu_ns;
      if (object.path == self) own_weight += t.cpu_ns;
    }
    ASSERT_GT(own_weight + other_weight, 0u);
    // The judge's reading: time unseen counts as the other code's. The candidate's aim is to be
    // weighed as more its own than it ran; the other way costs it alone, and a loaded host's late
    // re-arming is unseen time.
    const double truth_own = own / (own + other);
    const double weighed_own =
        static_cast<double>(own_weight) / static_cast<double>(own_weight + other_weight + s.unseen_ns);
    ASSERT_LT(truth_own, 0.9) << "the child should have run the other code after its interruptions";
    attempts += fmt::format(" [truth {:.3f}, weighed {:.3f}, {} samples, {} ns unseen]", truth_own, weighed_own,
                            s.total, s.unseen_ns);
    if (weighed_own < truth_own + 0.15 && weighed_own > truth_own - 0.2) break;
    if (attempt == 2) ADD_FAILURE() << "weighed outside truth -0.2..+0.15 on every attempt:" << attempts;
  }
  ::munmap(shared, sizeof(TimeAccount));
  ::munmap(g_other, 4096);
  ::close(fd);
}
#endif

// A process cloned untraced is not reported to the tracer that opens every new thread's events at its
// birth. The sandbox refuses such clones; the sampler still looks for threads it was not told of, and
// one it finds fails the sampling (its time so far went unseen).
TEST_P(CpuSampler, AProcessClonedUntracedFailsTheSampling) {
  if (!perf()) GTEST_SKIP() << "ptrace's sampler finds new threads by looking, late";
  const Child child([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (::syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0) == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      spin();
    }
    spin();
  });
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(800), 500);
  EXPECT_NE(s.error.find("escaped the sampler's clone events"), std::string::npos) << s.error;
  EXPECT_TRUE(s.evaded) << "the candidate's doing, which the judge rejects, not the host's";
}

// Red-team round 25 (reasoned): a tree with more threads than the sampler has descriptors for failed
// the attach with an error the judge took for a host's refusal, which leaves the share unmeasured.
// Here the sampler may hold 128 descriptors, and the child has 40 threads at ten descriptors each.
TEST_P(CpuSampler, ATreeWithMoreThreadsThanTheSamplersDescriptorsEvadesIt) {
  if (!perf()) GTEST_SKIP() << "ptrace's sampler holds no descriptor a thread";
  const Child child([] {
    for (int i = 0; i < 40; ++i)
      std::thread([] {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      }).detach();
    spin();
  });
  namespace fs = std::filesystem;
  while (std::distance(fs::directory_iterator(fmt::format("/proc/{}/task", child.pid())), fs::directory_iterator()) <
         41)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  const rlimit few{128, 128};
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &few), 0);
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(300), 500);
  ::setrlimit(RLIMIT_NOFILE, &before);
  if (s.error == "perf events on another process are refused here") GTEST_SKIP() << s.error;
  EXPECT_NE(s.error.find("perf on thread"), std::string::npos) << s.error;
  EXPECT_TRUE(s.evaded) << "the candidate's doing, which the judge rejects, not the host's";
}

// Red-team round 12: the judge's check windows (untimed calls on other inputs) were sampled, so a
// candidate padded its own share there for free. Samples taken within spans the caller excludes are
// not counted: here the second half of a spinning child's sampling.
TEST_P(CpuSampler, SamplesInExcludedSpansAreNotCounted) {
  const Child child(spin);
  // The child's CPU time at the attach, at the excluded span's start and at the end, read beside the
  // sampling: what the counted samples must weigh however much CPU a loaded host gives the child.
  uint64_t middle = 0, cpu_attach = 0, cpu_middle = 0, cpu_end = 0;
  std::thread reader;
  const auto all = sample(
      child.pid(), std::chrono::milliseconds(600), 500, nullptr,
      [&] {
        cpu_attach = process_cpu_ns(child.pid());
        middle = monotonic_ns() + 300'000'000ULL;
        reader = std::thread([&] {
          while (monotonic_ns() < middle) std::this_thread::sleep_for(std::chrono::microseconds(200));
          cpu_middle = process_cpu_ns(child.pid());
        });
      },
      [&] {
        cpu_end = process_cpu_ns(child.pid());
        return std::vector<Spans>{{{middle, monotonic_ns()}}};
      });
  if (reader.joinable()) reader.join();
  if (!all.error.empty()) GTEST_SKIP() << all.error;
  const auto none = sample(child.pid(), std::chrono::milliseconds(300), 500, nullptr, {}, [&] {
    return std::vector<Spans>{{{0, monotonic_ns()}}};
  });
  ASSERT_GT(all.total, 10);
  // The samples before the span weigh the child's CPU time before it, within sampling noise and the
  // 10 ms ticks of the process's clock; the excluded half is not in them.
  const double before = static_cast<double>(cpu_middle - cpu_attach), whole = static_cast<double>(cpu_end - cpu_attach);
  EXPECT_NEAR(static_cast<double>(all.cpu_ns), before, 0.25 * whole + 20e6)
      << "counted " << all.cpu_ns << " ns; the child ran " << before << " ns before the span, " << whole << " in all";
  EXPECT_LT(static_cast<double>(all.cpu_ns), whole - 0.2 * (whole - before)) << "the excluded span was counted";
  EXPECT_EQ(none.total, 0);
  EXPECT_EQ(none.cpu_ns, 0u);
}

// The judge tallies its two draws kinds' windows from one sampling (python/vinci_worker/timed_windows.py):
// each set of excluded spans is tallied on its own, so two sets that split the sampling in two count
// every sample once between them, exactly as a set that excludes nothing does.
TEST_P(CpuSampler, EachSetOfExcludedSpansIsTalliedApart) {
  const Child child(spin);
  uint64_t middle = 0;
  const auto s = sample(
      child.pid(), std::chrono::milliseconds(400), 500, nullptr, [&] { middle = monotonic_ns() + 200'000'000ULL; },
      [&] {
        return std::vector<Spans>{{{middle, UINT64_MAX}}, {{0, middle - 1}}, {}};
      });
  if (!s.error.empty()) GTEST_SKIP() << s.error;
  ASSERT_EQ(s.further_sets.size(), 2u);
  const CpuSamples &before = s, &after = s.further_sets[0], &whole = s.further_sets[1];
  ASSERT_GT(before.total, 5);
  ASSERT_GT(after.total, 5);
  EXPECT_EQ(before.total + after.total, whole.total);
  EXPECT_EQ(before.cpu_ns + after.cpu_ns, whole.cpu_ns);
  for (const auto& [object, time] : whole.by_object) {
    const auto in = [&](const CpuSamples& set) {
      const auto it = set.by_object.find(object);
      return it == set.by_object.end() ? 0 : it->second.samples;
    };
    EXPECT_EQ(in(before) + in(after), time.samples) << object.path;
  }
  // Each set is charged the unseen time outside its own spans: the halves' sum to the whole's.
  EXPECT_LE(before.unseen_ns, whole.unseen_ns);
  EXPECT_LE(after.unseen_ns, whole.unseen_ns);
  EXPECT_EQ(after.lookup, s.lookup);
}

// The unseen time a set of excluded spans is charged: what lies outside its spans, overlapping
// exclusions counted once (hand-computed).
TEST(CpuSamplerSpans, UnseenTimeOutsideTheExcludedSpans) {
  const Spans unseen{{10, 20}, {30, 50}, {60, 60}};
  EXPECT_EQ(outside(unseen, {}), 30u);
  EXPECT_EQ(outside(unseen, {{15, 35}}), 5u + 15u);
  EXPECT_EQ(outside(unseen, {{12, 14}, {13, 18}, {40, 100}}), 4u + 10u);
  EXPECT_EQ(outside(unseen, {{0, 100}}), 0u);
}

// A traced thread that a signal reaches stops until its tracer passes the signal on: the sampler
// must, or a candidate's timer (or a child's SIGCHLD) would hang it for the whole sampling.
volatile int* g_alarms = nullptr;

TEST_P(CpuSampler, SignalsStillReachASampledThread) {
  void* shared = ::mmap(nullptr, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  g_alarms = static_cast<volatile int*>(shared);
  *g_alarms = 0;
  {
    const Child child([] {
      ::signal(SIGALRM, [](int) { *g_alarms = *g_alarms + 1; });
      const itimerval every_2ms{{0, 2000}, {0, 2000}};
      ::setitimer(ITIMER_REAL, &every_2ms, nullptr);
      for (;;) ::pause();
    });
    for (int i = 0; i < 10'000 && *g_alarms == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const int before = *g_alarms;
    ASSERT_GT(before, 0) << "the child's timer never fired";
    const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(300), 100);
    const int during = *g_alarms - before;
    if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
    EXPECT_GT(during, 5) << "the child's timer signals stopped reaching it while it was traced";
  }
  ::munmap(shared, sizeof(int));
}

// The state letter of /proc/PID/stat ('R' running, 'S' sleeping, ...).
char state_of(pid_t pid) {
  const auto stat = vinci::core::try_read_file(fmt::format("/proc/{}/stat", pid));
  const auto close = stat ? stat->rfind(')') : std::string::npos;
  return close != std::string::npos && close + 2 < stat->size() ? (*stat)[close + 2] : '?';
}

TEST_P(CpuSampler, ASleepingChildGivesNoSamples) {
  const Child child(sleep_forever);
  // Until it reaches pause() the child runs, and may rightly be sampled.
  for (int i = 0; i < 200 && state_of(child.pid()) != 'S'; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(state_of(child.pid()), 'S');
  const CpuSamples s = sample(child.pid(), std::chrono::milliseconds(300), 100);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  EXPECT_EQ(s.total, 0);
  EXPECT_EQ(s.cpu_ns, 0u);
  EXPECT_TRUE(s.by_object.empty());
}
}  // namespace cpu_sampler_test
