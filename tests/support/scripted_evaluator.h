// An evaluator that reads its verdicts from the candidate's own text, for testing the agents without
// running kernels: a file is correct with the speedup over eager written after "eager=" (and over
// torch.compile after "compile=", when present), and the judge's flag written after "flag=", if any;
// "wrong", or no "eager=" at all, makes it incorrect (2 of 5 trials passed, 0.5 off). Every
// evaluate() call's jobs are kept.
#pragma once

#include <string>
#include <vector>

#include "agents/kernel_evaluator.h"

namespace vinci::test {

class ScriptedEvaluator final : public agents::KernelEvaluator {
 public:
  std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override {
    calls.push_back(jobs);
    std::vector<eval::Result> out;
    for (const auto& j : jobs) {
      ++evaluated;
      eval::Result r;
      r.task = j.task.id;
      r.level = j.task.level;
      r.task_number = j.task.number;
      r.task_name = j.task.name;
      r.candidate = j.candidate.file.string();
      r.candidate_hash = j.candidate.hash;
      r.device = "scripted";
      const std::string& src = j.candidate.source;
      const auto eager = src.find("eager=");
      r.trials = 5;
      if (src.find("wrong") != std::string::npos || eager == std::string::npos) {
        r.verdict = eval::Verdict::incorrect;
        r.trials_passed = 2;
        r.max_abs_diff = 0.5;
      } else {
        r.verdict = eval::Verdict::correct;
        r.trials_passed = 5;
        r.speedup_eager = std::stod(src.substr(eager + 6));
        if (const auto at = src.find("compile="); at != std::string::npos)
          r.speedup_compile = std::stod(src.substr(at + 8));
        if (const auto at = src.find("flag="); at != std::string::npos)
          r.flags.push_back(src.substr(at + 5, src.find_first_of(" \n\"", at) - at - 5));
      }
      out.push_back(r);
    }
    return out;
  }
  std::string device() const override { return "scripted"; }

  // Whether each job, over all calls, asked to be measured again.
  std::vector<bool> fresh() const {
    std::vector<bool> out;
    for (const auto& call : calls)
      for (const auto& j : call) out.push_back(j.fresh);
    return out;
  }

  std::vector<std::vector<eval::Job>> calls;
  int evaluated = 0;
};

}  // namespace vinci::test
