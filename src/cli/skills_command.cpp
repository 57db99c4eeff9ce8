// vinci skills: inspect, search, import and export the skill library.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/checks.h"
#include "cli/commands.h"
#include "cli/skills_db.h"
#include "core/files.h"
#include "skills/library.h"
#include "skills/prune.h"
#include "skills/skill_jsonl.h"
#include "skills/store.h"

namespace vinci::cli {

namespace fs = std::filesystem;
using namespace vinci::skills;
using nlohmann::json;

namespace {

struct SkillsOptions {
  std::string db;
  bool json = false;
  std::string name, file, query, out, status_filter = "admitted", backend, arch, variant = "lucene";
  size_t k = 10;
  std::optional<int64_t> step;
  bool rename_duplicates = false, dry_run = false;
  double k1 = 1.2, b = 0.75;
  PruneParams prune;
};

std::unique_ptr<SkillStore> open_store(const SkillsOptions& o, DbOpen how = DbOpen::existing) {
  return open_skills_db(o.db, how);
}

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string clip(const std::string& s, size_t n) {
  std::string one_line = s;
  for (char& c : one_line)
    if (c == '\n') c = ' ';
  return one_line.size() <= n ? one_line : one_line.substr(0, n - 3) + "...";
}

Skill require(SkillStore& store, const std::string& name) {
  auto s = store.find(name);
  if (!s)
    throw std::runtime_error(
        fmt::format("{}: no skill named '{}' (vinci skills list shows them)", store.path().string(), name));
  return *s;
}

int list(const SkillsOptions& o) {
  auto owned = open_store(o);
  SkillStore& store = *owned;
  std::optional<Status> status;
  if (o.status_filter != "all") status = status_from_string(o.status_filter);
  const auto skills = store.list(status);
  if (o.json) {
    json a = json::array();
    for (const auto& s : skills) a.push_back(to_json(s));
    fmt::print("{}\n", a.dump());
    return 0;
  }
  fmt::print("{:<40} {:<9} {:<11} {:<7} {:>6} {:>8}\n", "name", "status", "backends", "arch", "verif", "injected");
  for (const auto& s : skills)
    fmt::print("{:<40} {:<9} {:<11} {:<7} {:>6} {:>8}\n", s.name, to_string(s.status), join(s.backends), s.arch,
               s.verifications.size(), s.usage.injected);
  fmt::print("{} skills in {}\n", skills.size(), store.path().string());
  return 0;
}

int show(const SkillsOptions& o) {
  auto owned = open_store(o);
  SkillStore& store = *owned;
  const Skill s = require(store, o.name);
  if (o.json) {
    fmt::print("{}\n", to_json(s).dump(2));
    return 0;
  }
  fmt::print("# {}\n\n{}\n\nscope: {}\ntags: {}\nstatus: {}  backends: {}  arch: {}\n", s.name, s.description, s.scope,
             join(s.tags, ", "), to_string(s.status), join(s.backends), s.arch);
  for (const auto& v : s.verifications)
    fmt::print("verified on {} ({}): {:.2f}x -> {:.2f}x over {} repeats, {}\n", v.task, v.gpu, v.base_speedup,
               v.skill_speedup, v.repeats, v.correct ? "correct" : "incorrect");
  fmt::print("\n{}\n", s.content);
  return 0;
}

int search(const SkillsOptions& o) {
  auto owned = open_store(o);
  SkillStore& store = *owned;
  Bm25Params params{o.k1, o.b, bm25_variant_from_string(o.variant)};
  const Library library(store.list(), params);
  SearchFilter filter;
  filter.statuses = o.status_filter == "all" ? std::vector<Status>{} : std::vector{status_from_string(o.status_filter)};
  filter.backend = o.backend;
  filter.gpu_arch = o.arch;
  const auto hits = library.search(o.query, o.k, filter);
  if (o.json) {
    json a = json::array();
    for (const auto& h : hits)
      a.push_back({{"name", h.skill->name},
                   {"score", h.score},
                   {"description", h.skill->description},
                   {"scope", h.skill->scope},
                   {"tags", h.skill->tags}});
    fmt::print("{}\n", a.dump());
    return 0;
  }
  for (size_t i = 0; i < hits.size(); ++i)
    fmt::print("{:>2}. {:8.4f}  {:<36} {}\n", i + 1, hits[i].score, hits[i].skill->name,
               clip(hits[i].skill->description, 70));
  if (hits.empty()) fmt::print("no {} skill matches '{}'\n", o.status_filter, o.query);
  return 0;
}

int add(const SkillsOptions& o) {
  auto owned = open_store(o, DbOpen::create);
  SkillStore& store = *owned;
  json j;
  try {
    j = json::parse(core::read_file(o.file));
  } catch (const json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", o.file, e.what()));
  }
  Skill s;
  try {
    s = skill_from_json(j);
  } catch (const SkillError& e) {
    throw std::runtime_error(fmt::format("{}: {}", o.file, e.what()));
  }
  const Admission a = store.admit(std::move(s));
  if (o.json) {
    fmt::print("{}\n", json{{"name", a.name},
                            {"merged", a.merged},
                            {"merged_into", a.merged_into},
                            {"content_similarity", a.content_similarity}}
                           .dump());
  } else if (a.merged) {
    fmt::print("'{}' is a near duplicate of '{}' (content similarity {:.2f}): its evidence was merged there\n", a.name,
               a.merged_into, a.content_similarity);
  } else {
    fmt::print("admitted '{}'\n", a.name);
  }
  return 0;
}

int import_file(const SkillsOptions& o) {
  auto owned = open_store(o, DbOpen::create);
  SkillStore& store = *owned;
  const auto outcome = store.import(read_skills_jsonl(o.file), o.rename_duplicates);
  if (o.json) {
    json renamed = json::array();
    for (const auto& [from, to] : outcome.renamed) renamed.push_back({{"from", from}, {"to", to}});
    fmt::print("{}\n", json{{"imported", outcome.imported}, {"renamed", renamed}}.dump());
    return 0;
  }
  for (const auto& [from, to] : outcome.renamed) fmt::print("renamed '{}' to '{}'\n", from, to);
  fmt::print("imported {} skills into {}\n", outcome.imported, store.path().string());
  return 0;
}

int export_file(const SkillsOptions& o) {
  auto owned = open_store(o);
  SkillStore& store = *owned;
  const auto skills = o.step ? store.load(*o.step) : store.list();
  if (o.out.empty() || o.out == "-") {
    fmt::print("{}", skills_to_jsonl(skills));
  } else {
    write_skills_jsonl(o.out, skills);
    fmt::print(stderr, "wrote {} skills to {}\n", skills.size(), o.out);
  }
  return 0;
}

int retire(const SkillsOptions& o) {
  auto owned = open_store(o);
  SkillStore& store = *owned;
  require(store, o.name);
  store.set_status(o.name, Status::retired);
  if (o.json)
    fmt::print("{}\n", json{{"retired", o.name}}.dump());
  else
    fmt::print("retired '{}'\n", o.name);
  return 0;
}

int stats(const SkillsOptions& o) {
  auto owned = open_store(o);
  SkillStore& store = *owned;
  const auto skills = store.list();
  std::map<std::string, size_t> by_status, by_backend;
  size_t verifications = 0;
  int64_t injected = 0;
  for (const auto& s : skills) {
    ++by_status[std::string(to_string(s.status))];
    for (const auto& b : s.backends) ++by_backend[b];
    verifications += s.verifications.size();
    injected += s.usage.injected;
  }
  const auto steps = store.snapshot_steps();
  json j = {{"db", store.path().string()}, {"skills", skills.size()},        {"by_status", by_status},
            {"by_backend", by_backend},    {"verifications", verifications}, {"injections", injected},
            {"snapshots", steps.size()}};
  j["latest_snapshot_step"] = steps.empty() ? json(nullptr) : json(steps.back());
  if (o.json) {
    fmt::print("{}\n", j.dump());
    return 0;
  }
  fmt::print("{}: {} skills\n", store.path().string(), skills.size());
  for (const auto& [k, v] : by_status) fmt::print("  {:<10} {}\n", k, v);
  for (const auto& [k, v] : by_backend) fmt::print("  backend {:<8} {}\n", k, v);
  fmt::print("  verification records {}, injections {}\n", verifications, injected);
  fmt::print("  snapshots {}{}\n", steps.size(),
             steps.empty() ? "" : fmt::format(" (latest at step {})", steps.back()));
  return 0;
}

int prune(const SkillsOptions& o) {
  auto owned = open_store(o);
  SkillStore& store = *owned;
  const auto decisions = decide_pruning(store.list(Status::admitted), o.prune);
  size_t retired = 0;
  for (const auto& d : decisions)
    if (d.retire) ++retired;
  if (!o.dry_run && retired > 0) {
    for (const auto& d : decisions)
      if (d.retire) store.set_status(d.name, Status::retired);
  }
  if (o.json) {
    json a = json::array();
    for (const auto& d : decisions) a.push_back({{"name", d.name}, {"retire", d.retire}, {"reason", d.reason}});
    fmt::print("{}\n", json{{"dry_run", o.dry_run}, {"decisions", a}}.dump());
    return 0;
  }
  for (const auto& d : decisions)
    if (d.retire) fmt::print("{} {:<40} {}\n", o.dry_run ? "would retire" : "retired", d.name, d.reason);
  fmt::print("{} of {} admitted skills {}\n", retired, decisions.size(), o.dry_run ? "would be retired" : "retired");
  return 0;
}

}  // namespace

Action add_skills_command(CLI::App& app) {
  auto o = std::make_shared<SkillsOptions>();
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--db", o->db,
                 "the library's SQLite file (default: $VINCI_SKILLS_DB, else "
                 "$XDG_DATA_HOME/vinci/skills.db, seeded from skills/seed.jsonl)");
  app.add_flag("--json", o->json, "machine-readable output");
  std::map<CLI::App*, std::function<int(const SkillsOptions&)>> actions;
  const auto status_option = [&](CLI::App* sub, const char* what) {
    sub->add_option("--status", o->status_filter, what)
        ->check(CLI::IsMember({"admitted", "candidate", "retired", "all"}))
        ->capture_default_str();
  };

