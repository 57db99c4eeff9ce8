// vinci-cpu-sampler: where a sandboxed process tree spends its CPU time, by mapped file.
//
// vinci-cpu-sampler: where a sandboxed process tree spends its CPU time, by mapped file (eval/cpu_sampler.h).
// perf events where the host allows them, else ptrace stops. The judge runs it beside a candidate's
// timed calls (or its coverage calls) and ends it with SIGTERM, or it ends after --ms. It prints a line "attached" once
// it traces the tree's threads (the judge starts its calls only then), and last a JSON object.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <csignal>
#include <nlohmann/json.hpp>

#include "eval/cpu_sampler.h"
#include "eval/perf_sampler.h"

namespace {
volatile sig_atomic_t g_stop = 0;
void stop_sampling(int) { g_stop = 1; }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Samples the instruction pointers of a process tree's running threads (perf events, else ptrace), prints "
      "\"attached\" once it traces them, then {\"total\", \"cpu_ns\", \"unseen_ns\", \"by_object\", \"error\", "
      "\"evaded\", \"lookup\"}: how many samples fell in each executable mapping, and how much CPU time their threads "
      "ran since their previous samples, by mapping (process, address range, file offset, device, inode, path, and "
      "whether the sampled page was a private copy), with the same by the sampled instruction's offset in the "
      "mapping's file (\"offsets\": [offset, samples, cpu_ns] each)."};
  pid_t pid = 0;
  int ms = 300, hz = 500;
  app.add_option("--pid", pid, "the root of the tree")->required();
  app.add_option("--ms", ms, "how long to sample")->capture_default_str();
  app.add_option("--hz", hz, "samples per second and thread")->capture_default_str();
  bool exclusions_on_stdin = false;
  app.add_flag("--exclusions-on-stdin", exclusions_on_stdin,
               "once the sampling ends, read lines \"FROM TO\" (CLOCK_MONOTONIC, ns) from stdin until its end: "
               "samples taken within those spans are not counted; a line \"--\" starts another set of spans, "
               "tallied apart and printed on a line of its own after the first set's");
  bool perf_only = false;
  app.add_flag("--perf-only", perf_only,
               "never fall back to ptrace stops, which the sampled threads can notice and which a host that stops its "
               "runners by signals would disturb: where perf events are refused, say so in \"error\" and sample "
               "nothing");
  CLI11_PARSE(app, argc, argv);
  // Without SA_RESTART: a wait for a thread the judge froze mid-sample returns, and the sampling ends.
  struct sigaction stop {};
  stop.sa_handler = stop_sampling;
  ::sigaction(SIGTERM, &stop, nullptr);
  const auto attached = [] {
    fmt::print("attached\n");
    std::fflush(stdout);
  };
  const auto excluded = [&] {
    std::vector<vinci::eval::Spans> sets(1);
    if (exclusions_on_stdin)
      for (std::string from, to; std::cin >> from;) {
        if (from == "--") {
          sets.emplace_back();
        } else if (std::cin >> to) {
          sets.back().emplace_back(std::stoull(from), std::stoull(to));
        }
      }
    return sets;
  };
  vinci::eval::CpuSamples s;
  if (!perf_only) {
    s = vinci::eval::sample_cpu(pid, std::chrono::milliseconds(ms), hz, &g_stop, attached, excluded);
  } else if (auto perf =
                 vinci::eval::sample_cpu_perf(pid, std::chrono::milliseconds(ms), hz, &g_stop, attached, excluded)) {
    s = std::move(*perf);
  } else {
    attached();
    s.error = fmt::format(
        "perf events refused on process {} (perf_event_paranoid, a seccomp filter, or no such "
        "process), and --perf-only allows no ptrace stops",
        pid);
    s.lookup = "none";
    vinci::eval::tallies_for(s, excluded);
    vinci::eval::share_sampling_state(s);
  }
  const auto print = [](const vinci::eval::CpuSamples& set) {
    nlohmann::json objects = nlohmann::json::array();
    for (const auto& [m, t] : set.by_object) {
      nlohmann::json offsets = nlohmann::json::array();
      for (const auto& [offset, at] : t.by_offset) offsets.push_back({offset, at.samples, at.cpu_ns});
      objects.push_back({{"pid", m.pid},
                         {"low", m.low},
                         {"high", m.high},
                         {"offset", m.offset},
                         {"dev_major", m.dev_major},
                         {"dev_minor", m.dev_minor},
                         {"inode", m.inode},
                         {"path", m.path},
                         {"private_copy", m.private_copy},
                         {"samples", t.samples},
                         {"cpu_ns", t.cpu_ns},
                         {"offsets", offsets}});
    }
    fmt::print("{}\n", nlohmann::json{{"total", set.total},
                                      {"cpu_ns", set.cpu_ns},
                                      {"unseen_ns", set.unseen_ns},
                                      {"by_object", objects},
                                      {"error", set.error},
                                      {"evaded", set.evaded},
                                      {"lookup", set.lookup}}
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  };
  print(s);
  for (const auto& set : s.further_sets) print(set);
  return 0;
}
