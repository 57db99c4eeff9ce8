#include "eval/judge_protocol.h"

#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace vinci::eval {

namespace {

using nlohmann::json;

// Thrown inside this file only: every *_from_json turns it into its Parsed's error.
struct Malformed {
  std::string field, problem;
};

template <typename T>
const char* expected_kind() {
  if constexpr (std::is_same_v<T, bool>)
    return "a boolean";
  else if constexpr (std::is_same_v<T, std::string>)
    return "a string";
  else if constexpr (std::is_arithmetic_v<T>)
    return "a number";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>)
    return "a list of strings";
  else if constexpr (std::is_same_v<T, std::vector<double>>)
    return "a list of numbers";
  else if constexpr (std::is_same_v<T, std::map<std::string, double>>)
    return "an object of numbers";
  else
    return "an object";
}

// The fields of one JSON object, each read as the protocol says or thrown as Malformed with its
// dotted path. Absent and null are the same: Python writes None as either.
class Fields {
 public:
  Fields(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw Malformed{path_.empty() ? "(the reply)" : path_, "not an object"};
  }

  std::string path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const char* key) const {
    const auto it = j_.find(key);
    return it != j_.end() && !it->is_null();
  }
  const json& raw(const char* key) const {
    if (!has(key)) throw Malformed{path(key), "missing"};
    return j_.at(key);
  }
  template <typename T>
  T need(const char* key) const {
    return convert<T>(raw(key), key);
  }
  template <typename T>
  T get(const char* key, T fallback) const {
    return has(key) ? convert<T>(j_.at(key), key) : fallback;
  }
  template <typename T>
  std::optional<T> maybe(const char* key) const {
    return has(key) ? std::optional<T>(convert<T>(j_.at(key), key)) : std::nullopt;
  }
  Fields object(const char* key) const { return Fields(raw(key), path(key)); }
  // An object the protocol carries without reading it (the judge's settings).
  json opaque_object(const char* key) const {
    if (!raw(key).is_object()) throw Malformed{path(key), "not an object"};
    return raw(key);
  }
  // A value read by one of result.h's readers, which throw nlohmann's exceptions.
  template <typename Read>
  auto with(const char* key, Read read) const {
    try {
      return read(raw(key));
    } catch (const json::exception& e) {
      throw Malformed{path(key), e.what()};
    }
  }

 private:
  template <typename T>
  T convert(const json& v, const char* key) const {
    // nlohmann converts a float to an int and a number to a bool silently: the protocol does not.
    const bool fits = std::is_same_v<T, bool>          ? v.is_boolean()
                      : std::is_same_v<T, std::string> ? v.is_string()
                      : std::is_arithmetic_v<T>        ? v.is_number()
                                                       : true;
    if (!fits) throw Malformed{path(key), fmt::format("not {}", expected_kind<T>())};
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      throw Malformed{path(key), fmt::format("not {}", expected_kind<T>())};
    }
  }

  const json& j_;
  std::string path_;
};

template <typename T, typename Read>
Parsed<T> read_message(const json& j, Read read) {
  try {
    return {read(Fields(j, "")), ""};
  } catch (const Malformed& m) {
    return {std::nullopt, fmt::format("'{}': {}", m.field, m.problem)};
  }
}

Verdict verdict_of(const Fields& f, Verdict fallback) {
  if (!f.has("class")) return fallback;
  const auto name = f.need<std::string>("class");
  try {
    return verdict_from_string(name);
  } catch (const std::invalid_argument&) {
    throw Malformed{f.path("class"), fmt::format("unknown result class '{}'", name)};
  }
}

StaticReport static_report_of(const Fields& f) {
  StaticReport s;
  s.kernel_names = f.get("kernel_names", s.kernel_names);
  s.extension_functions = f.get("extension_functions", s.extension_functions);
  s.uses_triton = f.get("uses_triton", false);
  s.findings = f.get("findings", s.findings);
  s.low_precision = f.get("low_precision", false);
  return s;
}

// An empty report ({} when the build failed before the checks ran) reads as no findings.
StaticReport static_report_in(const Fields& f, const char* key) {
  return f.has(key) ? static_report_of(f.object(key)) : StaticReport{};
}

TimingStats timing_in(const Fields& f, const char* key) { return f.with(key, timing_from_json); }

