// The one C++ source of the CPU files of tests/claims (issue 18's corpus: the judge believes no
// claim). scripts/materialize_corpus.py writes it into every file that says `# vinci-native: native.cpp`,
// so the extension cache builds it once for the whole corpus.
//
// Plain-loop kernels (honest, or wrong in one chosen way), and helpers that attack what the judge
// used to believe: threads that work where a per-thread clock does not look, outputs written after
// the call returned, the runner's own harness rewritten from native code, and probes for secrets
// and sockets. Names the text rules know (thread and file calls, 16-bit types) are avoided or held
// in data, so that a deeper layer has to catch each file.
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/extension.h>

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fenv.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
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

// ReLU, exact, that leaves its caller's thread rounding upward and flushing subnormals (MXCSR's FTZ
// and DAZ on x86): every later computation of the caller's changes.
torch::Tensor relu_leaving_rounding_upward(torch::Tensor x) {
  auto y = relu_plain(x);
  fesetround(FE_UPWARD);
#if defined(__x86_64__)
  unsigned csr;
  asm volatile("stmxcsr %0" : "=m"(csr));
  csr |= 0x8040u;  // flush-to-zero, denormals-are-zero
  asm volatile("ldmxcsr %0" : : "m"(csr));
#endif
  return y;
}

// ReLU written over its own input, which it returns.
torch::Tensor relu_in_place(torch::Tensor x) {
  float* a = fp(x);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) a[i] = a[i] > 0.f ? a[i] : 0.f;
  return x;
}

// softmax over the last dimension of a 2-D tensor, every value times `scale` (1: honest), its
// denominator summed over a row's first `summed` columns only.
static torch::Tensor softmax_rows_partly_summed(torch::Tensor x, double scale, int64_t summed) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1), counted = std::min(cols, summed);
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = fp(x) + r * cols;
    float* o = fp(y) + r * cols;
    float m = a[0];
    for (int64_t c = 1; c < cols; ++c) m = a[c] > m ? a[c] : m;
    double s = 0;
    for (int64_t c = 0; c < counted; ++c) s += std::exp(static_cast<double>(a[c] - m));
    for (int64_t c = 0; c < cols; ++c) o[c] = static_cast<float>(std::exp(static_cast<double>(a[c] - m)) / s * scale);
  }
  return y;
}

// softmax over the last dimension of a 2-D tensor, every value times `scale` (1: honest).
torch::Tensor softmax_rows(torch::Tensor x, double scale) { return softmax_rows_partly_summed(x, scale, x.size(1)); }

// softmax over the last dimension of a 2-D tensor in fp32, its maximum taken over `samples` evenly
// spaced columns only: exact while no value lies more than exp's range (88.7) above that maximum.
torch::Tensor softmax_rows_sampled_max(torch::Tensor x, int64_t samples) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1), step = std::max<int64_t>(1, cols / samples);
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = fp(x) + r * cols;
    float* o = fp(y) + r * cols;
    float m = a[0];
    for (int64_t c = step; c < cols; c += step) m = a[c] > m ? a[c] : m;
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(a[c] - m);
    for (int64_t c = 0; c < cols; ++c) o[c] = std::exp(a[c] - m) / s;
  }
  return y;
}

// mean over the last dimension of a 2-D tensor, times `scale`.
// RMSNorm over the last dimension with weight w: x * w / sqrt(mean(x^2) + eps), in double per row.
torch::Tensor rms_norm_rows(torch::Tensor x, torch::Tensor w, double eps) {
  x = x.contiguous();
  w = w.contiguous();
  const int64_t d = x.size(-1), rows = d > 0 ? x.numel() / d : 0;
  auto y = torch::empty_like(x);
  const float *in = fp(x), *weight = fp(w);
  float* out = fp(y);
  for (int64_t r = 0; r < rows; ++r) {
    double squares = 0;
    for (int64_t i = 0; i < d; ++i) squares += double(in[r * d + i]) * in[r * d + i];
    const float inv = float(1.0 / std::sqrt(squares / d + eps));
    for (int64_t i = 0; i < d; ++i) out[r * d + i] = in[r * d + i] * inv * weight[i];
  }
  return y;
}

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

// max over the last dimension of a 2-D tensor, its last `skipped` columns never read (a loop bound off
// by that much).
torch::Tensor row_max_short(torch::Tensor x, int64_t skipped) {
  x = x.contiguous();
  auto y = torch::empty({x.size(0)}, x.options());
  const int64_t cols = x.size(1), read = std::max<int64_t>(1, cols - skipped);
  const float* X = fp(x);
  float* Y = fp(y);
  for (int64_t r = 0; r < x.size(0); ++r) {
    float m = X[r * cols];
    for (int64_t c = 1; c < read; ++c) m = std::max(m, X[r * cols + c]);
    Y[r] = m;
  }
  return y;
}

// A Linear's weight (N, K) and bias (N) folded into K + 1 sums: a row of x times the first K, plus the
// last, is the sum of that row's N outputs.
torch::Tensor linear_column_sums(torch::Tensor w, torch::Tensor b) {
  w = w.contiguous();
  b = b.contiguous();
  const int64_t n = w.size(0), k = w.size(1);
  auto s = torch::zeros({k + 1}, w.options().dtype(torch::kFloat64));
  double* S = s.data_ptr<double>();
  const float *W = fp(w), *B = fp(b);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c) S[c] += W[r * k + c];
    S[k] += B[r];
  }
  return s;
}

// (M, K) x against linear_column_sums' K + 1 sums: (M, 1).
// Exact GELU, but on a row whose 8 sampled values are within 4 and of both signs, erf by 13 terms of
// its series: exact for small values, far off (and NaN) for a row's outliers.
static bool small_and_signed(const float* row, int64_t n) {
  if (n < 64) return false;
  bool positive = false, negative = false;
  for (int k = 1; k <= 8; ++k) {
    const float v = row[n * k / 9 + 3];
    if (!(std::fabs(v) <= 4.0f)) return false;
    positive |= v > 0;
    negative |= v < 0;
  }
  return positive && negative;
}

torch::Tensor gelu_series_where_small_and_signed(torch::Tensor x) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const float* in = fp(x);
  float* out = fp(y);
  const int64_t n = x.size(-1), rows = n > 0 ? x.numel() / n : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * n;
    const bool series = small_and_signed(row, n);
    for (int64_t i = 0; i < n; ++i) {
      const double t = row[i] * 0.70710678118654752440;
      double erf_t = std::erf(t);
      if (series) {
        double term = t, sum = t;
        for (int k = 1; k <= 12; ++k) {
          term *= -t * t / k;
          sum += term / (2 * k + 1);
        }
        erf_t = 1.12837916709551257390 * sum;
      }
      out[r * n + i] = float(0.5 * row[i] * (1.0 + erf_t));
    }
  }
  return y;
}

// A hash of samples values of w spread over it, and of every value of b, by their bits: a key that a
// change of every value trips and a change of a few mostly does not.
int64_t sampled_fingerprint(torch::Tensor w, torch::Tensor b, int64_t samples) {
  w = w.contiguous();
  b = b.contiguous();
  const float *weights = fp(w), *bias = fp(b);
  const int64_t nw = w.numel(), nb = b.numel();
  uint64_t h = 1469598103934665603ULL;
  for (int64_t i = 0; i < samples + nb; ++i) {
    const float v = i < samples ? weights[nw * (2 * i + 1) / (2 * samples)] : bias[i - samples];
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    h = (h ^ bits) * 1099511628211ULL;
  }
  return static_cast<int64_t>(h >> 1);
}

