// The curriculum generator (curriculum/generator.h): a seed names one curriculum, the counts are the
// ones asked for, every held-out task composes training's ops in a way no training task does, and
// the folder is written whole or not at all.
#include "curriculum/generator.h"

#include <gtest/gtest.h>

#include <set>

#include "core/files.h"
#include "core/setup_error.h"
#include "curriculum/composition_split.h"
#include "curriculum/manifest.h"
#include "curriculum/task_source.h"
#include "support/temp_dir.h"

namespace generator_test {
namespace fs = std::filesystem;
using namespace vinci::curriculum;

std::string joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += t + " ";
  return out;
}

TEST(Curriculum, ASeedNamesOneCurriculum) {
  CurriculumConfig c;
  c.seed = 11;
  const auto a = generate_curriculum(c), b = generate_curriculum(c);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(manifest_record(a[i]), manifest_record(b[i]));
  }
  c.seed = 12;
  const auto other = generate_curriculum(c);
  size_t same = 0;
  for (size_t i = 0; i < std::min(a.size(), other.size()); ++i) same += a[i].id == other[i].id;
  EXPECT_LT(same, a.size() / 2);
}

TEST(Curriculum, HeldOutTasksComposeTrainingOpsInUnseenWays) {
  CurriculumConfig c;
  c.seed = 3;
  c.elementwise_tasks = 60;
  c.rowwise_tasks = 40;
  c.heldout_share = 0.25;
  const auto tasks = generate_curriculum(c);
  ASSERT_EQ(tasks.size(), 100u);
  const CompositionSplit split(c.seed, c.pair_share);
  std::set<std::pair<std::string, std::string>> train_pairs;
  std::set<std::string> train_tokens, train_compositions, all_compositions;
  std::map<std::pair<Family, bool>, int> counts;
  for (const auto& t : tasks) {
    ++counts[{t.spec.family, t.held_out}];
    const auto tokens = t.spec.tokens();
    EXPECT_TRUE(all_compositions.insert(joined(tokens)).second) << "a composition twice: " << t.id;
    if (t.held_out) continue;
    EXPECT_TRUE(split.trains(tokens)) << t.id;
    train_compositions.insert(joined(tokens));
    train_tokens.insert(tokens.begin(), tokens.end());
    for (size_t i = 1; i < tokens.size(); ++i) train_pairs.insert({tokens[i - 1], tokens[i]});
  }
  EXPECT_EQ((counts[{Family::elementwise, false}]), 45);
  EXPECT_EQ((counts[{Family::elementwise, true}]), 15);
  EXPECT_EQ((counts[{Family::rowwise, false}]), 30);
  EXPECT_EQ((counts[{Family::rowwise, true}]), 10);
  for (const auto& t : tasks) {
    if (!t.held_out) continue;
    const auto tokens = t.spec.tokens();
    EXPECT_FALSE(train_compositions.contains(joined(tokens))) << t.id;
    bool unseen_pair = false;
    for (size_t i = 1; i < tokens.size(); ++i) unseen_pair |= !train_pairs.contains({tokens[i - 1], tokens[i]});
    EXPECT_TRUE(unseen_pair) << t.id << ": every adjacent pair also occurs in training";
    for (const auto& tok : tokens) EXPECT_TRUE(train_tokens.contains(tok)) << t.id << ": " << tok << " never trains";
  }
}

TEST(Curriculum, EveryTaskIsWithinTheConfiguredShapesAndLengths) {
  CurriculumConfig c;
  c.max_chain = 3;
  c.max_prologue = 1;
  c.rows = {64};
  c.cols = {128, 256};
  for (const auto& t : generate_curriculum(c)) {
    EXPECT_EQ(t.spec.rows, 64) << t.id;
    EXPECT_TRUE(t.spec.cols == 128 || t.spec.cols == 256) << t.id;
    if (t.spec.family == Family::elementwise) {
      EXPECT_GE(t.spec.chain.size(), 1u);
      EXPECT_LE(t.spec.chain.size(), 3u);
    } else {
      EXPECT_LE(t.spec.chain.size(), 1u);
    }
    for (size_t i = 1; i < t.spec.chain.size(); ++i) EXPECT_NE(t.spec.chain[i].op, t.spec.chain[i - 1].op) << t.id;
    EXPECT_EQ(t.id.rfind(t.spec.level() == 1 ? "level1/" : "level2/", 0), 0u) << t.id;
  }
}

TEST(Curriculum, LongRowTasksComeLastAndChangeNoOtherTask) {
  CurriculumConfig c;
  c.elementwise_tasks = 12;
  c.rowwise_tasks = 12;
  const auto before = generate_curriculum(c);
  c.long_row_tasks = 8;
  c.long_rows = {64};
  c.long_cols = {32768, 65536};
  const auto after = generate_curriculum(c);
  ASSERT_EQ(after.size(), before.size() + 8);
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_EQ(after[i].spec.tokens(), before[i].spec.tokens());
    EXPECT_FALSE(after[i].spec.long_rows()) << after[i].id;
  }
  for (size_t i = before.size(); i < after.size(); ++i) {
    const TaskSpec& s = after[i].spec;
    EXPECT_TRUE(s.long_rows() && s.family == Family::rowwise) << after[i].id;
    EXPECT_EQ(s.rows, 64);
    EXPECT_TRUE(s.cols == 32768 || s.cols == 65536) << after[i].id;
    EXPECT_EQ(s.tokens().front(), "long_rows");
    EXPECT_NE(after[i].id.find("_LongRows"), std::string::npos) << after[i].id;
  }
  c.cols = {32768};
  EXPECT_THROW(generate_curriculum(c), vinci::core::SetupError) << "rows longer than a tile are long-row tasks";
}

