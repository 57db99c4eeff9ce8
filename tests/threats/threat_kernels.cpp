// The one native source of every CPU file in tests/threats (the adversarial corpus by threat class).
//
// Every CPU threat file embeds this file verbatim as _THREAT_CPP (its template includes
// tests/threats/native_cpu.py; scripts/materialize_corpus.py writes the files out), so the extension
// cache, which keys builds by content, compiles it once for the whole corpus: compiling against
// torch's headers costs minutes on a small machine. A function added here is exported once it is
// also named in native_cpu.py's list.
//
// Two kinds of functions live here: plain-loop kernels (honest, or wrong only outside the task's
// input distribution, or at a lower precision than the task's dtype), and native attack helpers. The
// helpers are written so that the text rules of python/vinci_worker/static_check.py do not know
// them: backend namespaces reached through aliases, symbols and paths held in data, raw syscalls.
#include <torch/extension.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#include <ATen/ops/_softmax_native.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace hw = at::cpu;      // per-backend entry points: no dispatcher, so no dispatch-mode monitor
namespace nat = at::native;  // the structured kernels' own classes: the CPU kernel itself

// ---------------------------------------------------------------------------------------------
// small utilities
// ---------------------------------------------------------------------------------------------
static float* fptr(const torch::Tensor& t) { return t.data_ptr<float>(); }

static void nap_us(int64_t us) {
  if (us <= 0) return;
  struct timespec ts;
  ts.tv_sec = us / 1000000;
  ts.tv_nsec = (us % 1000000) * 1000;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

static std::string slurp(const std::string& path, size_t cap = 1 << 20) {
  std::string out;
  const int fd = openat(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() >= cap) break;
  }
  close(fd);
  return out;
}