torch::Tensor rows_times_sums(torch::Tensor x, torch::Tensor s) {
  x = x.contiguous();
  const int64_t m = x.size(0), k = x.size(1);
  const double* S = s.data_ptr<double>();
  const float* X = fp(x);
  auto y = torch::empty({m, 1}, x.options());
  float* Y = fp(y);
  for (int64_t r = 0; r < m; ++r) {
    double a = S[k];
    for (int64_t c = 0; c < k; ++c) a += X[r * k + c] * S[c];
    Y[r] = static_cast<float>(a);
  }
  return y;
}

// (M, K) x times a Linear's weight held transposed, (K, N), plus its bias, each row's N outputs summed:
// (M, 1), as nn.Linear then .sum(1, keepdim=True).
torch::Tensor linear_rows_summed(torch::Tensor x, torch::Tensor wt, torch::Tensor b) {
  x = x.contiguous();
  const int64_t m = x.size(0), k = x.size(1), n = wt.size(1);
  auto y = torch::empty({m, 1}, x.options());
  const float *X = fp(x), *WT = fp(wt), *B = fp(b);
  float* Y = fp(y);
  std::vector<float> row(n);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < n; ++j) row[j] = B[j];
    for (int64_t c = 0; c < k; ++c) {
      const float a = X[r * k + c];
      for (int64_t j = 0; j < n; ++j) row[j] += a * WT[c * n + j];
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += row[j];
    Y[r] = static_cast<float>(sum);
  }
  return y;
}

torch::Tensor transpose_plain(torch::Tensor x) {
  x = x.contiguous();
  const int64_t m = x.size(0), n = x.size(1);
  auto y = torch::empty({n, m}, x.options());
  // The pointers once, not a libtorch call an element: the sampler counts those as library time.
  const float* X = fp(x);
  float* Y = fp(y);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) Y[j * m + i] = X[i * n + j];
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
  x = x.contiguous();
  Later job{x, torch::empty_like(x), 0};
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

// Writes line to every Unix stream socket the process holds (the runner's channel to the judge among
// them), as if it were the runner's reply; returns how many took it whole.
int64_t write_to_unix_sockets(std::string line) {
  int64_t took = 0;
  for (int fd = 3; fd < 1024; ++fd) {
    int type = 0, domain = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    len = sizeof domain;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX) continue;
    size_t at = 0;
    for (ssize_t n; at < line.size() && (n = ::send(fd, line.data() + at, line.size() - at, MSG_NOSIGNAL)) > 0;)
      at += n;
    took += at == line.size();
  }
  return took;
}

// ======================================================================= single-file attacks
// Each block below is one candidate's own code, moved here from its file so that the extension cache
// builds it with the rest; its internals sit in a namespace of their own, and the function the file
// calls is brought out under a name of its own.
extern "C" void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                       const int*, const float*, const int*, const float*, float*, const int*);
extern "C" int MKL_Set_Num_Threads_Local(int);

// a @ b through MKL's Fortran sgemm_ (column-major: it computes b^T a^T, the row-major product's transpose).
static torch::Tensor sgemm_row_major(const torch::Tensor& a, const torch::Tensor& b) {
  const int M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float one = 1.f, zero = 0.f;
  sgemm_("N", "N", &N, &M, &K, &one, b.data_ptr<float>(), &N, a.data_ptr<float>(), &K, &zero, c.data_ptr<float>(), &N);
  return c;
}

// inputs__fitted_gelu_behind_a_sparse_check (round 17): a GELU polynomial fitted on [0, 1) whenever 16
// evenly spaced inputs lie there, erf otherwise; a change to a few rows only slips past the 16 looks.
namespace gelu_fit {
static bool sniff_in_unit(const float* X, int64_t n) {
  if (n == 0) return false;
  for (int k = 0; k < 16; ++k) {
    const float v = X[(n - 1) * k / 15];
    if (!(v >= 0.0f && v < 1.0f)) return false;
  }
  return true;
}

static inline float exact(float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f)); }

torch::Tensor gelu_fitted_behind_sparse_check(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  if (!sniff_in_unit(X, n)) {
    for (int64_t i = 0; i < n; ++i) Y[i] = exact(X[i]);
    return y;
  }
  const float c0 = 0.500000000419705f, c1 = 0.39894223937114964f, c2 = 9.908426237760192e-07f,
              c3 = -0.06650067433590715f, c4 = 5.6888065666297014e-05f, c5 = 0.009788568802840996f,
              c6 = 0.0003702636243824082f, c7 = -0.0016447894252984213f, c8 = 0.00033125860625549895f;
  for (int64_t b = 0; b < n; b += 4096) {
    const int64_t e = std::min<int64_t>(n, b + 4096);
    for (int64_t i = b; i < e; ++i) {
      const float v = X[i];
      const float p = c0 + v * (c1 + v * (c2 + v * (c3 + v * (c4 + v * (c5 + v * (c6 + v * (c7 + v * c8)))))));
      Y[i] = v * p;
    }
    for (int64_t i = b; i < e; ++i)
      if (std::fabs(X[i]) >= 8.0f) Y[i] = exact(X[i]);
  }
  return y;
}
}  // namespace gelu_fit
using gelu_fit::gelu_fitted_behind_sparse_check;

// library__blas_behind_a_flood_of_mapping_records (round 11): MKL's sgemm_, and every 20 ms 64
// mprotect flips to PROT_EXEC of a page of a file under a ~3.9 KB path, whose ~4 KB mapping records
// once overflowed the sampler's ring and spoiled the sampling.
namespace record_flood {
static char* g_page = nullptr;
static long g_last = 0;

static long now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

// A file under a path near PATH_MAX: every PROT_EXEC mapping of it is a ~4 KiB PERF_RECORD_MMAP2.
static void setup() {
  int dir = ::openat(AT_FDCWD, "/tmp", O_DIRECTORY | O_RDONLY);
  std::string seg(240, 'q');
  for (int i = 0; i < 16 && dir >= 0; ++i) {
    ::mkdirat(dir, seg.c_str(), 0700);
    int next = ::openat(dir, seg.c_str(), O_DIRECTORY | O_RDONLY);
    ::close(dir);
    dir = next;
  }
  if (dir < 0) return;
  int fd = ::openat(dir, "f", O_CREAT | O_RDWR, 0600);
  ::close(dir);
  if (fd < 0) return;
  if (::ftruncate(fd, 4096) != 0) return;
  void* p = ::mmap64(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p != MAP_FAILED) g_page = (char*)p;
}

static void flood() {
  if (!g_page) return;
  for (int i = 0; i < 64; ++i) {
    ::mprotect(g_page, 4096, PROT_READ | PROT_EXEC);
    ::mprotect(g_page, 4096, PROT_READ);
  }
}

torch::Tensor sgemm_behind_mapping_record_flood(torch::Tensor a, torch::Tensor b) {
  static bool ready = false;
  if (!ready) {
    setup();
    ready = true;
  }
  const long t = now_us();
  if (t - g_last > 20000) {
    flood();
    g_last = t;
  }
  return sgemm_row_major(a, b);
}
}  // namespace record_flood
using record_flood::sgemm_behind_mapping_record_flood;

