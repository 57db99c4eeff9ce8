// Comparing vectors of computed values with hand-worked ones, element by element.
#pragma once

#include <gtest/gtest.h>

#include <vector>

namespace vinci::test {

inline void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tolerance = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << i;
}

}  // namespace vinci::test
