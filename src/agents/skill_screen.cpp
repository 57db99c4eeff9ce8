#include "agents/skill_screen.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include <fmt/format.h>

#include <fmt/ranges.h>

namespace vinci::agents {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Integers of 4 digits or more: in a problem file these are its shapes.
std::set<std::string> large_integers(std::string_view text) {
  static const std::regex re(R"(\b\d{4,}\b)");
  std::set<std::string> out;
  const std::string s(text);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it)
    out.insert(it->str());
  return out;
}

}  // namespace

std::optional<std::string> screen_skill(const skills::Skill& skill, std::string_view task_source,
                                        std::string_view task_name) {
  const std::string text = lower(skill.name + "\n" + skill.description + "\n" + skill.scope + "\n" + skill.content);

  static const std::regex bypass(
      R"(\b(torch|f|at|torch\.nn\.functional)\.(matmul|mm|bmm|addmm|baddbmm|conv\w*|softmax|log_softmax|layer_norm|)"
      R"(linear|einsum|relu|gelu|silu|sigmoid|tanh|sum|mean|amax|max|min|exp|log|scaled_dot_product_attention)\s*\()"
      R"(|\bcublas\w*\s*\(|\bcudnn\w*\s*\(|torch\.compile|\bcache (the )?(output|result)s?\b|\bmemoi[sz]e|\bskip (the )?(computation|kernel)\b)");
  std::smatch m;
  if (std::regex_search(text, m, bypass))
    return fmt::format("bypasses the kernel: '{}' (a skill must teach how to write the kernel, not how to avoid it)",
                       m.str());

  static const std::regex low_precision(R"(\b(fp16|bf16|bfloat16|float16|half precision|tf32|__half|__nv_bfloat16)\b)");
  const std::string scope_and_tags = lower(skill.scope + " " + [&] {
    std::string t;
    for (const auto& tag : skill.tags) t += tag + " ";
    return t;
  }());
  if (std::regex_search(text, m, low_precision) && !std::regex_search(scope_and_tags, low_precision))
    return fmt::format("drops precision: it uses '{}' but its scope does not limit it to low-precision tasks", m.str());

  const std::string name = lower(task_name);
  if (name.size() >= 4 && lower(skill.name).find(name) != std::string::npos)
    return fmt::format("task-specific: its name contains the task's name '{}'", task_name);
  std::vector<std::string> shared;
  const auto task_numbers = large_integers(task_source);
  for (const auto& n : large_integers(skill.content))
    if (task_numbers.contains(n)) shared.push_back(n);
  if (!shared.empty())
    return fmt::format("task-specific: it hard-codes the task's sizes ({})", fmt::join(shared, ", "));

  constexpr size_t kMinContent = 160;
  if (skill.content.size() < kMinContent)
    return fmt::format("trivial: {} characters of content (at least {} with motivation, key idea and example)",
                       skill.content.size(), kMinContent);
  return std::nullopt;
}

}  // namespace vinci::agents
