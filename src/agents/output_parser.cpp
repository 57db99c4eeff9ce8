#include "agents/output_parser.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include <fmt/format.h>

namespace vinci::agents {

namespace {

using nlohmann::ordered_json;

struct Fence {
  std::string body;
  size_t begin = 0;  // offset of the opening fence line
  bool closed = false;
};

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

// Markdown code fences: a line of 3+ backticks with an optional info string opens, a line of at
// least as many backticks closes. An opening that never closes runs to the end.
std::vector<Fence> fences(std::string_view text) {
  std::vector<Fence> out;
  std::optional<Fence> open;
  size_t open_ticks = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, eol - pos);
    const size_t indent = std::min(line.find_first_not_of(" \t"), line.size());
    const std::string_view rest = line.substr(indent);
    const size_t ticks = std::min(rest.find_first_not_of('`'), rest.size());
    if (!open && ticks >= 3) {
      open = Fence{{}, pos, false};
      open_ticks = ticks;
    } else if (open && ticks >= open_ticks && is_blank(rest.substr(ticks))) {
      open->closed = true;
      out.push_back(std::move(*open));
      open.reset();
    } else if (open) {
      open->body.append(line);
      open->body.push_back('\n');
    }
    if (eol == text.size()) break;
    pos = eol + 1;
  }
  if (open) out.push_back(std::move(*open));
  return out;
}

bool defines_model_new(std::string_view code) {
  static const std::regex re(R"(\bclass\s+ModelNew\b)");
  return std::regex_search(code.begin(), code.end(), re);
}

CodeExtraction failed(ParseFailure failure, std::string feedback) {
  CodeExtraction e;
  e.failure = failure;
  e.feedback = std::move(feedback);
  return e;
}

// Every balanced top-level {...} of the text that parses as a JSON object, in order. Scans
// that never close are capped, so a pathological answer cannot make this quadratic.
std::vector<ordered_json> json_objects(std::string_view text) {
  std::vector<ordered_json> out;
  int failed_scans = 0;
  for (size_t i = text.find('{'); i != std::string_view::npos && failed_scans < 256; i = text.find('{', i + 1)) {
    int depth = 0;
    bool in_string = false, escaped = false;
    size_t end = std::string_view::npos;
    for (size_t k = i; k < text.size(); ++k) {
      const char c = text[k];
      if (in_string) {
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        end = k;
        break;
      }
    }
    if (end == std::string_view::npos) {
      ++failed_scans;
      continue;
    }
    try {
      auto j = ordered_json::parse(text.substr(i, end - i + 1));
      if (j.is_object()) {
        out.push_back(std::move(j));
        i = end;  // nested objects belong to this one
        continue;
      }
    } catch (const ordered_json::parse_error&) {
    }
    ++failed_scans;
  }
  return out;
}

// The arguments of a {"name", "arguments"|"parameters"} call; a JSON-encoded string is decoded.
std::optional<ordered_json> call_arguments(const ordered_json& call, std::string& problem) {
  for (const char* key : {"arguments", "parameters"}) {
    if (!call.contains(key)) continue;
    const ordered_json& a = call[key];
    if (a.is_object()) return a;
    if (a.is_string()) {
      try {
        auto parsed = ordered_json::parse(a.get<std::string>());
        if (parsed.is_object()) return parsed;
      } catch (const ordered_json::parse_error& e) {
        problem = fmt::format("its arguments are not valid JSON ({})", e.what());
        return std::nullopt;
      }
    }
    problem = "its arguments are not a JSON object";
    return std::nullopt;
  }
  problem = "it has no 'arguments'";
  return std::nullopt;
}

std::string missing_keys(const ordered_json& args, const std::vector<std::string>& required) {
  std::string missing;
  for (const auto& k : required)
    if (!args.contains(k)) missing += (missing.empty() ? "" : ", ") + k;
  return missing;
}

}  // namespace

const char* parse_failure_name(ParseFailure failure) {
  switch (failure) {
    case ParseFailure::none: return "none";
    case ParseFailure::empty: return "empty";
    case ParseFailure::too_long: return "too_long";
    case ParseFailure::no_code: return "no_code";
    case ParseFailure::unterminated_code: return "unterminated_code";
    case ParseFailure::no_model_new: return "no_model_new";
    case ParseFailure::no_tool_call: return "no_tool_call";
    case ParseFailure::bad_tool_call: return "bad_tool_call";
  }
  return "?";
}