  auto* l = app.add_subcommand("list", "list the skills");
  status_option(l, "which skills to list");
  actions[l] = list;

  auto* sh = app.add_subcommand("show", "print one skill in full");
  sh->add_option("name", o->name, "the skill's name")->required();
  actions[sh] = show;

  auto* se = app.add_subcommand("search", "BM25 search over name, description, tags and content");
  se->add_option("query", o->query, "words, identifiers or a task description")->required();
  se->add_option("-k", o->k, "how many results")->check(at_least(1))->capture_default_str();
  status_option(se, "which skills to search");
  se->add_option("--backend", o->backend, "only skills for this backend")->check(CLI::IsMember({"cuda", "triton"}));
  se->add_option("--arch", o->arch, "only skills that run on this GPU arch, e.g. sm_90");
  se->add_option("--variant", o->variant, "BM25 variant")
      ->check(CLI::IsMember({"lucene", "robertson"}))
      ->capture_default_str();
  se->add_option("--k1", o->k1, "BM25 term-frequency saturation")->capture_default_str();
  se->add_option("--b", o->b, "BM25 length normalization")->capture_default_str();
  actions[se] = search;

  auto* a = app.add_subcommand("add", "admit one skill from a JSON file (a near duplicate merges into its twin)");
  a->add_option("file", o->file, "a JSON object with name, description, scope, tags, content")
      ->required()
      ->check(CLI::ExistingFile);
  actions[a] = add;

