#include "eval/report_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/svg.h"

namespace vinci::eval {

namespace {

using core::kSvgPalette;
using core::nice_step;
using core::svg_line;
using core::svg_open;
using core::svg_text;
using core::xml_escape;

constexpr const char* kOverallColor = "#222222";

// ---------------------------------------------------------------------------------------------------------------
// fast_p curve

constexpr double kPMax = 3.0;

struct Curve {
  std::string id;     // "1", "2", …, "overall"
  std::string label;  // legend text
  int n = 0;
  std::vector<std::pair<double, double>> steps;  // (p, fraction), in data units
};

// The vertices of the step function p -> fraction of the n tasks that are correct with speedup > p, on [0, kPMax].
std::vector<std::pair<double, double>> step_vertices(const std::vector<const TaskOutcome*>& tasks) {
  std::vector<std::pair<double, double>> v;
  const double n = static_cast<double>(tasks.size());
  if (tasks.empty()) return v;
  int correct = 0;
  std::vector<double> speedups;
  for (const TaskOutcome* t : tasks) {
    if (!t->correct) continue;
    ++correct;
    if (t->speedup) speedups.push_back(*t->speedup);
  }
  std::sort(speedups.begin(), speedups.end());
  auto above = [&](double p) {  // number of speedups > p
    return static_cast<int>(speedups.end() - std::upper_bound(speedups.begin(), speedups.end(), p));
  };
  auto add = [&](double p, int count) {
    const double f = count / n;
    if (!v.empty() && v.back().first == p && v.back().second == f) return;
    v.emplace_back(p, f);
  };
  add(0.0, correct);                            // fast_0: the correctness rate
  add(0.0, static_cast<int>(speedups.size()));  // just above 0: correct results without a speedup drop out
  int before = static_cast<int>(speedups.size());
  for (size_t i = 0; i < speedups.size(); ++i) {
    const double s = speedups[i];
    if (s > kPMax) break;
    if (i > 0 && speedups[i - 1] == s) continue;
    add(s, before);
    before = above(s);
    add(s, before);
  }
  add(kPMax, before);
  return v;
}

std::string steps_attr(const std::vector<std::pair<double, double>>& steps) {
  std::string out;
  for (const auto& [p, f] : steps) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{},{}", p, f);
  }
  return out;
}

}  // namespace

