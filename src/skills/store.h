// The skill library on disk: SQLite in WAL mode, every change one transaction.
//
// The skill library on disk: SQLite in WAL mode, every change one transaction, so a process killed
// mid-write leaves the library as it was before that change or after it, never between.
//
// Training sees the library through snapshots: admitted skills are staged in memory and written
// only by flush(step), which also records the set of skills (and their exact text) at that step;
// load(step) gives back that set, so a resumed run sees exactly the library it had.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/sqlite.h"
#include "skills/dedup.h"
#include "skills/skill.h"

namespace vinci::skills {

// What became of a skill offered for admission.
struct Admission {
  std::string name;     // the skill as offered
  bool merged = false;  // a near duplicate: its evidence went into merged_into
  std::string merged_into;
  double content_similarity = 0;
};

struct ImportOutcome {
  size_t imported = 0;
  std::vector<std::pair<std::string, std::string>> renamed;  // from, to
};

struct FlushOutcome {
  int64_t step = 0;
  std::vector<Admission> admissions;
  size_t skills_in_snapshot = 0;
  size_t later_snapshots_dropped = 0;  // snapshots after step, from a run that was resumed earlier
};

class SkillStore {
 public:
  explicit SkillStore(const std::filesystem::path& db, DedupParams dedup = {});
  const std::filesystem::path& path() const { return db_.path(); }
  bool created() const { return created_; }  // the file had no schema before this open

  std::vector<Skill> list(std::optional<Status> status = std::nullopt);
  std::optional<Skill> find(const std::string& name);
  size_t count();

  // Stores a new skill as given (validated; created_at/updated_at set when empty). A name that is
  // taken throws, naming it.
  Skill insert(Skill s);
  // All or nothing. A name already taken (in the store or earlier in the list) throws, unless
  // rename_duplicates, which gives it the first free suffix _1, _2, …
  ImportOutcome import(std::vector<Skill> skills, bool rename_duplicates);
  // Admits one skill now, outside training: a near duplicate of an admitted skill is merged into it.
  Admission admit(Skill s);

  void set_status(const std::string& name, Status status);
  void add_verification(const std::string& name, const Verification& v);
  // Adds to the usage sums (the agents call this after each rollout).
  void add_usage(const std::string& name, const Usage& delta);

  // Snapshots.
  void stage(Skill s);
  const std::vector<Skill>& staged() const { return staged_; }
  void discard_staged() { staged_.clear(); }
  // One transaction: admits the staged skills (near duplicates merge), then records every admitted
  // skill and its text as the snapshot of step. Snapshots after step are dropped: they belong to
  // a run that has since been resumed from an earlier step.
  FlushOutcome flush(int64_t step);
  std::vector<int64_t> snapshot_steps();
  // The step of the latest snapshot at or before step, if any.
  std::optional<int64_t> snapshot_at(int64_t step);
  // The library as of the latest snapshot at or before step (admitted skills with the text they
  // had then). Throws when there is none.
  std::vector<Skill> load(int64_t step);

 private:
  Skill insert_locked(Skill s);
  Admission admit_locked(Skill s);
  void update_evidence_locked(const Skill& s);
  void insert_verifications_locked(int64_t skill_id, const std::vector<Verification>& records);
  std::vector<Skill> query(const std::string& where, const std::function<void(core::Statement&)>& bind);
  int64_t id_of(const std::string& name);

  core::Database db_;
  DedupParams dedup_;
  bool created_ = false;
  std::vector<Skill> staged_;
};

// Where `vinci skills` keeps its library when --db is not given:
// $VINCI_SKILLS_DB, else $XDG_DATA_HOME/vinci/skills.db, else ~/.local/share/vinci/skills.db.
std::filesystem::path default_skills_db();

}  // namespace vinci::skills
