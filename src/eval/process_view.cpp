#include "eval/process_view.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::eval::process_view {

namespace fs = std::filesystem;

namespace {
// A /proc/PID/pagemap entry's flags (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kPagePresent = 1ULL << 63, kPageSwapped = 1ULL << 62, kPageFileOrSharedAnon = 1ULL << 61;

bool is_private_copy(uint64_t entry) {
  return (entry & (kPagePresent | kPageSwapped)) != 0 && (entry & kPageFileOrSharedAnon) == 0;
}

// One line of /proc/PID/maps as an executable mapping, or nothing for a mapping that is not one.
std::optional<MappedObject> parse_maps_line(pid_t pid, const std::string& line) {
  std::istringstream fields(line);
  std::string range, perms, offset, device, inode, path;
  fields >> range >> perms >> offset >> device >> inode;
  std::getline(fields >> std::ws, path);
  const auto dash = range.find('-'), colon = device.find(':');
  if (perms.size() < 3 || perms[2] != 'x' || dash == std::string::npos || colon == std::string::npos)
    return std::nullopt;
  MappedObject m;
  m.pid = pid;
  m.low = std::stoull(range.substr(0, dash), nullptr, 16);
  m.high = std::stoull(range.substr(dash + 1), nullptr, 16);
  m.offset = std::stoull(offset, nullptr, 16);
  m.dev_major = static_cast<unsigned>(std::stoul(device.substr(0, colon), nullptr, 16));
  m.dev_minor = static_cast<unsigned>(std::stoul(device.substr(colon + 1), nullptr, 16));
  m.inode = std::stoull(inode);
  m.path = path.empty() ? "[anonymous]" : path;
  return m;
}
}  // namespace

uint64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(t.tv_nsec);
}

uint64_t page_size() {
  static const uint64_t size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) out.push_back(std::stoi(name));
  }
  return out;
}

std::vector<pid_t> processes(pid_t root) {
  std::vector<pid_t> out;
  std::set<pid_t> seen;
  std::deque<pid_t> queue{root};
  while (!queue.empty()) {
    const pid_t pid = queue.front();
    queue.pop_front();
    if (!seen.insert(pid).second) continue;
    out.push_back(pid);
    for (pid_t tid : numeric_entries(fmt::format("/proc/{}/task", pid))) {
      std::ifstream in(fmt::format("/proc/{}/task/{}/children", pid, tid));
      for (pid_t child; in >> child;) queue.push_back(child);
    }
  }
  return out;
}

std::vector<std::string> task_stat(pid_t pid, pid_t tid) {
  const auto stat = core::try_read_file(fmt::format("/proc/{}/task/{}/stat", pid, tid));
  const auto close = stat ? stat->rfind(')') : std::string::npos;
  if (close == std::string::npos) return {};
  std::istringstream in(stat->substr(close + 1));
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

std::optional<uint64_t> cpu_ns(const std::string& task) {
  const auto schedstat = core::try_read_file(task + "/schedstat");
  if (!schedstat) return std::nullopt;
  std::istringstream in(*schedstat);
  uint64_t ns = 0;
  return in >> ns ? std::optional(ns) : std::nullopt;
}

std::vector<MappedObject> executable_mappings(pid_t pid) {
  std::vector<MappedObject> out;
  std::ifstream in(fmt::format("/proc/{}/maps", pid));
  for (std::string line; std::getline(in, line);)
    if (auto m = parse_maps_line(pid, line)) out.push_back(std::move(*m));
  return out;
}

std::optional<MappedObject> mapping_from_maps(pid_t pid, uint64_t ip) {
  std::ifstream in(fmt::format("/proc/{}/maps", pid));
  for (std::string line; std::getline(in, line);) {
    auto m = parse_maps_line(pid, line);
    if (m && ip >= m->low && ip < m->high) return m;
  }
  return std::nullopt;
}

PageMap::~PageMap() {
  if (fd_ >= 0) ::close(fd_);
}

void PageMap::reopen() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool PageMap::read_entries(uint64_t first_page, size_t count, uint64_t* entries) {
  const auto bytes = static_cast<ssize_t>(count * sizeof(uint64_t));
  const auto at = static_cast<off_t>(first_page * sizeof(uint64_t));
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fd_ < 0 || attempt > 0) {
      reopen();
      fd_ = ::open(fmt::format("/proc/{}/pagemap", pid_).c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (fd_ >= 0 && ::pread(fd_, entries, static_cast<size_t>(bytes), at) == bytes) return true;
  }
  return false;
}

bool PageMap::private_page(uint64_t address) {
  uint64_t entry = 0;
  return !read_entries(address / page_size(), 1, &entry) || is_private_copy(entry);
}

std::vector<uint64_t> PageMap::private_pages(const std::vector<uint64_t>& pages) {
  std::vector<uint64_t> out;
  constexpr size_t kRun = 512;  // pages read at once: a run's entries fill one page of pagemap
  std::vector<uint64_t> entries(kRun);
  for (size_t i = 0; i < pages.size();) {
    const uint64_t first = pages[i] / page_size();
    size_t j = i;
    while (j < pages.size() && pages[j] / page_size() < first + kRun) ++j;
    const size_t count = pages[j - 1] / page_size() - first + 1;
    const bool read = read_entries(first, count, entries.data());
    for (size_t k = i; k < j; ++k)
      if (!read || is_private_copy(entries[pages[k] / page_size() - first])) out.push_back(pages[k]);
    i = j;
  }
  return out;
}

void detach_threads(const std::vector<pid_t>& tids) {
  for (pid_t tid : tids) {
    if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) continue;
    int status = 0;
    while (::waitpid(tid, &status, __WALL) == tid && WIFSTOPPED(status) && (status >> 16) != PTRACE_EVENT_STOP)
      ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(WSTOPSIG(status))));
    ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
  }
}

}  // namespace vinci::eval::process_view
