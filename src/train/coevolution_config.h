// The co-evolution run's configuration, one TOML file.
//
// The co-evolution run's configuration, one TOML file (configs/coevolution.toml holds every key with
// its default and what it does). A file may set any subset; an unknown key or a value of the wrong
// type is refused with the file, the key and what was expected.
#pragma once

#include <filesystem>
#include <string>

#include "llm/lora.h"
#include "train/coevolution.h"

namespace vinci::train {

// [heldout]: a point of the held-out curve every `every` steps (0: none) on `count` tasks of the suite
// in `tasks` (a folder; relative to the config file's), the same subset at every point.
struct HeldOutCurve {
  std::filesystem::path tasks;
  int64_t every = 0;
  int count = 64;
};

struct CoevolutionFile {
  CoevolutionConfig run;
  HeldOutCurve heldout;
  llm::Training training;  // [model]
  std::string eval_queue;  // [eval] queue: a Redis queue's URL (`vinci worker`); empty: evaluate here
};

CoevolutionFile load_coevolution_config(const std::filesystem::path& path);
CoevolutionFile parse_coevolution_config(std::string_view toml_text, const std::string& source_name);

}  // namespace vinci::train
