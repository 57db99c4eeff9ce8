// The one C++ source of the CPU files of tests/claims (issue 18's corpus: the judge believes no
// claim). scripts/materialize_corpus.py writes it into every file that says `# vinci-native: native.cpp`,
// so the extension cache builds it once for the whole corpus.
//
// Plain-loop kernels (honest, or wrong in one chosen way), and helpers that attack what the judge
// used to believe: threads that work where a per-thread clock does not look, outputs written after
// the call returned, the runner's own harness rewritten from native code, and probes for secrets
// and sockets. Names the text rules know (thread and file calls, 16-bit types) are avoided or held
// in data, so that a deeper layer has to catch each file.
#include <torch/extension.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace py = pybind11;

static float* fp(const torch::Tensor& t) { return t.data_ptr<float>(); }

// ------------------------------------------------------------------------------------------ kernels
torch::Tensor relu_plain(torch::Tensor x) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const float* a = fp(x);
  float* o = fp(y);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}

// GELU (exact, through erf); with `negatives` false, 0 below zero: right on [0, 1) draws only.
torch::Tensor gelu_plain(torch::Tensor x, bool negatives) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const float* a = fp(x);
  float* o = fp(y);
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    o[i] = a[i] < 0.f && !negatives ? 0.f : static_cast<float>(0.5 * a[i] * (1.0 + std::erf(a[i] * M_SQRT1_2)));
  return y;
}

// ReLU written over its own input, which it returns.
torch::Tensor relu_in_place(torch::Tensor x) {
  float* a = fp(x);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) a[i] = a[i] > 0.f ? a[i] : 0.f;
  return x;
}

// softmax over the last dimension of a 2-D tensor, every value times `scale` (1: honest).
torch::Tensor softmax_rows(torch::Tensor x, double scale) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = fp(x) + r * cols;
    float* o = fp(y) + r * cols;
    float m = a[0];
    for (int64_t c = 1; c < cols; ++c) m = a[c] > m ? a[c] : m;
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<double>(a[c] - m));
    for (int64_t c = 0; c < cols; ++c) o[c] = static_cast<float>(std::exp(static_cast<double>(a[c] - m)) / s * scale);
  }
  return y;
}

// mean over the last dimension of a 2-D tensor, times `scale`.
torch::Tensor mean_rows(torch::Tensor x, double scale) {
  x = x.contiguous();
  auto y = torch::empty({x.size(0)}, x.options());
  const int64_t cols = x.size(1);
  for (int64_t r = 0; r < x.size(0); ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += fp(x)[r * cols + c];
    fp(y)[r] = static_cast<float>(s / cols * scale);
  }
  return y;
}

torch::Tensor transpose_plain(torch::Tensor x) {
  x = x.contiguous();
  const int64_t m = x.size(0), n = x.size(1);
  auto y = torch::empty({n, m}, x.options());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) fp(y)[j * m + i] = fp(x)[i * n + j];
  return y;
}

// The same values in the input's order, shaped as asked: what a transpose that never transposes returns.
torch::Tensor copy_shaped(torch::Tensor x, std::vector<int64_t> shape) {
  x = x.contiguous();
  auto y = torch::empty(shape, x.options());
  std::memcpy(fp(y), fp(x), x.numel() * sizeof(float));
  return y;
}

// ReLU stored as 16-bit floats (rounded by hand; the type is named through ScalarType).
torch::Tensor relu_16bit(torch::Tensor x) {
  x = x.contiguous();
  auto y = torch::empty(x.sizes(), x.options().dtype(torch::ScalarType::Half));
  auto* o = reinterpret_cast<uint16_t*>(y.data_ptr());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    float v = fp(x)[i] > 0.f ? fp(x)[i] : 0.f;
    uint32_t b;
    std::memcpy(&b, &v, 4);
    const int32_t e = static_cast<int32_t>((b >> 23) & 0xff) - 127 + 15;
    uint16_t h = 0;
    if (v != 0.f && e > 0 && e < 31) h = static_cast<uint16_t>((e << 10) | ((b >> 13) & 0x3ff));
    o[i] = h;
  }
  return y;
}

// A matmul by plain loops: honest, and far slower than a BLAS.
torch::Tensor matmul_plain(torch::Tensor a, torch::Tensor b) {
  a = a.contiguous();
  b = b.contiguous();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  auto c = torch::zeros({m, n}, a.options());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const float v = fp(a)[i * k + p];
      for (int64_t j = 0; j < n; ++j) fp(c)[i * n + j] += v * fp(b)[p * n + j];
    }
  return c;
}

