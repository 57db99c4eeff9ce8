// vinci report: SVG charts and the fast_p table of a results file.
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/files.h"
#include "eval/metrics.h"
#include "eval/report_svg.h"
#include "eval/task.h"

namespace vinci::cli {

namespace {
struct ReportOptions {
  std::string results, out_dir = ".", tasks, baseline = "eager";
  bool json = false;
};

int run_report(const ReportOptions& o) {
  const auto results = eval::read_results_jsonl(o.results);
  std::map<int, std::vector<std::string>> per_level;
  if (!o.tasks.empty())
    for (const auto& t : eval::load_suite(o.tasks).tasks) per_level[t.level].push_back(t.id);
  const eval::Baseline b = eval::baseline_from_string(o.baseline);
  const std::filesystem::path dir(o.out_dir);
  core::write_file_atomic(dir / "fast_p.svg", eval::fast_p_curve_svg(results, per_level, b));
  core::write_file_atomic(dir / "speedups.svg", eval::speedup_histogram_svg(results, b));
  const eval::Summary s = eval::summarize(results, per_level, b);
  if (o.json)
    fmt::print("{}\n", eval::to_json(s).dump());
  else
    fmt::print("{}wrote {} and {}\n", eval::format_table(s), (dir / "fast_p.svg").string(),
               (dir / "speedups.svg").string());
  return 0;
}
}  // namespace

Action add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  app.add_option("results", o->results, "a results.jsonl written by vinci eval --out")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--out-dir", o->out_dir, "where fast_p.svg and speedups.svg go")->capture_default_str();
  app.add_option("--tasks", o->tasks, "the task suite, so that tasks without a result count as failures");
  app.add_option("--baseline", o->baseline, "eager or compile")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->capture_default_str();
  app.add_flag("--json", o->json, "print the summary as JSON instead of a table");
  return [o] { return run_report(*o); };
}

}  // namespace vinci::cli