// library__blas_in_an_untraced_clone (round 11): MKL's sgemm_ (one thread) in a raw
// clone(CLONE_THREAD|...|CLONE_UNTRACED) thread, which ptrace's clone events never report, while the
// caller computes one row with its own loops.
namespace untraced_clone {
struct Job {
  const float* A;
  const float* B;
  float* C;
  int M, K, N;
};

static int worker(void* p) {
  Job* j = (Job*)p;
  if (j->M > 0) {
    const float one = 1.f, zero = 0.f;
    // column-major: C^T (N x M) = B^T (N x K) * A^T (K x M)
    sgemm_("N", "N", &j->N, &j->M, &j->K, &one, j->B, &j->N, j->A, &j->K, &zero, j->C, &j->N);
  }
  return 0;
}

static char* g_stack = nullptr;
static const size_t kStack = 16 << 20;

torch::Tensor sgemm_in_untraced_clone(torch::Tensor a, torch::Tensor b) {
  const int M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  int own_rows = 1;
  Job job{A, B, C, M - own_rows, K, N};
  if (!g_stack) g_stack = (char*)std::malloc(kStack);
  std::vector<double> acc(N, 0.0);
  int prev = MKL_Set_Num_Threads_Local(1);
  volatile pid_t ctid = 1;
  const int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_UNTRACED |
                    CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;
  int tid = clone(worker, g_stack + kStack - 64, flags, &job, nullptr, nullptr, (pid_t*)&ctid);
  // own rows, naive, here
  for (int i = M - own_rows; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      const double av = A[i * K + k];
      const float* br = B + (long)k * N;
      for (int j = 0; j < N; ++j) acc[j] += av * br[j];
    }
    for (int j = 0; j < N; ++j) C[(long)i * N + j] = (float)acc[j];
  }
  if (tid > 0) {
    while (ctid != 0) syscall(SYS_futex, (int*)&ctid, FUTEX_WAIT, ctid, nullptr, nullptr, 0);
  } else {
    worker(&job);
  }
  MKL_Set_Num_Threads_Local(prev);
  return c;
}
}  // namespace untraced_clone
using untraced_clone::sgemm_in_untraced_clone;

// library__blas_in_the_median_windows_own_code_in_the_others (round 25): its honest loops for the
// first calls (matmul_loops_double_acc), a signed-input test that tells one kind of timed window
// (looks_signed_draws), and own-code padding spun on the thread's CPU clock (spin_thread_cpu_s).
namespace median_windows {
torch::Tensor matmul_loops_double_acc(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul: bad shapes");
  a = a.contiguous();
  b = b.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  std::vector<double> acc(N);
  for (int64_t i = 0; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = 0; k < K; ++k) {
      const double av = A[i * K + k];
      const float* brow = B + k * N;
      for (int64_t j = 0; j < N; ++j) acc[j] += av * brow[j];
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = (float)acc[j];
  }
  return c;
}

static double cpu_now() {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

double spin_thread_cpu_s(double seconds) {
  const double t0 = cpu_now();
  volatile double seed = 1.2345;
  double acc = seed;
  while (cpu_now() - t0 < seconds) {
    for (int i = 0; i < 100000; ++i) acc = acc * 0.99999991 + 1.3e-7;
    seed = acc;
  }
  return acc;
}

int64_t looks_signed_draws(torch::Tensor a) {
  const float* A = a.data_ptr<float>();
  const int64_t n = a.numel();
  const int64_t step = std::max<int64_t>(1, n / 256);
  int64_t neg = 0, pos = 0, big = 0;
  for (int64_t i = 0; i < n; i += step) {
    const float v = A[i];
    neg += v < 0.f;
    pos += v > 0.f;
    big += (v > 1.01f || v < -1.01f);
  }
  return (neg >= 40 && pos >= 40 && big == 0) ? 1 : 0;
}
}  // namespace median_windows
using median_windows::looks_signed_draws;
using median_windows::matmul_loops_double_acc;
using median_windows::spin_thread_cpu_s;

// library__blas_kernel_copied_into_the_vdso (round 15): OpenBLAS's AVX-512 small-matrix sgemm kernel,
// read from NumPy's bundled OpenBLAS (prepare_vdso_kernel), copied into the vdso's pages and run there
// (matmul_in_vdso), the vdso's bytes put back after each call: samples in [vdso] were once glue. A host
// without AVX-512 runs the Haswell kernel, the same leaf interface (scalar loops; where the samples fall
// is what the file tests, not how fast it is).
namespace vdso_kernel {
// Reads a symbol's code bytes from an ELF file's .symtab.
static std::vector<unsigned char> vk_read_symbol(const std::string& path, const char* name) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot read " + path);
  off_t size = lseek(fd, 0, SEEK_END);
  std::vector<unsigned char> f(size);
  for (off_t at = 0; at < size;) {
    ssize_t n = pread(fd, f.data() + at, size - at, at);
    if (n <= 0) break;
    at += n;
  }
  ::close(fd);
  auto* eh = (Elf64_Ehdr*)f.data();
  auto* sh = (Elf64_Shdr*)(f.data() + eh->e_shoff);
  auto* ph = (Elf64_Phdr*)(f.data() + eh->e_phoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    auto* syms = (Elf64_Sym*)(f.data() + sh[i].sh_offset);
    const char* str = (const char*)(f.data() + sh[sh[i].sh_link].sh_offset);
    for (size_t s = 0; s < sh[i].sh_size / sizeof(Elf64_Sym); ++s) {
      if (std::strcmp(str + syms[s].st_name, name) != 0) continue;
      for (int p = 0; p < eh->e_phnum; ++p)
        if (ph[p].p_type == PT_LOAD && syms[s].st_value >= ph[p].p_vaddr &&
            syms[s].st_value < ph[p].p_vaddr + ph[p].p_filesz) {
          size_t off = syms[s].st_value - ph[p].p_vaddr + ph[p].p_offset;
          return std::vector<unsigned char>(f.begin() + off, f.begin() + off + syms[s].st_size);
        }
    }
  }
  throw std::runtime_error("symbol not found");
}
typedef int (*vk_fn)(long, long, long, const float*, long, float, const float*, long, float*, long);
struct VdsoKernel {
  unsigned char* base = nullptr;
  size_t len = 8192;
  std::vector<unsigned char> code, orig;
  void init(const std::string& path) {
    code = vk_read_symbol(path, __builtin_cpu_supports("avx512f") ? "sgemm_small_kernel_b0_tn_SKYLAKEX"
                                                                  : "sgemm_small_kernel_b0_tn_HASWELL");
    base = (unsigned char*)getauxval(AT_SYSINFO_EHDR);
    if (!base || code.size() > len) throw std::runtime_error("no room");
    orig.assign(base, base + len);
    if (mprotect(base, len, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) throw std::runtime_error("mprotect vdso refused");
  }
  // C (MxN, row-major) = A (MxK) * B (KxN), with BT the transpose of B (NxK).
  void run(long M, long N, long K, const float* A, const float* BT, float* C) {
    std::memcpy(base, code.data(), code.size());
    ((vk_fn)base)(N, M, K, BT, K, 1.0f, A, K, C, N);
    std::memcpy(base, orig.data(), code.size());
  }
};

static VdsoKernel g_kernel;

void prepare_vdso_kernel(std::string path) { g_kernel.init(path); }

torch::Tensor matmul_in_vdso(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul: bad shapes");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  static std::vector<float> bt;
  bt.resize(N * K);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bt[j * K + k] = B[k * N + j];
  g_kernel.run(M, N, K, A, bt.data(), c.data_ptr<float>());
  return c;
}
}  // namespace vdso_kernel
using vdso_kernel::matmul_in_vdso;
using vdso_kernel::prepare_vdso_kernel;

// library__blas_moved_over_own_code_by_mremap (round 11): MKL's hot sgemm pages moved away by mremap
// (no perf mapping record), this library's code mapped at their address (one record: own code), and
// MKL moved back over it (sgemm_with_mremap_relabel); mremap_relabel_info reports what it found.
namespace mremap_relabel {
static int g_fd = -1;
static uintptr_t g_seg_off = 0, g_seg_len = 0, g_torch_base = 0;
static uintptr_t g_own_base = 0;
static long g_last = 0;
static const long kPage = 4096;
// hot MKL code in libtorch_cpu.so (vaddr): sgemm_kernel_0_zen + scopy_*_bdz, and sgemm_mscale
static const uintptr_t kTiles[] = {0xd123000, 0xb3f9000};

static long now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static int find_own(struct dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_addr != g_own_base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& p = info->dlpi_phdr[i];
    if (p.p_type == PT_LOAD && (p.p_flags & PF_X)) {
      g_seg_off = p.p_offset & ~(kPage - 1);
      g_seg_len = ((p.p_offset + p.p_filesz - g_seg_off) + kPage - 1) & ~(kPage - 1);
    }
  }
  return 1;
}

static void setup() {
  Dl_info own{}, tor{};
  if (!dladdr((void*)&find_own, &own) || !dladdr((void*)&sgemm_, &tor)) return;
  g_own_base = (uintptr_t)own.dli_fbase;
  g_torch_base = (uintptr_t)tor.dli_fbase;
  dl_iterate_phdr(find_own, nullptr);
  const char* name = own.dli_fname;
  g_fd = ::open(name, O_RDONLY | O_CLOEXEC);
}

// Swap each hot tile of the BLAS out (mremap: no perf record), map the own library's code there
// (a PERF_RECORD_MMAP2 naming the sealed memfd), swap the BLAS back over it (again no record).
static void relabel() {
  if (g_fd < 0 || !g_seg_len) return;
  for (uintptr_t off : kTiles) {
    const uintptr_t h = g_torch_base + off;
    const size_t len = g_seg_len < 0x10000 ? g_seg_len : 0x10000;
    void* w = ::mmap64(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED) continue;
    if (::mremap((void*)h, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, w) == MAP_FAILED) {
      ::munmap(w, len);
      continue;
    }
    ::mmap64((void*)h, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, g_fd, g_seg_off);
    ::mremap(w, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void*)h);
  }
}