template <typename T>
void put_if_set(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

std::optional<Interval> interval_in(const Fields& f, const char* key) {
  if (!f.has(key)) return std::nullopt;
  const auto v = f.need<std::vector<double>>(key);
  if (v.size() != 2) throw Malformed{f.path(key), "not a [low, high] pair"};
  return Interval{v[0], v[1]};
}

json kernel_times_json(const std::vector<KernelTime>& profile) {
  json out = json::array();
  for (const auto& k : profile)
    out.push_back({{"name", k.name}, {"calls", k.calls}, {"total_us", k.total_us}, {"custom", k.custom}});
  return out;
}

}  // namespace

// --- requests ------------------------------------------------------------------------------------

json to_json(const HelloRequest&) { return {{"op", "hello"}}; }

json to_json(const StaticReport& r) {
  return {{"kernel_names", r.kernel_names},
          {"extension_functions", r.extension_functions},
          {"uses_triton", r.uses_triton},
          {"findings", r.findings},
          {"low_precision", r.low_precision}};
}

json to_json(const BuildRequest& r) {
  return {{"candidate", r.candidate},
          {"task", r.task},
          {"scale", r.scale},
          {"log", r.log},
          {"import_timeout", r.import_timeout},
          {"cpu_seconds", r.cpu_seconds},
          {"address_space", r.address_space},
          {"policy", {{"torch_ops", r.torch_ops}, {"allow_precision_drop", r.allow_precision_drop}}},
          {"static_only", r.static_only}};
}

json to_json(const BaselineRequest& r) {
  return {{"op", "baseline"}, {"path", r.path}, {"scale", r.scale}, {"config", r.config}};
}

json to_json(const EvaluateRequest& r) {
  return {{"op", "evaluate"},
          {"path", r.path},
          {"scale", r.scale},
          {"candidate", r.candidate},
          {"static", to_json(r.static_report)},
          {"config", r.config},
          {"log", r.log},
          {"eager_times", r.eager_times},
          {"compile_times", r.compile_times},
          {"calls_per_window", r.calls_per_window},
          {"reference_kernels", r.reference_kernels}};
}

static void expect_op(const Fields& f, const char* op) {
  if (f.need<std::string>("op") != op) throw Malformed{"op", fmt::format("not '{}'", op)};
}

Parsed<HelloRequest> hello_request_from_json(const json& j) {
  return read_message<HelloRequest>(j, [](const Fields& f) {
    expect_op(f, "hello");
    return HelloRequest{};
  });
}

Parsed<BuildRequest> build_request_from_json(const json& j) {
  return read_message<BuildRequest>(j, [](const Fields& f) {
    BuildRequest r;
    r.candidate = f.need<std::string>("candidate");
    r.task = f.get<std::string>("task", "");
    r.scale = f.get("scale", r.scale);
    r.log = f.get<std::string>("log", "");
    r.import_timeout = f.get("import_timeout", r.import_timeout);
    r.cpu_seconds = f.get("cpu_seconds", r.cpu_seconds);
    r.address_space = f.get("address_space", r.address_space);
    if (f.has("policy")) {
      const Fields policy = f.object("policy");
      r.torch_ops = policy.get("torch_ops", r.torch_ops);
      r.allow_precision_drop = policy.get("allow_precision_drop", false);
    }
    r.static_only = f.get("static_only", false);
    return r;
  });
}

Parsed<BaselineRequest> baseline_request_from_json(const json& j) {
  return read_message<BaselineRequest>(j, [](const Fields& f) {
    expect_op(f, "baseline");
    BaselineRequest r;
    r.path = f.need<std::string>("path");
    r.scale = f.get("scale", r.scale);
    if (f.has("config")) r.config = f.opaque_object("config");
    return r;
  });
}

Parsed<EvaluateRequest> evaluate_request_from_json(const json& j) {
  return read_message<EvaluateRequest>(j, [](const Fields& f) {
    expect_op(f, "evaluate");
    EvaluateRequest r;
    r.path = f.need<std::string>("path");
    r.scale = f.get("scale", r.scale);
    r.candidate = f.need<std::string>("candidate");
    r.static_report = static_report_in(f, "static");
    if (f.has("config")) r.config = f.opaque_object("config");
    r.log = f.get<std::string>("log", "");
    r.eager_times = f.get("eager_times", r.eager_times);
    r.compile_times = f.get("compile_times", r.compile_times);
    r.calls_per_window = f.get("calls_per_window", r.calls_per_window);
    r.reference_kernels = f.get("reference_kernels", r.reference_kernels);
    return r;
  });
}

