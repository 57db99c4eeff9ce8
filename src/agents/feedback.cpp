#include "agents/feedback.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "core/utf8.h"

namespace vinci::agents {

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool names_an_error(std::string_view line) {
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // "error:" is gcc/nvcc's marker; Python exceptions end in Error or Exception.
  return lower.find("error") != std::string::npos || lower.find("exception") != std::string::npos ||
         lower.find("undefined reference") != std::string::npos;
}

}  // namespace

std::string trim_build_log(std::string_view log, size_t max_chars) {
  if (log.size() <= max_chars) return std::string(log);
  const auto lines = split_lines(log);
  constexpr size_t kContext = 2;  // the source line and caret that gcc prints under an error
  std::vector<bool> keep(lines.size(), false);
  bool any = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!names_an_error(lines[i])) continue;
    any = true;
    for (size_t j = i; j < lines.size() && j <= i + kContext; ++j) keep[j] = true;
  }
  if (!any)
    return fmt::format("[... {} characters of log cut]\n{}", log.size() - max_chars, core::utf8_suffix(log, max_chars));
  std::string out;
  size_t cut = 0;
  bool gap = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!keep[i]) {
      gap = true;
      continue;
    }
    if (out.size() + lines[i].size() + 1 > max_chars) {
      ++cut;
      continue;
    }
    if (gap && !out.empty()) out += "...\n";
    gap = false;
    out += lines[i];
    out += '\n';
  }
  if (cut > 0) out += fmt::format("[{} more error lines cut]\n", cut);
  return out;
}

double attempt_speedup(const eval::Result& r) { return r.correct() && r.speedup_eager ? *r.speedup_eager : 0.0; }

std::string outcome_line(const eval::Result& r) {
  if (r.correct()) {
    std::string s = fmt::format("correct, {:.2f}x eager", r.speedup_eager.value_or(0));
    if (r.speedup_compile) s += fmt::format(", {:.2f}x torch.compile", *r.speedup_compile);
    if (r.coverage) s += fmt::format(" (coverage {:.0f}%)", 100 * *r.coverage);
    return s;
  }
  std::string s(eval::to_string(r.verdict));
  if (!r.reason.empty()) s += "/" + r.reason;
  return s;
}

std::string profile_summary(const std::vector<eval::KernelTime>& kernels) {
  if (kernels.empty()) return "";
  double total = 0;
  for (const auto& k : kernels) total += k.total_us;
  std::string out = "Profile of one forward call (GPU time by kernel, longest first):\n";
  for (const auto& k : kernels)
    out += fmt::format("- {:.1f} us ({:.0f}%), {} launch{}: {}{}\n", k.total_us,
                       total > 0 ? 100 * k.total_us / total : 0.0, k.calls, k.calls == 1 ? "" : "es", k.name,
                       k.custom ? " (yours)" : "");
  return out;
}

std::string describe_result(const eval::Result& r, size_t max_log_chars) {
  std::string out;
  switch (r.verdict) {
    case eval::Verdict::correct: {
      out += fmt::format("Correct on {}/{} trials.", r.trials_passed, r.trials);
      if (r.timing)
        out += fmt::format(" Your kernel: {:.4f} ms (median of {} runs).", r.timing->median_ms, r.timing->trials);
      if (const auto& eager = r.eager_paired ? r.eager_paired : r.eager)
        out += fmt::format(" PyTorch eager: {:.4f} ms.", eager->median_ms);
      if (r.speedup_eager) out += fmt::format(" Speedup over eager: {:.2f}x.", *r.speedup_eager);
      if (r.speedup_compile) out += fmt::format(" Over torch.compile: {:.2f}x.", *r.speedup_compile);
      out += '\n';
      if (r.coverage)
        out += fmt::format("Your own kernels took {:.0f}% of the forward time ({} launches per call).\n",
                           100 * *r.coverage, r.custom_launches);
      out += profile_summary(r.profile);
      break;
    }
    case eval::Verdict::incorrect:
      out += fmt::format("Wrong output: {}/{} trials passed.", r.trials_passed, r.trials);
      if (r.max_abs_diff) out += fmt::format(" Max abs difference {:.3g}", *r.max_abs_diff);
      if (r.mean_abs_diff) out += fmt::format(", mean {:.3g}", *r.mean_abs_diff);
      out += ".\n";
      break;
    case eval::Verdict::compile_error: out += "The file did not build or import.\n"; break;
    case eval::Verdict::rejected: out += fmt::format("Rejected ({}): this is not allowed.\n", r.reason); break;
    case eval::Verdict::runtime_error: out += "It failed while running.\n"; break;
    case eval::Verdict::timeout: out += "It ran past the time limit.\n"; break;
    case eval::Verdict::invalid_task: out += "The task itself could not be evaluated; this is not your fault.\n"; break;
  }
  if (!r.message.empty() && !r.correct()) out += trim_build_log(r.message, max_log_chars) + "\n";
  for (const auto& w : r.warnings) out += "Warning: " + w + "\n";
  for (const auto& f : r.flags) {
    out += "Flag: " + f;
    if (f == "launch_bound")
      out +=
          " (your kernels kept the GPU busy for under half of the measured time; the rest went to launching them "
          "from the host, so fewer launches and less Python in forward gain more than faster kernels)";
    out += "\n";
  }
  return out;
}

}  // namespace vinci::agents
