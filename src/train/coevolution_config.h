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

struct CoevolutionFile {
  CoevolutionConfig run;
  llm::Training training;  // [model]
  std::string eval_queue;  // [eval] queue: a Redis queue's URL (`vinci worker`); empty: evaluate here
};

CoevolutionFile load_coevolution_config(const std::filesystem::path& path);
CoevolutionFile parse_coevolution_config(std::string_view toml_text, const std::string& source_name);

}  // namespace vinci::train
