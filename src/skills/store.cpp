#include "skills/store.h"

#include <cstdlib>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "core/hash.h"

namespace vinci::skills {

using nlohmann::json;

namespace {

// Each entry moves the schema one version forward; never edit one that has shipped.
const std::vector<std::string> kMigrations = {
    R"sql(
CREATE TABLE skills (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  scope TEXT NOT NULL,
  tags TEXT NOT NULL,
  content TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('candidate', 'admitted', 'retired')),
  backends TEXT NOT NULL,
  arch TEXT NOT NULL,
  provenance TEXT NOT NULL,
  selected INTEGER NOT NULL DEFAULT 0,
  injected INTEGER NOT NULL DEFAULT 0,
  reward_injected_sum REAL NOT NULL DEFAULT 0,
  reward_injected_count INTEGER NOT NULL DEFAULT 0,
  reward_not_injected_sum REAL NOT NULL DEFAULT 0,
  reward_not_injected_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE verifications (
  id INTEGER PRIMARY KEY,
  skill_id INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  task TEXT NOT NULL,
  base_speedup REAL NOT NULL,
  skill_speedup REAL NOT NULL,
  repeats INTEGER NOT NULL,
  correct INTEGER NOT NULL,
  gpu TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX verifications_by_skill ON verifications(skill_id);
)sql",
    // Snapshots store each skill's text by content hash, so a skill unchanged across a thousand
    // steps is stored once.
    R"sql(
CREATE TABLE skill_texts (
  hash TEXT PRIMARY KEY,
  text TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE snapshots (
  step INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL
);
CREATE TABLE snapshot_skills (
  step INTEGER NOT NULL REFERENCES snapshots(step) ON DELETE CASCADE,
  skill_id INTEGER NOT NULL REFERENCES skills(id),
  text_hash TEXT NOT NULL REFERENCES skill_texts(hash),
  PRIMARY KEY (step, skill_id)
) WITHOUT ROWID;
)sql",
};

const char* kColumns =
    "id, name, description, scope, tags, content, status, backends, arch, provenance, selected, injected, "
    "reward_injected_sum, reward_injected_count, reward_not_injected_sum, reward_not_injected_count, created_at, "
    "updated_at";

// The part of a skill that a policy reads, which a snapshot must reproduce exactly.
json text_of(const Skill& s) {
  return {{"name", s.name},       {"description", s.description}, {"scope", s.scope}, {"tags", s.tags},
          {"content", s.content}, {"backends", s.backends},       {"arch", s.arch}};
}

void apply_text(Skill& s, const json& t) {
  s.name = t.at("name").get<std::string>();
  s.description = t.at("description").get<std::string>();
  s.scope = t.at("scope").get<std::string>();
  s.tags = t.at("tags").get<std::vector<std::string>>();
  s.content = t.at("content").get<std::string>();
  s.backends = t.at("backends").get<std::vector<std::string>>();
  s.arch = t.at("arch").get<std::string>();
}

std::string free_name(const std::string& name, const std::function<bool(const std::string&)>& taken) {
  for (int i = 1;; ++i) {
    std::string candidate = fmt::format("{}_{}", name, i);
    if (!taken(candidate)) return candidate;
  }
}

}  // namespace

SkillStore::SkillStore(const std::filesystem::path& db, DedupParams dedup) : db_(db), dedup_(dedup) {
  created_ = db_.user_version() == 0;
  db_.migrate(kMigrations);
}

std::vector<Skill> SkillStore::query(const std::string& where, const std::function<void(core::Statement&)>& bind) {
  auto s = db_.prepare(fmt::format("SELECT {} FROM skills {} ORDER BY id", kColumns, where));
  if (bind) bind(s);
  std::vector<Skill> out;
  std::unordered_map<int64_t, size_t> by_id;
  while (s.step()) {
    Skill k;
    k.id = s.integer(0);
    k.name = s.text(1);
    k.description = s.text(2);
    k.scope = s.text(3);
    k.tags = json::parse(s.text(4)).get<std::vector<std::string>>();
    k.content = s.text(5);
    k.status = status_from_string(s.text(6));
    k.backends = json::parse(s.text(7)).get<std::vector<std::string>>();
    k.arch = s.text(8);
    k.provenance = provenance_from_json(json::parse(s.text(9)));
    k.usage.selected = s.integer(10);
    k.usage.injected = s.integer(11);
    k.usage.reward_injected_sum = s.real(12);
    k.usage.reward_injected_count = s.integer(13);
    k.usage.reward_not_injected_sum = s.real(14);
    k.usage.reward_not_injected_count = s.integer(15);
    k.created_at = s.text(16);
    k.updated_at = s.text(17);
    by_id[k.id] = out.size();
    out.push_back(std::move(k));
  }
  if (out.empty()) return out;
  // One pass over the verifications rather than a query per skill.
  auto v = db_.prepare(
      "SELECT skill_id, task, base_speedup, skill_speedup, repeats, correct, gpu, at FROM verifications ORDER BY id");
  while (v.step()) {
    const auto it = by_id.find(v.integer(0));
    if (it == by_id.end()) continue;
    out[it->second].verifications.push_back(
        {v.text(1), v.real(2), v.real(3), static_cast<int>(v.integer(4)), v.integer(5) != 0, v.text(6), v.text(7)});
  }
  return out;
}

std::vector<Skill> SkillStore::list(std::optional<Status> status) {
  if (!status) return query("", nullptr);
  return query("WHERE status = ?", [&](core::Statement& s) { s.bind(1, to_string(*status)); });
}

std::optional<Skill> SkillStore::find(const std::string& name) {
  auto found = query("WHERE name = ?", [&](core::Statement& s) { s.bind(1, name); });
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

size_t SkillStore::count() {
  auto s = db_.prepare("SELECT count(*) FROM skills");
  s.step();
  return static_cast<size_t>(s.integer(0));
}

int64_t SkillStore::id_of(const std::string& name) {
  auto s = db_.prepare("SELECT id FROM skills WHERE name = ?");
  s.bind(1, name);
  if (!s.step()) throw std::runtime_error(fmt::format("{}: no skill named '{}'", path().string(), name));
  return s.integer(0);
}

Skill SkillStore::insert_locked(Skill s) {
  validate(s);
  {
    auto taken = db_.prepare("SELECT 1 FROM skills WHERE name = ?");
    taken.bind(1, s.name);
    if (taken.step())
      throw std::runtime_error(
          fmt::format("{}: a skill named '{}' is already in the library", path().string(), s.name));
  }
  const std::string now = utc_now();
  if (s.created_at.empty()) s.created_at = now;
  if (s.updated_at.empty()) s.updated_at = s.created_at;
  const Usage& u = s.usage;
  db_.prepare(
         "INSERT INTO skills (name, description, scope, tags, content, status, backends, arch, provenance, selected, "
         "injected, reward_injected_sum, reward_injected_count, reward_not_injected_sum, reward_not_injected_count, "
         "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
      .bind_all(s.name, s.description, s.scope, json(s.tags).dump(), s.content, to_string(s.status),
                json(s.backends).dump(), s.arch, to_json(s.provenance).dump(), u.selected, u.injected,
                u.reward_injected_sum, u.reward_injected_count, u.reward_not_injected_sum, u.reward_not_injected_count,
                s.created_at, s.updated_at)
      .run();
  s.id = db_.last_insert_rowid();
  insert_verifications_locked(s.id, s.verifications);
  return s;
}

Skill SkillStore::insert(Skill s) {
  Skill stored;
  db_.transaction([&] { stored = insert_locked(std::move(s)); });
  return stored;
}

ImportOutcome SkillStore::import(std::vector<Skill> skills, bool rename_duplicates) {
  ImportOutcome outcome;
  db_.transaction([&] {
    std::unordered_set<std::string> names;
    for (const auto& s : list()) names.insert(s.name);
    for (auto& s : skills) {
      if (names.count(s.name)) {
        if (!rename_duplicates)
          throw std::runtime_error(fmt::format(
              "skill '{}' is already in {} (or earlier in the file); nothing was imported. Use --rename-duplicates "
              "to import it as '{}_1'",
              s.name, path().string(), s.name));
        const std::string renamed = free_name(s.name, [&](const std::string& n) { return names.count(n) > 0; });
        outcome.renamed.emplace_back(s.name, renamed);
        s.name = renamed;
      }
      names.insert(s.name);
      s.id = 0;
      insert_locked(std::move(s));
      ++outcome.imported;
    }
  });
  return outcome;
}

void SkillStore::insert_verifications_locked(int64_t skill_id, const std::vector<Verification>& records) {
  auto add = db_.prepare(
      "INSERT INTO verifications (skill_id, task, base_speedup, skill_speedup, repeats, correct, gpu, at) "
      "VALUES (?,?,?,?,?,?,?,?)");
  for (const auto& v : records)
    add.bind_all(skill_id, v.task, v.base_speedup, v.skill_speedup, v.repeats, static_cast<int64_t>(v.correct), v.gpu,
                 v.at)
        .run();
}

void SkillStore::update_evidence_locked(const Skill& s) {
  const Usage& u = s.usage;
  db_.prepare(
         "UPDATE skills SET provenance = ?, selected = ?, injected = ?, reward_injected_sum = ?, "
         "reward_injected_count = ?, reward_not_injected_sum = ?, reward_not_injected_count = ?, updated_at = ? "
         "WHERE id = ?")
      .bind_all(to_json(s.provenance).dump(), u.selected, u.injected, u.reward_injected_sum, u.reward_injected_count,
                u.reward_not_injected_sum, u.reward_not_injected_count, utc_now(), s.id)
      .run();
  db_.prepare("DELETE FROM verifications WHERE skill_id = ?").bind_all(s.id).run();
  insert_verifications_locked(s.id, s.verifications);
}

Admission SkillStore::admit_locked(Skill s) {
  validate(s);
  Admission a;
  a.name = s.name;
  std::vector<Skill> admitted = list(Status::admitted);
  DuplicateFinder finder(dedup_);
  for (const auto& k : admitted) finder.add(k);
  if (const auto match = finder.find(s)) {
    Skill& existing = admitted[match->index];
    merge_evidence(existing, s);
    update_evidence_locked(existing);
    a.merged = true;
    a.merged_into = existing.name;
    a.content_similarity = match->content_similarity;
    return a;
  }
  s.status = Status::admitted;
  if (const auto old = find(s.name)) {
    // Same name, different content: a new version of a candidate or retired skill is admitted in
    // its place; an admitted skill's name is never silently reused.
    if (old->status == Status::admitted)
      throw std::runtime_error(
          fmt::format("{}: skill '{}' is admitted already with different content; give the new "
                      "one another name",
                      path().string(), s.name));
    db_.prepare("UPDATE skills SET name = ? WHERE id = ?")
        .bind_all(free_name(old->name + "_superseded", [&](const std::string& n) { return find(n).has_value(); }),
                  old->id)
        .run();
  }
  insert_locked(std::move(s));
  return a;
}

Admission SkillStore::admit(Skill s) {
  Admission a;
  db_.transaction([&] { a = admit_locked(std::move(s)); });
  return a;
}

void SkillStore::set_status(const std::string& name, Status status) {
  db_.transaction([&] {
    db_.prepare("UPDATE skills SET status = ?, updated_at = ? WHERE id = ?")
        .bind_all(to_string(status), utc_now(), id_of(name))
        .run();
  });
}

void SkillStore::add_verification(const std::string& name, const Verification& v) {
  db_.transaction([&] {
    const int64_t id = id_of(name);
    Verification stamped = v;
    if (stamped.at.empty()) stamped.at = utc_now();
    insert_verifications_locked(id, {stamped});
    db_.prepare("UPDATE skills SET updated_at = ? WHERE id = ?").bind_all(utc_now(), id).run();
  });
}

void SkillStore::add_usage(const std::string& name, const Usage& d) {
  db_.transaction([&] {
    db_.prepare(
           "UPDATE skills SET selected = selected + ?, injected = injected + ?, "
           "reward_injected_sum = reward_injected_sum + ?, reward_injected_count = reward_injected_count + ?, "
           "reward_not_injected_sum = reward_not_injected_sum + ?, "
           "reward_not_injected_count = reward_not_injected_count + ?, updated_at = ? WHERE id = ?")
        .bind_all(d.selected, d.injected, d.reward_injected_sum, d.reward_injected_count, d.reward_not_injected_sum,
                  d.reward_not_injected_count, utc_now(), id_of(name))
        .run();
  });
}

void SkillStore::stage(Skill s) {
  validate(s);
  staged_.push_back(std::move(s));
}

FlushOutcome SkillStore::flush(int64_t step) {
  FlushOutcome out;
  out.step = step;
  db_.transaction([&] {
    {
      auto later = db_.prepare("SELECT count(*) FROM snapshots WHERE step >= ?");
      later.bind(1, step);
      later.step();
      out.later_snapshots_dropped = static_cast<size_t>(later.integer(0));
    }
    db_.prepare("DELETE FROM snapshots WHERE step >= ?").bind_all(step).run();
    for (auto& s : staged_) {
      if (!s.provenance.training_step) s.provenance.training_step = step;
      out.admissions.push_back(admit_locked(s));
    }
    db_.prepare("INSERT INTO snapshots (step, created_at) VALUES (?, ?)").bind_all(step, utc_now()).run();
    auto text = db_.prepare("INSERT OR IGNORE INTO skill_texts (hash, text) VALUES (?, ?)");
    auto member = db_.prepare("INSERT INTO snapshot_skills (step, skill_id, text_hash) VALUES (?, ?, ?)");
    for (const auto& s : list(Status::admitted)) {
      const std::string t = text_of(s).dump();
      const std::string hash = core::content_hash(t);
      text.bind_all(hash, t).run();
      member.bind_all(step, s.id, hash).run();
      ++out.skills_in_snapshot;
    }
  });
  staged_.clear();  // only once the transaction has committed: a failed flush keeps them staged
  return out;
}

std::vector<int64_t> SkillStore::snapshot_steps() {
  std::vector<int64_t> steps;
  auto s = db_.prepare("SELECT step FROM snapshots ORDER BY step");
  while (s.step()) steps.push_back(s.integer(0));
  return steps;
}

std::optional<int64_t> SkillStore::snapshot_at(int64_t step) {
  auto s = db_.prepare("SELECT max(step) FROM snapshots WHERE step <= ?");
  s.bind(1, step);
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return s.integer(0);
}

std::vector<Skill> SkillStore::load(int64_t step) {
  const auto at = snapshot_at(step);
  if (!at) {
    const auto steps = snapshot_steps();
    throw std::runtime_error(fmt::format("{}: no skill snapshot at or before step {} ({})", path().string(), step,
                                         steps.empty() ? "the library has no snapshots; flush one first"
                                                       : fmt::format("the first is step {}", steps.front())));
  }
  std::unordered_map<int64_t, std::string> texts;
  auto s = db_.prepare(
      "SELECT m.skill_id, t.text FROM snapshot_skills m JOIN skill_texts t ON t.hash = m.text_hash WHERE m.step = ?");
  s.bind(1, *at);
  while (s.step()) texts.emplace(s.integer(0), s.text(1));
  std::vector<Skill> skills;
  for (auto& k : query("", nullptr)) {
    const auto it = texts.find(k.id);
    if (it == texts.end()) continue;
    apply_text(k, json::parse(it->second));
    k.status = Status::admitted;
    skills.push_back(std::move(k));
  }
  return skills;
}

std::filesystem::path default_skills_db() {
  if (const char* p = std::getenv("VINCI_SKILLS_DB"); p && *p) return p;
  if (const char* p = std::getenv("XDG_DATA_HOME"); p && *p) return std::filesystem::path(p) / "vinci" / "skills.db";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".local" / "share" / "vinci" / "skills.db";
}

}  // namespace vinci::skills