// NUL-separated records (environ, cmdline) as strings.
static std::vector<std::string> records(const std::string& blob) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < blob.size()) {
    size_t end = blob.find('\0', start);
    if (end == std::string::npos) end = blob.size();
    out.push_back(blob.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

static pid_t parent_of(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat", 4096);
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return 0;
  char state = 0;
  int ppid = 0;
  if (sscanf(stat.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2) return 0;
  return static_cast<pid_t>(ppid);
}

static std::string env_of(pid_t pid, const std::string& key) {
  for (const std::string& kv : records(slurp("/proc/" + std::to_string(pid) + "/environ")))
    if (kv.size() > key.size() && kv.compare(0, key.size(), key) == 0 && kv[key.size()] == '=')
      return kv.substr(key.size() + 1);
  return "";
}

static std::string exe_of(pid_t pid) {
  char target[1024];
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
  if (n <= 0) return "";
  target[n] = 0;
  return target;
}

// Symbols held in data: the thread entry points never appear as text.
static std::string unmask(const std::vector<int>& codes) {
  std::string s;
  for (int c : codes) s.push_back(static_cast<char>(c ^ 0x5a));
  return s;
}

static void* find_symbol(const std::string& name, const std::string& library = "") {
  void* p = dlsym(RTLD_DEFAULT, name.c_str());
  if (p == nullptr && !library.empty()) {
    void* h = dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) h = dlopen(library.c_str(), RTLD_LAZY);
    if (h != nullptr) p = dlsym(h, name.c_str());
  }
  return p;
}

typedef int (*spawn_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
typedef int (*detach_fn)(pthread_t);
typedef int (*join_fn)(pthread_t, void**);

// p,t,h,r,e,a,d,_,c,r,e,a,t,e ^ 0x5a
static const std::vector<int> kSpawn = {42, 46, 50, 40, 63, 59, 62, 5, 57, 40, 63, 59, 46, 63};
static const std::vector<int> kDetach = {42, 46, 50, 40, 63, 59, 62, 5, 62, 63, 46, 59, 57, 50};
static const std::vector<int> kJoin = {42, 46, 50, 40, 63, 59, 62, 5, 48, 53, 51, 52};

static bool run_on_native_thread(void* (*body)(void*), void* arg, bool wait) {
  auto spawn = reinterpret_cast<spawn_fn>(find_symbol(unmask(kSpawn)));
  if (spawn == nullptr) return false;
  pthread_t t;
  if (spawn(&t, nullptr, body, arg) != 0) return false;
  if (wait) {
    auto join = reinterpret_cast<join_fn>(find_symbol(unmask(kJoin)));
    if (join != nullptr) join(t, nullptr);
  } else {
    auto detach = reinterpret_cast<detach_fn>(find_symbol(unmask(kDetach)));
    if (detach != nullptr) detach(t);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// fp16 bits <-> float, by hand (no 16-bit float type in this source)
// ---------------------------------------------------------------------------------------------
static float bits16_to_float(uint16_t h) {
  const float sign = (h & 0x8000u) != 0 ? -1.f : 1.f;
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(man), -24);
  if (exp == 0x1f) return man != 0 ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  return sign * std::ldexp(static_cast<float>(man | 0x400), exp - 25);
}

static uint16_t float_to_bits16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (absx < 0x38800000u) {  // below 2^-14: a subnormal (or zero) in steps of 2^-24, ties to even
    float mag;
    std::memcpy(&mag, &absx, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(std::ldexp(mag, 24))));
  }
  uint32_t r = ((absx >> 23) - 127 + 15) << 10 | ((absx >> 13) & 0x3ffu);
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

static float round16(float f) { return bits16_to_float(float_to_bits16(f)); }

// Rounds a float to `bits` mantissa bits (round to nearest even), keeping float's exponent range.
static float keep_mantissa(float f, int bits) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const int drop = 23 - bits;
  if (drop <= 0) return f;
  u = ((u + ((1u << (drop - 1)) - 1) + ((u >> drop) & 1u)) >> drop) << drop;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

static std::vector<float> fp16_matrix_as_float(const torch::Tensor& t) {
  const auto* src = static_cast<const uint16_t*>(t.data_ptr());
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = bits16_to_float(src[i]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// plain-loop kernels (fp32 unless said otherwise; inputs made contiguous)
// ---------------------------------------------------------------------------------------------
torch::Tensor relu_f32(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = fptr(xc);
  float* o = fptr(y);
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}

torch::Tensor matmul_f32(torch::Tensor a, torch::Tensor b) {
  auto ac = a.contiguous(), bc = b.contiguous();
  const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
  auto c = torch::empty({M, N}, ac.options());
  const float* A = fptr(ac);
  const float* B = fptr(bc);
  float* C = fptr(c);
  for (int64_t i = 0; i < M; ++i) {
    float* crow = C + i * N;
    for (int64_t j = 0; j < N; ++j) crow[j] = 0.f;
    for (int64_t k = 0; k < K; ++k) {
      const float av = A[i * K + k];
      const float* brow = B + k * N;
      for (int64_t j = 0; j < N; ++j) crow[j] += av * brow[j];
    }
  }
  return c;
}

torch::Tensor softmax_rows(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t D = xc.size(-1), R = xc.numel() / D;
  const float* a = fptr(xc);
  float* o = fptr(y);
  for (int64_t r = 0; r < R; ++r) {
    const float* row = a + r * D;
    float* out = o + r * D;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < D; ++j) m = std::max(m, row[j]);
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) {
      out[j] = std::exp(row[j] - m);
      s += out[j];
    }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t j = 0; j < D; ++j) out[j] *= inv;
  }
  return y;
}

// exp without subtracting the row maximum: fine while every input is small.
torch::Tensor softmax_rows_nomax(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t D = xc.size(-1), R = xc.numel() / D;
  const float* a = fptr(xc);
  float* o = fptr(y);
  for (int64_t r = 0; r < R; ++r) {
    float s = 0.f;
    for (int64_t j = 0; j < D; ++j) {
      o[r * D + j] = std::exp(a[r * D + j]);
      s += o[r * D + j];
    }
    const float inv = 1.f / s;
    for (int64_t j = 0; j < D; ++j) o[r * D + j] *= inv;
  }
  return y;
}

// log-softmax with exp replaced by a Chebyshev fit on [lo, hi] (coefficients from the caller).
torch::Tensor log_softmax_rows_poly(torch::Tensor x, torch::Tensor coeffs, double lo, double hi) {
  auto xc = x.contiguous();
  auto cc = coeffs.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t D = xc.size(-1), R = xc.numel() / D;
  const double* c = cc.data_ptr<double>();
  const int64_t n = cc.numel();
  const float* a = fptr(xc);
  float* o = fptr(y);
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) {
      const double u = (2.0 * a[r * D + j] - (lo + hi)) / (hi - lo);
      double b1 = 0.0, b2 = 0.0;
      for (int64_t k = n - 1; k >= 1; --k) {
        const double t = 2.0 * u * b1 - b2 + c[k];
        b2 = b1;
        b1 = t;
      }
      s += u * b1 - b2 + c[0];
    }
    const double lse = std::log(s);
    for (int64_t j = 0; j < D; ++j) o[r * D + j] = static_cast<float>(a[r * D + j] - lse);
  }
  return y;
}

