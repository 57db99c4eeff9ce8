// The machine probe: torch's version from the python it is given, GPUs filtered by
// CUDA_VISIBLE_DEVICES. The pythons here are stand-in scripts, so no torch is needed.
#include "eval/environment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include "support/temp_dir.h"

namespace environment_test {
using namespace vinci::eval;
namespace fs = std::filesystem;

std::string fake_python(const vinci::test::TempDir& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir.path() / name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  ::chmod(p.c_str(), 0755);
  return p.string();
}

TEST(Environment, TorchVersionIsWhatPythonPrintsTrimmed) {
  const vinci::test::TempDir dir("environment");
  const Environment env = probe_environment(fake_python(dir, "py", "printf '2.5.1+cu124 \\n\\n'"));
  EXPECT_EQ(env.torch_version, "2.5.1+cu124");
  EXPECT_EQ(env.python, (dir.path() / "py").string());
}

TEST(Environment, NoTorchLeavesTheVersionEmpty) {
  const vinci::test::TempDir dir("environment");
  // importlib.metadata raises PackageNotFoundError: a non-zero exit, whatever it printed.
  EXPECT_EQ(probe_environment(fake_python(dir, "py", "echo 9.9; exit 1")).torch_version, "");
  EXPECT_EQ(probe_environment((dir.path() / "no-such-python").string()).torch_version, "");
}

TEST(Environment, NoVisibleDevicesMeansNoGpus) {
  const vinci::test::TempDir dir("environment");
  std::optional<std::string> old;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) old = v;
  // "-1" is CUDA's way to hide every device, whatever the driver lists.
  ::setenv("CUDA_VISIBLE_DEVICES", "-1", 1);
  const Environment env = probe_environment(fake_python(dir, "py", "exit 1"));
  if (old)
    ::setenv("CUDA_VISIBLE_DEVICES", old->c_str(), 1);
  else
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_TRUE(env.gpus.empty());
}
}  // namespace environment_test
