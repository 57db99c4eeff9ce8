// `vinci plot metrics.jsonl`: one chart per numeric field of a metrics file, as one SVG.
//
// `vinci plot metrics.jsonl`: one small chart per numeric field of a training metrics file (loss,
// learning rate, reward per role, clip fractions, tokens/s...) against its "step", as one SVG.
//
// Each series is <polyline class="series" data-key="KEY" data-points="step,value step,value ...">
// so tests and scripts can read the plotted values back. A field absent from a line, or not a
// finite number there, is a gap, not a zero.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::rl {

// keys: the fields to plot, in order; empty: every numeric field except step and epoch, sorted.
std::string metrics_svg(const std::vector<nlohmann::json>& rows, const std::vector<std::string>& keys,
                        std::string_view title);

// One JSON object per non-blank line; throws std::runtime_error "<file>:<line>: ..." on a bad one. A torn last
// line (a run killed mid-write) is skipped with a warning (core::read_jsonl_lines).
std::vector<nlohmann::json> read_metrics_jsonl(const std::filesystem::path& path);

}  // namespace vinci::rl
