// The CLI's range check: the messages a user sees for a bad option value.
#include "cli/checks.h"

#include <gtest/gtest.h>

namespace checks_test {
using vinci::cli::at_least;

std::string check(double lo, std::string text) { return at_least(lo)(text); }

TEST(CliChecks, AtLeastAcceptsTheBoundAndAbove) {
  EXPECT_EQ(check(1, "1"), "");
  EXPECT_EQ(check(1, "2.5"), "");
  EXPECT_EQ(check(0, "0"), "");
  EXPECT_EQ(check(0, "1e3"), "");
  EXPECT_EQ(check(-1, "-0.5"), "");
}

TEST(CliChecks, AtLeastSaysWhyAValueIsRefused) {
  EXPECT_EQ(check(1, "0.5"), "0.5 is not allowed: the value must be at least 1");
  EXPECT_EQ(check(0, "-1"), "-1 is not allowed: the value must be at least 0");
  EXPECT_EQ(check(0.25, "0.1"), "0.1 is not allowed: the value must be at least 0.25");
  EXPECT_EQ(check(0, "abc"), "'abc' is not a number");
  EXPECT_EQ(check(0, "3x"), "'3x' is not a number");
  EXPECT_EQ(check(0, ""), "'' is not a number");
  EXPECT_EQ(check(0, "1e999"), "1e999 is out of range");
}

TEST(CliChecks, AnOptionWithTheCheckFailsWithTheMessage) {
  CLI::App app("test");
  int n = 0;
  app.add_option("--n", n)->check(at_least(1));
  try {
    std::vector<std::string> args{"0", "--n"};  // CLI11 takes the arguments in reverse
    app.parse(args);
    FAIL() << "0 was accepted";
  } catch (const CLI::ValidationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("0 is not allowed: the value must be at least 1"), std::string::npos) << what;
    // Not CLI11's own wording, which spells out the largest double as the range's end.
    EXPECT_EQ(what.find("1.79769"), std::string::npos) << what;
  }
  std::vector<std::string> good{"3", "--n"};
  app.parse(good);
  EXPECT_EQ(n, 3);
}
}  // namespace checks_test