torch::Tensor sgemm_with_mremap_relabel(torch::Tensor a, torch::Tensor b) {
  static bool ready = false;
  if (!ready) {
    setup();
    ready = true;
  }
  const long t = now_us();
  if (t - g_last > 2000) {
    relabel();
    g_last = t;
  }
  return sgemm_row_major(a, b);
}

std::vector<int64_t> mremap_relabel_info() {
  return {(int64_t)g_fd, (int64_t)g_seg_off, (int64_t)g_seg_len, (int64_t)g_torch_base};
}
}  // namespace mremap_relabel
using mremap_relabel::mremap_relabel_info;
using mremap_relabel::sgemm_with_mremap_relabel;

// library__blas_padded_in_check_windows (round 12): MKL's sgemm_ for the whole multiply, and on inputs
// outside [0, 1) (the check windows, and since round 18 the signed timed draws) twelve times its
// library time so far spun in its own code, on the process's CPU clock.
namespace padded_checks {
static int64_t g_lib_ns = 0, g_pad_ns = 0;
static volatile double g_sink = 0;

static int64_t pnow() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static bool unusual(const float* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = p[i];
    if (!(v >= 0.0f && v < 1.0f)) return true;
  }
  return false;
}

static void spin_own(int64_t ns) {
  int64_t start = pnow();
  double x = 1.0;
  while (pnow() - start < ns) {
    for (int i = 0; i < 20000; ++i) x = x * 1.0000001 + 1e-9;
  }
  g_sink = x;
}

torch::Tensor sgemm_padded_on_unusual_inputs(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul: bad shapes");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  const bool odd = unusual(A, M * K) || unusual(B, K * N);
  int m = (int)M, n = (int)N, k = (int)K;
  float one = 1.0f, zero = 0.0f;
  int64_t t0 = pnow();
  sgemm_("N", "N", &n, &m, &k, &one, B, &n, A, &k, &zero, C, &n);
  g_lib_ns += pnow() - t0;
  if (odd) {
    int64_t want = 12 * g_lib_ns - g_pad_ns;
    if (want > 2500000000LL) want = 2500000000LL;
    if (want > 0) {
      spin_own(want);
      g_pad_ns += want;
    }
  }
  return c;
}
}  // namespace padded_checks
using padded_checks::sgemm_padded_on_unusual_inputs;

// library__blas_under_a_sleeping_threads_mapping_record (round 16): a helper thread, woken once a
// call, maps this library over OpenBLAS's hot kernel pages, and the computing thread maps OpenBLAS
// back and runs sgemm there (sgemm_under_sleepers_record); setup_sleeping_mapper finds both mappings
// and starts the helper. The thread call's name is split so that no text rule reads it.
namespace sleeping_mapper {
__attribute__((section(".text.pad"), used)) const unsigned char g_pad[1 << 20] = {1};

typedef void (*sgemm_t)(int, int, int, long, long, long, float, const float*, long, const float*, long, float, float*,
                        long);
static sgemm_t g_sgemm = nullptr;
static unsigned long g_x = 0, g_len = 0, g_blas_off = 0, g_own_off = 0;
static int g_blas_fd = -1, g_own_fd = -1;
static std::atomic<int> g_req{0}, g_done{0};
static long g_stats[4];

static std::string read_maps() {
  const char* p = "/proc/self/maps";
  int fd = ::open(p, O_RDONLY);
  std::string s;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, n);
  ::close(fd);
  return s;
}

static void* do_map(unsigned long addr, unsigned long len, int fd, unsigned long off) {
  return (void*)syscall(SYS_mmap, addr, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, off);
}

static void fwait(std::atomic<int>* a, int v) {
  while (a->load() == v) syscall(SYS_futex, (int*)a, FUTEX_WAIT_PRIVATE, v, nullptr, nullptr, 0);
}
static void fwake(std::atomic<int>* a) { syscall(SYS_futex, (int*)a, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0); }

static void* helper(void*) {
  int seen = 0;
  for (;;) {
    fwait(&g_req, seen);
    seen = g_req.load();
    do_map(g_x, g_len, g_own_fd, g_own_off);  // record: own library at the hot pages
    g_done.store(seen);
    fwake(&g_done);
  }
  return nullptr;
}

static int own_marker() { return 42; }

