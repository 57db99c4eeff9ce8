// The machine's GPUs and torch version, learnt without importing torch.
//
// What the evaluator can learn about the machine without importing torch: the GPUs the driver
// lists and the torch version pip installed. Cache keys need both before any worker starts.
#pragma once

#include <string>
#include <vector>

namespace vinci::eval {

struct Environment {
  std::vector<std::string> gpus;  // visible GPU model names, in CUDA_VISIBLE_DEVICES order
  std::string torch_version;      // empty when torch is not installed for that python
  std::string python;
};

Environment probe_environment(const std::string& python);

}  // namespace vinci::eval
