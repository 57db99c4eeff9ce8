// vinci sft-data: the SFT cold start's data from the procedural teacher through the agents.
//
// vinci sft-data --curriculum CUR --out DIR: the SFT cold start's data from the procedural teacher
// (agents/teacher_backbone.h) run through vinci's own agents on a curriculum's training tasks, with
// real evaluation: DIR/sft.jsonl (rl/sft_data.h's format, for `vinci train sft`), DIR/episodes.jsonl
// (every call, as `vinci train rl` writes them) and DIR/candidates/. Each task's lines are appended
// as it finishes, its episode last, so an interrupted run keeps the tasks it did and --resume goes
// on with the others (a GPU job of limited length does a long run in parts).
//
// --first-turns N adds DIR/first_turns.jsonl: N first-turn policy conversations for every task of
// the split, the teacher's answers to the policy agent's own prompts, not evaluated. Evaluated data
// costs a GPU about 5 s a candidate, so a session buys a few hundred conversations; a model from
// nothing needs thousands to learn even to copy a task's ops into a kernel. These never include a
// planted wrong kernel (the teacher's others were all correct when evaluated: 170 of 170 in the
// second learning run), and they are marked "evaluated": false. Each task also gets one selection
// conversation, the teacher's select_skills call for it, and the prompts that show skills show
// the skills it picked.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agents/feedback.h"
#include "agents/lockstep.h"
#include "agents/optimizer.h"
#include "agents/policy_agent.h"
#include "agents/selection_agent.h"
#include "agents/teacher_backbone.h"
#include "cli/agent_options.h"
#include "cli/checks.h"
#include "cli/commands.h"
#include "cli/evaluator_options.h"
#include "core/files.h"
#include "core/setup_error.h"
#include "curriculum/manifest.h"
#include "eval/pool.h"
#include "rl/episode_sft.h"
#include "skills/skill_jsonl.h"

