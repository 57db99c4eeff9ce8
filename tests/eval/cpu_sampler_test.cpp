// The outside view of a process tree's CPU time: a child that spins in this binary's own code
// must be sampled there, by the file's identity, code in a memfd by the kernel's name for it, and a
// sleeping child not at all.
#include "eval/cpu_sampler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "core/files.h"

namespace cpu_sampler_test {
using namespace vinci::eval;

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
    int status = 0;
    ::waitpid(pid_, &status, 0);
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

TEST(CpuSampler, ASpinningChildIsSampledInItsOwnCode) {
  const Child child(spin);
  const CpuSamples s = sample_cpu(child.pid(), std::chrono::milliseconds(500), 100);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(s.total, 5) << "a busy child should be caught running";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  struct stat st {};
  ASSERT_EQ(::stat(self.c_str(), &st), 0);
  int in_self = 0, sum = 0;
  for (const auto& [object, n] : s.by_object) {
    sum += n;
    if (object.path != self) continue;
    in_self += n;
    // The very file, by the identity the judge checks against its own view of the host.
    EXPECT_EQ(object.pid, child.pid());
    EXPECT_EQ(object.inode, st.st_ino);
    EXPECT_EQ(object.dev_major, major(st.st_dev));
    EXPECT_EQ(object.dev_minor, minor(st.st_dev));
    EXPECT_LT(object.low, object.high);
  }
  // The loop is all it runs: nearly every sample lies in this binary.
  EXPECT_GE(in_self * 10, s.total * 9) << in_self << " of " << s.total;
  EXPECT_EQ(sum, s.total);
  EXPECT_TRUE(s.lookup == "query" || s.lookup == "maps") << s.lookup;
}

#if defined(__x86_64__)
// Code in a memfd, mapped executable: what a candidate that hides a copied library behind an
// innocent name would run. The sample names the memfd and its inode, not any name it chose for it.
TEST(CpuSampler, CodeInAMemfdIsNamedByTheKernelNotByItsAuthor) {
  const int fd = ::memfd_create("x/libc.so.6", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const unsigned char jump_to_self[] = {0xEB, 0xFE};
  ASSERT_EQ(::write(fd, jump_to_self, sizeof jump_to_self), 2);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  void* code = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  ASSERT_NE(code, MAP_FAILED);
  static void* entry = nullptr;
  entry = code;
  const Child child([] { reinterpret_cast<void (*)()>(entry)(); });
  const CpuSamples s = sample_cpu(child.pid(), std::chrono::milliseconds(500), 100);
  ::munmap(code, 4096);
  ::close(fd);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  ASSERT_GT(s.total, 5);
  int in_memfd = 0;
  for (const auto& [object, n] : s.by_object) {
    if (object.inode != st.st_ino) continue;
    in_memfd += n;
    EXPECT_EQ(object.path.rfind("/memfd:x/libc.so.6", 0), 0u) << object.path;
    EXPECT_EQ(object.low, reinterpret_cast<uint64_t>(code));
  }
  EXPECT_GE(in_memfd * 10, s.total * 9) << in_memfd << " of " << s.total;
}
#endif

// The state letter of /proc/PID/stat ('R' running, 'S' sleeping, ...).
char state_of(pid_t pid) {
  const auto stat = vinci::core::try_read_file(fmt::format("/proc/{}/stat", pid));
  const auto close = stat ? stat->rfind(')') : std::string::npos;
  return close != std::string::npos && close + 2 < stat->size() ? (*stat)[close + 2] : '?';
}

TEST(CpuSampler, ASleepingChildGivesNoSamples) {
  const Child child(sleep_forever);
  // Until it reaches pause() the child runs, and may rightly be sampled.
  for (int i = 0; i < 200 && state_of(child.pid()) != 'S'; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(state_of(child.pid()), 'S');
  const CpuSamples s = sample_cpu(child.pid(), std::chrono::milliseconds(300), 100);
  if (!s.error.empty()) GTEST_SKIP() << "this machine refuses ptrace: " << s.error;
  EXPECT_EQ(s.total, 0);
  EXPECT_TRUE(s.by_object.empty());
}
}  // namespace cpu_sampler_test