  auto* im = app.add_subcommand("import", "import a JSONL library in one transaction (all lines or none)");
  im->add_option("file", o->file, "daVinci-format JSONL")->required()->check(CLI::ExistingFile);
  im->add_flag("--rename-duplicates", o->rename_duplicates,
               "import a taken name as name_1, name_2, ... instead of failing");
  actions[im] = import_file;

  auto* ex = app.add_subcommand("export", "write the library (or a training snapshot) as JSONL");
  ex->add_option("--step", o->step, "export the snapshot at or before this training step");
  ex->add_option("-o,--out", o->out, "output file (default: stdout)");
  actions[ex] = export_file;

  auto* r = app.add_subcommand("retire", "retire a skill: kept for the record, never retrieved");
  r->add_option("name", o->name, "the skill's name")->required();
  actions[r] = retire;

  auto* st = app.add_subcommand("stats", "counts, evidence and snapshots");
  actions[st] = stats;

  auto* p = app.add_subcommand("prune", "retire admitted skills whose injection does not raise the reward");
  p->add_flag("--dry-run", o->dry_run, "show what would be retired and why, change nothing");
  p->add_option("--min-injected", o->prune.min_injected, "rewarded injections needed before judging")
      ->capture_default_str();
  p->add_option("--min-not-injected", o->prune.min_not_injected, "rollouts without the skill needed to compare")
      ->capture_default_str();
  p->add_option("--min-gain", o->prune.min_gain, "retire when mean reward with - without is below this")
      ->capture_default_str();
  actions[p] = prune;

  return [o, actions] {
    for (const auto& [sub, action] : actions)
      if (sub->parsed()) return action(*o);
    return 1;
  };
}

}  // namespace vinci::cli
