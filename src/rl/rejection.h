// The two rejection samplers of design.md §6, as decisions on plain numbers.
//
// The two rejection samplers of design.md §6, as decisions on plain numbers so that each is checked
// by hand; the trainer applies them to its batch.
//
// MRS (masked rejection sampling) guards against off-policy drift between the sampler that produced a
// rollout and the trainer's model: a sequence is dropped when the geometric mean of its per-token
// ratios pi_train / pi_rollout leaves [1 - delta, 1 + delta], or when any token's ratio falls below
// token_floor (0: no floor).
// PRS (profile rejection sampling) thins correct turns whose kernels do little of the work: a correct
// turn is kept with probability clip((coverage - tau) / s, 0, 1); other turns are always kept.
#pragma once

#include <span>
#include <string>

namespace vinci::rl {

struct MrsConfig {
  double delta = 0.001;
  double token_floor = 0.0;
};

struct MrsDecision {
  bool keep = true;
  double geo_mean_ratio = 1.0;
  double min_token_ratio = 1.0;
  std::string why;  // empty when kept
};

// Log-probabilities of the same masked tokens under the trainer and under the rollout's sampler.
// Throws std::invalid_argument when the spans differ in length. An empty sequence is kept.
MrsDecision masked_rejection(std::span<const float> trainer_logprobs, std::span<const float> rollout_logprobs,
                             const MrsConfig& config);

struct PrsConfig {
  double tau = 0.3;
  double scale = 0.1;
};

double prs_keep_probability(bool correct, double coverage, const PrsConfig& config);
// uniform: a draw from [0, 1) (the trainer's seeded generator); keeps when uniform < the probability.
bool prs_keep(bool correct, double coverage, double uniform, const PrsConfig& config);

}  // namespace vinci::rl
