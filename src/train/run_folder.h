// A training run's folder across restarts: continued only when asked, stale metrics dropped.
//
// A training run's folder (--out of `vinci train sft` and `vinci train rl`) across restarts: a
// folder that holds an earlier run is continued only when asked to, and a resumed run rewrites the
// steps after its newest checkpoint, so their metrics lines go first.
#pragma once

#include <filesystem>

namespace vinci::train {

// Throws when out holds an earlier run (a checkpoint under out/checkpoints, or a final/ model) and
// resume is off, saying to pass --resume or choose another --out.
void refuse_earlier_run(const std::filesystem::path& out, bool resume);

// Keeps the lines of out/metrics.jsonl up to the newest checkpoint's step (none without one). A
// torn last line (the run was killed while writing it) is skipped with a warning.
void drop_metrics_after_checkpoint(const std::filesystem::path& out);

}  // namespace vinci::train
