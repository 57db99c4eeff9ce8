// The in-memory library: unique names, lookup, and filtered BM25 search.
#include "skills/library.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "skills/skill_jsonl.h"

namespace library_test {
using namespace vinci::skills;

std::vector<Skill> seed() { return read_skills_jsonl(std::string(VINCI_SOURCE_ROOT) + "/skills/seed.jsonl"); }

Skill skill(const std::string& name, const std::string& content, Status status = Status::admitted) {
  Skill s;
  s.name = name;
  s.description = "about " + name;
  s.content = content;
  s.status = status;
  s.backends = {"cuda"};
  return s;
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

TEST(Library, ADuplicateNameIsRejectedAndTheFirstKept) {
  Library library;
  library.add(skill("warp_reduce", "first"));
  try {
    library.add(skill("warp_reduce", "second"));
    FAIL() << "a second skill of the same name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'warp_reduce'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(library.size(), 1u);
  ASSERT_NE(library.find("warp_reduce"), nullptr);
  EXPECT_EQ(library.find("warp_reduce")->content, "first");
  EXPECT_EQ(library.find("block_reduce"), nullptr);
}

TEST(Library, ASkillAddedLaterIsSearchable) {
  Library library(std::vector<Skill>{skill("tiled_matmul", "shared memory tiles for gemm")});
  EXPECT_TRUE(library.search("bitonic", 5).empty());
  library.add(skill("bitonic_sort", "a bitonic network sorts in shared memory"));
  const auto hits = library.search("bitonic", 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].skill->name, "bitonic_sort");
  EXPECT_GT(hits[0].score, 0.0);
}

TEST(Library, TheDefaultFilterSkipsCandidates) {
  Library library(std::vector<Skill>{skill("bitonic_sort", "bitonic", Status::candidate)});
  EXPECT_TRUE(library.search("bitonic", 5).empty());
  EXPECT_EQ(library.search("bitonic", 5, SearchFilter{{Status::candidate}, "", ""}).size(), 1u);
}

TEST(Library, FieldsSplitIdentifiersAndFlattenTags) {
  Skill s = skill("warp_reduce", "use __shfl_down_sync");
  s.description = "Fast";
  s.tags = {"Reduction", "sm_90"};
  const auto fields = Library::fields_of(s);
  EXPECT_EQ(fields[kName], (std::vector<std::string>{"warp_reduce", "warp", "reduce"}));
  EXPECT_EQ(fields[kDescription], (std::vector<std::string>{"fast"}));
  EXPECT_EQ(fields[kTags], (std::vector<std::string>{"reduction", "sm_90", "sm", "90"}));
  const auto& content = fields[kContent];
  EXPECT_NE(std::find(content.begin(), content.end(), "__shfl_down_sync"), content.end());
  EXPECT_NE(std::find(content.begin(), content.end(), "shfl"), content.end());
}
}  // namespace library_test
