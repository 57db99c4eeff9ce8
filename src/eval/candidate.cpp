#include "eval/candidate.h"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"

namespace vinci::eval {

namespace fs = std::filesystem;

static std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

static double parse_bound(const std::string& text, const fs::path& file) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(value > 0))
    throw std::runtime_error(
        fmt::format("{}: '# vinci-expect-speedup-below: {}' is not a positive number", file.string(), text));
  return value;
}

bool Candidate::runs_on(const std::string& device) const {
  return devices.empty() || std::find(devices.begin(), devices.end(), device) != devices.end();
}

bool Candidate::expectation_met(const std::string& verdict, const std::string& reason,
                                std::optional<double> speedup) const {
  if (!expect) return true;
  if (verdict == "correct" && speedup_below && !(speedup && *speedup < *speedup_below)) return false;
  std::stringstream alternatives(*expect);
  for (std::string alt; std::getline(alternatives, alt, '|');) {
    const auto slash = alt.find('/');
    const std::string cls = alt.substr(0, slash);
    const std::string want = slash == std::string::npos ? "" : alt.substr(slash + 1);
    if (cls == verdict && (want.empty() || want == reason)) return true;
  }
  return false;
}

Candidate load_candidate(const fs::path& file) {
  Candidate c;
  c.file = file;
  c.source = core::read_file(file);
  c.hash = core::content_hash(c.source);
  static const std::regex header(R"(^#\s*vinci-(task|expect|expect-speedup-below|devices):\s*(\S+)\s*$)");
  size_t pos = 0;
  for (int line = 0; line < 12 && pos < c.source.size(); ++line) {
    const size_t end = std::min(c.source.find('\n', pos), c.source.size());
    const std::string text = c.source.substr(pos, end - pos);
    std::smatch m;
    if (std::regex_match(text, m, header)) {
      if (m[1] == "task")
        c.task_header = m[2];
      else if (m[1] == "expect")
        c.expect = m[2];
      else if (m[1] == "expect-speedup-below")
        c.speedup_below = parse_bound(m[2], file);
      else
        c.devices = split_list(m[2]);
    }
    pos = end + 1;
  }
  return c;
}

Pairing match_candidates(const Suite& suite, const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw std::runtime_error(fmt::format("candidates folder {} is not a directory", dir.string()));
  std::map<std::string, const Task*> by_id, by_stem_unique;
  std::map<std::string, int> stem_count;
  std::map<std::pair<int, int>, const Task*> by_number;
  for (const Task& t : suite.tasks) {
    by_id[t.id] = &t;
    const std::string stem = t.file.stem().string();
    by_stem_unique[stem] = &t;
    ++stem_count[stem];
    by_number[{t.level, t.number}] = &t;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".py" && e.path().filename() != "__init__.py")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());

  static const std::regex kb(R"(level_(\d+)_problem_(\d+)(_sample_\d+)?(_kernel)?\.py)");
  Pairing out;
  for (const fs::path& f : files) {
    Candidate c = load_candidate(f);
    const Task* task = nullptr;
    std::string why;
    if (c.task_header) {
      auto it = by_id.find(*c.task_header);
      if (it == by_id.end() && stem_count[*c.task_header] == 1) it = by_stem_unique.find(*c.task_header);
      if (it != by_id.end())
        task = it->second;
      else
        why = fmt::format("its header names task '{}', which the suite does not have", *c.task_header);
    } else {
      const std::string rel = fs::relative(f, dir).replace_extension().generic_string();
      const std::string stem = f.stem().string();
      std::smatch m;
      const std::string fname = f.filename().string();
      if (auto it = by_id.find(rel); it != by_id.end()) {
        task = it->second;
      } else if (stem_count[stem] == 1) {
        task = by_stem_unique[stem];
      } else if (stem_count[stem] > 1) {
        why = fmt::format("'{}' names a task in several levels; put it under levelN/", fname);
      } else if (std::regex_match(fname, m, kb)) {
        auto it2 = by_number.find({std::stoi(m[1]), std::stoi(m[2])});
        if (it2 != by_number.end())
          task = it2->second;
        else
          why = fmt::format("no task level {} number {}", m[1].str(), m[2].str());
      } else {
        why = "its name matches no task (expected levelN/<number>_<Name>.py or a '# vinci-task:' header)";
      }
    }
    if (task)
      out.pairs.emplace_back(*task, std::move(c));
    else
      out.unmatched.push_back(fmt::format("{}: {}", f.string(), why));
  }
  return out;
}

}  // namespace vinci::eval
