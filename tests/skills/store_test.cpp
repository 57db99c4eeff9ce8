#include "skills/store.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "core/files.h"
#include "skills/skill_jsonl.h"

namespace fs = std::filesystem;
using namespace vinci::skills;

namespace store_test {

const fs::path kSeed = fs::path(VINCI_SOURCE_ROOT) / "skills" / "seed.jsonl";

fs::path fresh_db(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("vinci-store-test-{}", getpid());
  fs::create_directories(dir);
  const fs::path db = dir / (name + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  return db;
}

Skill make_skill(const std::string& name, const std::string& body) {
  Skill s;
  s.name = name;
  s.description = "description of " + name;
  s.scope = "tests";
  s.tags = {"test"};
  s.content = "## Motivation\n" + body + "\n## Key Idea\n" + body + "\n## Example\n```cuda\n// " + name + "\n```\n";
  s.status = Status::admitted;
  s.backends = {"cuda"};
  return s;
}

std::vector<std::string> names(const std::vector<Skill>& skills) {
  std::vector<std::string> out;
  for (const auto& s : skills) out.push_back(s.name);
  return out;
}

void write_lines(const fs::path& file, const std::vector<std::string>& lines) {
  std::ofstream f(file);
  for (const auto& l : lines) f << l << "\n";
}

TEST(SkillStore, InsertAndFindKeepEveryField) {
  SkillStore store(fresh_db("insert"));
  EXPECT_TRUE(store.created());
  Skill s = make_skill("warp_reduce", "shuffles");
  s.provenance = {"level1/7_SumReduction", {"ep-1"}, 3, "qwen3"};
  s.verifications = {{"level1/7_SumReduction", 1.25, 1.8, 2, true, "NVIDIA H100", "2026-11-21T00:00:00.000Z"}};
  s.usage = {4, 3, 2.0, 3, 1.0, 2};
  const Skill stored = store.insert(s);
  EXPECT_GT(stored.id, 0);
  EXPECT_FALSE(stored.created_at.empty());
  const auto found = store.find("warp_reduce");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, stored);
  EXPECT_FALSE(store.find("nope"));
  EXPECT_THROW(store.insert(s), std::runtime_error);  // the name is taken
  store.add_verification("warp_reduce", {"level1/4_Softmax", 1.0, 1.3, 2, true, "NVIDIA H200", ""});
  store.add_usage("warp_reduce", {1, 1, 0.5, 1, 0, 0});
  const auto after = store.find("warp_reduce");
  EXPECT_EQ(after->verifications.size(), 2u);
  EXPECT_EQ(after->usage.injected, 4);
  EXPECT_DOUBLE_EQ(after->usage.reward_injected_sum, 2.5);
  store.set_status("warp_reduce", Status::retired);
  EXPECT_EQ(store.find("warp_reduce")->status, Status::retired);
  EXPECT_THROW(store.set_status("nope", Status::retired), std::runtime_error);
}

TEST(SkillStore, ReopeningKeepsTheSchemaAndData) {
  const fs::path db = fresh_db("reopen");
  { SkillStore(db).insert(make_skill("a_skill", "x")); }
  SkillStore again(db);
  EXPECT_FALSE(again.created());
  EXPECT_EQ(again.count(), 1u);
}

TEST(SkillStore, MalformedLineRollsBackTheWholeImport) {
  const fs::path dir = fresh_db("malformed").parent_path();
  const fs::path file = dir / "malformed.jsonl";
  const auto good = [](const std::string& name) { return skills_to_jsonl({make_skill(name, "body")}); };
  std::string g1 = good("first_skill"), g2 = good("second_skill");
  g1.pop_back();
  g2.pop_back();
  write_lines(file,
              {g1, g2, R"({"name":"third_skill","description":"d","content":"## Motivation\nm\n## Example\ne"})"});
  try {
    read_skills_jsonl(file);
    FAIL() << "a skill without '## Key Idea' was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("malformed.jsonl:3"), std::string::npos) << what;
    EXPECT_NE(what.find("'content'"), std::string::npos) << what;
    EXPECT_NE(what.find("Key Idea"), std::string::npos) << what;
  }
  write_lines(file, {g1, "{not json"});
  EXPECT_THROW(read_skills_jsonl(file), std::runtime_error);

  // A failure inside the store's transaction (a duplicate name, line 3) leaves nothing behind.
  SkillStore store(fresh_db("rollback"));
  store.insert(make_skill("taken_name", "x"));
  EXPECT_THROW(
      store.import({make_skill("new_one", "a"), make_skill("new_two", "b"), make_skill("taken_name", "c")}, false),
      std::runtime_error);
  EXPECT_EQ(store.count(), 1u);
  EXPECT_FALSE(store.find("new_one"));
}

TEST(SkillStore, DuplicateNamesAreRenamedOnRequest) {
  SkillStore store(fresh_db("rename"));
  store.insert(make_skill("tile_gemm", "x"));
  store.insert(make_skill("tile_gemm_1", "x"));
  const auto outcome =
      store.import({make_skill("tile_gemm", "y"), make_skill("tile_gemm", "z"), make_skill("other", "w")}, true);
  EXPECT_EQ(outcome.imported, 3u);
  ASSERT_EQ(outcome.renamed.size(), 2u);
  EXPECT_EQ(outcome.renamed[0].second, "tile_gemm_2");
  EXPECT_EQ(outcome.renamed[1].second, "tile_gemm_3");
  EXPECT_EQ(store.count(), 5u);
}

TEST(SkillStore, ExportImportsBackToTheSameLibrary) {
  SkillStore first(fresh_db("export-a"));
  first.import(read_skills_jsonl(kSeed), false);
  Skill extra = make_skill("with_evidence", "evidence");
  extra.provenance = {"level2/1_GemmBiasReLU", {"e1"}, 7, "m"};
  extra.verifications = {{"level2/1_GemmBiasReLU", 1.1, 1.6, 2, true, "gpu", "2026-11-21T00:00:00.000Z"}};
  extra.usage = {1, 2, 3, 4, 5, 6};
  first.insert(extra);
  first.set_status("with_evidence", Status::candidate);
  const fs::path file = fresh_db("export").parent_path() / "export.jsonl";
  write_skills_jsonl(file, first.list());
  SkillStore second(fresh_db("export-b"));
  second.import(read_skills_jsonl(file), false);
  auto a = first.list(), b = second.list();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i].id = b[i].id = 0;
    EXPECT_EQ(a[i], b[i]) << a[i].name;
  }
  EXPECT_EQ(skills_to_jsonl(first.list()), skills_to_jsonl(second.list()));
}

TEST(SkillStore, SnapshotsRestoreTheLibraryOfAStep) {
  SkillStore store(fresh_db("snapshots"));
  store.stage(make_skill("alpha_skill", "tiling in shared memory with padding"));
  EXPECT_EQ(store.count(), 0u);  // staged skills are not written before flush
  auto f1 = store.flush(1);
  EXPECT_EQ(f1.skills_in_snapshot, 1u);
  EXPECT_TRUE(store.staged().empty());
  store.stage(make_skill("beta_skill", "warp shuffles reduce registers"));
  store.flush(3);
  EXPECT_THROW(store.load(0), std::runtime_error);
  EXPECT_EQ(names(store.load(1)), (std::vector<std::string>{"alpha_skill"}));
  EXPECT_EQ(names(store.load(2)), (std::vector<std::string>{"alpha_skill"}));
  EXPECT_EQ(names(store.load(3)), (std::vector<std::string>{"alpha_skill", "beta_skill"}));
  EXPECT_EQ(store.load(1).front().provenance.training_step, 1);
  store.set_status("alpha_skill", Status::retired);
  store.flush(5);
  EXPECT_EQ(names(store.load(5)), (std::vector<std::string>{"beta_skill"}));
  EXPECT_EQ(names(store.load(100)), (std::vector<std::string>{"beta_skill"}));
  const auto at3 = store.load(3);
  EXPECT_EQ(at3.front().status, Status::admitted);  // as it was at step 3
  EXPECT_EQ(store.snapshot_steps(), (std::vector<int64_t>{1, 3, 5}));

  // A run resumed from step 1 flushes step 2: snapshots 3 and 5 belonged to the abandoned run.
  store.stage(make_skill("gamma_skill", "vectorized loads of float4"));
  const auto resumed = store.flush(2);
  EXPECT_EQ(resumed.later_snapshots_dropped, 2u);
  EXPECT_EQ(store.snapshot_steps(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(names(store.load(5)), (std::vector<std::string>{"beta_skill", "gamma_skill"}));
}

TEST(SkillStore, SnapshotTextIsFrozen) {
  SkillStore store(fresh_db("frozen"));
  store.stage(make_skill("old_name", "register tiling micro kernels"));
  store.flush(1);
  // A candidate under the same name is admitted later: the old skill steps aside, and the
  // snapshot of step 1 still reads the old text under the old name.
  store.set_status("old_name", Status::retired);
  Skill newer = make_skill("old_name", "a completely different body about asynchronous copies and barriers");
  store.admit(newer);
  store.flush(2);
  const auto one = store.load(1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "old_name");
  EXPECT_NE(one[0].content.find("register tiling"), std::string::npos);
  const auto two = store.load(2);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_NE(two[0].content.find("asynchronous copies"), std::string::npos);
}

TEST(SkillStore, NearDuplicatesMergeAsEvidence) {
  SkillStore store(fresh_db("dedup"));
  store.import(read_skills_jsonl(kSeed), false);
  const size_t before = store.count();
  Skill copy = *store.find("warp_shuffle_reduction");
  copy.id = 0;
  copy.name = "shuffle_based_warp_sum";
  copy.content += "\nAlso works for max.\n";
  copy.provenance.episode_ids = {"ep-42"};
  copy.verifications = {{"level1/7_SumReduction", 1.2, 1.7, 2, true, "H100", "t"}};
  const Admission a = store.admit(copy);
  EXPECT_TRUE(a.merged);
  EXPECT_EQ(a.merged_into, "warp_shuffle_reduction");
  EXPECT_EQ(store.count(), before);
  const auto merged = store.find("warp_shuffle_reduction");
  EXPECT_EQ(merged->verifications.size(), 1u);
  EXPECT_EQ(merged->provenance.episode_ids, std::vector<std::string>{"ep-42"});
  const Admission distinct = store.admit(make_skill("brand_new_idea", "nothing like the others at all"));
  EXPECT_FALSE(distinct.merged);
  EXPECT_EQ(store.count(), before + 1);
}

// A writer killed mid-import: every import is one transaction of 40 skills, so after the kill each
// batch is either whole or absent, and the store opens clean. The writer reports each committed
// batch on a pipe, and the kill follows its (round + 1)th report, when the next batch is under way,
// however loaded the machine.
TEST(SkillStore, KilledWriterNeverLeavesAHalfWrittenLibrary) {
  const fs::path db = fresh_db("crash");
  { SkillStore init(db); }
  for (int round = 0; round < 3; ++round) {
    int committed[2];
    ASSERT_EQ(pipe(committed), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(committed[0]);
      try {
        SkillStore store(db);
        for (int batch = 0;; ++batch) {
          std::vector<Skill> skills;
          for (int i = 0; i < 40; ++i)
            skills.push_back(make_skill(fmt::format("r{}_b{}_s{}", round, batch, i), std::string(2000, 'x')));
          store.import(std::move(skills), false);
          if (write(committed[1], "c", 1) != 1) _exit(4);
        }
      } catch (...) {
        _exit(3);
      }
    }
    close(committed[1]);
    char c;
    for (int reports = 0; reports <= round; ++reports)
      ASSERT_EQ(read(committed[0], &c, 1), 1) << "round " << round << ": the writer stopped before batch " << reports;
    ASSERT_EQ(kill(child, SIGKILL), 0);
    close(committed[0]);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped before it was killed (exit " << WEXITSTATUS(status) << ")";
    SkillStore store(db);  // opening runs SQLite's quick_check
    std::map<std::string, int> per_batch;
    for (const auto& s : store.list()) {
      EXPECT_NO_THROW(validate(s));
      per_batch[s.name.substr(0, s.name.rfind('_'))]++;
    }
    EXPECT_GE(per_batch.size(), static_cast<size_t>(round + 1)) << "round " << round << ": a reported batch is missing";
    for (const auto& [batch, n] : per_batch) EXPECT_EQ(n, 40) << batch;
  }
}
}  // namespace store_test
