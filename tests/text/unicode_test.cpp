// UTF-8 and Unicode facts the tokenizer relies on. Expected values come from Python
// (bytes.decode(errors="replace"), unicodedata.normalize("NFC")), GPT-2's bytes_to_unicode, and
// the Unicode Character Database's property lists.
#include "text/unicode.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace unicode_test {
using namespace vinci::text;

TEST(Utf8, InvalidSequencesAreFoundAtTheirFirstByte) {
  EXPECT_EQ(find_invalid_utf8(""), std::nullopt);
  EXPECT_EQ(find_invalid_utf8("a\xC3\xA9\xF0\x9F\x98\x80"), std::nullopt);  // a, é, 😀
  EXPECT_EQ(find_invalid_utf8("a\xC0\x80"), 1u);                            // overlong NUL
  EXPECT_EQ(find_invalid_utf8("ab\xED\xA0\x80"), 2u);                       // a surrogate, U+D800
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);                     // past U+10FFFF
  EXPECT_EQ(find_invalid_utf8("abc\xE2\x82"), 3u);                          // cut mid-character
  EXPECT_EQ(find_invalid_utf8("\x80"), 0u);                                 // a lone continuation byte
}

TEST(Utf8, CodePointsDecodeForwardAndBackward) {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // a é € 😀: 1, 2, 3 and 4 bytes
  size_t pos = 0;
  EXPECT_EQ(next_code_point(s, pos), U'a');
  EXPECT_EQ(pos, 1u);
  EXPECT_EQ(next_code_point(s, pos), U'\u00E9');
  EXPECT_EQ(pos, 3u);
  EXPECT_EQ(next_code_point(s, pos), U'\u20AC');
  EXPECT_EQ(pos, 6u);
  EXPECT_EQ(next_code_point(s, pos), U'\U0001F600');
  EXPECT_EQ(pos, 10u);
  size_t end = s.size();
  EXPECT_EQ(previous_code_point(s, end), U'\U0001F600');
  EXPECT_EQ(end, 6u);
  EXPECT_EQ(previous_code_point(s, end), U'\u20AC');
  EXPECT_EQ(end, 3u);
  EXPECT_EQ(previous_code_point(s, end), U'\u00E9');
  EXPECT_EQ(end, 1u);
  EXPECT_EQ(previous_code_point(s, end), U'a');
  EXPECT_EQ(end, 0u);
}

TEST(Utf8, AppendEncodesEachLength) {
  std::string out;
  for (const char32_t c : {U'$', U'\u00A2', U'\u20AC', U'\U00010348'}) vinci::text::append_utf8(out, c);
  EXPECT_EQ(out, "$\xC2\xA2\xE2\x82\xAC\xF0\x90\x8D\x88");
}

TEST(Utf8, LossyDecodingReplacesMaximalSubparts) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8_lossy("plain"), "plain");
  EXPECT_EQ(utf8_lossy("a\xE2\x82"
                       "b"),
            "a" + fffd + "b");                                       // one truncated character: one U+FFFD
  EXPECT_EQ(utf8_lossy("\xF0\x9F\x98"), fffd);                       // a cut emoji at the end
  EXPECT_EQ(utf8_lossy("\xC0\xAF"), fffd + fffd);                    // an overlong form: each byte
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80x"), fffd + fffd + fffd + "x");  // a surrogate: each byte
  EXPECT_EQ(utf8_lossy("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);
}

TEST(Nfc, ComposesReordersAndRespectsExclusions) {
  EXPECT_EQ(nfc("e\xCC\x81"), "\xC3\xA9");                                 // e + U+0301 → é
  EXPECT_EQ(nfc("\xE1\x84\x80\xE1\x85\xA1"), "\xEA\xB0\x80");              // Hangul L+V → 가
  EXPECT_EQ(nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81");  // L+V+T → 각
  EXPECT_EQ(nfc("\xE2\x84\xAB"), "\xC3\x85");                              // the Angstrom sign is a singleton → Å
  // A composition exclusion stays decomposed: U+0958 → U+0915 U+093C.
  EXPECT_EQ(nfc("\xE0\xA5\x98"), "\xE0\xA4\x95\xE0\xA4\xBC");
  // Marks are put in canonical order first: dot below (ccc 220) composes before the ring (230).
  EXPECT_EQ(nfc("A\xCC\x8A\xCC\xA3"), "\xE1\xBA\xA0\xCC\x8A");
  EXPECT_EQ(nfc(""), "");
  EXPECT_EQ(nfc("already composed: \xC3\xA9"), "already composed: \xC3\xA9");
}

TEST(UnicodeProperties, WhiteSpaceIsThePropertyNotTheCategory) {
  for (const char32_t c : {U' ', U'\t', U'\n', U'\u0085', U'\u00A0', U'\u1680', U'\u2028', U'\u3000'})
    EXPECT_TRUE(is_white_space(c)) << static_cast<uint32_t>(c);
  // U+180E left White_Space in Unicode 6.3; U+200B was never in it.
  for (const char32_t c : {U'a', U'\u180E', U'\u200B', U'\uFEFF'})
    EXPECT_FALSE(is_white_space(c)) << static_cast<uint32_t>(c);
}

TEST(UnicodeProperties, WordCharactersIncludeMarksConnectorsAndJoiners) {
  for (const char32_t c :
       {U'a', U'Z', U'_', U'7', U'\u00E9', U'\u0301', U'\u200C', U'\u200D', U'\u2160', U'\u203F', U'\u0663'})
    EXPECT_TRUE(is_word_char(c)) << static_cast<uint32_t>(c);
  // '-' is punctuation, '²' a No digit, not Nd.
  for (const char32_t c : {U'-', U' ', U'\u00B2', U'$'}) EXPECT_FALSE(is_word_char(c)) << static_cast<uint32_t>(c);
}

TEST(ByteLevel, MatchesGpt2BytesToUnicode) {
  EXPECT_EQ(byte_level_char(0x21), "!");  // printable bytes stand for themselves
  EXPECT_EQ(byte_level_char(0xA1), "\xC2\xA1");
  EXPECT_EQ(byte_level_char(0xFF), "\xC3\xBF");
  EXPECT_EQ(byte_level_char(0x00), "\xC4\x80");  // the others count up from U+0100
  EXPECT_EQ(byte_level_char(0x0A), "\xC4\x8A");  // Ċ
  EXPECT_EQ(byte_level_char(0x20), "\xC4\xA0");  // Ġ
  EXPECT_EQ(byte_level_char(0x7F), "\xC4\xA1");
  EXPECT_EQ(byte_level_char(0xAD), "\xC5\x83");  // the last one, U+0143
  EXPECT_EQ(to_byte_level("a b\n"),
            "a\xC4\xA0"
            "b\xC4\x8A");
}

TEST(ByteLevel, TheMapIsABijectionOnItsCharacters) {
  for (int b = 0; b < 256; ++b) {
    const std::string_view ch = byte_level_char(static_cast<uint8_t>(b));
    size_t pos = 0;
    const char32_t cp = next_code_point(ch, pos);
    EXPECT_EQ(pos, ch.size());
    EXPECT_EQ(byte_level_byte(cp), static_cast<uint8_t>(b)) << b;
  }
  EXPECT_EQ(byte_level_byte(U'\u0144'), std::nullopt);  // one past the last
  EXPECT_EQ(byte_level_byte(U'\u00AD'), std::nullopt);  // the soft hyphen's byte is shown as U+0143
  EXPECT_EQ(byte_level_byte(U' '), std::nullopt);
}
}  // namespace unicode_test
