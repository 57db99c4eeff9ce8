// Running one vinci subcommand from an integration test (VINCI_BINARY: the test target's definition).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/process.h"

namespace vinci::test {

// `vinci SUBCOMMAND ARGS...`, its stderr appended to log.
inline core::Completed run_vinci(const std::string& subcommand, const std::vector<std::string>& args,
                                 const std::filesystem::path& log, std::chrono::milliseconds timeout) {
  core::SpawnOptions o;
  o.argv = {VINCI_BINARY, subcommand};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.stderr_path = log;
  return core::run_to_completion(o, timeout);
}

}  // namespace vinci::test
