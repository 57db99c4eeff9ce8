// vinci: GPU kernels made faster by LLM agents, judged by an evaluator that cannot be fooled.
#include <csignal>
#include <cstdio>
#include <exception>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe is an error to handle, not a reason to die
  CLI::App app{"vinci: KernelBench-compatible kernel evaluation, agents and training"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "debug logging on stderr");
  std::map<CLI::App*, vinci::cli::Action> actions;
  auto* eval = app.add_subcommand("eval", "evaluate candidate kernels on a task suite (fast_p, speedups)");
  actions[eval] = vinci::cli::add_eval_command(*eval);
  auto* report = app.add_subcommand("report", "fast_p curve and speedup distribution of a results file, as SVG");
  actions[report] = vinci::cli::add_report_command(*report);
  auto* skills = app.add_subcommand("skills", "inspect, search, import and export the skill library");
  actions[skills] = vinci::cli::add_skills_command(*skills);
  auto* generate = app.add_subcommand("generate", "complete a prompt with a Hugging Face checkpoint (native backbone)");
  actions[generate] = vinci::cli::add_generate_command(*generate);
  auto* tokenize = app.add_subcommand("tokenize", "the token ids of a text under a checkpoint's tokenizer");
  actions[tokenize] = vinci::cli::add_tokenize_command(*tokenize);
  auto* chat = app.add_subcommand("chat", "talk to a checkpoint interactively, through its chat template");
  actions[chat] = vinci::cli::add_chat_command(*chat);
  auto* optimize = app.add_subcommand("optimize", "make one PyTorch op faster with the agents and the skill library");
  actions[optimize] = vinci::cli::add_optimize_command(*optimize);
  auto* bench_model = app.add_subcommand("bench-model", "a model's pass@k and fast_p over a task suite (KernelBench protocol)");
  actions[bench_model] = vinci::cli::add_bench_model_command(*bench_model);
  auto* serve = app.add_subcommand("serve", "an OpenAI-compatible server over a checkpoint (native backbone)");
  actions[serve] = vinci::cli::add_serve_command(*serve);
  auto* train = app.add_subcommand("train", "train the backbone: the SFT cold start (sft) and co-evolution RL (rl)");
  actions[train] = vinci::cli::add_train_command(*train);
  auto* plot = app.add_subcommand("plot", "a training run's metrics.jsonl as SVG curves");
  actions[plot] = vinci::cli::add_plot_command(*plot);
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(spdlog::stderr_color_mt("vinci"));
  spdlog::set_pattern("%^%l%$: %v");
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const std::exception& e) {
    fmt::print(stderr, "vinci: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
