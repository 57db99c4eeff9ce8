// Child processes with pipes, deadlines, resource limits and network isolation.
//
// Every child leads its own process group, so killing it takes its descendants along, and dies
// with its parent (PR_SET_PDEATHSIG). Limits are applied between fork and exec, so they bind the
// child from its first instruction.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vinci::core {

struct ResourceLimits {
  std::optional<uint64_t> address_space_bytes;  // RLIMIT_AS (breaks CUDA, which maps huge ranges)
  std::optional<uint64_t> cpu_seconds;          // RLIMIT_CPU
  std::optional<uint64_t> max_processes;        // RLIMIT_NPROC (the kernel exempts root)
  std::optional<uint64_t> file_size_bytes;      // RLIMIT_FSIZE
  std::optional<uint64_t> open_files;           // RLIMIT_NOFILE
  bool core_dumps = false;                      // RLIMIT_CORE = 0 unless set
};

// Sets the limits on the calling process; async-signal-safe, for use between fork and exec.
void apply_resource_limits(const ResourceLimits& limits);

struct SpawnOptions {
  std::vector<std::string> argv;           // argv[0] is looked up on PATH
  std::map<std::string, std::string> env;  // set on top of the parent's environment
  std::filesystem::path cwd;               // empty: the parent's
  ResourceLimits limits;
  bool isolate_network = false;       // a fresh network namespace when the kernel allows
  std::filesystem::path stderr_path;  // appended to; empty: /dev/null
};

struct ExitStatus {
  bool exited = false;  // true: code is valid; false: killed by signal
  int code = 0;
  int signal = 0;
  std::string describe() const;
};

class Process {
 public:
  // Throws std::runtime_error (naming argv[0]) when the child cannot be started.
  static Process spawn(const SpawnOptions& options);

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills the group and reaps, if still running

  pid_t pid() const { return pid_; }
  bool running();

  // Writes to the child's stdin; false when the child has closed it.
  bool write(std::string_view data);
  void close_stdin();

  enum class Read { line, eof, timeout };
  // Reads one line of stdout (without the newline) within the timeout.
  Read read_line(std::string& line, std::chrono::milliseconds timeout);

  void kill_group();
  ExitStatus wait();
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);

 private:
  Process() = default;
  void reset();
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  std::optional<ExitStatus> status_;
};

// One-shot: runs to completion (or the deadline), returning stdout and the status.
struct Completed {
  ExitStatus status;
  std::string out;
  bool timed_out = false;
};
Completed run_to_completion(const SpawnOptions& options, std::chrono::milliseconds timeout);

// Whether this kernel lets us create a network namespace (probed once, in a child).
bool network_isolation_available();

}  // namespace vinci::core
