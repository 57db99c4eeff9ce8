// BPE by merge ranks on tiny hand-made vocabularies, where each split can be worked out by hand
// with HF's algorithm: lowest rank first, leftmost of equals, stale entries skipped.
#include "text/bpe.h"

#include <gtest/gtest.h>

#include <vector>

namespace bpe_test {
using namespace vinci::text;

// a=0 b=1 c=2 ab=3 bc=4 abc=5 <unk>=6 aa=7 <0xC3>=8 <0xA9>=9 é=10 ##b=11 b</w>=12
Vocab vocab() {
  return {{"a", 0},  {"b", 1},      {"c", 2},      {"ab", 3}, {"bc", 4},   {"abc", 5},   {"<unk>", 6},
          {"aa", 7}, {"<0xC3>", 8}, {"<0xA9>", 9}, {"é", 10}, {"##b", 11}, {"b</w>", 12}};
}

std::vector<int32_t> encode(const Bpe& bpe, std::string_view word) {
  std::vector<int32_t> ids;
  bpe.tokenize(word, ids);
  return ids;
}

TEST(Bpe, TheLowestRankMergesFirst) {
  const std::vector<BpeMerge> ab_first = {{0, 1, 3}, {1, 2, 4}, {3, 2, 5}};
  // a b c: (a,b) rank 0 beats (b,c) rank 1, leaving ab c, which rank 2 merges.
  EXPECT_EQ(encode(Bpe(vocab(), ab_first, {}), "abc"), (std::vector<int32_t>{5}));
  const std::vector<BpeMerge> bc_first = {{1, 2, 4}, {0, 1, 3}, {3, 2, 5}};
  // (b,c) first leaves a bc, which no rule merges.
  EXPECT_EQ(encode(Bpe(vocab(), bc_first, {}), "abc"), (std::vector<int32_t>{0, 4}));
}

TEST(Bpe, OfEqualRanksTheLeftmostMergesFirst) {
  const std::vector<BpeMerge> merges = {{0, 0, 7}};
  const Bpe bpe(vocab(), merges, {});
  EXPECT_EQ(encode(bpe, "aaa"), (std::vector<int32_t>{7, 0}));
  EXPECT_EQ(encode(bpe, "aaaa"), (std::vector<int32_t>{7, 7}));
  EXPECT_EQ(encode(bpe, "aaaaa"), (std::vector<int32_t>{7, 7, 0}));
}

TEST(Bpe, ALaterRuleForThePairOverridesAnEarlierOne) {
  const std::vector<BpeMerge> merges = {{0, 1, 3}, {0, 1, 5}};
  EXPECT_EQ(encode(Bpe(vocab(), merges, {}), "ab"), (std::vector<int32_t>{5}));
}

TEST(Bpe, TokenizeAppendsAndAnEmptyWordAddsNothing) {
  const Bpe bpe(vocab(), {}, {});
  std::vector<int32_t> ids = {99};
  bpe.tokenize("", ids);
  bpe.tokenize("ba", ids);
  bpe.tokenize("ba", ids);  // the second time from the cache
  EXPECT_EQ(ids, (std::vector<int32_t>{99, 1, 0, 1, 0}));
}

TEST(Bpe, UnknownCharactersAreDroppedWithoutAnUnkToken) {
  EXPECT_EQ(encode(Bpe(vocab(), {}, {}), "axb"), (std::vector<int32_t>{0, 1}));
}

TEST(Bpe, UnknownCharactersBecomeUnkFusedOrNot) {
  BpeOptions o;
  o.unk_token = "<unk>";
  EXPECT_EQ(encode(Bpe(vocab(), {}, o), "xxay"), (std::vector<int32_t>{6, 6, 0, 6}));
  o.fuse_unk = true;
  EXPECT_EQ(encode(Bpe(vocab(), {}, o), "xxay"), (std::vector<int32_t>{6, 0, 6}));
}

TEST(Bpe, AnUnkTokenMissingFromTheVocabIsAnError) {
  BpeOptions o;
  o.unk_token = "[UNK]";
  const Bpe bpe(vocab(), {}, o);
  try {
    encode(bpe, "ax");
    FAIL() << "no error for an unk token outside the vocab";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("[UNK]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(encode(bpe, "ab"), (std::vector<int32_t>{0, 1}));  // only needed for an unknown character
}

TEST(Bpe, ByteFallbackNeedsEveryByteOfTheCharacter) {
  BpeOptions o;
  o.byte_fallback = true;
  o.unk_token = "<unk>";
  Vocab v = vocab();
  v.erase("é");
  EXPECT_EQ(encode(Bpe(v, {}, o), "a\xC3\xA9"), (std::vector<int32_t>{0, 8, 9}));
  // ñ is C3 B1: <0xB1> is missing, so the whole character is unknown, not half of it.
  EXPECT_EQ(encode(Bpe(v, {}, o),
                   "\xC3\xB1"
                   "a"),
            (std::vector<int32_t>{6, 0}));
  // A character in the vocab is itself, not its bytes.
  EXPECT_EQ(encode(Bpe(vocab(), {}, o), "\xC3\xA9"), (std::vector<int32_t>{10}));
}

TEST(Bpe, IgnoreMergesTakesAWholeWordFromTheVocab) {
  const std::vector<BpeMerge> merges = {{1, 2, 4}};
  BpeOptions o;
  o.ignore_merges = true;
  EXPECT_EQ(encode(Bpe(vocab(), merges, o), "abc"), (std::vector<int32_t>{5}));
  EXPECT_EQ(encode(Bpe(vocab(), merges, {}), "abc"), (std::vector<int32_t>{0, 4}));
  // A word outside the vocab still merges.
  EXPECT_EQ(encode(Bpe(vocab(), merges, o), "bca"), (std::vector<int32_t>{4, 0}));
}

TEST(Bpe, ContinuingPrefixAndEndOfWordSuffix) {
  BpeOptions prefix;
  prefix.continuing_subword_prefix = "##";
  EXPECT_EQ(encode(Bpe(vocab(), {}, prefix), "ab"), (std::vector<int32_t>{0, 11}));
  BpeOptions suffix;
  suffix.end_of_word_suffix = "</w>";
  EXPECT_EQ(encode(Bpe(vocab(), {}, suffix), "ab"), (std::vector<int32_t>{0, 12}));
}

TEST(Bpe, TokenToId) {
  const Bpe bpe(vocab(), {}, {});
  EXPECT_EQ(bpe.token_to_id("abc"), 5);
  EXPECT_EQ(bpe.token_to_id("abcd"), std::nullopt);
  EXPECT_EQ(bpe.vocab().size(), vocab().size());
}
}  // namespace bpe_test