// --- replies ------------------------------------------------------------------------------------

json to_json(const JudgeFailure& r) {
  json j{{"ok", false},          {"class", to_string(r.verdict)},    {"reason", r.reason},
         {"message", r.message}, {"phase_seconds", r.phase_seconds}, {"warnings", r.warnings},
         {"fatal", r.fatal}};
  put_if_set(j, "trials_passed", r.trials_passed);
  put_if_set(j, "max_abs_diff", r.max_abs_diff);
  put_if_set(j, "mean_abs_diff", r.mean_abs_diff);
  if (r.timing) j["timing"] = to_json(*r.timing);
  return j;
}

Parsed<JudgeFailure> failure_from_json(const json& j) {
  return read_message<JudgeFailure>(j, [](const Fields& f) {
    JudgeFailure r;
    r.verdict = verdict_of(f, Verdict::runtime_error);
    r.reason = f.get<std::string>("reason", "");
    r.message = f.get<std::string>("message", "");
    r.trials_passed = f.maybe<int>("trials_passed");
    r.max_abs_diff = f.maybe<double>("max_abs_diff");
    r.mean_abs_diff = f.maybe<double>("mean_abs_diff");
    if (f.has("timing")) r.timing = timing_in(f, "timing");
    r.phase_seconds = f.get("phase_seconds", r.phase_seconds);
    r.warnings = f.get("warnings", r.warnings);
    r.fatal = f.get("fatal", false);
    return r;
  });
}

json to_json(const HelloReply& r) {
  json j{{"ok", true},
         {"device", r.device},
         {"device_name", r.device_name},
         {"arch", r.arch},
         {"torch", r.torch},
         {"python", r.python},
         {"pid", r.pid},
         {"sandbox", r.sandbox},
         {"sandbox_mode", r.sandbox_mode},
         {"clock", r.clock},
         {"flush_bytes", r.flush_bytes},
         {"l2_bytes", r.l2_bytes},
         {"warnings", r.warnings}};
  put_if_set(j, "cuda", r.cuda);
  put_if_set(j, "sm_count", r.sm_count);
  put_if_set(j, "memory_bytes", r.memory_bytes);
  put_if_set(j, "bandwidth_gbps", r.bandwidth_gbps);
  return j;
}

Parsed<HelloReply> hello_reply_from_json(const json& j) {
  return read_message<HelloReply>(j, [](const Fields& f) {
    HelloReply r;
    r.device = f.need<std::string>("device");
    r.device_name = f.need<std::string>("device_name");
    r.arch = f.get<std::string>("arch", "");
    r.torch = f.need<std::string>("torch");
    r.python = f.get<std::string>("python", "");
    r.cuda = f.maybe<std::string>("cuda");
    r.pid = f.get("pid", 0);
    r.sandbox = f.need<std::string>("sandbox");
    r.sandbox_mode = f.get<std::string>("sandbox_mode", "");
    r.clock = f.get<std::string>("clock", "");
    r.flush_bytes = f.get("flush_bytes", r.flush_bytes);
    r.l2_bytes = f.get("l2_bytes", r.l2_bytes);
    r.sm_count = f.maybe<int>("sm_count");
    r.memory_bytes = f.maybe<uint64_t>("memory_bytes");
    r.bandwidth_gbps = f.maybe<double>("bandwidth_gbps");
    r.warnings = f.get("warnings", r.warnings);
    return r;
  });
}

json to_json(const BuildReply& r) {
  json report{{"ok", r.ok}, {"static", to_json(r.static_report)}, {"seconds", r.seconds}, {"built", r.built}};
  if (!r.ok) {
    report["class"] = to_string(r.verdict);
    report["reason"] = r.reason;
    report["message"] = r.message;
  }
  return {{"report", report}};
}

