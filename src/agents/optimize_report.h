// What `vinci optimize` leaves in its output folder, and the table it prints at the end.
//   best_kernel.py         the fastest correct attempt (absent when none was correct)
//   attempts.jsonl         every evaluated or failed attempt, policy and verifier, with its result
//   episodes.jsonl         the run's token-level episode (agents/episode.h)
//   skills_admitted.jsonl  the skills the verifier admitted, with their verification records
//   report.md              the same as tables, for people
// (`vinci optimize` adds run.json, its settings; journal.jsonl, for --resume; library_at_start.jsonl,
// the skills selection retrieved from; candidates/, every attempt's file.)
#pragma once

#include <filesystem>
#include <string>

#include "agents/optimizer.h"

namespace vinci::agents {

void write_optimize_outputs(const std::filesystem::path& out_dir, const PolicyTask& task,
                            const OptimizeOutcome& outcome);

std::string summary_table(const OptimizeOutcome& outcome);

}  // namespace vinci::agents
