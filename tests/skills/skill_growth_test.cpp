// Growth control: near-duplicate detection and utility-based pruning decisions.
#include <gtest/gtest.h>

#include "skills/dedup.h"
#include "skills/library.h"
#include "skills/prune.h"
#include "skills/skill_jsonl.h"

using namespace vinci::skills;

namespace skill_growth_test {
std::vector<Skill> seed() { return read_skills_jsonl(std::string(VINCI_SOURCE_ROOT) + "/skills/seed.jsonl"); }

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

TEST(Prune, DecisionsNeedEnoughEvidenceAndAGain) {
  const auto with = [](const std::string& name, int64_t n_in, double mean_in, int64_t n_out, double mean_out) {
    Skill s;
    s.name = name;
    s.status = Status::admitted;
    s.usage.reward_injected_count = n_in;
    s.usage.reward_injected_sum = mean_in * n_in;
    s.usage.reward_not_injected_count = n_out;
    s.usage.reward_not_injected_sum = mean_out * n_out;
    return s;
  };
  Skill retired = with("already_retired", 100, 0, 100, 1);
  retired.status = Status::retired;
  const auto d = decide_pruning({with("helps", 30, 1.2, 30, 1.0), with("hurts", 30, 0.8, 30, 1.0),
                                 with("too_new", 5, 0.0, 30, 1.0), with("no_baseline", 30, 0.0, 3, 1.0), retired},
                                {20, 20, 0.0});
  ASSERT_EQ(d.size(), 4u);  // only admitted skills are judged
  EXPECT_FALSE(d[0].retire);
  EXPECT_TRUE(d[1].retire);
  EXPECT_NE(d[1].reason.find("-0.200"), std::string::npos) << d[1].reason;
  EXPECT_FALSE(d[2].retire);
  EXPECT_NE(d[2].reason.find("5 rewarded injections"), std::string::npos) << d[2].reason;
  EXPECT_FALSE(d[3].retire);
  // A higher bar retires what merely does not hurt.
  EXPECT_TRUE(decide_pruning({with("flat", 30, 1.0, 30, 1.0)}, {20, 20, 0.05})[0].retire);
}

TEST(Library, SearchFiltersByStatusBackendAndArch) {
  auto skills = seed();
  skills[0].status = Status::retired;
  const std::string retired_name = skills[0].name;
  const Library library(std::move(skills));
  const auto all = library.search(retired_name, 60, SearchFilter{{}, "", ""});
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().skill->name, retired_name);
  for (const auto& h : library.search(retired_name, 60)) EXPECT_NE(h.skill->name, retired_name);
  for (const auto& h : library.search("triton autotune num_warps", 60, SearchFilter{{Status::admitted}, "triton", ""}))
    EXPECT_NE(std::find(h.skill->backends.begin(), h.skill->backends.end(), "triton"), h.skill->backends.end());
  bool saw_hopper = false;
  for (const auto& h : library.search("hopper sm_90 tma wgmma", 60)) saw_hopper |= h.skill->arch == "sm_90";
  EXPECT_TRUE(saw_hopper);
  for (const auto& h : library.search("hopper sm_90 tma wgmma", 60, SearchFilter{{Status::admitted}, "", "sm_80"}))
    EXPECT_NE(h.skill->arch, "sm_90") << h.skill->name;
  const auto top = library.search("__shfl_down_sync warp reduction", 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top.front().skill->name, "warp_shuffle_reduction");
  EXPECT_GE(top[0].score, top[1].score);
}
}  // namespace skill_growth_test
