// What stands in for the queue's commands where vinci is built without hiredis.
//
// What stands in for the queue's commands where vinci is built without hiredis (the queue is
// optional, as NCCL is): `vinci worker` and --queue are there, and say why they cannot run.
#include "cli/commands.h"
#include "cli/evaluations.h"
#include "core/setup_error.h"

namespace vinci::cli {

namespace {

[[noreturn]] void no_queue() {
  throw core::SetupError(
      "this vinci was built without the evaluation queue: hiredis (Debian's libhiredis-dev) was not found when it "
      "was configured; `make deps` installs it, then build again");
}

}  // namespace

std::unique_ptr<Evaluations> open_queue_evaluations(const eval::EvalConfig&, const std::string&) { no_queue(); }

Action add_worker_command(CLI::App& app) {
  app.allow_extras();
  return []() -> int { no_queue(); };
}

}  // namespace vinci::cli
