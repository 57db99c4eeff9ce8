// One function per subcommand: it adds its options to the app and returns the action to run.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace vinci::cli {

using Action = std::function<int()>;

Action add_eval_command(CLI::App& app);
Action add_report_command(CLI::App& app);
Action add_skills_command(CLI::App& app);
Action add_generate_command(CLI::App& app);
Action add_tokenize_command(CLI::App& app);
Action add_chat_command(CLI::App& app);
Action add_optimize_command(CLI::App& app);
Action add_bench_model_command(CLI::App& app);
Action add_serve_command(CLI::App& app);
Action add_train_command(CLI::App& app);
Action add_plot_command(CLI::App& app);
Action add_curriculum_command(CLI::App& app);
Action add_teach_command(CLI::App& app);
Action add_init_model_command(CLI::App& app);
Action add_sft_data_command(CLI::App& app);
Action add_worker_command(CLI::App& app);

}  // namespace vinci::cli
