// vinci plot metrics.jsonl: a training run's curves as one SVG (one chart per metric).
#include <fmt/format.h>

#include "cli/commands.h"
#include "core/files.h"
#include "rl/metrics_plot.h"

namespace vinci::cli {

namespace {

struct PlotOptions {
  std::string metrics, out, title;
  std::vector<std::string> keys;
};

int run_plot(const PlotOptions& o) {
  const auto rows = rl::read_metrics_jsonl(o.metrics);
  const std::string out = o.out.empty() ? std::filesystem::path(o.metrics).replace_extension(".svg").string() : o.out;
  core::write_file_atomic(out, rl::metrics_svg(rows, o.keys, o.title.empty() ? o.metrics : o.title));
  fmt::print("{} steps plotted in {}\n", rows.size(), out);
  return 0;
}

}  // namespace

Action add_plot_command(CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  app.add_option("metrics", o->metrics, "a metrics.jsonl of vinci train (one JSON object per step)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--out", o->out, "the SVG to write (default: the metrics file with .svg)");
  app.add_option("--keys", o->keys, "the fields to plot, in order (default: every numeric field)")->delimiter(',');
  app.add_option("--title", o->title, "the chart's title (default: the file name)");
  return [o] { return run_plot(*o); };
}

}  // namespace vinci::cli