Parsed<BuildReply> build_reply_from_json(const json& j) {
  return read_message<BuildReply>(j, [](const Fields& envelope) {
    const Fields f = envelope.object("report");
    BuildReply r;
    r.ok = f.need<bool>("ok");
    r.static_report = static_report_in(f, "static");
    if (!r.ok) {
      r.verdict = verdict_of(f, Verdict::compile_error);
      r.reason = f.get<std::string>("reason", "");
      r.message = f.get<std::string>("message", "");
    }
    r.seconds = f.get("seconds", 0.0);
    r.built = f.get("built", r.built);
    return r;
  });
}

json to_json(const BaselineReply& r) {
  json j{{"ok", true},
         {"eager", to_json(r.eager)},
         {"eager_times", r.eager_times},
         {"calls_per_window", r.calls_per_window},
         {"compile_times", r.compile_times},
         {"reference_kernels", r.reference_kernels}};
  if (r.compile) j["compile"] = to_json(*r.compile);
  put_if_set(j, "compile_error", r.compile_error);
  return j;
}

Parsed<BaselineReply> baseline_reply_from_json(const json& j) {
  return read_message<BaselineReply>(j, [](const Fields& f) {
    BaselineReply r;
    r.eager = timing_in(f, "eager");
    r.eager_times = f.need<std::vector<double>>("eager_times");
    r.calls_per_window = f.get("calls_per_window", 1);
    if (f.has("compile")) r.compile = timing_in(f, "compile");
    r.compile_times = f.get("compile_times", r.compile_times);
    r.compile_error = f.maybe<std::string>("compile_error");
    r.reference_kernels = f.get("reference_kernels", r.reference_kernels);
    return r;
  });
}

json to_json(const EvaluateReply& r) {
  json j{{"ok", true},
         {"class", "correct"},
         {"trials", r.trials},
         {"trials_passed", r.trials_passed},
         {"max_abs_diff", r.max_abs_diff},
         {"mean_abs_diff", r.mean_abs_diff},
         {"timing", to_json(r.timing)},
         {"custom_launches", r.custom_launches},
         {"profile", kernel_times_json(r.profile)},
         {"flags", r.flags},
         {"skipped_trials", r.skipped_trials},
         {"warnings", r.warnings},
         {"phase_seconds", r.phase_seconds}};
  if (r.external) j["external"] = to_json(*r.external);
  put_if_set(j, "coverage", r.coverage);
  if (r.eager_paired) j["eager_paired"] = to_json(*r.eager_paired);
  put_if_set(j, "speedup_eager", r.speedup_eager);
  put_if_set(j, "speedup_compile", r.speedup_compile);
  put_if_set(j, "speedup_eager_interval", r.speedup_eager_interval);
  put_if_set(j, "speedup_compile_interval", r.speedup_compile_interval);
  return j;
}

Parsed<EvaluateReply> evaluate_reply_from_json(const json& j) {
  return read_message<EvaluateReply>(j, [](const Fields& f) {
    EvaluateReply r;
    r.trials = f.need<int>("trials");
    r.trials_passed = f.need<int>("trials_passed");
    r.max_abs_diff = f.get("max_abs_diff", 0.0);
    r.mean_abs_diff = f.get("mean_abs_diff", 0.0);
    r.timing = timing_in(f, "timing");
    if (f.has("external")) r.external = f.with("external", timing_check_from_json);
    r.custom_launches = f.get("custom_launches", 0);
    r.coverage = f.maybe<double>("coverage");
    if (f.has("profile")) r.profile = f.with("profile", kernel_times_from_json);
    r.flags = f.get("flags", r.flags);
    r.skipped_trials = f.get("skipped_trials", r.skipped_trials);
    r.warnings = f.get("warnings", r.warnings);
    if (f.has("eager_paired")) r.eager_paired = timing_in(f, "eager_paired");
    r.speedup_eager = f.maybe<double>("speedup_eager");
    r.speedup_compile = f.maybe<double>("speedup_compile");
    r.speedup_eager_interval = interval_in(f, "speedup_eager_interval");
    r.speedup_compile_interval = interval_in(f, "speedup_compile_interval");
    r.phase_seconds = f.get("phase_seconds", r.phase_seconds);
    return r;
  });
}

std::pair<std::string, std::string> baseline_settings(const json& config) {
  const auto part = [&](const char* key) { return config.contains(key) ? config.at(key).dump() : std::string("null"); };
  return {part("timing"), part("numerics")};
}

}  // namespace vinci::eval