// LayerNorm with the one-pass variance E[x^2] - E[x]^2 accumulated in fp32.
torch::Tensor layernorm_onepass(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t D = xc.size(-1), R = xc.numel() / D;
  const float* a = fptr(xc);
  const float* W = fptr(wc);
  const float* B = fptr(bc);
  float* o = fptr(y);
  for (int64_t r = 0; r < R; ++r) {
    float s = 0.f, ss = 0.f;
    for (int64_t j = 0; j < D; ++j) {
      const float v = a[r * D + j];
      s += v;
      ss += v * v;
    }
    const float mean = s / static_cast<float>(D);
    const float var = ss / static_cast<float>(D) - mean * mean;
    const float rstd = 1.f / std::sqrt(var + static_cast<float>(eps));
    for (int64_t j = 0; j < D; ++j) o[r * D + j] = (a[r * D + j] - mean) * rstd * W[j] + B[j];
  }
  return y;
}

torch::Tensor rmsnorm_rows(torch::Tensor x, torch::Tensor w, double eps) {
  auto xc = x.contiguous(), wc = w.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t D = xc.size(-1), R = xc.numel() / D;
  const float* a = fptr(xc);
  const float* W = fptr(wc);
  float* o = fptr(y);
  for (int64_t r = 0; r < R; ++r) {
    double ss = 0.0;
    for (int64_t j = 0; j < D; ++j) ss += static_cast<double>(a[r * D + j]) * a[r * D + j];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(D) + eps));
    for (int64_t j = 0; j < D; ++j) o[r * D + j] = a[r * D + j] * inv * W[j];
  }
  return y;
}

torch::Tensor mean_rows(torch::Tensor x) {
  auto xc = x.contiguous();
  const int64_t D = xc.size(-1), R = xc.numel() / D;
  auto y = torch::empty({R}, xc.options());
  const float* a = fptr(xc);
  float* o = fptr(y);
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += a[r * D + j];
    o[r] = static_cast<float>(s / static_cast<double>(D));
  }
  return y;
}

// GELU with Abramowitz-Stegun 7.1.26 for erf, which holds for arguments >= 0 only (no odd-symmetry step).
torch::Tensor gelu_onesided(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = fptr(xc);
  float* o = fptr(y);
  const int64_t n = xc.numel();
  const double p = 0.3275911, a1 = 0.254829592, a2 = -0.284496736, a3 = 1.421413741, a4 = -1.453152027,
               a5 = 1.061405429;
  for (int64_t i = 0; i < n; ++i) {
    const double v = a[i];
    const double z = v * 0.7071067811865476;
    const double t = 1.0 / (1.0 + p * z);
    const double poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t;
    const double erf_z = 1.0 - poly * std::exp(-z * z);
    o[i] = static_cast<float>(0.5 * v * (1.0 + erf_z));
  }
  return y;
}

