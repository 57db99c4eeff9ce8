#include "eval/result.h"

#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "core/enum_names.h"

namespace vinci::eval {

namespace {
constexpr std::array<core::EnumName<Verdict>, 7> kVerdicts{{
    {Verdict::correct, "correct"},
    {Verdict::incorrect, "incorrect"},
    {Verdict::rejected, "rejected"},
    {Verdict::compile_error, "compile_error"},
    {Verdict::runtime_error, "runtime_error"},
    {Verdict::timeout, "timeout"},
    {Verdict::invalid_task, "invalid_task"},
}};

template <typename T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <typename T>
std::optional<T> get_opt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}
}  // namespace

std::string_view to_string(Verdict v) { return core::enum_to_string(kVerdicts, v); }

Verdict verdict_from_string(std::string_view s) { return core::enum_from_string(kVerdicts, s, "result class"); }

nlohmann::json to_json(const TimingStats& t) {
  return {{"trials", t.trials}, {"median_ms", t.median_ms}, {"mean_ms", t.mean_ms}, {"std_ms", t.std_ms},
          {"min_ms", t.min_ms}, {"max_ms", t.max_ms},       {"p10_ms", t.p10_ms},   {"p90_ms", t.p90_ms}};
}

TimingStats timing_from_json(const nlohmann::json& j) {
  TimingStats t;
  t.trials = j.value("trials", 0);
  t.median_ms = j.at("median_ms").get<double>();
  t.mean_ms = j.value("mean_ms", t.median_ms);
  t.std_ms = j.value("std_ms", 0.0);
  t.min_ms = j.value("min_ms", t.median_ms);
  t.max_ms = j.value("max_ms", t.median_ms);
  t.p10_ms = j.value("p10_ms", t.median_ms);
  t.p90_ms = j.value("p90_ms", t.median_ms);
  return t;
}

nlohmann::json to_json(const TimingCheck& t) {
  nlohmann::json j{{"clock", t.clock},     {"calls_per_window", t.calls_per_window},
                   {"windows", t.windows}, {"planned_windows", t.planned_windows},
                   {"opened", t.opened},   {"flush_bytes", t.flush_bytes}};
  if (!t.timed_inputs.empty()) j["timed_inputs"] = t.timed_inputs;
  if (t.gpu_busy_share) j["gpu_busy_share"] = *t.gpu_busy_share;
  if (t.watched_ms) j["watched_ms"] = *t.watched_ms;
  if (t.watched_allowed_ms) j["watched_allowed_ms"] = *t.watched_allowed_ms;
  if (t.profiled_ms) j["profiled_ms"] = *t.profiled_ms;
  if (t.biased_median_ms) j["biased_median_ms"] = *t.biased_median_ms;
  if (t.plain_median_ms) j["plain_median_ms"] = *t.plain_median_ms;
  if (t.library_ms_per_call) j["library_ms_per_call"] = *t.library_ms_per_call;
  if (t.library_share) j["library_share"] = *t.library_share;
  if (t.compiled_samples) j["compiled_samples"] = *t.compiled_samples;
  if (t.gpu_library_samples) j["gpu_library_samples"] = *t.gpu_library_samples;
  if (t.host_samples) j["host_samples"] = *t.host_samples;
  return j;
}

TimingCheck timing_check_from_json(const nlohmann::json& j) {
  TimingCheck t;
  t.clock = j.value("clock", "");
  t.calls_per_window = j.value("calls_per_window", 1);
  t.windows = j.value("windows", 0);
  t.planned_windows = j.value("planned_windows", 0);
  t.opened = j.value("opened", 0);
  t.flush_bytes = j.value("flush_bytes", uint64_t{0});
  t.timed_inputs = j.value("timed_inputs", "");
  t.gpu_busy_share = get_opt<double>(j, "gpu_busy_share");
  t.watched_ms = get_opt<double>(j, "watched_ms");
  t.watched_allowed_ms = get_opt<double>(j, "watched_allowed_ms");
  t.profiled_ms = get_opt<double>(j, "profiled_ms");
  t.biased_median_ms = get_opt<double>(j, "biased_median_ms");
  t.plain_median_ms = get_opt<double>(j, "plain_median_ms");
  t.library_ms_per_call = get_opt<double>(j, "library_ms_per_call");
  t.library_share = get_opt<double>(j, "library_share");
  t.compiled_samples = get_opt<int>(j, "compiled_samples");
  t.gpu_library_samples = get_opt<int>(j, "gpu_library_samples");
  t.host_samples = get_opt<int>(j, "host_samples");
  return t;
}