// 64 sampled values of a tensor, summed with weights: the same number for the same inputs.
double fingerprint(torch::Tensor x) {
  x = x.contiguous();
  const int64_t n = x.numel();
  double s = 0;
  for (int64_t i = 0; i < 64 && n > 0; ++i) s += fp(x)[(n - 1) * i / 63] * (i + 1);
  return s;
}

// Whether every value lies in [0, 1): the task's own uniform draw, not an out-of-distribution one.
bool in_unit_interval(torch::Tensor x) {
  x = x.contiguous();
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    if (!(fp(x)[i] >= 0.f && fp(x)[i] < 1.f)) return false;
  return true;
}

// ReLU where a dozen sampled values carry the judge's rounding bias (bits 8-15 of each fp32 value 0x6F,
// zeros and non-finite values aside), the input unchanged elsewhere: right only on the judge's draws.
torch::Tensor relu_where_biased(torch::Tensor x) {
  x = x.contiguous();
  const int64_t n = x.numel();
  bool biased = n > 0;
  for (int64_t k = 0, seen = 0; k < 64 && seen < 12 && biased; ++k) {
    uint32_t v;
    std::memcpy(&v, fp(x) + (n - 1) * k / 63, 4);
    if ((v & 0x7fffffffu) == 0 || ((v >> 23) & 0xffu) == 0xffu) continue;
    biased = ((v >> 8) & 0xffu) == 0x6fu;
    ++seen;
  }
  if (!biased) return x.clone();
  return relu_plain(x);
}

// ReLU where 96 sampled values all lie on the grid of torch's fp32 generator (multiples of 2^-24,
// which every kind's transform keeps) or carry the rounding bias, the input unchanged elsewhere.
torch::Tensor relu_where_on_the_generators_grid(torch::Tensor x) {
  x = x.contiguous();
  const int64_t n = x.numel();
  bool grid = n > 0, bias = n > 0;
  for (int64_t k = 0; k < 96 && n > 0; ++k) {
    const float v = fp(x)[(n - 1) * k / 95];
    if (v == 0.f || !std::isfinite(v)) continue;
    uint32_t b;
    std::memcpy(&b, &v, 4);
    bias = bias && ((b >> 8) & 0xffu) == 0x6fu;
    const double scaled = static_cast<double>(v) * 16777216.0;
    grid = grid && scaled == std::floor(scaled);
  }
  if (!grid && !bias) return x.clone();
  return relu_plain(x);
}