namespace vinci::cli {

namespace {

namespace fs = std::filesystem;

struct SftDataOptions {
  std::string curriculum, out, split = "train", prompts;
  std::vector<std::string> library = {(fs::path(VINCI_SOURCE_ROOT) / "skills" / "seed.jsonl").string(),
                                      (fs::path(VINCI_SOURCE_ROOT) / "skills" / "curriculum.jsonl").string()};
  std::string teacher_skills = (fs::path(VINCI_SOURCE_ROOT) / "skills" / "curriculum.jsonl").string();
  agents::TeacherSettings teacher;
  agents::OptimizeSettings settings = [] {
    agents::OptimizeSettings s;
    s.policy.turns = 3;
    return s;
  }();
  int max_tasks = 0;
  int first_turns = 0;
  bool only_first_turns = false;
  int parallel_tasks = 8;
  bool resume = false;
  EvaluatorOptions eval;
};

// The tasks an earlier run of --out finished (those whose episode line landed), with sft.jsonl cut
// back to their records: a task interrupted after some of its records were appended starts over.
std::set<std::string> finished_tasks(const fs::path& out) {
  std::set<std::string> done;
  const auto parse = [](const fs::path& file, const core::JsonlLine& line) {
    try {
      return nlohmann::json::parse(line.text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: not JSON ({}); the file is damaged, start a new --out",
                                           file.string(), line.number, e.what()));
    }
  };
  std::string episodes, sft;
  for (const auto& line : core::read_jsonl_lines(out / "episodes.jsonl")) {
    done.insert(parse(out / "episodes.jsonl", line).at("task").get<std::string>());
    episodes += line.text + "\n";
  }
  if (fs::exists(out / "sft.jsonl"))
    for (const auto& line : core::read_jsonl_lines(out / "sft.jsonl"))
      if (done.contains(parse(out / "sft.jsonl", line).at("meta").at("task").get<std::string>()))
        sft += line.text + "\n";
  core::write_file_atomic(out / "episodes.jsonl", episodes);
  core::write_file_atomic(out / "sft.jsonl", sft);
  return done;
}

// The first_turns.jsonl described at the top, written whole (it is cheap to remake); its count.
size_t write_first_turns(const SftDataOptions& o, const std::vector<curriculum::CurriculumTask>& manifest,
                         const std::vector<skills::Skill>& teacher_skills, const std::vector<eval::Task>& suite,
                         const skills::Library& library, const agents::Prompts& prompts, const fs::path& file) {
  agents::TeacherSettings settings = o.teacher;
  settings.wrong_first = 0.0;
  agents::TeacherBackbone teacher(manifest, teacher_skills, settings);
  std::string lines;
  size_t written = 0;
  const auto write = [&](nlohmann::ordered_json record) {
    record["meta"]["evaluated"] = false;
    lines += record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    ++written;
  };
  for (size_t i = 0; i < suite.size(); ++i) {
    const auto& task = suite[i];
    // One selection conversation a task, so a student trained on these alone still answers the
    // selection agent's prompt with a select_skills call; it needs no evaluation either.
    agents::SelectionSettings selection = o.settings.selection;
    selection.schemes = 1;
    selection.seed = o.settings.seed * 1000003 + i;
    auto selected = agents::select_skills(teacher, prompts, library, task, selection);
    const auto picked = agents::skills_of(library, selected.schemes.front());
    agents::Episode picks;
    picks.task = task.id;
    picks.calls = std::move(selected.calls);
    for (auto& record : rl::sft_records(picks)) write(std::move(record));

    const agents::PolicyTask policy_task{task, core::read_file(task.file), {}};
    // Every other conversation shows skills: those the selection picked, as the policy agent gets
    // them after selection, so the student learns what following a picked skill writes (the teacher
    // follows the ones it knows); when it picked none, the first 1-3 of the library's recall. The
    // student sees prompts with skills and without.
    const auto hits = picked.empty() ? library.search(policy_task.source, 3) : std::vector<skills::SearchHit>{};
    for (int k = 0; k < o.first_turns; ++k) {
      agents::Rollout rollout;
      if (k % 2 == 1 && !picked.empty()) {
        rollout.skills = picked;
      } else if (k % 2 == 1) {
        for (size_t h = 0; h < hits.size() && h <= static_cast<size_t>(k / 2) % 3; ++h)
          rollout.skills.push_back(*hits[h].skill);
      }
      llm::GenerationRequest request;
      request.messages = agents::policy_messages(prompts, policy_task, rollout, "");
      request.sampling.seed = o.settings.seed * 1000003 + i * 1009 + static_cast<uint64_t>(k);
      write(rl::policy_record(task.id, llm::to_json(request.messages), teacher.answer(request)));
    }
  }
  core::write_file_atomic(file, lines);
  return written;
}

int run_sft_data(SftDataOptions& o) {
  const fs::path out(o.out);
  if (!o.resume && fs::exists(out))
    throw core::SetupError(
        fmt::format("{}: exists; name a folder that does not exist yet, or pass --resume to go on with it", o.out));
  if (o.resume && !fs::exists(out / "episodes.jsonl"))
    throw core::SetupError(fmt::format("{}: no episodes.jsonl to resume from; run without --resume", o.out));
  const auto manifest = curriculum::read_manifest(o.curriculum);
  const auto suite = eval::load_suite(fs::path(o.curriculum) / o.split).tasks;
  const skills::Library library(skills::read_skills_jsonl(o.library));
  const auto teacher_skills = skills::read_skills_jsonl(o.teacher_skills);
  const agents::Prompts prompts(o.prompts);
  if (o.only_first_turns && o.first_turns < 1)
    throw core::SetupError("--only-first-turns needs --first-turns N of at least 1");
  if (o.first_turns > 0) {
    fs::create_directories(out);
    const size_t n = write_first_turns(o, manifest, teacher_skills, suite, library, prompts, out / "first_turns.jsonl");
    fmt::print("{} unevaluated conversations (first turns and selections) of {} tasks written to {}\n", n, suite.size(),
               (out / "first_turns.jsonl").string());
    if (o.only_first_turns) return 0;
  }
  agents::TeacherBackbone teacher(manifest, teacher_skills, o.teacher);
  eval::EvaluatorPool pool(o.eval.resolved());
  agents::PoolEvaluator evaluator(pool, [](const eval::Result& r) {
    spdlog::info("  {}: {}", fs::path(r.candidate).filename().string(), agents::outcome_line(r));
  });

  const std::set<std::string> finished = o.resume ? finished_tasks(out) : std::set<std::string>{};
  fs::create_directories(out / "candidates");
  core::LineWriter sft(out / "sft.jsonl", o.resume), episodes(out / "episodes.jsonl", o.resume);
  std::map<std::string, size_t> by_role;
  size_t done = 0, solved = 0;
  const size_t total = o.max_tasks > 0 ? std::min<size_t>(o.max_tasks, suite.size()) : suite.size();
  if (o.resume) spdlog::info("resuming: {} of {} tasks were done in {}", finished.size(), total, out.string());
  std::vector<size_t> todo;
  for (size_t i = 0; i < total; ++i)
    if (!finished.contains(suite[i].id)) todo.push_back(i);

  // Tasks run o.parallel_tasks at a time, their evaluations merged into shared pool runs; their
  // lines are written in task order as the tasks before them finish, so the files do not depend
  // on which thread finished first.
  std::vector<std::optional<agents::OptimizeOutcome>> outcomes(todo.size());
  std::mutex mu;
  size_t written = 0;
  const auto write_ready = [&] {  // under mu
    for (; written < todo.size() && outcomes[written]; ++written) {
      const auto& outcome = *outcomes[written];
      for (const auto& record : rl::sft_records(outcome.episode)) {
        sft.write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        ++by_role[record["meta"]["role"].get<std::string>()];
      }
      // Last: the episode line is what marks the task finished for --resume.
      episodes.write_line(
          agents::to_json(outcome.episode).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      ++done;
      if (const auto* best = outcome.best_turn(); best && best->speedup() > 1.0) ++solved;
      outcomes[written].reset();
    }
  };
  agents::for_each_in_lockstep(teacher, evaluator, todo.size(), o.parallel_tasks, [&](auto& me, size_t k) {
    const size_t i = todo[k];
    const auto& task = suite[i];
    spdlog::info("[{}/{}] {}", i + 1, total, task.id);
    agents::PolicyTask policy_task{task, core::read_file(task.file), out / "candidates" / eval::flat_id(task.id)};
    fs::create_directories(policy_task.candidates_dir);
    agents::OptimizeSettings settings = o.settings;
    settings.seed = o.settings.seed * 1000003 + i;
    auto outcome = agents::optimize(me, me, prompts, library, policy_task, settings);
    std::lock_guard lock(mu);
    outcomes[k] = std::move(outcome);
    write_ready();
  });
  fmt::print("{} tasks{} ({} beat eager): {} policy, {} selection and {} summary conversations added to {}\n", done,
             finished.empty() ? "" : fmt::format(" after the {} resumed", finished.size()), solved, by_role["policy"],
             by_role["selection"], by_role["summary"], (out / "sft.jsonl").string());
  return 0;
}

}  // namespace

Action add_sft_data_command(CLI::App& app) {
  auto o = std::make_shared<SftDataOptions>();
  app.add_option("--curriculum", o->curriculum, "a folder written by vinci curriculum")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--out", o->out, "the folder to create (it must not exist)")->required();
  app.add_option("--split", o->split, "which suite's tasks: train or heldout")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "heldout"}));
  app.add_option("--library", o->library, "skill JSONL files the agents retrieve from")->capture_default_str();
  app.add_option("--teacher-skills", o->teacher_skills, "the teacher's own skills, which its summaries propose")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  app.add_option("--follow-skill", o->teacher.follow_skill, "the chance a turn follows an injected skill it knows")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--wrong-first", o->teacher.wrong_first, "the chance a first turn writes a wrong kernel")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--turns", o->settings.policy.turns, "policy turns per rollout")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--samples", o->settings.samples, "rollouts per skill scheme")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--schemes", o->settings.selection.schemes, "sampled skill schemes (a null scheme is always added)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_option("--max-tasks", o->max_tasks, "at most this many tasks (0: all)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--first-turns", o->first_turns,
                 "also write N unevaluated first-turn policy conversations for every task of the split to "
                 "first_turns.jsonl (the teacher's answers, never its planted wrong ones), with one selection "
                 "conversation a task")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 16));
  app.add_flag("--only-first-turns", o->only_first_turns,
               "write first_turns.jsonl and nothing else: no evaluation, so no GPU or compiler is needed");
  app.add_option("--seed", o->settings.seed, "the teacher's and the agents' draws")->capture_default_str();
  app.add_option("--prompts", o->prompts, "a folder of prompt files overriding the shipped ones");
  app.add_option("--parallel-tasks", o->parallel_tasks,
                 "tasks run at once, their evaluations merged into one pool run (one GPU times one candidate at a "
                 "time, but builds, runner start-ups and task baselines then overlap)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_flag("--resume", o->resume,
               "go on with the run in --out: tasks whose episode it holds are kept, the others are run");
  add_evaluator_options(app, o->eval);
  return [o] {
    o->teacher.seed = o->settings.seed;
    return run_sft_data(*o);
  };
}

}  // namespace vinci::cli
