// The content-addressed JSON cache: misses, hits, the on-disk layout, and corrupt entries.
#include "eval/cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "support/temp_dir.h"

namespace cache_test {
using namespace vinci::eval;
namespace fs = std::filesystem;

const std::string kKey = "ab0123456789abcdef0123456789abcd";

TEST(JsonCache, AMissThenAHit) {
  const vinci::test::TempDir dir("json-cache");
  const JsonCache cache(dir.path());
  EXPECT_FALSE(cache.get(kKey));
  cache.put(kKey, {{"speedup", 1.5}, {"ok", true}});
  const auto hit = cache.get(kKey);
  ASSERT_TRUE(hit);
  EXPECT_EQ(*hit, (nlohmann::json{{"speedup", 1.5}, {"ok", true}}));
}

TEST(JsonCache, EntriesAreShardedByTheKeysFirstTwoCharacters) {
  // The janitor and anyone inspecting the cache by hand rely on this layout.
  const vinci::test::TempDir dir("json-cache");
  JsonCache(dir.path()).put(kKey, 7);
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "ab" / (kKey + ".json")));
}

TEST(JsonCache, ACorruptEntryIsAMiss) {
  const vinci::test::TempDir dir("json-cache");
  fs::create_directories(dir.path() / "ab");
  std::ofstream(dir.path() / "ab" / (kKey + ".json")) << "{\"speedup\": 1.";  // torn by a crash
  EXPECT_FALSE(JsonCache(dir.path()).get(kKey));
}

TEST(JsonCache, AHitMarksTheEntryUsed) {
  const vinci::test::TempDir dir("json-cache");
  const JsonCache cache(dir.path());
  cache.put(kKey, 1);
  const fs::path file = dir.path() / "ab" / (kKey + ".json");
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24 * 30);
  fs::last_write_time(file, old);
  ASSERT_TRUE(cache.get(kKey));
  EXPECT_GT(fs::last_write_time(file), old + std::chrono::hours(24));
}

TEST(JsonCache, APutReplacesTheValue) {
  const vinci::test::TempDir dir("json-cache");
  const JsonCache cache(dir.path());
  cache.put(kKey, "first");
  cache.put(kKey, "second");
  EXPECT_EQ(*cache.get(kKey), "second");
}
}  // namespace cache_test
