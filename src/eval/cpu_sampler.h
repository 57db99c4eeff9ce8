// Where a process tree's CPU time goes, seen from outside: a ptrace sampler of instruction pointers.
//
// A candidate's own account of its time (calls into its extension, timed from inside) belongs to the
// candidate. The kernel's view of its threads does not: this sampler, run by the trusted side,
// stops each running thread of the tree now and then, reads its instruction pointer and finds the
// mapped file it lies in (its own extension, libtorch, a BLAS, NumPy, the interpreter, or anonymous
// memory). It is the CPU's counterpart of a GPU profile's kernel-time coverage, and it cannot be told
// apart from the scheduler by the code it watches, nor can that code hide its samples. A sample
// weighs the CPU time its thread ran since its previous one: threads that are runnable but barely run
// (a pool of sched_yield loops) are caught as often as a computing one and must not outvote it.
#pragma once

#include <sys/types.h>

#include <csignal>

#include <chrono>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vinci::eval {

// The executable mapping a sample's instruction pointer lay in, as the kernel described it while the
// sampled thread was stopped. Device and inode name the very file (a host's file bound read-only
// keeps the host's; a copy, a memfd or a renamed file does not), and the judge reads its bytes through
// /proc/PID/map_files/LOW-HIGH, never through a path that may since name something else. The file's
// bytes are not always what runs: a page written through a private mapping (mprotect'ed writable, a
// library's code copied in) is the process's own anonymous copy while the mapping still names the
// file, and such samples are told apart. The offset lets the judge check that the mapping is where a
// loader puts the file's code, not its data pages mapped executable.
struct MappedObject {
  pid_t pid = 0;
  uint64_t low = 0, high = 0;
  uint64_t offset = 0;  // of the mapping in its file
  unsigned dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  std::string path;           // as the kernel names it: a file, "/memfd:NAME (deleted)", "[anonymous]", "[vdso]", or
                              // "[unmapped]" for an address in no executable mapping
  bool private_copy = false;  // the sampled page is no page of its file or of the kernel's vdso (or one it could not
                              // tell: unreadable counts as copied)
  auto operator<=>(const MappedObject&) const = default;
};

struct OffsetTime {
  int samples = 0;
  uint64_t cpu_ns = 0;
};

struct ObjectTime {
  int samples = 0;
  uint64_t cpu_ns = 0;  // the CPU time the sampled threads ran since each one's previous sample
  // Where in the mapping's file the samples fell (mappings only): which function of a library ran
  // (python/vinci_worker/library_symbols.py tells MKL's code inside torch's library from torch's glue).
  std::map<uint64_t, OffsetTime> by_offset;
};

struct CpuSamples {
  int total = 0;                                 // samples of running threads
  uint64_t cpu_ns = 0;                           // their CPU time, summed over by_object
  std::map<MappedObject, ObjectTime> by_object;  // where they lay
  uint64_t unseen_ns = 0;  // perf: how long threads that ran had none of their events armed (wall time, summed)
  std::string error;
  bool evaded = false;  // the error came from the sampled tree during the sampling (a thread that escaped
                        // the sampler), not from the host: the candidate's doing       // non-empty when the tree could
                        // not be traced (ptrace refused) or the host cannot weigh samples or tell private copies (no
                        // schedstat, no pagemap)
  std::string lookup;   // how samples were taken and resolved: "perf" (perf_sampler.h), else ptrace stops with
                        // addresses looked up by "query" (PROCMAP_QUERY) or in "maps"
  // The same sampling tallied under the caller's second and further sets of excluded spans (total,
  // cpu_ns, by_object and unseen_ns their own; error, evaded and lookup this one's).
  std::vector<CpuSamples> further_sets;
};

// Spans of CLOCK_MONOTONIC, in nanoseconds, whose samples the caller does not count: calls it made
// that are not the ones it times (the judge's check windows), where a candidate could otherwise pad
// its own share for free. Asked for once the sampling has ended, as one or more sets: each set is
// tallied on its own (the first in CpuSamples, the rest in its further_sets), so that one sampling
// gives the judge its draws kinds' windows apart (python/vinci_worker/timed_windows.py).
using Spans = std::vector<std::pair<uint64_t, uint64_t>>;
using ExcludedSpans = std::function<std::vector<Spans>()>;

inline bool within(const Spans& spans, uint64_t t) {
  for (const auto& [from, to] : spans)
    if (t >= from && t <= to) return true;
  return false;
}

// Counts one sample, taken at time in mapping m and weighing ns, in the tally of every exclusion set
// whose spans do not hold it (out.further_sets sized to the sets first by tallies_for).
void count_sample(CpuSamples& out, const std::vector<Spans>& sets, uint64_t time, const MappedObject& m,
                  std::optional<uint64_t> file_offset, uint64_t ns);
// The exclusion sets asked of excluded (one empty set where there is none), with out.further_sets
// sized to them.
std::vector<Spans> tallies_for(CpuSamples& out, const ExcludedSpans& excluded);
// The nanoseconds of spans outside every span of excluded (spans may overlap one another).
uint64_t outside(const Spans& spans, const Spans& excluded);
// Gives the further sets' tallies the sampling's own error, evaded and lookup.
void share_sampling_state(CpuSamples& out);

// Samples every running thread of root and its descendants about hz times a second for duration, or
// until *stop turns non-zero (a signal handler's flag: the judge ends a sampling that spans timed calls,
// whose threads it may have frozen; the threads are then left traced, for the exiting caller's kernel
// to detach). attached is called once the threads present at the start are traced (or refused): the
// judge starts its calls only then. A thread born since the sampling started is weighed from its
// birth, any other from when it was found: what ran before the sampling is not weighed.
//
// Through perf where this host lets the judge open events on another process (perf_sampler.h: samples
// a thread cannot see coming), else through ptrace stops, which a thread can notice: lookup says which.
CpuSamples sample_cpu(pid_t root, std::chrono::milliseconds duration, int hz,
                      const volatile sig_atomic_t* stop = nullptr, const std::function<void()>& attached = {},
                      const ExcludedSpans& excluded = {});

// The ptrace sampler alone: each running thread stopped about hz times a second, a sample weighing the
// CPU time its thread ran since its previous one.
CpuSamples sample_cpu_ptrace(pid_t root, std::chrono::milliseconds duration, int hz,
                             const volatile sig_atomic_t* stop = nullptr, const std::function<void()>& attached = {},
                             const ExcludedSpans& excluded = {});

}  // namespace vinci::eval
