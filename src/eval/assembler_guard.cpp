#include "eval/assembler_guard.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace vinci::eval {

namespace {

// Longer names before the names they begin with, so a refusal names the directive written. Each is
// matched as a substring: ".rep" also covers .rept, ".irp" .irpc, ".irep" .irepc (as has all five).
constexpr std::array<std::string_view, 11> kForbiddenDirectives = {
    ".incbin", ".include", ".altmacro", ".macro", ".irpc", ".irp", ".irepc", ".irep", ".rept", ".rep", ".mri"};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The text with every /* */ comment removed, not replaced by a space: as's scrubber joins what is on
// either side of one. An unclosed comment runs to the end.
std::string without_block_comments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find("/*", at);
    if (open == std::string_view::npos) {
      out.append(text.substr(at));
      break;
    }
    out.append(text.substr(at, open - at));
    const size_t close = text.find("*/", open + 2);
    if (close == std::string_view::npos) break;
    at = close + 2;
  }
  return out;
}

// Whether text holds directive where as could read one: at the start of a statement, after nothing
// but spaces and tabs since a line's end, a ';' (x86's statement separator), a ':' (any label's end, a
// quoted one's too), the text's start, or any other byte that is no printable ASCII (whatever as may
// take for a line's end). Anywhere else it is data: a compiler's string (red-team round 65's honest
// ReLU, whose inlined torch assertion text "ks.repr_" held ".rep", was refused), or an operand.
bool at_statement_start(const std::string& text, std::string_view directive) {
  for (size_t at = text.find(directive); at != std::string::npos; at = text.find(directive, at + 1)) {
    size_t before = at;
    while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t')) --before;
    if (before == 0) return true;
    const auto c = static_cast<unsigned char>(text[before - 1]);
    if (c < 0x21 || c > 0x7e || c == ';' || c == ':') return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> forbidden_directive(std::string_view source) {
  const std::string raw = lower(source);
  const std::string joined = without_block_comments(raw);
  for (const auto directive : kForbiddenDirectives)
    if (at_statement_start(raw, directive) || at_statement_start(joined, directive)) return std::string(directive);
  return std::nullopt;
}

std::optional<std::string> forbidden_argument(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a.starts_with("@")) return a + " (reads more arguments from a file)";
    if (a.size() < 2 || a[0] != '-') continue;
    const bool long_form = a.starts_with("--");
    const std::string name = a.substr(long_form ? 2 : 1);
    const std::string key = name.substr(0, name.find('='));
    // as parses with getopt_long_only: a unique prefix of --mri is --mri, with one dash or two.
    if (key == "mr" || key == "mri") return a + " (MRI mode)";
    // With one dash, a word that is no long option is a cluster of letters, and an M among them is
    // MRI mode; -I and -o take the rest as their value, and -MD is the long option --MD.
    if (!long_form && key != "MD" && key[0] != 'I' && key[0] != 'o' && key.find('M') != std::string::npos)
      return a + " (MRI mode)";
  }
  return std::nullopt;
}

AssemblerInputs assembler_inputs(const std::vector<std::string>& args) {
  constexpr std::array<std::string_view, 8> kValued = {"-o",   "-I",  "--defsym",           "-defsym",
                                                       "--MD", "-MD", "--debug-prefix-map", "-debug-prefix-map"};
  AssemblerInputs in;
  bool options = true, information_only = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-") {
      in.standard_input = true;
    } else if (options && a == "--") {
      options = false;
    } else if (options && a[0] == '-') {
      information_only |= a == "--version" || a == "--help" || a == "--target-help";
      if (std::find(kValued.begin(), kValued.end(), a) != kValued.end()) ++i;
    } else {
      in.files.push_back(a);
    }
  }
  if (in.files.empty() && !information_only) in.standard_input = true;
  return in;
}

}  // namespace vinci::eval
