#include "rl/rejection.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::rl {

MrsDecision masked_rejection(std::span<const float> trainer, std::span<const float> rollout, const MrsConfig& c) {
  if (trainer.size() != rollout.size())
    throw std::invalid_argument(
        fmt::format("MRS: {} trainer logprobs but {} rollout logprobs", trainer.size(), rollout.size()));
  MrsDecision d;
  if (trainer.empty()) return d;
  // In log space: the geometric mean ratio is exp(mean log ratio), which does not overflow.
  double sum = 0, min_log = INFINITY;
  for (size_t i = 0; i < trainer.size(); ++i) {
    const double log_ratio = static_cast<double>(trainer[i]) - static_cast<double>(rollout[i]);
    sum += log_ratio;
    min_log = std::min(min_log, log_ratio);
  }
  d.geo_mean_ratio = std::exp(sum / static_cast<double>(trainer.size()));
  d.min_token_ratio = std::exp(min_log);
  if (d.geo_mean_ratio < 1.0 - c.delta || d.geo_mean_ratio > 1.0 + c.delta) {
    d.keep = false;
    d.why = fmt::format("geometric-mean ratio {:.6f} outside [{:.6f}, {:.6f}]", d.geo_mean_ratio, 1.0 - c.delta,
                        1.0 + c.delta);
  } else if (d.min_token_ratio < c.token_floor) {
    d.keep = false;
    d.why = fmt::format("a token's ratio {:.3g} is below the floor {:.3g}", d.min_token_ratio, c.token_floor);
  }
  return d;
}

double prs_keep_probability(bool correct, double coverage, const PrsConfig& c) {
  if (!correct) return 1.0;
  if (c.scale <= 0) return coverage >= c.tau ? 1.0 : 0.0;
  return std::clamp((coverage - c.tau) / c.scale, 0.0, 1.0);
}

bool prs_keep(bool correct, double coverage, double uniform, const PrsConfig& c) {
  return uniform < prs_keep_probability(correct, coverage, c);
}

}  // namespace vinci::rl