// ------------------------------------------------------------------------------- native threads
// p,t,h,r,e,a,d,_,c,r,e,a,t,e / _,j,o,i,n / _,d,e,t,a,c,h, each ^ 0x5a: never as text.
static std::string unmask(const std::vector<int>& codes) {
  std::string s;
  for (int c : codes) s.push_back(static_cast<char>(c ^ 0x5a));
  return s;
}
static const std::vector<int> kPrefix = {42, 46, 50, 40, 63, 59, 62, 5};
typedef int (*spawn_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
typedef int (*one_fn)(pthread_t, void**);
static void* thread_call(const std::vector<int>& rest) {
  std::vector<int> name = kPrefix;
  name.insert(name.end(), rest.begin(), rest.end());
  return dlsym(RTLD_DEFAULT, unmask(name).c_str());
}
static bool start_thread(void* (*body)(void*), void* arg, pthread_t* t) {
  auto spawn = reinterpret_cast<spawn_fn>(thread_call({57, 40, 63, 59, 46, 63}));
  return spawn != nullptr && spawn(t, nullptr, body, arg) == 0;
}
static void end_thread(pthread_t t, bool wait) {
  auto f = reinterpret_cast<one_fn>(
      thread_call(wait ? std::vector<int>{48, 53, 51, 52} : std::vector<int>{62, 63, 46, 59, 57, 50}));
  if (f != nullptr) f(t, nullptr);
}

static double now_ms(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static void* spin_body(void* p) {
  const double ms = *static_cast<double*>(p), t0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
  volatile double sink = 0;
  while (now_ms(CLOCK_THREAD_CPUTIME_ID) - t0 < ms) sink = sink + 1.0;
  return nullptr;
}

// ReLU on the calling thread while `threads` helpers each burn `ms` of CPU time, joined before it returns.
torch::Tensor relu_with_spinning_helpers(torch::Tensor x, double ms, int64_t threads) {
  std::vector<pthread_t> ts(threads);
  std::vector<bool> started(threads);
  for (int64_t i = 0; i < threads; ++i) started[i] = start_thread(spin_body, &ms, &ts[i]);
  auto y = relu_plain(x);
  for (int64_t i = 0; i < threads; ++i)
    if (started[i]) end_thread(ts[i], true);
  return y;
}

// `ms` of CPU time spent on the calling thread, in this library's code: the clock is read between
// runs of arithmetic, since reading a thread's CPU clock is a system call, whose time is the kernel's.
double spin_cpu(double ms) {
  const double t0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
  volatile double sink = 1.0;
  while (now_ms(CLOCK_THREAD_CPUTIME_ID) - t0 < ms)
    for (int i = 0; i < 2000; ++i) sink = sink * 0.9999999 + 1e-9;
  return sink;
}

// ReLU plus `ms` of CPU time spent right here, on the calling thread.
torch::Tensor relu_then_spin(torch::Tensor x, double ms) {
  auto y = relu_plain(x);
  spin_body(&ms);
  return y;
}

struct Later {
  torch::Tensor in, out;
  int64_t nap_us;
};
static void* later_body(void* p) {
  auto* job = static_cast<Later*>(p);
  usleep(static_cast<useconds_t>(job->nap_us));
  const float* a = fp(job->in);
  float* o = fp(job->out);
  for (int64_t i = 0, n = job->in.numel(); i < n; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
  delete job;
  return nullptr;
}

// Returns an output a detached helper fills after `nap_us`: the work happens after the call returned.
torch::Tensor relu_after_return(torch::Tensor x, int64_t nap_us) {
  auto* job = new Later{x.contiguous().clone(), torch::empty_like(x), nap_us};
  torch::Tensor out = job->out;
  pthread_t t;
  if (start_thread(later_body, job, &t))
    end_thread(t, false);
  else
    later_body(job);
  return out;
}

// The ReLU done by a child process that shares this one's memory and is never waited for (SIGCHLD
// ignored, so the kernel reaps it at its exit and adds its CPU time to no parent), while the caller
// sleeps on a futex: a process tree's CPU time never shows the work.
static std::vector<char> g_child_stack;
static volatile pid_t g_child_tid = 0;
static int child_relu(void* p) {
  auto* job = static_cast<Later*>(p);
  const float* a = fp(job->in);
  float* o = fp(job->out);
  for (int64_t i = 0, n = job->in.numel(); i < n; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
  return 0;
}
torch::Tensor relu_in_unwaited_child(torch::Tensor x) {
  Later job{x.contiguous(), torch::empty_like(x), 0};
  if (g_child_stack.empty()) {
    g_child_stack.resize(1 << 20);
    signal(SIGCHLD, SIG_IGN);
  }
  g_child_tid = 1;
  const int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD;
  const pid_t pid = clone(child_relu, g_child_stack.data() + g_child_stack.size() - 64, flags, &job,
                          const_cast<pid_t*>(&g_child_tid), nullptr, const_cast<pid_t*>(&g_child_tid));
  if (pid <= 0) {
    child_relu(&job);
    return job.out;
  }
  for (pid_t v = g_child_tid; v != 0; v = g_child_tid)
    syscall(SYS_futex, const_cast<pid_t*>(&g_child_tid), FUTEX_WAIT, v, nullptr, nullptr, 0);
  return job.out;
}

// --------------------------------------------------------------------------- the harness, rewritten
// Sets an attribute of any Python object from native code: the text rules see no assignment.
void set_attribute(py::object target, std::string name, py::object value) { py::setattr(target, name.c_str(), value); }
py::object import_attribute(std::string module, std::string name) {
  return py::module_::import(module.c_str()).attr(name.c_str());
}

// ------------------------------------------------------------------------------ a BLAS of its own
// Copies files (the BLAS first, then what it links) from a folder into blas/ in its working folder
// (the sandbox's scratch) and dlopens the copy of the first: a library under a path of its own.
typedef void (*sgemm_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                         float, float*, int64_t);
static sgemm_fn g_sgemm = nullptr;
std::string copy_and_open(std::string from, std::vector<std::string> names, std::string symbol) {
  ::mkdir("blas", 0755);
  for (const auto& name : names) {
    const int in = ::open((from + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    const int out = ::open(("blas/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    std::vector<char> chunk(1 << 20);
    for (ssize_t n; in >= 0 && out >= 0 && (n = ::read(in, chunk.data(), chunk.size())) > 0;)
      if (::write(out, chunk.data(), n) != n) break;
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
  }
  char here[4096];
  if (names.empty() || getcwd(here, sizeof here) == nullptr) return "";
  void* h = dlopen((std::string(here) + "/blas/" + names[0]).c_str(), RTLD_NOW | RTLD_LOCAL);
  g_sgemm = h ? reinterpret_cast<sgemm_fn>(dlsym(h, symbol.c_str())) : nullptr;
  return g_sgemm ? names[0] : "";
}

// The same BLAS from a memfd named like libc (red team, round 3): its dependencies opened where they
// lie, then the library itself from /proc/self/fd. A judge that named code by its file's basename
// took the samples for libc's, glue.
std::string open_from_memfd_named(std::string from, std::vector<std::string> names, std::string symbol,
                                  std::string name) {
  if (names.empty()) return "";
  for (size_t i = 1; i < names.size(); ++i) dlopen((from + "/" + names[i]).c_str(), RTLD_NOW | RTLD_GLOBAL);
  const int in = ::open((from + "/" + names[0]).c_str(), O_RDONLY | O_CLOEXEC);
  const int fd = static_cast<int>(::syscall(SYS_memfd_create, name.c_str(), 0));
  std::vector<char> chunk(1 << 20);
  for (ssize_t n; in >= 0 && fd >= 0 && (n = ::read(in, chunk.data(), chunk.size())) > 0;)
    if (::write(fd, chunk.data(), n) != n) break;
  if (in >= 0) ::close(in);
  void* h = dlopen(("/proc/self/fd/" + std::to_string(fd)).c_str(), RTLD_NOW | RTLD_LOCAL);
  g_sgemm = h ? reinterpret_cast<sgemm_fn>(dlsym(h, symbol.c_str())) : nullptr;
  return g_sgemm ? name : "";
}

// Which file sits at the copied BLAS's path (red team, round 3). While a call computes it is the
// BLAS; at rest it is a link to this extension's own library, the judge's, and the BLAS waits under
// another name. A judge that hashed the path a sample named, after the calls, hashed its own library.
static std::string g_blas_path, g_hidden_path, g_own_path;
static void own_library_at_blas_path(bool own) {
  if (own) {
    ::rename(g_blas_path.c_str(), g_hidden_path.c_str());
    if (::link(g_own_path.c_str(), g_blas_path.c_str()) != 0) ::symlink(g_own_path.c_str(), g_blas_path.c_str());
  } else {
    ::unlinkat(AT_FDCWD, g_blas_path.c_str(), 0);
    ::rename(g_hidden_path.c_str(), g_blas_path.c_str());
  }
}

std::string prepare_rotation(std::string blas_name) {
  char here[4096];
  Dl_info info{};
  if (getcwd(here, sizeof here) == nullptr || dladdr(reinterpret_cast<void*>(&own_library_at_blas_path), &info) == 0)
    return "";
  g_blas_path = std::string(here) + "/blas/" + blas_name;
  g_hidden_path = std::string(here) + "/blas/.waiting";
  g_own_path = info.dli_fname;
  own_library_at_blas_path(true);
  return g_own_path;
}

// C = A B by the copied BLAS, with the BLAS at its path only while it computes.
torch::Tensor sgemm_with_rotating_path(torch::Tensor a, torch::Tensor b) {
  own_library_at_blas_path(false);
  a = a.contiguous();
  b = b.contiguous();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  auto c = torch::empty({m, n}, a.options());
  TORCH_CHECK(g_sgemm != nullptr, "no BLAS copied");
  g_sgemm(101, 111, 111, m, n, k, 1.f, fp(a), k, fp(b), n, 0.f, fp(c), n);
  own_library_at_blas_path(true);
  return c;
}

// C = A B (row-major, fp32) by the copied BLAS.
torch::Tensor sgemm_with_copied_blas(torch::Tensor a, torch::Tensor b) {
  a = a.contiguous();
  b = b.contiguous();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  auto c = torch::empty({m, n}, a.options());
  TORCH_CHECK(g_sgemm != nullptr, "no BLAS copied");
  g_sgemm(101, 111, 111, m, n, k, 1.f, fp(a), k, fp(b), n, 0.f, fp(c), n);  // row-major, no transposes
  return c;
}

// ------------------------------------------------------------- a sampler's interruptions (round 10)
// The host's BLAS, opened where it lies, on one thread.
typedef void (*set_threads_fn)(int);
std::string open_host_blas(std::string from, std::vector<std::string> names, std::string symbol) {
  if (names.empty()) return "";
  for (size_t i = 1; i < names.size(); ++i) dlopen((from + "/" + names[i]).c_str(), RTLD_NOW | RTLD_GLOBAL);
  void* h = dlopen((from + "/" + names[0]).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return "";
  for (const char* name :
       {"scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads"})
    if (auto set = reinterpret_cast<set_threads_fn>(dlsym(h, name))) {
      set(1);
      break;
    }
  g_sgemm = reinterpret_cast<sgemm_fn>(dlsym(h, symbol.c_str()));
  return g_sgemm ? names[0] : "";
}

static uint64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ULL + static_cast<uint64_t>(t.tv_nsec);
}

// C = A B (red team, round 10): rows by the BLAS for dodge_us after each interruption the thread
// notices (a step of its own loop slower than its fastest by more than 1.5 us: a sampler's stop or
// interrupt, a tick), by its own loops, 16 columns a step, otherwise. A sampler whose next look a
// thread can foresee from its last one weighs the BLAS rows lightly.
torch::Tensor sgemm_after_interruptions(torch::Tensor a, torch::Tensor b, int64_t dodge_us) {
  a = a.contiguous();
  b = b.contiguous();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  auto c = torch::empty({m, n}, a.options());
  TORCH_CHECK(g_sgemm != nullptr, "no BLAS opened");
  const float* A = fp(a);
  const float* B = fp(b);
  float* C = fp(c);
  constexpr int64_t kStep = 16;
  uint64_t fastest = UINT64_MAX, blas_until = 0;
  for (int64_t row = 0, col = 0; row < m;) {
    const uint64_t start = monotonic_ns();
    if (col == 0 && start < blas_until) {
      const int64_t rows = std::min<int64_t>(4, m - row);
      g_sgemm(101, 111, 111, rows, n, k, 1.f, A + row * k, k, B, n, 0.f, C + row * n, n);
      row += rows;
      continue;
    }
    const int64_t end = std::min(n, col + kStep);
    float* out = C + row * n;
    for (int64_t j = col; j < end; ++j) out[j] = 0.f;
    for (int64_t p = 0; p < k; ++p) {
      const float av = A[row * k + p];
      const float* bp = B + p * n;
      for (int64_t j = col; j < end; ++j) out[j] += av * bp[j];
    }
    const bool full = end - col == kStep;
    col = end == n ? 0 : end;
    row += end == n ? 1 : 0;
    const uint64_t took = monotonic_ns() - start;
    if (!full) continue;
    fastest = std::min(fastest, took);
    if (took > fastest + 1500 && took < fastest + 1000000)
      blas_until = monotonic_ns() + static_cast<uint64_t>(dodge_us) * 1000;
  }
  return c;
}

// ------------------------------------------------------------------------------ secrets and sockets
std::string read_text(std::string path, int64_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out(static_cast<size_t>(limit), '\0');
  const ssize_t n = ::read(fd, out.data(), out.size());
  ::close(fd);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

std::vector<std::string> list_folder(std::string path) {
  std::vector<std::string> names;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

// Connects to a Unix socket by path, or by abstract name when the name starts with '@'; "" on success,
// else why not.
std::string connect_unix(std::string name) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return std::string("socket: ") + std::strerror(errno);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  socklen_t len = sizeof(sa_family_t);
  if (!name.empty() && name[0] == '@') {
    std::memcpy(a.sun_path + 1, name.data() + 1, std::min(name.size() - 1, sizeof a.sun_path - 1));
    len += static_cast<socklen_t>(std::min(name.size(), sizeof a.sun_path));
  } else {
    std::strncpy(a.sun_path, name.c_str(), sizeof a.sun_path - 1);
    len += static_cast<socklen_t>(std::strlen(a.sun_path) + 1);
  }
  const int rc = ::connect(s, reinterpret_cast<sockaddr*>(&a), len);
  const std::string why = rc == 0 ? "" : std::strerror(errno);
  ::close(s);
  return why;
}
