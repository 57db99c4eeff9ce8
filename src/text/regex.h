// The regexes of tokenizer.json, written for Oniguruma (which HF tokenizers matches them with), run
// on PCRE2. The two agree on the constructs tokenizers use once a few escapes are rewritten and
// the Unicode tables are brought to Oniguruma's version; constructs where they would disagree
// are refused rather than matched differently.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct pcre2_real_code_8;

namespace vinci::text {

struct RegexMatch {
  size_t begin = 0;
  size_t end = 0;
};

class Regex {
 public:
  // Throws std::invalid_argument saying which construct is unsupported or what PCRE2 rejected.
  explicit Regex(std::string_view oniguruma_pattern);

  // The pattern that matches `literal` and nothing else.
  static std::string escape(std::string_view literal);

  // All matches from left to right. An empty match where the previous match ended is skipped, as
  // rust-onig's find_iter does. `utf8` must be valid UTF-8 (the caller checks it once).
  std::vector<RegexMatch> find_all(std::string_view utf8) const;

 private:
  std::shared_ptr<pcre2_real_code_8> code_;
};

}  // namespace vinci::text
