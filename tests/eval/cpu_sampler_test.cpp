// The outside view of a process tree's CPU time: a child that spins in this binary's own code
// must be sampled there, and a sleeping one not at all.
#include "eval/cpu_sampler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
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
  const auto it = s.by_object.find(self);
  ASSERT_NE(it, s.by_object.end()) << "no sample in " << self;
  // The loop is all it runs: nearly every sample lies in this binary.
  EXPECT_GE(it->second * 10, s.total * 9) << it->second << " of " << s.total;
  int sum = 0;
  for (const auto& [object, n] : s.by_object) sum += n;
  EXPECT_EQ(sum, s.total);
}

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
