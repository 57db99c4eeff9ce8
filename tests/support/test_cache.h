// The extension cache the CPU tests share ($VINCI_TEST_CACHE, which tests/CMakeLists.txt sets): the
// pipeline tests fill it, and the tests after them find their kernels built.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace vinci::test {

inline std::filesystem::path test_cache() {
  const char* c = std::getenv("VINCI_TEST_CACHE");
  return c ? std::filesystem::path(c) : std::filesystem::temp_directory_path() / "vinci-test-cache";
}

}  // namespace vinci::test
