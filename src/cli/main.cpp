// The vinci binary: its subcommands, and errors mapped to the README's exit codes.
//
// vinci: GPU kernels made faster by LLM agents, judged by an evaluator that cannot be fooled.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/headeronly/version.h>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "core/setup_error.h"

namespace {

// Exit codes (README: "Exit codes").
constexpr int kRunFailed = 1, kSetupError = 4, kUsage = 64;

std::string version_text() {
  std::string cuda = "not built in";
  try {
    const long v = at::detail::getCUDAHooks().versionCUDART();
    if (v > 0) cuda = fmt::format("{}.{}", v / 1000, v % 1000 / 10);
  } catch (const std::exception&) {
  }
  const int gpus = at::hasCUDA() ? static_cast<int>(at::detail::getCUDAHooks().deviceCount()) : 0;
  return fmt::format("vinci {} (commit {})\ntorch {}, CUDA runtime {}\nGPUs seen: {}", vinci::cli::vinci_version(),
                     vinci::cli::vinci_commit(), TORCH_VERSION, cuda, gpus);
}

// The first word that is not an option must name a subcommand (CLI11 says only that one is required).
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), a) != names.end()) return "";
    return fmt::format("unknown subcommand '{}': one of {}", a, fmt::join(names, ", "));
  }
  return "";
}

// Arguments no option took, anywhere in the parsed chain: CLI11 checks required options first, so
// `eval --bogus` would otherwise say "--tasks is required" and never name the real mistake.
std::vector<std::string> unexpected(const CLI::App& app) {
  std::vector<std::string> out = app.remaining();
  for (const auto* sub : app.get_subcommands())
    for (auto& a : unexpected(*sub)) out.push_back(a);
  return out;
}

}  // namespace

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
  auto* bench_model =
      app.add_subcommand("bench-model", "a model's pass@k and fast_p over a task suite (KernelBench protocol)");
  actions[bench_model] = vinci::cli::add_bench_model_command(*bench_model);
  auto* serve = app.add_subcommand("serve", "an OpenAI-compatible server over a checkpoint (native backbone)");
  actions[serve] = vinci::cli::add_serve_command(*serve);
  auto* train = app.add_subcommand("train", "train the backbone: the SFT cold start (sft) and co-evolution RL (rl)");
  actions[train] = vinci::cli::add_train_command(*train);
  auto* plot = app.add_subcommand("plot", "a training run's metrics.jsonl as SVG curves");
  actions[plot] = vinci::cli::add_plot_command(*plot);
  auto* curriculum =
      app.add_subcommand("curriculum", "write a procedural kernel curriculum: train and held-out task suites");
  actions[curriculum] = vinci::cli::add_curriculum_command(*curriculum);
  auto* teach = app.add_subcommand("teach", "the procedural teacher's Triton solutions of a curriculum, by strategy");
  actions[teach] = vinci::cli::add_teach_command(*teach);
  auto* init_model = app.add_subcommand(
      "init-model", "a checkpoint with random weights from a config and a tokenizer, to train from nothing");
  actions[init_model] = vinci::cli::add_init_model_command(*init_model);
  auto* sft_data = app.add_subcommand(
      "sft-data", "SFT data: the procedural teacher run through the agents on a curriculum, with real evaluation");
  actions[sft_data] = vinci::cli::add_sft_data_command(*sft_data);
  auto* worker = app.add_subcommand(
      "worker",
      "serve evaluations from a Redis queue on this host, one consumer per GPU (--status: the queue's state)");
  actions[worker] = vinci::cli::add_worker_command(*worker);
  app.set_version_flag("--version", version_text, "vinci's version and commit, torch, CUDA and the GPUs seen");
  if (const auto why = unknown_subcommand(app, argc, argv); !why.empty()) {
    fmt::print(stderr, "vinci: {}\nRun with --help for more information.\n", why);
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (const auto extra = unexpected(app); !extra.empty() && dynamic_cast<const CLI::RequiredError*>(&e)) {
      fmt::print(stderr, "vinci: unknown option or argument: {}\nRun with --help for more information.\n",
                 fmt::join(extra, " "));
      return kUsage;
    }
    app.exit(e);
    return kUsage;
  }
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(spdlog::stderr_color_mt("vinci"));
  spdlog::set_pattern("%^%l%$: %v");
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const vinci::core::SetupError& e) {
    fmt::print(stderr, "vinci: error: {}\n", e.what());
    return kSetupError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "vinci: error: {}\n", e.what());
    return kRunFailed;
  }
  return 0;
}
