// A curriculum task as a KernelBench problem file, its sizes in SCALABLE.
//
// A curriculum task as a KernelBench problem file: Model, get_inputs and get_init_inputs, with its
// sizes listed in SCALABLE so that CPU runs can shrink them.
#pragma once

#include <string>

#include "curriculum/task_spec.h"

namespace vinci::curriculum {

std::string task_source(const TaskSpec& spec);

// The composition in words, as the file's docstring says it: "tanh(relu(x) * 1.5)".
std::string describe(const TaskSpec& spec);

}  // namespace vinci::curriculum
