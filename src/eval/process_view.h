// A process tree as /proc shows it to a tracer: threads, CPU time, mappings, page state.
//
// What the kernel shows a tracer about a process tree, read from /proc: its processes and threads,
// a thread's CPU time, the executable mappings of a process, and whether a page of a file mapping is
// still the file's. Shared by the CPU samplers (cpu_sampler.h, perf_sampler.h), which decide from it
// whose code a sample ran.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/cpu_sampler.h"

namespace vinci::eval::process_view {

uint64_t page_size();

// CLOCK_MONOTONIC now, in nanoseconds: the clock of perf samples and of the spans callers exclude.
uint64_t monotonic_ns();

// The numeric entries of a /proc directory (its processes or a process's threads).
std::vector<pid_t> numeric_entries(const std::string& dir);

// root and its descendants; a process's children are listed under the thread that forked them.
std::vector<pid_t> processes(pid_t root);

// The fields of a thread's /proc stat after its command name (which may hold anything): the state
// first, the start time (clock ticks since boot) 20th. Empty when the thread is gone.
std::vector<std::string> task_stat(pid_t pid, pid_t tid);

// The CPU time a thread has run, in nanoseconds, from a /proc/PID/task/TID directory (or
// /proc/thread-self); exact for a stopped thread, up to a tick behind for a running one.
std::optional<uint64_t> cpu_ns(const std::string& task);

// The executable mappings of pid, read from /proc/PID/maps, or the one covering ip.
std::vector<MappedObject> executable_mappings(pid_t pid);
std::optional<MappedObject> mapping_from_maps(pid_t pid, uint64_t ip);

// /proc/PID/pagemap of one process, kept open: whether the page at an address of a file mapping is
// the process's own anonymous copy (made by a write through a private mapping, which still names the
// file) rather than the file's page. A page whose entry cannot be read counts as a copy.
class PageMap {
 public:
  explicit PageMap(pid_t pid) : pid_(pid) {}
  PageMap(const PageMap&) = delete;
  PageMap& operator=(const PageMap&) = delete;
  ~PageMap();
  bool private_page(uint64_t address);
  // The addresses among pages (page-aligned, sorted) whose pages are private copies, read a run of
  // neighbouring pages at a time.
  std::vector<uint64_t> private_pages(const std::vector<uint64_t>& pages);
  // After an exec a descriptor opened before reads the old address space: the next read opens afresh.
  void reopen();

 private:
  bool read_entries(uint64_t first_page, size_t count, uint64_t* entries);
  pid_t pid_;
  int fd_ = -1;
};

// Detaches ptrace from each thread: interrupts it, passes on any signal that comes first, and detaches
// at the interrupt's stop. A thread frozen by a cgroup never stops: call it only on running threads.
void detach_threads(const std::vector<pid_t>& tids);

}  // namespace vinci::eval::process_view
