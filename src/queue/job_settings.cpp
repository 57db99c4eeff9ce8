#include "queue/job_settings.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/hash.h"

namespace vinci::queue {

namespace {

// nlohmann's own errors name neither the job nor the setting's path.
template <typename T>
T read(const nlohmann::json& j, const char* path, std::initializer_list<const char*> keys) {
  try {
    const nlohmann::json* at = &j;
    for (const char* k : keys) at = &at->at(k);
    return at->get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("queue job settings: '{}' is missing or malformed ({})", path, e.what()));
  }
}

}  // namespace

nlohmann::json job_settings(const eval::EvalConfig& config, const std::string& fresh_nonce) {
  nlohmann::json s = config.worker_json();
  s["scale"] = config.scale;
  if (!fresh_nonce.empty()) s["fresh"] = fresh_nonce;
  return s;
}

bool is_fresh(const nlohmann::json& settings) { return settings.contains("fresh"); }

eval::EvalConfig judged_config(eval::EvalConfig c, const nlohmann::json& s) {
  c.protocol.name = read<std::string>(s, "protocol", {"protocol"});
  c.protocol.allow_tf32_matmul = read<bool>(s, "numerics.allow_tf32_matmul", {"numerics", "allow_tf32_matmul"});
  c.protocol.allow_tf32_cudnn = read<bool>(s, "numerics.allow_tf32_cudnn", {"numerics", "allow_tf32_cudnn"});
  c.protocol.ood_trials = read<bool>(s, "ood_trials", {"ood_trials"});
  c.protocol.precision_gate = read<bool>(s, "precision_gate", {"precision_gate"});
  c.protocol.relative_error = read<bool>(s, "relative_error", {"relative_error"});
  c.protocol.strict_layout = read<bool>(s, "strict_layout", {"strict_layout"});
  c.seed = read<uint64_t>(s, "seed", {"seed"});
  c.correctness_trials = read<int>(s, "correctness_trials", {"correctness_trials"});
  c.tolerances.clear();
  const auto tolerances = read<nlohmann::json>(s, "tolerances", {"tolerances"});
  for (const auto& [dtype, pair] : tolerances.items()) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number())
      throw std::invalid_argument(fmt::format("queue job settings: tolerances.{} is not [atol, rtol]", dtype));
    c.tolerances[dtype] = {pair[0].get<double>(), pair[1].get<double>()};
  }
  c.torch_ops = read<std::string>(s, "torch_ops", {"torch_ops"});
  c.allow_precision_drop = read<bool>(s, "allow_precision_drop", {"allow_precision_drop"});
  c.min_coverage = read<double>(s, "min_coverage", {"min_coverage"});
  c.roofline_margin = read<double>(s, "roofline_margin", {"roofline_margin"});
  c.compile_baseline = read<bool>(s, "compile_baseline", {"compile_baseline"});
  c.scale = read<double>(s, "scale", {"scale"});
  auto& t = c.timing;
  t.trials = read<int>(s, "timing.trials", {"timing", "trials"});
  t.min_trials = read<int>(s, "timing.min_trials", {"timing", "min_trials"});
  t.warmup = read<int>(s, "timing.warmup", {"timing", "warmup"});
  t.warmup_ms = read<double>(s, "timing.warmup_ms", {"timing", "warmup_ms"});
  t.budget_s = read<double>(s, "timing.budget_s", {"timing", "budget_s"});
  t.open_calls = read<int>(s, "timing.open_calls", {"timing", "open_calls"});
  t.window_ms = read<double>(s, "timing.window_ms", {"timing", "window_ms"});
  t.max_calls_per_window = read<int>(s, "timing.max_calls_per_window", {"timing", "max_calls_per_window"});
  t.window_bytes = read<uint64_t>(s, "timing.window_bytes", {"timing", "window_bytes"});
  return c;
}

std::string settings_fingerprint(const eval::EvalConfig& judged, const nlohmann::json& settings) {
  if (!is_fresh(settings)) return judged.fingerprint();
  return core::content_hash({judged.fingerprint(), "fresh", read<std::string>(settings, "fresh", {"fresh"})});
}

}  // namespace vinci::queue