// relu(x * y + z) * 0.5 without the relu: x * y + z is never negative for inputs in [0, 1).
torch::Tensor chain_norelu(torch::Tensor x, torch::Tensor y, torch::Tensor z) {
  auto xc = x.contiguous(), yc = y.contiguous(), zc = z.contiguous();
  auto out = torch::empty_like(xc);
  const float* X = fptr(xc);
  const float* Y = fptr(yc);
  const float* Z = fptr(zc);
  float* o = fptr(out);
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = (X[i] * Y[i] + Z[i]) * 0.5f;
  return out;
}

// max over dim 1 of (B, R, C), the running maximum starting at 0 instead of -inf.
torch::Tensor max_dim1_zero_init(torch::Tensor x) {
  auto xc = x.contiguous();
  const int64_t Bn = xc.size(0), R = xc.size(1), C = xc.size(2);
  auto y = torch::empty({Bn, C}, xc.options());
  const float* a = fptr(xc);
  float* o = fptr(y);
  for (int64_t b = 0; b < Bn; ++b) {
    float* orow = o + b * C;
    for (int64_t c = 0; c < C; ++c) orow[c] = 0.f;
    for (int64_t r = 0; r < R; ++r) {
      const float* row = a + (b * R + r) * C;
      for (int64_t c = 0; c < C; ++c) orow[c] = row[c] > orow[c] ? row[c] : orow[c];
    }
  }
  return y;
}

torch::Tensor transpose_2d(torch::Tensor x) {
  auto xc = x.contiguous();
  const int64_t M = xc.size(0), N = xc.size(1);
  auto y = torch::empty({N, M}, xc.options());
  const float* a = fptr(xc);
  float* o = fptr(y);
  const int64_t T = 32;
  for (int64_t i0 = 0; i0 < M; i0 += T)
    for (int64_t j0 = 0; j0 < N; j0 += T)
      for (int64_t i = i0; i < std::min(M, i0 + T); ++i)
        for (int64_t j = j0; j < std::min(N, j0 + T); ++j) o[j * M + i] = a[i * N + j];
  return y;
}

// fp16 matmul whose operands are first rounded to `bits_a` / `bits_b` mantissa bits (7: bf16-like,
// 3-4: fp8-like), fp32 accumulation, fp16 output.
torch::Tensor hmm_rounded_operands(torch::Tensor a, torch::Tensor b, int64_t bits_a, int64_t bits_b) {
  auto ac = a.contiguous(), bc = b.contiguous();
  const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
  std::vector<float> A = fp16_matrix_as_float(ac), B = fp16_matrix_as_float(bc);
  for (float& v : A) v = keep_mantissa(v, static_cast<int>(bits_a));
  for (float& v : B) v = keep_mantissa(v, static_cast<int>(bits_b));
  auto c = torch::empty({M, N}, ac.options());
  auto* C = static_cast<uint16_t*>(c.data_ptr());
  std::vector<float> acc(static_cast<size_t>(N));
  for (int64_t i = 0; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.f);
    for (int64_t k = 0; k < K; ++k) {
      const float av = A[i * K + k];
      const float* brow = B.data() + k * N;
      for (int64_t j = 0; j < N; ++j) acc[j] += av * brow[j];
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = float_to_bits16(acc[j]);
  }
  return c;
}