std::string strip_reasoning(std::string_view text) {
  std::string out;
  size_t pos = 0;
  // A template that opens <think> in the prompt leaves the answer with a lone closing tag.
  const size_t first_close = text.find("</think>");
  const size_t first_open = text.find("<think>");
  if (first_close != std::string_view::npos && (first_open == std::string_view::npos || first_close < first_open))
    pos = first_close + 8;
  while (pos < text.size()) {
    const size_t open = text.find("<think>", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, open - pos));
    const size_t close = text.find("</think>", open + 7);
    if (close == std::string_view::npos) break;
    pos = close + 8;
  }
  return out;
}

CodeExtraction extract_kernel_code(std::string_view response, size_t max_chars) {
  if (response.size() > max_chars)
    return failed(ParseFailure::too_long,
                  fmt::format("Your answer was {} characters, over the limit of {}, and was not read. Answer with the "
                              "complete Python file defining `class ModelNew` in one ```python block, and little else.",
                              response.size(), max_chars));
  if (is_blank(response))
    return failed(ParseFailure::empty,
                  "Your answer was empty. Reply with the complete Python file defining "
                  "`class ModelNew` in one ```python block.");
  const std::string outside = strip_reasoning(response);
  std::vector<Fence> blocks = fences(outside);
  if (blocks.empty()) blocks = fences(response);  // code only in the reasoning: better than nothing

  const Fence* answer = nullptr;
  bool cut_off = false;
  for (const Fence& f : blocks) {
    if (!defines_model_new(f.body)) continue;
    if (f.closed)
      answer = &f;
    else
      cut_off = true;
  }
  if (answer) {
    CodeExtraction e;
    e.code = answer->body;
    return e;
  }
  if (cut_off)
    return failed(ParseFailure::unterminated_code,
                  "Your answer was cut off inside the code block, which never closed, so the kernel was not "
                  "evaluated. Write less: the complete file in one ```python block, with little explanation.");
  if (!blocks.empty())
    return failed(ParseFailure::no_model_new,
                  "None of your code blocks defines `class ModelNew`; the evaluator imports ModelNew from your file. "
                  "Put the complete file, ModelNew included, in one ```python block.");
  if (defines_model_new(outside)) {
    CodeExtraction e;  // bare source without fences
    e.code = outside;
    return e;
  }
  if (is_blank(outside))
    return failed(ParseFailure::empty,
                  "Your answer held only reasoning, with no code after it (it may have been cut "
                  "off). Reason less, then give the complete file in one ```python block.");
  return failed(ParseFailure::no_code,
                "Your answer had no code block. Reply with the complete Python file defining "
                "`class ModelNew` in one ```python block.");
}

ToolCallExtraction extract_tool_call(std::string_view text, const ordered_json& server_tool_calls,
                                     std::string_view tool, const std::vector<std::string>& required_keys) {
  ToolCallExtraction out;
  std::string problem;  // why the last call to this tool was rejected
  auto accept = [&](const ordered_json& args) {
    const std::string missing = missing_keys(args, required_keys);
    if (!missing.empty()) {
      problem = fmt::format("its arguments lack {}", missing);
      return false;
    }
    out.call = ToolCall{std::string(tool), args};
    return true;
  };

  if (server_tool_calls.is_array()) {
    for (const auto& c : server_tool_calls) {
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) continue;
      const auto& f = c["function"];
      if (f.value("name", "") != tool) continue;
      if (auto args = call_arguments(f, problem); args && accept(*args)) return out;
    }
  }

  // The text, reasoning included (<tool_call> tags and fenced blocks hold JSON objects too). The
  // last usable candidate is the model's final word.
  for (const ordered_json& found : json_objects(text)) {
    const bool wrapped = found.contains("function") && found["function"].is_object();  // OpenAI's shape
    const ordered_json& j = wrapped ? found["function"] : found;
    if (j.contains("name") && j["name"].is_string()) {
      if (j["name"] != tool) continue;
      std::string why;
      if (auto args = call_arguments(j, why))
        accept(*args);
      else
        problem = why;
    } else if (missing_keys(j, required_keys).empty()) {
      accept(j);  // the arguments alone
    }
  }
  if (out.call) {
    out.failure = ParseFailure::none;
    return out;
  }
  if (!problem.empty()) {
    out.failure = ParseFailure::bad_tool_call;
    out.feedback = fmt::format("Your call to {} could not be used: {}. Call {} once, with a JSON object holding {}.",
                               tool, problem, tool, fmt::join(required_keys, ", "));
  } else {
    out.failure = ParseFailure::no_tool_call;
    out.feedback = fmt::format("Your answer did not call {}. Call it once, with a JSON object holding {}.", tool,
                               fmt::join(required_keys, ", "));
  }
  return out;
}

}  // namespace vinci::agents
