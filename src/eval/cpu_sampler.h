// Where a process tree's CPU time goes, seen from outside: a ptrace sampler of instruction pointers.
//
// A candidate's own account of its time (calls into its extension, timed from inside) belongs to the
// candidate. The kernel's view of its threads does not: this sampler, run by the trusted side,
// stops each running thread of the tree now and then, reads its instruction pointer and finds the
// mapped file it lies in (its own extension, libtorch, a BLAS, NumPy, the interpreter, or anonymous
// memory). It is the CPU's counterpart of a GPU profile's kernel-time coverage, and it cannot be told
// apart from the scheduler by the code it watches, nor can that code hide its samples.
#pragma once

#include <sys/types.h>

#include <csignal>

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <string>

namespace vinci::eval {

// The executable mapping a sample's instruction pointer lay in, as the kernel described it while the
// sampled thread was stopped. Device and inode name the very file (a host's file bound read-only
// keeps the host's; a copy, a memfd or a renamed file does not), and the judge reads its bytes through
// /proc/PID/map_files/LOW-HIGH, never through a path that may since name something else.
struct MappedObject {
  pid_t pid = 0;
  uint64_t low = 0, high = 0;
  unsigned dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  std::string path;  // as the kernel names it: a file, "/memfd:NAME (deleted)", "[anonymous]", "[vdso]", or
                     // "[unmapped]" for an address in no executable mapping
  auto operator<=>(const MappedObject&) const = default;
};

struct CpuSamples {
  int total = 0;                          // samples of running threads
  std::map<MappedObject, int> by_object;  // -> samples
  std::string error;                      // non-empty when the tree could not be traced (ptrace refused)
  std::string lookup;                     // how addresses were resolved: "query" (PROCMAP_QUERY) or "maps"
};

// Samples every running thread of root and its descendants about hz times a second for duration, or
// until *stop turns non-zero (a signal handler's flag: the judge ends a sampling that spans timed calls,
// whose threads it may have frozen; the threads are then left traced, for the exiting caller's kernel
// to detach).
CpuSamples sample_cpu(pid_t root, std::chrono::milliseconds duration, int hz,
                      const volatile sig_atomic_t* stop = nullptr);

}  // namespace vinci::eval
