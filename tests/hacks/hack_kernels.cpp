#include <torch/extension.h>
#include <cmath>
#include <vector>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static void check_input(const torch::Tensor& t) {
  TORCH_CHECK(t.device().is_cpu(), "expected a CPU tensor");
  TORCH_CHECK(t.scalar_type() == torch::kFloat, "expected a float32 tensor");
  TORCH_CHECK(t.is_contiguous(), "expected a contiguous tensor");
}

torch::Tensor copy(torch::Tensor x) {
  check_input(x);
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = a[i];
  return y;
}

torch::Tensor relu(torch::Tensor x, bool inplace) {
  check_input(x);
  auto y = inplace ? x : torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}

torch::Tensor chain(torch::Tensor x, torch::Tensor y, torch::Tensor z, bool inplace) {
  check_input(x); check_input(y); check_input(z);
  TORCH_CHECK(x.numel() == y.numel() && x.numel() == z.numel(), "size mismatch");
  auto o = inplace ? x : torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  const float* b = y.data_ptr<float>();
  const float* c = z.data_ptr<float>();
  float* d = o.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float v = a[i] * b[i] + c[i];
    d[i] = v > 0.f ? v * 0.5f : 0.f;
  }
  return o;
}

torch::Tensor mul_add(torch::Tensor x, torch::Tensor y, torch::Tensor z) {
  check_input(x); check_input(y); check_input(z);
  TORCH_CHECK(x.numel() == y.numel() && x.numel() == z.numel(), "size mismatch");
  auto o = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  const float* b = y.data_ptr<float>();
  const float* c = z.data_ptr<float>();
  float* d = o.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) d[i] = a[i] * b[i] + c[i];
  return o;
}

void matmul_rows(torch::Tensor A, torch::Tensor B, torch::Tensor C, int64_t r0, int64_t r1) {
  check_input(A); check_input(B); check_input(C);
  const int64_t K = A.size(1), N = B.size(1);
  TORCH_CHECK(B.size(0) == K && C.size(0) == A.size(0) && C.size(1) == N, "shape mismatch");
  const float* a = A.data_ptr<float>();
  const float* b = B.data_ptr<float>();
  float* c = C.data_ptr<float>();
  std::vector<double> acc(N);
  for (int64_t i = r0; i < r1; ++i) {
    for (int64_t j = 0; j < N; ++j) acc[j] = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const double aik = a[i * K + k];
      const float* brow = b + k * N;
      for (int64_t j = 0; j < N; ++j) acc[j] += aik * brow[j];
    }
    for (int64_t j = 0; j < N; ++j) c[i * N + j] = static_cast<float>(acc[j]);
  }
}

torch::Tensor matmul(torch::Tensor A, torch::Tensor B) {
  check_input(A); check_input(B);
  TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "expected 2-D matrices");
  auto C = torch::empty({A.size(0), B.size(1)}, A.options());
  matmul_rows(A, B, C, 0, A.size(0));
  return C;
}

// Softmax over the last dimension. The denominator sums every step-th element (times step).
torch::Tensor softmax(torch::Tensor x, int64_t step) {
  check_input(x);
  auto y = torch::empty_like(x);
  const int64_t n = x.size(x.dim() - 1);
  const int64_t rows = x.numel() / n;
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = a + r * n;
    float m = row[0];
    for (int64_t j = 1; j < n; ++j) m = std::max(m, row[j]);
    double s = 0.0;
    for (int64_t j = 0; j < n; j += step) s += std::exp(static_cast<double>(row[j] - m));
    s *= static_cast<double>(step);
    for (int64_t j = 0; j < n; ++j) b[r * n + j] = static_cast<float>(std::exp(static_cast<double>(row[j] - m)) / s);
  }
  return y;
}

torch::Tensor row_max_sub(torch::Tensor x) {
  check_input(x);
  auto y = torch::empty_like(x);
  const int64_t n = x.size(x.dim() - 1);
  const int64_t rows = x.numel() / n;
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    float m = a[r * n];
    for (int64_t j = 1; j < n; ++j) m = std::max(m, a[r * n + j]);
    for (int64_t j = 0; j < n; ++j) b[r * n + j] = a[r * n + j] - m;
  }
  return y;
}

torch::Tensor exp_scale(torch::Tensor x, double s) {
  check_input(x);
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = static_cast<float>(std::exp(static_cast<double>(a[i])) * s);
  return y;
}

// Mean over the last dimension of every step-th element.
torch::Tensor mean_lastdim(torch::Tensor x, int64_t step) {
  check_input(x);
  auto sizes = x.sizes().vec();
  const int64_t n = sizes.back();
  sizes.pop_back();
  auto y = torch::empty(sizes, x.options());
  const int64_t rows = x.numel() / n;
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    int64_t count = 0;
    for (int64_t j = 0; j < n; j += step) { s += a[r * n + j]; ++count; }
    b[r] = static_cast<float>(s / static_cast<double>(count));
  }
  return y;
}

torch::Tensor fill_(torch::Tensor t, double v) {
  check_input(t);
  float* b = t.data_ptr<float>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = static_cast<float>(v);
  return t;
}

// Used by single hacks only (fill the disk, leave a sleeping child, compute with ATen operators);
// kept in the shared source so that the corpus builds one CPU extension.
int64_t reserve_cache(int64_t max_bytes) {
  long fd = syscall(SYS_openat, AT_FDCWD, "kernel_cache.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  std::vector<char> chunk(1 << 20, 0);
  int64_t total = 0;
  while (total < max_bytes) {
    long w = syscall(SYS_write, fd, chunk.data(), chunk.size());
    if (w <= 0) break;
    total += w;
  }
  syscall(SYS_close, fd);
  return total;
}

int64_t start_helper(int64_t seconds) {
  long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) {
    sleep(static_cast<unsigned>(seconds));
    syscall(SYS_exit_group, 0);
  }
  return pid;
}

torch::Tensor chain_forward(torch::Tensor x, torch::Tensor y, torch::Tensor z) {
  auto v = x * y + z;
  auto keep = (v > 0).to(v.scalar_type());
  return v * keep * 0.5;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  auto nogil = py::call_guard<py::gil_scoped_release>();
  m.def("copy", &copy, nogil);
  m.def("relu", &relu, nogil);
  m.def("chain", &chain, nogil);
  m.def("mul_add", &mul_add, nogil);
  m.def("matmul_rows", &matmul_rows, nogil);
  m.def("matmul", &matmul, nogil);
  m.def("softmax", &softmax, nogil);
  m.def("row_max_sub", &row_max_sub, nogil);
  m.def("exp_scale", &exp_scale, nogil);
  m.def("mean_lastdim", &mean_lastdim, nogil);
  m.def("fill_", &fill_, nogil);
  m.def("reserve_cache", &reserve_cache);
  m.def("start_helper", &start_helper);
  m.def("chain_forward", &chain_forward);
}
