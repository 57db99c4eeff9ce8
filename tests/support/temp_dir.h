// A fresh directory per test, removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string_view>

#include <fmt/format.h>

namespace vinci::test {

class TempDir {
 public:
  // Named after the process and the running test: ctest runs tests in parallel processes, and a
  // leftover from an earlier run of the same test is cleared first.
  explicit TempDir(std::string_view prefix) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("vinci-{}-{}-{}-{}", prefix, ::getpid(), info->test_suite_name(), info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace vinci::test