std::optional<Interval> interval_from_json(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number())
    return std::nullopt;
  return Interval{(*it)[0].get<double>(), (*it)[1].get<double>()};
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j{{"task", r.task},
                   {"level", r.level},
                   {"task_number", r.task_number},
                   {"task_name", r.task_name},
                   {"candidate", r.candidate},
                   {"candidate_hash", r.candidate_hash},
                   {"device", r.device},
                   {"protocol", r.protocol},
                   {"sandbox", r.sandbox},
                   {"class", to_string(r.verdict)},
                   {"reason", r.reason},
                   {"message", r.message},
                   {"cached", r.cached},
                   {"eval_seconds", r.eval_seconds}};
  if (r.trials) {
    j["trials"] = r.trials;
    j["trials_passed"] = r.trials_passed;
  }
  put(j, "max_abs_diff", r.max_abs_diff);
  put(j, "mean_abs_diff", r.mean_abs_diff);
  if (r.timing) j["timing"] = to_json(*r.timing);
  if (r.timing_check) j["timing_check"] = to_json(*r.timing_check);
  if (r.eager) j["eager"] = to_json(*r.eager);
  if (r.compiled) j["compile"] = to_json(*r.compiled);
  if (r.eager_paired) j["eager_paired"] = to_json(*r.eager_paired);
  put(j, "speedup_eager", r.speedup_eager);
  put(j, "speedup_compile", r.speedup_compile);
  put(j, "speedup_eager_interval", r.speedup_eager_interval);
  put(j, "speedup_compile_interval", r.speedup_compile_interval);
  put(j, "coverage", r.coverage);
  if (r.correct()) j["custom_launches"] = r.custom_launches;
  if (!r.profile.empty()) {
    j["profile"] = nlohmann::json::array();
    for (const auto& k : r.profile)
      j["profile"].push_back({{"name", k.name}, {"calls", k.calls}, {"total_us", k.total_us}, {"custom", k.custom}});
  }
  if (!r.flags.empty()) j["flags"] = r.flags;
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  if (!r.skipped_trials.empty()) j["skipped_trials"] = r.skipped_trials;
  if (!r.phase_seconds.empty()) j["phase_seconds"] = r.phase_seconds;
  return j;
}

std::vector<KernelTime> kernel_times_from_json(const nlohmann::json& j) {
  std::vector<KernelTime> out;
  for (const auto& k : j)
    out.push_back({k.at("name").get<std::string>(), k.at("calls").get<int>(), k.at("total_us").get<double>(),
                   k.value("custom", false)});
  return out;
}

Result result_from_json(const nlohmann::json& j) {
  Result r;
  try {
    r.task = j.at("task").get<std::string>();
    r.verdict = verdict_from_string(j.at("class").get<std::string>());
    r.level = j.value("level", 0);
    r.task_number = j.value("task_number", 0);
    r.task_name = j.value("task_name", "");
    r.candidate = j.value("candidate", "");
    r.candidate_hash = j.value("candidate_hash", "");
    r.device = j.value("device", "");
    r.protocol = j.value("protocol", "");
    r.sandbox = j.value("sandbox", "");
    r.reason = j.value("reason", "");
    r.message = j.value("message", "");
    r.trials = j.value("trials", 0);
    r.trials_passed = j.value("trials_passed", 0);
    r.max_abs_diff = get_opt<double>(j, "max_abs_diff");
    r.mean_abs_diff = get_opt<double>(j, "mean_abs_diff");
    if (j.contains("timing") && !j["timing"].is_null()) r.timing = timing_from_json(j["timing"]);
    if (j.contains("timing_check") && !j["timing_check"].is_null())
      r.timing_check = timing_check_from_json(j["timing_check"]);
    if (j.contains("eager") && !j["eager"].is_null()) r.eager = timing_from_json(j["eager"]);
    if (j.contains("compile") && !j["compile"].is_null()) r.compiled = timing_from_json(j["compile"]);
    if (j.contains("eager_paired") && !j["eager_paired"].is_null())
      r.eager_paired = timing_from_json(j["eager_paired"]);
    r.speedup_eager = get_opt<double>(j, "speedup_eager");
    r.speedup_compile = get_opt<double>(j, "speedup_compile");
    r.speedup_eager_interval = interval_from_json(j, "speedup_eager_interval");
    r.speedup_compile_interval = interval_from_json(j, "speedup_compile_interval");
    r.coverage = get_opt<double>(j, "coverage");
    r.custom_launches = j.value("custom_launches", 0);
    if (j.contains("profile")) r.profile = kernel_times_from_json(j["profile"]);
    r.flags = j.value("flags", std::vector<std::string>{});
    r.warnings = j.value("warnings", std::vector<std::string>{});
    r.skipped_trials = j.value("skipped_trials", std::vector<std::string>{});
    r.cached = j.value("cached", false);
    r.eval_seconds = j.value("eval_seconds", 0.0);
    r.phase_seconds = j.value("phase_seconds", std::map<std::string, double>{});
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("malformed result: {}", e.what()));
  }
  return r;
}

}  // namespace vinci::eval
