// vinci-as-guard: the assembler in every sandbox that builds.
//
// vinci-as-guard: stands in for the assembler in every sandbox that builds (eval/assembler_guard.h).
//
// The sandbox binds it over each compiler's assembler and binds the real assembler at kRealRoot plus
// that path. The guard learns which assembler it replaces from its own path: /proc/self/exe names the
// mount point. It reads every source the command line names, and stdin where as would read one. A source
// that holds a forbidden directive is refused with one line naming the directive and the file (exit 1).
// Otherwise the guard runs the real assembler with the same arguments. Its stdin is then what the guard
// read (from a memfd), or /dev/null where the guard read none, so as never reads a byte the guard did
// not check.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "eval/assembler_guard.h"

namespace {

constexpr std::string_view kRealRoot = "/vinci/tools/real";

int refuse(const std::string& why) {
  std::fprintf(stderr, "vinci-as-guard: refused: %s (only code compiled from the sources may be in the library)\n",
               why.c_str());
  return 1;
}

bool read_all(int fd, std::string& out) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return true;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    out.append(buffer, static_cast<size_t>(n));
  }
}

bool write_all(int fd, const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// Why a source is refused, or "" when it may be assembled.
std::string check_source(const std::string& text, const std::string& name) {
  const auto directive = vinci::eval::forbidden_directive(text);
  return directive ? name + " holds the assembler directive " + *directive : "";
}

// Why a file as would read is refused, or "" when it may be read. A missing file or a folder is left to
// as, which cannot read either; anything but a regular file (a FIFO, a device) is refused.
std::string check_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno == ENOENT ? "" : path + ": " + std::strerror(errno);
  struct stat st {};
  std::string text, why;
  if (::fstat(fd, &st) != 0)
    why = path + ": " + std::strerror(errno);
  else if (S_ISREG(st.st_mode) && !read_all(fd, text))
    why = path + ": " + std::strerror(errno);
  else if (S_ISREG(st.st_mode))
    why = check_source(text, path);
  else if (!S_ISDIR(st.st_mode))
    why = path + " is not a regular file";
  ::close(fd);
  return why;
}

// Makes fd 0 the checked stdin: its bytes in a memfd, or /dev/null.
bool replace_stdin(const std::string* text) {
  const int fd = text ? ::memfd_create("as-input", 0) : ::open("/dev/null", O_RDONLY);
  if (fd < 0) return false;
  const bool ok = (!text || (write_all(fd, *text) && ::lseek(fd, 0, SEEK_SET) == 0)) && ::dup2(fd, 0) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (const auto why = vinci::eval::forbidden_argument(args)) return refuse("the argument " + *why);
  const auto inputs = vinci::eval::assembler_inputs(args);
  for (const auto& file : inputs.files)
    if (const auto why = check_file(file); !why.empty()) return refuse(why);
  std::string in;
  if (inputs.standard_input) {
    if (!read_all(0, in)) return refuse(std::string("standard input: ") + std::strerror(errno));
    if (const auto why = check_source(in, "standard input"); !why.empty()) return refuse(why);
  }
  if (!replace_stdin(inputs.standard_input ? &in : nullptr))
    return refuse(std::string("cannot pass on standard input: ") + std::strerror(errno));
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return refuse(std::string("cannot read /proc/self/exe: ") + std::strerror(errno));
  const std::string replaced(self, static_cast<size_t>(n));
  if (replaced.starts_with(kRealRoot)) return refuse("the guard is bound where the real assembler should be");
  const std::string real = std::string(kRealRoot) + replaced;
  ::execv(real.c_str(), argv);
  std::fprintf(stderr, "vinci-as-guard: cannot run the real assembler %s: %s\n", real.c_str(), std::strerror(errno));
  return 127;
}
