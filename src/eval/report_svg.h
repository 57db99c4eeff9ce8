// Self-contained SVG charts of results: no scripts, no external fonts or stylesheets, all text escaped.
//
// Elements carry data-* attributes with the plotted values so that tests and scripts can read them back:
// - fast_p curve: <polyline class="curve" data-level="1|…|overall" data-n="N" data-steps="p,f p,f …">, where the
//   (p, f) pairs are the curve's vertices in data units (f a fraction of N).
// - histogram: <rect class="bin" data-bin="k" data-lo="…" data-hi="…" data-count="c">, bin k holding the speedups s
//   with k/4 <= log2(s) < (k+1)/4; and <text class="class-count" data-class="incorrect" data-count="c"> per class.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "eval/metrics.h"
#include "eval/result.h"

namespace vinci::eval {

// fast_p as a function of p on a continuous axis p in [0, 3]: one step curve per level that has tasks, plus the
// overall curve (dashed). Tasks and the best-of-several rule are those of summarize() (task_outcomes in metrics.h);
// the curve is at fast_0 (the correctness rate) at p = 0 and drops at every distinct speedup value (strict >).
// An empty title gives "fast_p (speedup vs <baseline>)".
std::string fast_p_curve_svg(const std::vector<Result>& results,
                             const std::map<int, std::vector<std::string>>& tasks_per_level, Baseline baseline,
                             std::string_view title = {});

// The distribution of the speedups of correct results (every correct result with a speedup, all candidates), on a
// log2 axis with bins of 0.25 in log2 and a vertical marker at 1x; counts on the y axis. Beside it, a small table of
// the number of results of each class that is not correct, plus correct results without a speedup. Speedups beyond
// 2^±10 fall into the edge bins. Each bin's <title> lists its tasks (escaped).
std::string speedup_histogram_svg(const std::vector<Result>& results, Baseline baseline, std::string_view title = {});

}  // namespace vinci::eval