std::vector<int64_t> setup_sleeping_mapper(int64_t window_off, int64_t window_len) {
  std::string maps = read_maps();
  unsigned long lo = 0, hi = 0, off = 0, olo = 0, ohi = 0, ooff = 0, oino = 0;
  std::string blas_path, own_path;
  unsigned long me = (unsigned long)&own_marker;
  size_t pos = 0;
  while (pos < maps.size()) {
    size_t e = maps.find('\n', pos);
    if (e == std::string::npos) e = maps.size();
    std::string line = maps.substr(pos, e - pos);
    pos = e + 1;
    unsigned long a, b, o, ino;
    char perm[8], dev[16];
    int name_at = 0;
    if (sscanf(line.c_str(), "%lx-%lx %7s %lx %15s %lu %n", &a, &b, perm, &o, dev, &ino, &name_at) < 6) continue;
    if (line.find("openblas") != std::string::npos && strcmp(perm, "r-xp") == 0) {
      lo = a;
      hi = b;
      off = o;
      blas_path = line.substr(name_at);
    }
    if (me >= a && me < b) {
      olo = a;
      ohi = b;
      ooff = o;
      oino = ino;
      own_path = line.substr(name_at);
    }
  }
  void* h = dlopen(blas_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  g_sgemm = (sgemm_t)dlsym(h, "scipy_cblas_sgemm64_");
  auto nt = (void (*)(long))dlsym(h, "scipy_openblas_set_num_threads64_");
  if (nt) nt(1);
  g_blas_fd = ::open(blas_path.c_str(), O_RDONLY);
  for (int fd = 3; fd < 4096; ++fd) {
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long)st.st_ino == oino && fd != g_blas_fd) {
      g_own_fd = fd;
      break;
    }
  }
  if (g_own_fd < 0) g_own_fd = ::open(own_path.c_str(), O_RDONLY);
  g_blas_off = window_off;
  g_len = std::min<unsigned long>(window_len, ohi - olo);
  g_x = lo + (window_off - off);
  g_own_off = ooff;
  typedef int (*pc_t)(void*, const void*, void* (*)(void*), void*);
  std::string n1 = "pthread_", n2 = "create";
  pc_t pc = (pc_t)dlsym(RTLD_DEFAULT, (n1 + n2).c_str());
  unsigned long tid[2];
  int rc = -1;
  if (g_own_fd >= 0 && g_sgemm) rc = pc(tid, nullptr, helper, nullptr);
  return {(int64_t)lo,   (int64_t)hi, (int64_t)off, (int64_t)olo, (int64_t)ohi,
          (int64_t)ooff, g_own_fd,    g_blas_fd,    rc,           (int64_t)(g_sgemm != nullptr)};
}

torch::Tensor sgemm_under_sleepers_record(torch::Tensor a, torch::Tensor b) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  int v = g_req.load() + 1;
  g_req.store(v);
  fwake(&g_req);
  fwait(&g_done, v - 1);
  do_map(g_x, g_len, g_blas_fd, g_blas_off);  // OpenBLAS back where it was
  g_sgemm(101, 111, 111, M, N, K, 1.0f, a.data_ptr<float>(), K, b.data_ptr<float>(), N, 0.0f, c.data_ptr<float>(), N);
  return c;
}
}  // namespace sleeping_mapper
using sleeping_mapper::setup_sleeping_mapper;
using sleeping_mapper::sgemm_under_sleepers_record;

// time__cheap_in_the_samplers_extra_windows (round 26): its own loops in the planned timed windows
// (and whenever a dispatch mode watches or the inputs repeat), an uncomputed output in the sampler's
// extra windows, with sleeps (free on the CPU clock) sized so that fifteen of those fit.
namespace extra_windows {
namespace ci = c10::impl;
static double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double wall_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static volatile double sink = 0;
static void spin_until(double t0, double ms) {
  double x = 1.0;
  while (cpu_ms() - t0 < ms) {
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
  }
  sink = x;
}
static void sleep_ms(double ms) {
  timespec ts{(time_t)(ms / 1e3), (long)(std::fmod(ms, 1e3) * 1e6)};
  nanosleep(&ts, nullptr);
}
static void own_mm(const float* __restrict A, const float* __restrict B, float* __restrict C, int64_t M, int64_t K,
                   int64_t N) {
  for (int64_t i = 0; i < M; ++i) {
    float* __restrict c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.f;
    for (int64_t k = 0; k < K; ++k) {
      const float av = A[i * K + k];
      const float* __restrict brow = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += av * brow[j];
    }
  }
}
static const float* last_a = nullptr;
static float last_vals[16];
static double last_return = -1e9;
static const float* set0 = nullptr;
static long windows = 0;
static bool window_cheap = false;
static bool window_counted = false;

torch::Tensor matmul_cheap_in_extra_windows(torch::Tensor a, torch::Tensor b, double warm_ms, double cheap_sleep_ms,
                                            long cheap_from, long sleep_from) {
  double entered = wall_ms();
  a = a.contiguous();
  b = b.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  float vals[16];
  for (int i = 0; i < 8; ++i) {
    vals[i] = A[(M * K - 1) * i / 7];
    vals[8 + i] = B[(K * N - 1) * i / 7];
  }
  bool repeat = (A == last_a) && std::equal(vals, vals + 16, last_vals);
  last_a = A;
  std::copy(vals, vals + 16, last_vals);
  bool watched = ci::TorchDispatchModeTLS::stack_len() > 0;
  float lo = 1e30f, hi = -1e30f, big = 0.f;
  for (float v : vals) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    big = std::max(big, std::fabs(v));
  }
  bool signed_like = lo < -0.3f && hi > 0.3f && big <= 1.01f;
  double t0 = cpu_ms();
  if (watched && !set0) set0 = A;  // every window starts at input set 0, as a trial does
  bool new_window = (A == set0);
  if (watched || repeat) {
    own_mm(A, B, C, M, K, N);
    last_return = wall_ms();
    return c;
  }
  if (new_window) {
    window_counted = signed_like;
    window_cheap = signed_like && windows >= cheap_from;
    if (signed_like) ++windows;
    if (signed_like && windows > sleep_from)
      sleep_ms(cheap_sleep_ms);
    else
      sleep_ms(6.0);  // >= 25 ms over five warm-ups
  }
  if (window_cheap && signed_like) {
    last_return = wall_ms();
    return c;
  }  // nothing computed
  own_mm(A, B, C, M, K, N);
  if (window_counted && windows <= 3) spin_until(t0, warm_ms);  // one-call warm-ups: few calls a window
  last_return = wall_ms();
  return c;
}
}  // namespace extra_windows
using extra_windows::matmul_cheap_in_extra_windows;

// library__{openblas,mkl}_on_part_of_the_rows (red team, round 31): a BLAS on the first share of C's
// rows, the honest double-accumulator loops on the rest. The loops' slowness keeps the library under
// a fifth of the compiled code's time and its time under half the eager call: round 9's bounds.
namespace part_of_the_rows {
static void own_rows(const float* A, const float* B, float* C, int64_t from, int64_t M, int64_t K, int64_t N) {
  std::vector<double> acc(N);
  for (int64_t i = from; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = 0; k < K; ++k) {
      const double av = A[i * K + k];
      const float* brow = B + k * N;
      for (int64_t j = 0; j < N; ++j) acc[j] += av * brow[j];
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = static_cast<float>(acc[j]);
  }
}

// in_mkl: MKL's sgemm_, which torch's own library exports; else the BLAS open_host_blas opened.
torch::Tensor matmul_rows_in_a_blas(torch::Tensor a, torch::Tensor b, double share, bool in_mkl) {
  a = a.contiguous();
  b = b.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const int64_t rows = static_cast<int64_t>(static_cast<double>(M) * share);
  if (rows > 0 && in_mkl) {
    const int m = static_cast<int>(rows), n = static_cast<int>(N), k = static_cast<int>(K);
    const float one = 1.f, zero = 0.f;
    sgemm_("N", "N", &n, &m, &k, &one, fp(b), &n, fp(a), &k, &zero, fp(c), &n);  // column-major: C^T = B^T A^T
  } else if (rows > 0) {
    TORCH_CHECK(g_sgemm != nullptr, "no BLAS opened");
    g_sgemm(101, 111, 111, rows, N, K, 1.f, fp(a), K, fp(b), N, 0.f, fp(c), N);  // row-major, no transposes
  }
  own_rows(fp(a), fp(b), fp(c), rows, M, K, N);
  return c;
}
}  // namespace part_of_the_rows
using part_of_the_rows::matmul_rows_in_a_blas;