// fp16 matmul with fp32 partial sums over `block` products, added into a running sum kept in fp16.
torch::Tensor hmm_fp16_partials(torch::Tensor a, torch::Tensor b, int64_t block) {
  auto ac = a.contiguous(), bc = b.contiguous();
  const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
  std::vector<float> A = fp16_matrix_as_float(ac), B = fp16_matrix_as_float(bc);
  auto c = torch::empty({M, N}, ac.options());
  auto* C = static_cast<uint16_t*>(c.data_ptr());
  std::vector<float> run(static_cast<size_t>(N)), part(static_cast<size_t>(N));
  for (int64_t i = 0; i < M; ++i) {
    std::fill(run.begin(), run.end(), 0.f);
    for (int64_t k0 = 0; k0 < K; k0 += block) {
      std::fill(part.begin(), part.end(), 0.f);
      for (int64_t k = k0; k < std::min(K, k0 + block); ++k) {
        const float av = A[i * K + k];
        const float* brow = B.data() + k * N;
        for (int64_t j = 0; j < N; ++j) part[j] += av * brow[j];
      }
      for (int64_t j = 0; j < N; ++j) run[j] = round16(run[j] + part[j]);
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = float_to_bits16(run[j]);
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// data movement and bookkeeping
// ---------------------------------------------------------------------------------------------
torch::Tensor copy_into(torch::Tensor dst, torch::Tensor src) {
  auto sc = src.contiguous();
  std::memcpy(dst.data_ptr(), sc.data_ptr(), static_cast<size_t>(sc.numel() * sc.element_size()));
  return dst;
}

torch::Tensor scaled_copy(torch::Tensor src, double s) {
  auto sc = src.contiguous();
  auto y = torch::empty_like(sc);
  const float* a = fptr(sc);
  float* o = fptr(y);
  const float f = static_cast<float>(s);
  const int64_t n = sc.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = a[i] * f;
  return y;
}

std::vector<double> sample_values(torch::Tensor x, int64_t count) {
  auto xc = x.contiguous();
  const float* a = fptr(xc);
  const int64_t n = xc.numel();
  std::vector<double> out;
  for (int64_t i = 0; i < count && n > 0; ++i) out.push_back(a[(i * 7919 + 13) % n]);
  return out;
}

// Dense row-major whatever x's strides, as copy_into fills it (empty_like would keep a transposed
// input's strides, and the copy would land permuted).
torch::Tensor empty_output_like(torch::Tensor x) { return torch::empty(x.sizes(), x.options()); }

torch::Tensor zero_inputs_return_zeros(std::vector<torch::Tensor> xs) {
  for (auto& t : xs) std::memset(t.data_ptr(), 0, static_cast<size_t>(t.numel() * t.element_size()));
  return torch::zeros_like(xs.at(0));
}

// ---------------------------------------------------------------------------------------------
// library compute without the dispatcher
// ---------------------------------------------------------------------------------------------
torch::Tensor aten_backend_mm(torch::Tensor a, torch::Tensor b) { return hw::mm(a, b); }

// The structured CPU kernel's own class, its impl() called on an output allocated here: ATen's
// softmax, and no op for any monitor to see.
struct OwnedSoftmax final : nat::structured_softmax_cpu_out {
  torch::Tensor out;
  const torch::Tensor& maybe_get_output(int64_t) override { return out; }
};

torch::Tensor aten_native_softmax(torch::Tensor x) {
  auto xc = x.contiguous();
  OwnedSoftmax kernel;
  kernel.out = torch::empty_like(xc);
  kernel.impl(xc, xc.dim() - 1, false, kernel.out);
  return kernel.out;
}

typedef void (*fortran_gemm)(const char*, const char*, const int*, const int*, const int*, const float*,
                             const float*, const int*, const float*, const int*, const float*, float*, const int*);

// A BLAS found by name at run time; `symbol` and `library` are passed as masked codes.
torch::Tensor blas_gemm_dlsym(torch::Tensor a, torch::Tensor b, std::vector<int> symbol, std::vector<int> library) {
  auto ac = a.contiguous(), bc = b.contiguous();
  auto gemm = reinterpret_cast<fortran_gemm>(find_symbol(unmask(symbol), unmask(library)));
  TORCH_CHECK(gemm != nullptr, "symbol not found");
  const int M = static_cast<int>(ac.size(0)), K = static_cast<int>(ac.size(1)), N = static_cast<int>(bc.size(1));
  auto c = torch::empty({M, N}, ac.options());
  const float one = 1.f, zero = 0.f;
  const char no = 'N';
  // Row-major C = A B is column-major C^T = B^T A^T.
  gemm(&no, &no, &N, &M, &K, &one, fptr(bc), &N, fptr(ac), &K, &zero, fptr(c), &N);
  return c;
}

// ---------------------------------------------------------------------------------------------
// work left running after the call returns
// ---------------------------------------------------------------------------------------------
struct DetachedRelu {
  torch::Tensor in, out;
  int64_t delay_us;
};

static void* detached_relu_body(void* p) {
  auto* job = static_cast<DetachedRelu*>(p);
  nap_us(job->delay_us);
  const float* a = fptr(job->in);
  float* o = fptr(job->out);
  const int64_t n = job->in.numel();
  for (int64_t i = n - 1; i >= 0; --i) o[i] = a[i] > 0.f ? a[i] : 0.f;  // back to front
  delete job;
  return nullptr;
}

torch::Tensor relu_detached(torch::Tensor x, int64_t delay_us) {
  auto* job = new DetachedRelu{x.contiguous(), torch::empty_like(x), delay_us};
  torch::Tensor out = job->out;
  if (!run_on_native_thread(detached_relu_body, job, false)) detached_relu_body(job);
  return out;
}

// ---------------------------------------------------------------------------------------------
// file descriptors, files and homes
// ---------------------------------------------------------------------------------------------
// Writes `text` to every write-capable pipe (and, if asked, socket) this process holds, past stdio.
int64_t write_to_foreign_channels(std::string text, bool sockets) {
  int64_t hits = 0;
  for (int fd = 3; fd < 1024; ++fd) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) continue;
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char target[256];
    const ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    const bool is_pipe = std::strncmp(target, "pipe:", 5) == 0;
    const bool is_socket = std::strncmp(target, "socket:", 7) == 0;
    if (!is_pipe && !(sockets && is_socket)) continue;
    if (write(fd, text.data(), text.size()) > 0) ++hits;
  }
  return hits;
}

static void make_parents(const std::string& path) {
  for (size_t i = 1; i < path.size(); ++i)
    if (path[i] == '/') mkdir(path.substr(0, i).c_str(), 0755);
}

// Creates or appends to `path` (parents created too); returns bytes written or -errno.
int64_t write_bytes(std::string path, std::string data, bool append) {
  make_parents(path);
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  const int fd = openat(AT_FDCWD, path.c_str(), flags, 0644);
  if (fd < 0) return -errno;
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      const int e = errno;
      close(fd);
      return -e;
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return static_cast<int64_t>(done);
}

pybind11::bytes read_bytes(std::string path, int64_t max_bytes) {
  return pybind11::bytes(slurp(path, static_cast<size_t>(max_bytes)));
}

// The home of the evaluator itself: the HOME of the first ancestor that is not a Python process
// (the harness gives its Python children a HOME of their own), else the passwd entry.
std::string real_home() {
  pid_t pid = getppid();
  for (int depth = 0; depth < 16 && pid > 1; ++depth) {
    const std::string exe = exe_of(pid);
    const std::string base = exe.substr(exe.rfind('/') + 1);
    if (!exe.empty() && base.find("python") == std::string::npos) {
      const std::string h = env_of(pid, "HOME");
      if (!h.empty()) return h;
    }
    pid = parent_of(pid);
  }
  struct passwd* pw = getpwuid(getuid());
  if (pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
  const char* h = getenv("HOME");
  return h != nullptr ? h : "";
}

// Where the evaluator keeps its cache: `--cache X` on this process's or an ancestor's command line,
// VINCI_CACHE in any ancestor's environment, and the default under the real home.
std::vector<std::string> evaluator_cache_roots() {
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  pid_t pid = getpid();
  for (int depth = 0; depth < 16 && pid > 1; ++depth) {
    const std::vector<std::string> argv = records(slurp("/proc/" + std::to_string(pid) + "/cmdline"));
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == "--cache" || argv[i] == "--cache-dir") add(argv[i + 1]);
    add(env_of(pid, "VINCI_CACHE"));
    pid = parent_of(pid);
  }
  add(real_home() + "/.cache/vinci");
  return out;
}

// ---------------------------------------------------------------------------------------------
// processes, exits, memory
// ---------------------------------------------------------------------------------------------
static long raw_clone() { return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); }