TEST(Curriculum, ShortRowTasksComeAfterLongRowsAndChangeNoOtherTask) {
  CurriculumConfig c;
  c.elementwise_tasks = 12;
  c.rowwise_tasks = 12;
  c.long_row_tasks = 8;
  const auto before = generate_curriculum(c);
  c.short_row_tasks = 8;
  c.short_rows = {4096};
  c.short_cols = {16, 48};
  const auto after = generate_curriculum(c);
  ASSERT_EQ(after.size(), before.size() + 8);
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_EQ(after[i].spec.tokens(), before[i].spec.tokens());
    EXPECT_FALSE(after[i].spec.short_rows()) << after[i].id;
  }
  for (size_t i = before.size(); i < after.size(); ++i) {
    const TaskSpec& s = after[i].spec;
    EXPECT_TRUE(s.short_rows() && s.family == Family::rowwise) << after[i].id;
    EXPECT_EQ(s.rows, 4096);
    EXPECT_TRUE(s.cols == 16 || s.cols == 48) << after[i].id;
    EXPECT_EQ(s.tokens().front(), "short_rows");
    EXPECT_EQ(s.family_name(), "short-rows");
    EXPECT_NE(after[i].id.find("_ShortRows"), std::string::npos) << after[i].id;
  }
  c.cols = {64, 1024};
  EXPECT_THROW(generate_curriculum(c), vinci::core::SetupError) << "rows of 64 values are short-row tasks";
  c.rowwise_tasks = 0;
  EXPECT_NO_THROW(generate_curriculum(c)) << "elementwise tasks may be 64 columns wide";
  c.short_cols = {65};
  EXPECT_THROW(generate_curriculum(c), vinci::core::SetupError) << "short rows are at most 64 values";
}

TEST(Curriculum, MatmulTasksComeLastWithTheirEpilogueAndChangeNoOtherTask) {
  CurriculumConfig c;
  c.elementwise_tasks = 12;
  c.rowwise_tasks = 12;
  c.short_row_tasks = 8;
  const auto before = generate_curriculum(c);
  c.matmul_tasks = 12;
  c.max_epilogue = 2;
  c.matmul_rows = {256};
  c.matmul_cols = {96};
  c.matmul_inner = {40, 72};
  const auto after = generate_curriculum(c);
  ASSERT_EQ(after.size(), before.size() + 12);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i].id, before[i].id);
  size_t held_out = 0;
  for (size_t i = before.size(); i < after.size(); ++i) {
    const TaskSpec& s = after[i].spec;
    EXPECT_EQ(s.family, Family::matmul) << after[i].id;
    EXPECT_TRUE(s.rows == 256 && s.cols == 96 && (s.inner == 40 || s.inner == 72)) << after[i].id;
    EXPECT_TRUE(!s.chain.empty() && s.chain.size() <= 2) << after[i].id;
    EXPECT_EQ(s.tokens().front(), "linear");
    EXPECT_EQ(after[i].id.rfind("level2/", 0), 0u) << after[i].id;
    EXPECT_NE(after[i].id.find("_Linear"), std::string::npos) << after[i].id;
    held_out += after[i].held_out;
  }
  EXPECT_EQ(held_out, 3u) << "a quarter of the family is held out";
  c.max_epilogue = 0;
  EXPECT_THROW(generate_curriculum(c), vinci::core::SetupError) << "an epilogue has at least one op";
}

TEST(Curriculum, AskingForMoreThanTheVocabularyHoldsFailsNamingIt) {
  CurriculumConfig c;
  c.max_chain = 1;  // 10 single-op chains exist, and none can be held out (no pairs)
  c.elementwise_tasks = 10;
  c.rowwise_tasks = 0;
  c.heldout_share = 0.2;
  try {
    generate_curriculum(c);
    ADD_FAILURE() << "no error";
  } catch (const vinci::core::SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("held-out elementwise compositions"), std::string::npos) << e.what();
  }
  c.max_chain = 0;
  EXPECT_THROW(generate_curriculum(c), vinci::core::SetupError);
}

TEST(Curriculum, TheFolderIsWrittenWholeOrNotAtAll) {
  vinci::test::TempDir dir("curriculum");
  CurriculumConfig c;
  c.elementwise_tasks = 8;
  c.rowwise_tasks = 8;
  const auto tasks = generate_curriculum(c);
  const fs::path out = dir.path() / "cur";
  write_curriculum(tasks, out);
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(out)) files += e.path().extension() == ".py";
  EXPECT_EQ(files, tasks.size());
  const auto lines = vinci::core::read_jsonl_lines(out / "curriculum.jsonl");
  ASSERT_EQ(lines.size(), tasks.size());
  for (const auto& t : tasks)
    EXPECT_EQ(vinci::core::read_file(out / (t.held_out ? "heldout" : "train") / (t.id + ".py")), task_source(t.spec));
  // A second write to the same folder is refused and leaves it as it was, with no staging folder.
  EXPECT_THROW(write_curriculum(tasks, out), vinci::core::SetupError);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

}  // namespace generator_test