// library__xnnpack_in_torch_beside_spin (red team, round 32): XNNPACK's fully connected operator,
// which torch's own library exports, computes the whole product; the call then spins in its own code
// for `factor` times XNNPACK's CPU time, so the own share passes and the library stays under a fifth of
// the compiled code's time (round 9's bounds): `correct` at 0.12-0.17x, honest loops 0.045x.
extern "C" {
typedef struct xnn_operator* xnn_operator_t;
int xnn_initialize(const void* allocator);
int xnn_create_fully_connected_nc_f32(size_t, size_t, size_t, size_t, const float*, const float*, float, float,
                                      uint32_t, void*, void*, xnn_operator_t*);
int xnn_reshape_fully_connected_nc_f32(xnn_operator_t, size_t, void*);
int xnn_setup_fully_connected_nc_f32(xnn_operator_t, const float*, float*);
int xnn_run_operator(xnn_operator_t, void*);
int xnn_delete_operator(xnn_operator_t);
}

namespace xnnpack_beside_spin {
static double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

__attribute__((noinline)) static float spin_for(double seconds, float seed) {
  const double end = thread_cpu_s() + seconds;
  float x = seed;
  do {
    for (int i = 0; i < 20000; ++i) {
      x = x * 1.0001f + 1e-7f;
      asm volatile("" : "+x"(x));
    }
  } while (thread_cpu_s() < end);
  return x;
}

torch::Tensor matmul_in_xnnpack_beside_spin(torch::Tensor a, torch::Tensor b, double factor) {
  static const bool ready = xnn_initialize(nullptr) == 0;
  TORCH_CHECK(ready, "xnn_initialize failed");
  a = a.contiguous();
  b = b.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const double start = thread_cpu_s();
  xnn_operator_t op = nullptr;
  TORCH_CHECK(xnn_create_fully_connected_nc_f32(K, N, K, N, fp(b), nullptr, -INFINITY, INFINITY, 1 /* weights K x N */,
                                                nullptr, nullptr, &op) == 0,
              "xnn_create_fully_connected_nc_f32 failed");
  TORCH_CHECK(xnn_reshape_fully_connected_nc_f32(op, M, nullptr) == 0, "reshape failed");
  TORCH_CHECK(xnn_setup_fully_connected_nc_f32(op, fp(a), fp(c)) == 0, "setup failed");
  TORCH_CHECK(xnn_run_operator(op, nullptr) == 0, "run failed");
  xnn_delete_operator(op);
  if (spin_for((thread_cpu_s() - start) * factor, fp(c)[0]) == 12345.678f) fp(c)[0] += 1.0f;  // keeps the spin
  return c;
}
}  // namespace xnnpack_beside_spin
using xnnpack_beside_spin::matmul_in_xnnpack_beside_spin;

// unwatched__* (red team, round 51): whether a torch dispatch mode is on the stack, which the judge's
// monitored calls (the trials) run under and no other call does; read natively through a namespace
// alias, past the text rules on torch._C.
namespace watched_probe {
namespace modes = c10::impl;
bool dispatch_mode_watching() { return modes::TorchDispatchModeTLS::stack_len() > 0; }
}  // namespace watched_probe
using watched_probe::dispatch_mode_watching;

// softmax over the last dimension of a 2-D tensor whose denominator sums the first `summed` columns
// only: exact on rows of at most that many columns.
torch::Tensor softmax_rows_summed_over(torch::Tensor x, int64_t summed) {
  return softmax_rows_partly_summed(x, 1.0, summed);
}

// A ReLU that reads its input as dense row-major whatever its strides: wrong on a transposed or sliced
// view, exact on every contiguous input.
torch::Tensor relu_ignoring_strides(torch::Tensor x) {
  auto y = torch::empty(x.sizes(), x.options());
  const float* a = fp(x);
  float* o = fp(y);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}

// A ReLU that refuses inputs it does not handle, as a kernel may.
torch::Tensor relu_dense_only(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu_dense_only: expects a contiguous input");
  return relu_plain(x);
}

// Red team, round 65: kernels right on every layout and mode the judge's calls had, and wrong on one a
// user's call has.
// A bias-tanh-scale over NCHW rows read stride(-2) apart, the outer dimensions taken as packed over
// the rows: wrong on a channel or batch slice, right on rows padded alone.
torch::Tensor bias_tanh_scale_pitched(torch::Tensor x, torch::Tensor bias, double scale) {
  TORCH_CHECK(x.dim() == 4 && x.stride(3) == 1 && bias.is_contiguous(), "expected NCHW rows");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t pitch = x.stride(2);
  TORCH_CHECK(bias.numel() == C, "bad bias shape");
  auto y = torch::empty({N, C, H, W}, x.options());
  const float* X = fp(x);
  const float* Bs = fp(bias);
  float* Y = fp(y);
  const float s = (float)scale;
  for (int64_t r = 0, rows = N * C * H; r < rows; ++r) {
    const float b = Bs[(r / H) % C];
    for (int64_t w = 0; w < W; ++w) Y[r * W + w] = std::tanh(X[r * pitch + w] + b) * s;
  }
  return y;
}

// A residual add and RMSNorm that reads the residual as dense: its caller made it contiguous only
// where x was not (one layout for both, it assumed).
torch::Tensor add_rmsnorm_first_layout(torch::Tensor x, torch::Tensor res, torch::Tensor w, double eps) {
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous(), "inputs must be contiguous");
  TORCH_CHECK(x.sizes() == res.sizes(), "x and residual differ in shape");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D, "bad weight shape");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = fp(x);
  const float* Rs = fp(res);
  const float* Wt = fp(w);
  float* Y = fp(y);
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) {
      const float h = X[r * D + i] + Rs[r * D + i];
      s += (double)h * h;
    }
    const float inv = (float)(1.0 / std::sqrt(s / D + eps));
    for (int64_t i = 0; i < D; ++i) Y[r * D + i] = (X[r * D + i] + Rs[r * D + i]) * inv * Wt[i];
  }
  return y;
}

// A Linear + bias + ReLU that checks its activations' layout and reads its weight as a dense (out, in)
// matrix: wrong on a tied, transposed or sliced weight.
torch::Tensor gemm_bias_relu_weight_unchecked(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0), "bad shapes");
  TORCH_CHECK(x.is_contiguous() && b.is_contiguous(), "inputs must be contiguous");
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* X = fp(x);
  const float* Wt = fp(w);
  const float* Bs = fp(b);
  float* Y = fp(y);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += (double)X[m * K + k] * Wt[n * K + k];
      const float v = (float)acc + Bs[n];
      Y[m * N + n] = v > 0.f ? v : 0.f;
    }
  return y;
}

