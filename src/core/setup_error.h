// An error in what the user brought, found before any work starts (exit code 4).
//
// An error found before any work starts, in what the user brought: a server that does not answer,
// a task file that does not parse, a model that is not there. Commands fail fast on it, with exit
// code 4 (README: "Exit codes"), so a script can tell it from a run that went wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace vinci::core {

class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace vinci::core
