// UTF-8 and the Unicode facts the byte-level BPE tokenizer needs, with HF tokenizers' Rust semantics.
//
// UTF-8 and the Unicode facts the byte-level BPE tokenizer depends on, with the semantics of the
// Rust code Hugging Face `tokenizers` is built on (std's char and String, the regex crate), since
// the tokenizer must agree with it on every string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace vinci::text {

// The byte offset of the first ill-formed UTF-8 sequence, or nullopt when `bytes` is valid UTF-8
// (surrogates and overlong forms are ill-formed, as in Rust's str).
std::optional<size_t> find_invalid_utf8(std::string_view bytes);

// Decodes the code point at `pos` of valid UTF-8 and advances `pos` past it.
char32_t next_code_point(std::string_view utf8, size_t& pos);
// Decodes the code point that ends at `end` of valid UTF-8 and moves `end` back to its start.
char32_t previous_code_point(std::string_view utf8, size_t& end);
void append_utf8(std::string& out, char32_t code_point);

// Replaces each maximal ill-formed subsequence with U+FFFD, as Rust's String::from_utf8_lossy
// (and Python's errors="replace") do: decoded text must equal HF's even mid-character.
std::string utf8_lossy(std::string_view bytes);

// Canonical composition (NFC) of valid UTF-8.
std::string nfc(std::string_view utf8);

// The White_Space property: Rust's char::is_whitespace and the regex crate's \s.
bool is_white_space(char32_t code_point);
// The regex crate's Unicode \w: Alphabetic, marks, decimal digits, connector punctuation and
// the joiners.
bool is_word_char(char32_t code_point);

// GPT-2's bytes_to_unicode: every byte stands for a printable character, so that a byte-level
// vocabulary is a set of ordinary strings. Returns the UTF-8 of the character for `byte`.
std::string_view byte_level_char(uint8_t byte);
// The byte a character stands for, or nullopt for a character outside the 256 of the map.
std::optional<uint8_t> byte_level_byte(char32_t code_point);
// Replaces every byte of `bytes` with its character.
std::string to_byte_level(std::string_view bytes);

// A run of code points whose general category is `category` in the Unicode tables of HF's regex
// engine (Oniguruma, Unicode 16.0) but `pcre2_category` in PCRE2's (14.0): "Cn" for the
// characters assigned since, and a handful that moved.
struct UnicodeUpdate {
  char32_t first;
  char32_t last;
  char pcre2_category[3];
  char category[3];
};
std::span<const UnicodeUpdate> unicode_updates();

}  // namespace vinci::text
