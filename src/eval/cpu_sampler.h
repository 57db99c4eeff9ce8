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
#include <map>
#include <string>

namespace vinci::eval {

struct CpuSamples {
  int total = 0;                         // samples of running threads
  std::map<std::string, int> by_object;  // mapped file (or "[anonymous]") -> samples
  std::string error;                     // non-empty when the tree could not be traced (ptrace refused)
};

// Samples every running thread of root and its descendants about hz times a second for duration, or
// until *stop turns non-zero (a signal handler's flag: the judge ends a sampling that spans timed calls,
// whose threads it may have frozen; the threads are then left traced, for the exiting caller's kernel
// to detach).
CpuSamples sample_cpu(pid_t root, std::chrono::milliseconds duration, int hz,
                      const volatile sig_atomic_t* stop = nullptr);

}  // namespace vinci::eval