std::string fast_p_curve_svg(const std::vector<Result>& results,
                             const std::map<int, std::vector<std::string>>& tasks_per_level, Baseline baseline,
                             std::string_view title) {
  const std::vector<TaskOutcome> outcomes = task_outcomes(results, tasks_per_level, baseline);
  std::map<int, std::vector<const TaskOutcome*>> by_level;
  for (const auto& [level, tasks] : tasks_per_level) by_level[level];
  std::vector<const TaskOutcome*> all;
  for (const auto& o : outcomes) {
    by_level[o.level].push_back(&o);
    all.push_back(&o);
  }

  std::vector<Curve> curves;
  std::vector<std::string> empty_levels;
  for (const auto& [level, tasks] : by_level) {
    if (tasks.empty()) {
      empty_levels.push_back(fmt::format("level {}: no tasks", level));
      continue;
    }
    int correct = 0;
    for (const TaskOutcome* t : tasks) correct += t->correct;
    curves.push_back({std::to_string(level), fmt::format("level {} (N={}, correct {})", level, tasks.size(), correct),
                      static_cast<int>(tasks.size()), step_vertices(tasks)});
  }
  {
    int correct = 0;
    for (const TaskOutcome* t : all) correct += t->correct;
    curves.push_back({"overall", fmt::format("overall (N={}, correct {})", all.size(), correct),
                      static_cast<int>(all.size()), step_vertices(all)});
  }

  const std::string heading =
      title.empty() ? fmt::format("fast_p (speedup vs {})", to_string(baseline)) : std::string(title);
  constexpr int kWidth = 800, kHeight = 440;
  constexpr double L = 64, T = 48, W = 470, H = 320;
  auto px = [&](double p) { return L + std::clamp(p, 0.0, kPMax) / kPMax * W; };
  auto py = [&](double f) { return T + (1.0 - std::clamp(f, 0.0, 1.0)) * H; };

  std::string svg = svg_open(kWidth, kHeight, heading);

  // Grid, axes, ticks.
  svg += "<g class=\"grid\" stroke-width=\"1\">\n";
  for (int i = 0; i <= 5; ++i) svg += svg_line(L, py(i / 5.0), L + W, py(i / 5.0), "#e5e5e5");
  for (double p : kFastP)
    if (p > 0) svg += svg_line(px(p), T, px(p), T + H, "#e5e5e5", "stroke-dasharray=\"3,3\"");
  svg += "</g>\n";
  svg += "<g class=\"axes\" stroke-width=\"1\">\n";
  svg += svg_line(L, T + H, L + W, T + H, "#000000");
  svg += svg_line(L, T, L, T + H, "#000000");
  for (int i = 0; i <= 6; ++i) {
    const double p = i * 0.5;
    svg += svg_line(px(p), T + H, px(p), T + H + 5, "#000000");
    svg += svg_text(px(p), T + H + 18, fmt::format("{}", p), "middle");
  }
  for (int i = 0; i <= 5; ++i) {
    svg += svg_line(L - 5, py(i / 5.0), L, py(i / 5.0), "#000000");
    svg += svg_text(L - 8, py(i / 5.0) + 4, fmt::format("{}%", i * 20), "end");
  }
  svg += svg_text(L + W / 2, T + H + 38, fmt::format("p (speedup threshold vs {})", to_string(baseline)), "middle");
  svg += svg_text(16, T + H / 2, "fast_p (% of tasks correct and > p)", "middle",
                  fmt::format("transform=\"rotate(-90 16 {:.2f})\"", T + H / 2));
  svg += "</g>\n";

  // Curves.
  svg += "<g class=\"curves\" fill=\"none\" stroke-width=\"2\">\n";
  for (size_t i = 0; i < curves.size(); ++i) {
    const Curve& c = curves[i];
    const bool overall = c.id == "overall";
    std::string points;
    for (const auto& [p, f] : c.steps) {
      if (!points.empty()) points += ' ';
      points += fmt::format("{:.2f},{:.2f}", px(p), py(f));
    }
    svg += fmt::format(
        "<polyline class=\"curve\" data-level=\"{}\" data-n=\"{}\" data-steps=\"{}\" stroke=\"{}\"{} points=\"{}\">"
        "<title>{}</title></polyline>\n",
        c.id, c.n, steps_attr(c.steps), overall ? kOverallColor : kSvgPalette[i % kSvgPalette.size()],
        overall ? " stroke-dasharray=\"6,4\"" : "", points, xml_escape(c.label));
  }
  svg += "</g>\n";

  // Legend.
  svg += "<g class=\"legend\">\n";
  double ly = T + 8;
  const double lx = L + W + 24;
  for (size_t i = 0; i < curves.size(); ++i) {
    const bool overall = curves[i].id == "overall";
    svg += svg_line(lx, ly, lx + 24, ly, overall ? kOverallColor : kSvgPalette[i % kSvgPalette.size()],
                    overall ? "stroke-width=\"2\" stroke-dasharray=\"6,4\"" : "stroke-width=\"2\"");
    svg += svg_text(lx + 30, ly + 4, curves[i].label);
    ly += 20;
  }
  for (const auto& label : empty_levels) {
    svg += svg_text(lx + 30, ly + 4, label, "start", "fill=\"#777777\"");
    ly += 20;
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

// ---------------------------------------------------------------------------------------------------------------
// Speedup histogram

namespace {

constexpr int kBinsPerOctave = 4;  // bins of 0.25 in log2
constexpr int kMinBin = -10 * kBinsPerOctave, kMaxBin = 10 * kBinsPerOctave - 1;

int bin_of(double speedup) {
  // The small slack puts values that are a power of 2^0.25 up to rounding in the bin they start.
  const int k = static_cast<int>(std::floor(std::log2(speedup) * kBinsPerOctave + 1e-9));
  return std::clamp(k, kMinBin, kMaxBin);
}

std::string speed_label(double v) { return fmt::format("{:g}×", v); }

}  // namespace

std::string speedup_histogram_svg(const std::vector<Result>& results, Baseline baseline, std::string_view title) {
  struct Entry {
    const Result* r;
    double s;
  };
  std::map<int, std::vector<Entry>> bins;
  int correct_with = 0, correct_without = 0;
  std::map<Verdict, int> not_correct;
  for (const auto& r : results) {
    if (!r.correct()) {
      ++not_correct[r.verdict];
      continue;
    }
    const auto s = speedup_of(r, baseline);
    if (!s) {
      ++correct_without;
      continue;
    }
    ++correct_with;
    bins[bin_of(*s)].push_back({&r, *s});
  }

  // Show at least [0.5x, 2x), so the 1x marker is always inside.
  int kmin = -kBinsPerOctave, kmax = kBinsPerOctave - 1;
  if (!bins.empty()) {
    kmin = std::min(kmin, bins.begin()->first);
    kmax = std::max(kmax, bins.rbegin()->first);
  }
  // Whole octaves, so the axis starts and ends on a labelled power of two.
  kmin = static_cast<int>(std::floor(kmin / double(kBinsPerOctave))) * kBinsPerOctave;
  kmax = static_cast<int>(std::ceil((kmax + 1) / double(kBinsPerOctave))) * kBinsPerOctave - 1;
  size_t max_count = 0;
  for (const auto& [k, entries] : bins) max_count = std::max(max_count, entries.size());

  const std::string heading =
      title.empty() ? fmt::format("Speedup of correct results vs {} (n={})", to_string(baseline), correct_with)
                    : std::string(title);
  constexpr int kWidth = 780, kHeight = 420;
  constexpr double L = 60, T = 48, W = 480, H = 300;
  const double lo_log2 = kmin / double(kBinsPerOctave), hi_log2 = (kmax + 1) / double(kBinsPerOctave);
  auto px = [&](double log2v) { return L + (log2v - lo_log2) / (hi_log2 - lo_log2) * W; };
  const double ystep = std::max(1.0, nice_step(static_cast<double>(max_count), 5));  // whole counts
  const double ymax = std::max(1.0, std::ceil(std::max<double>(max_count, 1) / ystep) * ystep);
  auto py = [&](double c) { return T + H - c / ymax * H; };

  std::string svg = svg_open(kWidth, kHeight, heading);

  svg += "<g class=\"axes\" stroke-width=\"1\">\n";
  for (double c = 0; c <= ymax + 1e-9; c += ystep) {
    svg += svg_line(L, py(c), L + W, py(c), "#e5e5e5");
    svg += svg_line(L - 5, py(c), L, py(c), "#000000");
    svg += svg_text(L - 8, py(c) + 4, fmt::format("{:g}", c), "end");
  }
  const int octaves = static_cast<int>(std::lround(hi_log2 - lo_log2));
  const int stride = std::max(1, (octaves + 9) / 10);
  for (int e = static_cast<int>(lo_log2); e <= static_cast<int>(hi_log2); ++e) {
    if ((e - static_cast<int>(lo_log2)) % stride != 0) continue;
    svg += svg_line(px(e), T + H, px(e), T + H + 5, "#000000");
    svg += svg_text(px(e), T + H + 18, speed_label(std::ldexp(1.0, e)), "middle");
  }
  svg += svg_line(L, T + H, L + W, T + H, "#000000");
  svg += svg_line(L, T, L, T + H, "#000000");
  svg += svg_text(L + W / 2, T + H + 38, fmt::format("speedup vs {} (log2 scale, bins of 2^0.25)", to_string(baseline)),
                  "middle");
  svg += svg_text(16, T + H / 2, "results", "middle", fmt::format("transform=\"rotate(-90 16 {:.2f})\"", T + H / 2));
  svg += "</g>\n";

  svg += "<g class=\"bins\" fill=\"#4c78a8\" stroke=\"#ffffff\" stroke-width=\"0.5\">\n";
  for (int k = kmin; k <= kmax; ++k) {
    const auto it = bins.find(k);
    const size_t count = it == bins.end() ? 0 : it->second.size();
    const double lo = std::exp2(k / double(kBinsPerOctave)), hi = std::exp2((k + 1) / double(kBinsPerOctave));
    const double x0 = px(k / double(kBinsPerOctave)), x1 = px((k + 1) / double(kBinsPerOctave));
    std::string tip = fmt::format("[{:.3g}×, {:.3g}×): {} result{}", lo, hi, count, count == 1 ? "" : "s");
    if (k == kMinBin) tip += " (and everything slower)";
    if (k == kMaxBin) tip += " (and everything faster)";
    if (it != bins.end()) {
      constexpr size_t kMaxListed = 20;
      for (size_t i = 0; i < it->second.size() && i < kMaxListed; ++i)
        tip += fmt::format("\n{}: {:.3f}×", it->second[i].r->task, it->second[i].s);
      if (it->second.size() > kMaxListed) tip += fmt::format("\n… and {} more", it->second.size() - kMaxListed);
    }
    svg += fmt::format(
        "<rect class=\"bin\" data-bin=\"{}\" data-lo=\"{}\" data-hi=\"{}\" data-count=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" "
        "width=\"{:.2f}\" height=\"{:.2f}\"><title>{}</title></rect>\n",
        k, lo, hi, count, x0, py(static_cast<double>(count)), x1 - x0, H - (py(static_cast<double>(count)) - T),
        xml_escape(tip));
  }
  svg += "</g>\n";

  // The 1x marker.
  svg += "<g class=\"marker\">\n";
  svg += svg_line(px(0), T - 6, px(0), T + H, "#d62728", "stroke-width=\"1.5\" stroke-dasharray=\"5,3\"");
  svg += svg_text(px(0) + 4, T + 4, "1× (baseline)", "start", "fill=\"#d62728\"");
  svg += "</g>\n";

  // Counts by class.
  svg += "<g class=\"classes\">\n";
  const double tx = L + W + 40, tx2 = kWidth - 16;
  double ty = T + 8;
  svg += svg_text(tx, ty, "results by class", "start", "font-weight=\"bold\"");
  ty += 20;
  auto row = [&](std::string_view cls, std::string_view label, int count) {
    svg += fmt::format(
        "<text class=\"class-count\" data-class=\"{}\" data-count=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\">{}"
        "<tspan x=\"{:.2f}\" text-anchor=\"end\">{}</tspan></text>\n",
        xml_escape(cls), count, tx, ty, xml_escape(label), tx2, count);
    ty += 18;
  };
  row("correct", "correct (in histogram)", correct_with);
  row("correct_no_speedup", "correct, no speedup", correct_without);
  ty += 6;
  for (Verdict v : {Verdict::incorrect, Verdict::rejected, Verdict::compile_error, Verdict::runtime_error,
                    Verdict::timeout, Verdict::invalid_task}) {
    const auto it = not_correct.find(v);
    row(to_string(v), to_string(v), it == not_correct.end() ? 0 : it->second);
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace vinci::eval
