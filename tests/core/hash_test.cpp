// Content hashes: the reference values come from the Python xxhash package (xxh3_128_hexdigest),
// so a change of algorithm or of digit order, which would orphan every cache entry, is caught.
#include "core/hash.h"

#include <gtest/gtest.h>

namespace hash_test {
using vinci::core::content_hash;

TEST(ContentHash, MatchesXxh3Of128BitsInCanonicalHex) {
  EXPECT_EQ(content_hash(""), "99aa06d3014798d86001c324468d497f");
  EXPECT_EQ(content_hash("abc"), "06b05ab6733a618578af5f94892f3950");
}

TEST(ContentHash, PartsAreLengthPrefixedLittleEndian) {
  // xxh3_128 of (u64 length, bytes) per part, as python's struct.pack('<Q', len) writes it.
  EXPECT_EQ(content_hash({"ab", "c"}), "f2eda2708bcfd51cc05c0ee4c9f60440");
  EXPECT_EQ(content_hash({"a", "bc"}), "f310f4d71be93bc46456c91685adede6");
  // No parts hash no bytes at all: the hash of the empty string.
  EXPECT_EQ(content_hash(std::initializer_list<std::string_view>{}), content_hash(""));
}

TEST(ContentHash, OnePartIsNotTheBareString) {
  // The length prefix makes a single part differ from the data itself.
  EXPECT_NE(content_hash({"abc"}), content_hash("abc"));
  EXPECT_EQ(content_hash({"abc"}), content_hash({"abc"}));
  // Embedded NUL bytes are data, not terminators.
  EXPECT_NE(content_hash(std::string_view("a\0b", 3)), content_hash("a"));
}
}  // namespace hash_test
