// Near-duplicate detection on admission: MinHash estimates, name overlap, and evidence merging.
#include "skills/dedup.h"

#include <gtest/gtest.h>

#include "skills/skill_jsonl.h"

namespace dedup_test {
using namespace vinci::skills;

std::vector<Skill> seed() { return read_skills_jsonl(std::string(VINCI_SOURCE_ROOT) + "/skills/seed.jsonl"); }

Skill named(const std::string& name, const std::string& content) {
  Skill s;
  s.name = name;
  s.content = content;
  return s;
}

TEST(Dedup, MinHashEstimatesJaccard) {
  const std::string text = "a b c d e f g h i j k l m n o p q r s t";
  EXPECT_DOUBLE_EQ(estimated_jaccard(minhash_of(text, 1), minhash_of(text, 1)), 1.0);
  // Word sets {a..t} and {k..z+}: 10 shared of 30 → J = 1/3; 128 hashes estimate it within ±0.15.
  const double j = estimated_jaccard(minhash_of(text, 1), minhash_of("k l m n o p q r s t u v w x y z aa bb cc dd", 1));
  EXPECT_NEAR(j, 1.0 / 3, 0.15);
  EXPECT_DOUBLE_EQ(estimated_jaccard(minhash_of("", 3), minhash_of("", 3)), 0.0);
  EXPECT_DOUBLE_EQ(name_similarity("warp_shuffle_reduction", "warp_reduction_shuffle"), 1.0);
  EXPECT_DOUBLE_EQ(name_similarity("warp_shuffle_reduction", "block_reduction"), 0.25);
}

TEST(Dedup, TheSeedLibraryHasNoNearDuplicates) {
  const auto skills = seed();
  DuplicateFinder finder;
  for (const auto& s : skills) {
    const auto match = finder.find(s);
    EXPECT_FALSE(match) << s.name << " ~ " << skills[match->index].name << " (" << match->content_similarity << ")";
    finder.add(s);
  }
}

TEST(Dedup, AnEditedCopyIsFound) {
  const auto skills = seed();
  DuplicateFinder finder;
  for (const auto& s : skills) finder.add(s);
  Skill copy = skills[5];
  copy.name = "renamed_entirely";
  // Change one word in every 25: still the same skill.
  std::string& c = copy.content;
  size_t words = 0;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] == ' ' && ++words % 25 == 0) c.insert(i + 1, "reworded ");
  const auto match = finder.find(copy);
  ASSERT_TRUE(match);
  EXPECT_EQ(match->index, 5u);
}

TEST(Dedup, ShingleOrderMattersOnlyForShinglesLongerThanAWord) {
  // One 3-word shingle each, and they differ: no hash can agree. As single words the sets are equal.
  EXPECT_DOUBLE_EQ(estimated_jaccard(minhash_of("alpha beta gamma", 3), minhash_of("gamma beta alpha", 3)), 0.0);
  EXPECT_DOUBLE_EQ(estimated_jaccard(minhash_of("alpha beta gamma", 1), minhash_of("gamma beta alpha", 1)), 1.0);
}

TEST(Dedup, TextShorterThanAShingleStillHasASignature) {
  // Two words with 3-word shingles: the shingle shrinks to the text, so a skill this short can
  // still be recognised as itself instead of looking like nothing at all (which scores 0).
  EXPECT_DOUBLE_EQ(estimated_jaccard(minhash_of("alpha beta", 3), minhash_of("alpha beta", 3)), 1.0);
}

TEST(Dedup, NameSimilarityIsTheJaccardOfUnderscoreWords) {
  // Empty segments (doubled, leading or trailing '_') are not words.
  EXPECT_DOUBLE_EQ(name_similarity("warp__reduce_", "_warp_reduce"), 1.0);
  // {write, relu, kernel} vs {relu, kernel}: 2 shared of 3.
  EXPECT_DOUBLE_EQ(name_similarity("write_relu_kernel", "relu_kernel"), 2.0 / 3);
  EXPECT_DOUBLE_EQ(name_similarity("tiled_matmul", "warp_shuffle"), 0.0);
  // No words on either side: nothing to compare, so not similar (rather than 0/0).
  EXPECT_DOUBLE_EQ(name_similarity("", ""), 0.0);
}

TEST(Dedup, AnEmptyFinderFindsNothing) {
  const DuplicateFinder finder;
  EXPECT_FALSE(finder.find(named("warp_reduce", "any content at all")));
}

TEST(Dedup, ANameMatchLowersTheContentBar) {
  // Content alone never suffices (bar above 1); with a shared name any content does (bar 0).
  DuplicateFinder finder(DedupParams{3, 1.01, 0.0, 0.6});
  finder.add(named("write_relu_kernel", "one two three four five"));
  const auto same_name_words = finder.find(named("relu_kernel_write", "six seven eight nine ten"));
  ASSERT_TRUE(same_name_words);
  EXPECT_EQ(same_name_words->index, 0u);
  EXPECT_DOUBLE_EQ(same_name_words->name_similarity, 1.0);
  // {relu, kernel} of {write, relu, kernel, fused}: 0.5, under the 0.6 name bar.
  EXPECT_FALSE(finder.find(named("fused_relu_kernel", "one two three four five")));
}

TEST(Dedup, TheClosestOfSeveralDuplicatesWins) {
  DuplicateFinder finder(DedupParams{1, 0.3, 0.3, 0.6});
  finder.add(named("first", "a b c d e f g h"));                   // shares half the words
  finder.add(named("second", "a b c d e f g h i j k l m n o p"));  // the same words
  finder.add(named("third", "q r s t u v w x"));                   // none of them
  const auto match = finder.find(named("probe", "a b c d e f g h i j k l m n o p"));
  ASSERT_TRUE(match);
  EXPECT_EQ(match->index, 1u);
  EXPECT_DOUBLE_EQ(match->content_similarity, 1.0);
}

TEST(Dedup, MergingFoldsEvidenceWithoutRepeatingEpisodes) {
  Skill into = named("warp_reduce", "x");
  into.provenance.episode_ids = {"ep1", "ep2"};
  into.verifications = {Verification{"task_a", 1.0, 2.0, 3, true, "H100", "2026-01-01T00:00:00Z"}};
  into.usage = Usage{1, 2, 3.0, 4, 5.0, 6};
  Skill dup = named("warp_reduce_copy", "y");
  dup.provenance.episode_ids = {"ep2", "ep3"};
  dup.verifications = {Verification{"task_b", 1.5, 1.2, 2, false, "A100", "2026-01-02T00:00:00Z"}};
  dup.usage = Usage{10, 20, 30.0, 40, 50.0, 60};
  merge_evidence(into, dup);
  EXPECT_EQ(into.provenance.episode_ids, (std::vector<std::string>{"ep1", "ep2", "ep3"}));
  ASSERT_EQ(into.verifications.size(), 2u);
  EXPECT_EQ(into.verifications[1].task, "task_b");
  EXPECT_EQ(into.usage, (Usage{11, 22, 33.0, 44, 55.0, 66}));
  // The survivor keeps its own identity.
  EXPECT_EQ(into.name, "warp_reduce");
  EXPECT_EQ(into.content, "x");
  // Sums stay exact, so the merged means are those of the pooled rollouts: 33/44 and 55/66.
  EXPECT_DOUBLE_EQ(*into.usage.mean_reward_injected(), 0.75);
  EXPECT_DOUBLE_EQ(*into.usage.mean_reward_not_injected(), 55.0 / 66);
}
}  // namespace dedup_test