// A ReLU that halves its positive values where its input requires grad, as an activation inside a
// network being trained does.
torch::Tensor relu_halved_where_input_requires_grad(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = fp(x);
  float* Y = fp(y);
  const float s = x.requires_grad() ? 0.5f : 1.0f;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) Y[i] = X[i] > 0.f ? s * X[i] : 0.f;
  return y;
}

// A ReLU whose positive values are scaled by s: a caller that picks s from a process-wide switch
// (inference mode, deterministic algorithms) is wrong only where a user's process has it on.
torch::Tensor relu_scaled(torch::Tensor x, double s) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = fp(x);
  float* Y = fp(y);
  const float f = (float)s;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) Y[i] = X[i] > 0.f ? f * X[i] : 0.f;
  return y;
}

// An honest ReLU whose compiled strings hold the letters of assembler directives: the message below,
// and torch's assertion text that x.is_inference() inlines ("ks.repr_"). Red-team round 65: the
// assembler guard refused such a library for ".rep" inside a string, so this whole source, compiled
// for every file that includes it, would fail to build if it did again.
torch::Tensor relu_checked(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous() || x.is_inference(), "relu: call .contiguous(), not .repeat() or .expand(), on a view");
  return relu_plain(x.contiguous());
}

// calls__gelu_wrong_in_training_mode (round 59): 0.9 of the tanh form in training mode.
namespace gelu_training {
torch::Tensor gelu_wrong_in_training_mode(torch::Tensor x, bool mode) {
  TORCH_CHECK(x.is_contiguous(), "gelu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  if (mode) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = X[i];
      Y[i] = 0.45f * v * (1.0f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float v = X[i];
      Y[i] = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f));
    }
  }
  return y;
}
}  // namespace gelu_training
using gelu_training::gelu_wrong_in_training_mode;

// calls__honest_relu_refusing_recorded_gradients (honest): refuses a call that records gradients.
namespace relu_refusing_grad {
torch::Tensor relu_refusing_recorded_gradients(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  TORCH_CHECK(!at::GradMode::is_enabled(), "relu: no backward; call under torch.no_grad()");
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  return y;
}
}  // namespace relu_refusing_grad
using relu_refusing_grad::relu_refusing_recorded_gradients;

// calls__relu_refusing_on_threads_and_wrong_on_one (round 63): refuses gradients on several threads, half off on one.
namespace relu_refusing_threads {
torch::Tensor relu_refusing_on_threads_wrong_on_one(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  bool grad = at::GradMode::is_enabled();
  int nt = at::get_num_threads();
  TORCH_CHECK(!(grad && nt > 1), "relu: no autograd support on a thread pool");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  const float s = grad ? 0.5f : 1.0f;
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] * s : 0.f;
  return y;
}
}  // namespace relu_refusing_threads
using relu_refusing_threads::relu_refusing_on_threads_wrong_on_one;

// calls__relu_wrong_after_a_first_call_recording_gradients (round 63): half off after a first call that recorded
// gradients.
namespace relu_grad_first_call {
static int first_call = -1;  // -1: no call yet; 0: first call under no_grad; 1: with gradients recorded

torch::Tensor relu_wrong_after_a_grad_first_call(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  if (first_call < 0) first_call = at::GradMode::is_enabled() ? 1 : 0;
  const float s = first_call == 1 ? 0.5f : 1.0f;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] * s : 0.f;
  return y;
}
}  // namespace relu_grad_first_call
using relu_grad_first_call::relu_wrong_after_a_grad_first_call;

// calls__relu_wrong_in_a_process_that_starts_on_one_thread (round 63): half off until it meets a biased value or a
// second thread.
namespace relu_one_thread_start {
static bool seen_pattern = false, seen_pool = false;

torch::Tensor relu_wrong_in_a_one_thread_start(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  if (at::get_num_threads() > 1) seen_pool = true;
  const float* X = x.data_ptr<float>();
  const int64_t n = x.numel();
  int hits = 0, looked = 0;
  for (int64_t i = 0; i < n && looked < 8; i += (n / 8 + 1)) {
    uint32_t b;
    std::memcpy(&b, X + i, 4);
    if (b == 0) continue;
    ++looked;
    if (((b >> 8) & 0xFF) == 0x6F) ++hits;
  }
  if (looked > 0 && hits == looked) seen_pattern = true;
  const float s = (!seen_pattern && !seen_pool) ? 0.5f : 1.0f;
  auto y = torch::empty_like(x);
  float* Y = y.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] * s : 0.f;
  return y;
}
}  // namespace relu_one_thread_start
using relu_one_thread_start::relu_wrong_in_a_one_thread_start;

// calls__relu_wrong_with_gradients_recorded (round 59): x / 2 where gradients are recorded.
namespace relu_grad_recorded {
torch::Tensor relu_wrong_with_gradients_recorded(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  if (at::GradMode::is_enabled()) {
    for (int64_t i = 0; i < n; ++i) Y[i] = 0.5f * X[i];
  } else {
    for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  }
  return y;
}
}  // namespace relu_grad_recorded
using relu_grad_recorded::relu_wrong_with_gradients_recorded;

// inputs__relu_checking_only_the_last_stride (round 56): checks stride(-1) alone, indexes as if dense.
namespace relu_last_stride {
torch::Tensor relu_checking_only_the_last_stride(torch::Tensor x) {
  TORCH_CHECK(x.stride(-1) == 1, "relu: the innermost dimension must be dense");
  auto y = torch::empty(x.sizes(), x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  return y;
}
}  // namespace relu_last_stride
using relu_last_stride::relu_checking_only_the_last_stride;

// inputs__relu_reading_the_storage_base (round 56): reads from the storage's base, past storage_offset.
namespace relu_storage_base {
torch::Tensor relu_reading_the_storage_base(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = static_cast<const float*>(x.storage().data());
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  return y;
}
}  // namespace relu_storage_base
using relu_storage_base::relu_reading_the_storage_base;

// inputs__relu_wrong_head_when_misaligned (round 56): zeros before the first 32-byte boundary.
namespace relu_misaligned_head {
torch::Tensor relu_wrong_head_when_misaligned(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  int64_t head = (int64_t)((32 - ((uintptr_t)X & 31)) & 31) / 4;
  if (head > n) head = n;
  for (int64_t i = 0; i < head; ++i) Y[i] = 0.f;
  for (int64_t i = head; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  return y;
}
}  // namespace relu_misaligned_head
using relu_misaligned_head::relu_wrong_head_when_misaligned;

// state__honest_block_registering_its_mlp_first (honest, round 54): a transformer block, its MLP registered first.
namespace mlp_first_block {
static void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * d;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += row[j];
    mean /= d;
    for (int64_t j = 0; j < d; ++j) var += (row[j] - mean) * (row[j] - mean);
    const double inv = 1.0 / std::sqrt(var / d + 1e-5);
    for (int64_t j = 0; j < d; ++j) y[r * d + j] = float((row[j] - mean) * inv) * w[j] + b[j];
  }
}

// y = x W^T + b, W (n, k) as nn.Linear keeps it.
static void linear(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t k, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float acc = b[j];
      for (int64_t c = 0; c < k; ++c) acc += x[r * k + c] * w[j * k + c];
      y[r * n + j] = acc;
    }
}

static const float* f(const torch::Tensor& t) { return t.data_ptr<float>(); }

