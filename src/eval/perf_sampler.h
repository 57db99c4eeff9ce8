// Where a process tree's CPU time goes, sampled from outside by perf's task-clock events.
//
// Where a process tree's CPU time goes, seen from outside without stopping it: task-clock sampling
// events of perf, opened by the trusted side on every thread of the tree.
//
// The ptrace sampler (cpu_sampler.h) stops a thread to read its instruction pointer, and a thread can
// see the stop (a jump of its clock of 30-400 us) and run a library right after it, where the next
// stop cannot yet come (red-team round 10). Here the kernel takes the sample at its own timer
// interrupt in the thread's CPU time, and the sampling is a Poisson process that the thread cannot get
// ahead of: each of a thread's events fires once after a period drawn afresh from an exponential law
// (memoryless: what a thread has seen of past samples says nothing of the next), then stands disabled
// until the sampler draws and arms it again. A sample weighs the mean period over the number of the
// thread's events armed at that instant, which makes the sum of weights in any code an unbiased
// estimate of the CPU time spent there, however the code times itself against the samples it notices;
// only the instants when all of a thread's events wait to be re-armed go unseen, and with several
// events a thread they are rare. A thread born during the sampling is stopped at birth (ptrace's clone
// event) until its events are open, so no thread runs unsampled. A sample's mapping is the one the
// kernel reported as of the sample (the maps at the attach or at a fork or exec, then the mapping
// records in time order), and the sampled pages are checked for private copies at random instants
// the threads cannot see, and last while the tree is frozen.
#pragma once

#include <sys/types.h>

#include <csignal>

#include <chrono>
#include <functional>
#include <optional>

#include "eval/cpu_sampler.h"

namespace vinci::eval {

// Samples root's tree as sample_cpu does (hz: samples per second of a thread's CPU time), through
// perf. Nothing when this host refuses perf events on another process (perf_event_paranoid above 2,
// a seccomp filter): the caller then falls back to ptrace. attached is called, as for sample_cpu,
// once every thread present at the start carries its events.
std::optional<CpuSamples> sample_cpu_perf(pid_t root, std::chrono::milliseconds duration, int hz,
                                          const volatile sig_atomic_t* stop, const std::function<void()>& attached,
                                          const ExcludedSpans& excluded = {});

}  // namespace vinci::eval
