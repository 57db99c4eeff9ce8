// The progress bar as a log reader sees it when stderr is not a terminal (CI): quiet between
// redraws, a full line at the end, nothing at all when disabled.
#include "core/progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace progress_test {
using namespace vinci::core;
using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;

TEST(Progress, TheLastItemAlwaysDrawsAFullBar) {
  CaptureStderr();
  {
    Progress p("eval", 3);
    p.advance("a");
    p.advance("b");
    p.advance("last_task");
  }
  const std::string out = GetCapturedStderr();
  EXPECT_NE(out.find("eval [" + std::string(30, '#') + "] 3/3 0s elapsed, ~0s left  last_task"), std::string::npos)
      << out;
  if (!::isatty(2)) {
    // The first two came within the 5 s between log lines: only the final one is written.
    EXPECT_EQ(out.find("1/3"), std::string::npos) << out;
    EXPECT_EQ(out.find("2/3"), std::string::npos) << out;
  }
}

TEST(Progress, DisabledWritesNothing) {
  CaptureStderr();
  {
    Progress p("eval", 1, false);
    p.advance("a");
    p.finish();
  }
  EXPECT_EQ(GetCapturedStderr(), "");
}

TEST(Progress, ALongNoteKeepsItsEnd) {
  CaptureStderr();
  {
    Progress p("eval", 1);
    p.advance(std::string(20, 'a') + std::string(39, 'z'));  // 59 bytes: over the 40 shown
  }
  const std::string out = GetCapturedStderr();
  EXPECT_NE(out.find("left  \xE2\x80\xA6" + std::string(39, 'z')), std::string::npos) << out;
  EXPECT_EQ(out.find('a' + std::string(39, 'z')), std::string::npos) << out;
}
}  // namespace progress_test