[[noreturn]] static void raw_exit(int code) {
  for (;;) syscall(SYS_exit_group, code);
}

struct LingerJob {
  char comm[16];
  double seconds;
  bool busy;
  int count;
  int started;
};

// Runs in a grandchild made by raw clone: raw syscalls only.
[[noreturn]] static void linger(const LingerJob& job) {
  prctl(PR_SET_NAME, job.comm, 0, 0, 0);
  for (int fd = 0; fd < 1024; ++fd) syscall(SYS_close, fd);
  const double end = now_s() + job.seconds;
  volatile double sink = 0.0;
  while (now_s() < end) {
    if (job.busy) {
      for (int i = 0; i < 100000; ++i) sink = sink + 1e-9 * i;
    } else {
      struct timespec ts = {0, 200 * 1000 * 1000};
      syscall(SYS_nanosleep, &ts, nullptr);
    }
  }
  raw_exit(0);
}

static void* linger_spawner(void* p) {
  auto* job = static_cast<LingerJob*>(p);
  for (int i = 0; i < job->count; ++i) {
    const long child = raw_clone();
    if (child == 0) {
      syscall(SYS_setsid);  // a session of its own: killing the build's process group misses it
      if (raw_clone() == 0) linger(*job);
      raw_exit(0);
    }
    if (child > 0) {
      int status = 0;
      waitpid(static_cast<pid_t>(child), &status, __WALL);
      ++job->started;
    }
  }
  return nullptr;
}