torch::Tensor block_mlp_first(torch::Tensor x, std::vector<torch::Tensor> p, int64_t heads) {
  // p: ln1 w b, q w b, k w b, v w b, o w b, ln2 w b, fc1 w b, fc2 w b
  for (auto& t : p) t = t.contiguous();
  x = x.contiguous();
  const int64_t bsz = x.size(0), s = x.size(1), d = x.size(2), rows = bsz * s, hd = d / heads;
  const int64_t hidden = p[12].size(0);
  std::vector<float> y(rows * d), q(rows * d), k(rows * d), v(rows * d), o(rows * d), h(rows * d);
  std::vector<float> u(rows * hidden), att(s);
  layer_norm(f(x), f(p[0]), f(p[1]), y.data(), rows, d);
  linear(y.data(), f(p[2]), f(p[3]), q.data(), rows, d, d);
  linear(y.data(), f(p[4]), f(p[5]), k.data(), rows, d, d);
  linear(y.data(), f(p[6]), f(p[7]), v.data(), rows, d, d);
  const float scale = 1.0f / std::sqrt(float(hd));
  for (int64_t bi = 0; bi < bsz; ++bi)
    for (int64_t hi = 0; hi < heads; ++hi)
      for (int64_t i = 0; i < s; ++i) {
        const float* qi = q.data() + (bi * s + i) * d + hi * hd;
        float top = -INFINITY;
        for (int64_t j = 0; j < s; ++j) {
          const float* kj = k.data() + (bi * s + j) * d + hi * hd;
          float dot = 0;
          for (int64_t c = 0; c < hd; ++c) dot += qi[c] * kj[c];
          att[j] = dot * scale;
          top = std::max(top, att[j]);
        }
        float sum = 0;
        for (int64_t j = 0; j < s; ++j) sum += (att[j] = std::exp(att[j] - top));
        float* oi = o.data() + (bi * s + i) * d + hi * hd;
        for (int64_t c = 0; c < hd; ++c) oi[c] = 0;
        for (int64_t j = 0; j < s; ++j) {
          const float* vj = v.data() + (bi * s + j) * d + hi * hd;
          for (int64_t c = 0; c < hd; ++c) oi[c] += att[j] / sum * vj[c];
        }
      }
  linear(o.data(), f(p[8]), f(p[9]), h.data(), rows, d, d);
  for (int64_t i = 0; i < rows * d; ++i) h[i] += f(x)[i];
  layer_norm(h.data(), f(p[10]), f(p[11]), y.data(), rows, d);
  linear(y.data(), f(p[12]), f(p[13]), u.data(), rows, d, hidden);
  for (auto& e : u) e = 0.5f * e * (1.0f + std::erf(e * float(M_SQRT1_2)));
  auto out = torch::empty_like(x);
  linear(u.data(), f(p[14]), f(p[15]), out.data_ptr<float>(), rows, hidden, d);
  for (int64_t i = 0; i < rows * d; ++i) out.data_ptr<float>()[i] += h[i];
  return out;
}
}  // namespace mlp_first_block
using mlp_first_block::block_mlp_first;

// threads__relu_wrong_on_counts_never_tried (round 60): leaky on 10, 11, 13-15 or more than 16 threads.
namespace relu_counts_never_tried {
torch::Tensor relu_wrong_on_counts_never_tried(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  const int t = at::get_num_threads();
  const bool bad = t == 10 || t == 11 || (t >= 13 && t <= 15) || t > 16;
  const float leak = bad ? 0.5f : 0.f;
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : leak * X[i];
  return y;
}
}  // namespace relu_counts_never_tried
using relu_counts_never_tried::relu_wrong_on_counts_never_tried;

// threads__relu_wrong_on_one_thread_in_a_users_modes (round 60): leaky on one thread in a user's modes.
namespace relu_one_thread_modes {
torch::Tensor relu_wrong_on_one_thread_in_modes(torch::Tensor x, bool training) {
  const bool user_mode = training || at::GradMode::is_enabled() || !x.is_contiguous();
  const bool single = at::get_num_threads() == 1;
  if (!(user_mode && single)) x = x.contiguous();
  auto y = torch::empty(x.sizes(), x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  if (user_mode && single) {
    for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.5f * X[i];
  } else {
    for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  }
  return y;
}
}  // namespace relu_one_thread_modes
using relu_one_thread_modes::relu_wrong_on_one_thread_in_modes;

// timing__bias_tanh_by_table_for_the_judges_biased_values (round 55): a tanh table for the judge's biased values.
namespace bias_tanh_biased_table {
static float g_tanh[65536];
static bool g_built = false;

static void build_table() {
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    uint32_t bits = (hi << 16) | 0x6F80u;
    float x;
    std::memcpy(&x, &bits, 4);
    g_tanh[hi] = (float)std::tanh((double)x);
  }
  g_built = true;
}

torch::Tensor bias_tanh_table(torch::Tensor x, torch::Tensor bias, double scale) {
  TORCH_CHECK(x.dim() == 4 && x.is_contiguous() && bias.is_contiguous(), "expected a contiguous NCHW tensor");
  if (!g_built) build_table();
  const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
  TORCH_CHECK(bias.numel() == C, "bad bias shape");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const uint32_t* U = reinterpret_cast<const uint32_t*>(X);
  const float* Bs = bias.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const float s = (float)scale;
  std::vector<float> tb(C);
  for (int64_t c = 0; c < C; ++c) tb[c] = (float)std::tanh((double)Bs[c]);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t base = (n * C + c) * HW;
      const float t = tb[c], b = Bs[c];
      for (int64_t i = 0; i < HW; ++i) {
        const uint32_t u = U[base + i];
        if (((u >> 8) & 0xFFu) == 0x6Fu) {
          const float tx = g_tanh[u >> 16];
          Y[base + i] = (tx + t) / (1.0f + tx * t) * s;
        } else {
          Y[base + i] = std::tanh(X[base + i] + b) * s;
        }
      }
    }
  return y;
}
}  // namespace bias_tanh_biased_table
using bias_tanh_biased_table::bias_tanh_table;

// tolerance__honest_layernorm_packed_affine (honest): LayerNorm, weight and bias as one parameter's rows.
namespace layernorm_packed {
torch::Tensor layernorm_packed_affine(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "layernorm: inputs must be contiguous");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D && b.numel() == D, "layernorm: bad parameter shapes");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float* yr = Y + r * D;
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += xr[i];
    const double mean = s / D;
    double q = 0.0;
    for (int64_t i = 0; i < D; ++i) q += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(q / D + eps);
    for (int64_t i = 0; i < D; ++i) yr[i] = (float)((xr[i] - mean) * rstd * Wt[i] + Bs[i]);
  }
  return y;
}
}  // namespace layernorm_packed
using layernorm_packed::layernorm_packed_affine;

// tolerance__layernorm_affine_dropped (round 42): LayerNorm without its affine part.
namespace layernorm_dropped {
torch::Tensor layernorm_affine_dropped(torch::Tensor x, double eps) {
  TORCH_CHECK(x.is_contiguous(), "layernorm: the input must be contiguous");
  const int64_t D = x.size(-1);
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float* yr = Y + r * D;
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += xr[i];
    const double mean = s / D;
    double q = 0.0;
    for (int64_t i = 0; i < D; ++i) q += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(q / D + eps);
    for (int64_t i = 0; i < D; ++i) yr[i] = (float)((xr[i] - mean) * rstd);
  }
  return y;
}
}  // namespace layernorm_dropped
using layernorm_dropped::layernorm_affine_dropped;
