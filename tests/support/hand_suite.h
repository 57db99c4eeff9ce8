// A small suite and its results, built by hand for the metrics and the charts (metrics_test.cpp does
// the arithmetic):
//
// level 1 (5 tasks):
//   1_A   correct, eager 0.4, compile 0.2
//   2_B   correct, eager 0.8 exactly, compile 0.5 exactly
//   3_C   correct, eager 1.0 exactly, compile 0.9
//   4_D&E<x> three candidates: incorrect (eager 9.0 recorded, must not count);
//                              correct eager 1.6 / compile 1.2; correct eager 2.5 / compile 1.0
//         -> best for eager 2.5 (2nd candidate), best for compile 1.2 (1st candidate)
//            (its name needs escaping in XML)
//   5_F   no result (missing)
// level 2 (3 tasks):
//   1_X   correct, eager 1.6, compile 0.8 exactly
//   2_Y   two candidates: incorrect, compile_error
//   3_Z   correct, no speedup (baseline not timed)
// level 3: listed with no tasks (empty level)
// plus a result for "level1/99_Extra", which the suite does not list: ignored.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/eval_result.h"

namespace vinci::test {

inline const std::map<int, std::vector<std::string>> kHandSuite{
    {1, {"level1/1_A", "level1/2_B", "level1/3_C", "level1/4_D&E<x>", "level1/5_F"}},
    {2, {"level2/1_X", "level2/2_Y", "level2/3_Z"}},
    {3, {}},
};

inline std::vector<eval::Result> hand_suite_results() {
  using eval::Verdict;
  return {
      make_result("level1/1_A", 1, Verdict::correct, 0.4, 0.2),
      make_result("level1/2_B", 1, Verdict::correct, 0.8, 0.5),
      make_result("level1/3_C", 1, Verdict::correct, 1.0, 0.9),
      make_result("level1/4_D&E<x>", 1, Verdict::incorrect, 9.0, 9.0),
      make_result("level1/4_D&E<x>", 1, Verdict::correct, 1.6, 1.2),
      make_result("level1/4_D&E<x>", 1, Verdict::correct, 2.5, 1.0),
      make_result("level2/1_X", 2, Verdict::correct, 1.6, 0.8),
      make_result("level2/2_Y", 2, Verdict::incorrect),
      make_result("level2/2_Y", 2, Verdict::compile_error),
      make_result("level2/3_Z", 2, Verdict::correct),
      make_result("level1/99_Extra", 1, Verdict::correct, 5.0, 5.0),
  };
}

}  // namespace vinci::test