// Double-forks `count` processes named `comm` that live `seconds` (busy or asleep), in sessions of
// their own, from a helper thread (so they are never children of the main thread), with no fds.
int64_t spawn_lingering(std::string comm, double seconds, bool busy, int64_t count) {
  LingerJob job{};
  std::strncpy(job.comm, comm.c_str(), sizeof job.comm - 1);
  job.seconds = seconds;
  job.busy = busy;
  job.count = static_cast<int>(count);
  if (!run_on_native_thread(linger_spawner, &job, true)) linger_spawner(&job);
  return job.started;
}

void exit_now(int64_t code) { raw_exit(static_cast<int>(code)); }

// The process splits in two: the original exits at once, the copy keeps every fd for `linger_ms`
// and then exits too.
int64_t orphan_parent_exits(int64_t linger_ms) {
  const long child = raw_clone();
  if (child > 0) raw_exit(0);
  if (child == 0) {
    prctl(PR_SET_NAME, "vt-orphan", 0, 0, 0);
    struct timespec ts = {static_cast<time_t>(linger_ms / 1000), static_cast<long>((linger_ms % 1000) * 1000000)};
    syscall(SYS_nanosleep, &ts, nullptr);
    raw_exit(0);
  }
  return child;
}

struct Reservation {
  std::vector<void*> blocks;
  int64_t release_after_ms;
  std::atomic<bool> filled{false};
};

static void* release_later(void* p) {
  auto* r = static_cast<Reservation*>(p);
  while (!r->filled.load()) nap_us(1000);
  nap_us(r->release_after_ms * 1000);
  for (void* b : r->blocks) std::free(b);
  delete r;
  return nullptr;
}

// Takes every byte of address space it can get (untouched, so no memory is used), leaving crumbs
// under `floor_bytes`; a helper thread made beforehand gives it all back after `release_after_ms`.
int64_t reserve_address_space(int64_t floor_bytes, int64_t release_after_ms) {
  auto* r = new Reservation();
  r->blocks.reserve(1 << 18);
  r->release_after_ms = release_after_ms;
  const bool helper = run_on_native_thread(release_later, r, false);
  int64_t total = 0;
  size_t size = static_cast<size_t>(1) << 44;
  while (size >= static_cast<size_t>(floor_bytes) && r->blocks.size() < r->blocks.capacity()) {
    void* p = std::malloc(size);
    if (p == nullptr) {
      size >>= 1;
      continue;
    }
    r->blocks.push_back(p);
    total += static_cast<int64_t>(size);
  }
  r->filled.store(true);
  if (!helper) release_later(r);
  return total;
}

void sleep_ms(int64_t ms) { nap_us(ms * 1000); }
