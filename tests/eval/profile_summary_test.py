"""What a profiled call says about its kernels (python/vinci_runner/runner.py _profile_summary), on
stand-in profiler events worked by hand: a kernel is the candidate's own when its identifier is one of
the kernel names its sources define and its full name is not one of the kernels the task's reference
ran (red-team round 13 declared cuBLAS's kernel name in a string and replayed cuBLAS from a graph),
so an honest kernel named like a reference kernel's identifier stays its own.

    python3 tests/eval/profile_summary_test.py REPO_ROOT
"""
import sys
from types import SimpleNamespace

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")
import torch  # noqa: E402

from vinci_runner.runner import _profile_summary  # noqa: E402
from checks import check, finish  # noqa: E402

CUBLAS = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
ATEN_REDUCE = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float>, unsigned int, float, 4> >(at::native::ReduceOp<float>)"


def event(name: str, start: float, end: float):
    return SimpleNamespace(device_type=torch.autograd.DeviceType.CUDA, device_time=end - start, name=name,
                           time_range=SimpleNamespace(start=start, end=end))


cpu_op = SimpleNamespace(device_type=torch.autograd.DeviceType.CPU, device_time=0, name="aten::mm",
                         time_range=SimpleNamespace(start=0, end=5))
profile = SimpleNamespace(events=lambda: [
    event("copy_in(float const*, float*, int)", 0, 10),
    event(CUBLAS, 10, 110),
    event("copy_out(float const*, float*, int)", 110, 120),
    event("reduce_kernel(float const*, float*, int)", 130, 150),
    cpu_op,
])
names = {"copy_in", "copy_out", CUBLAS, "reduce_kernel"}  # what the sources declared

# Without the reference's names the declared cuBLAS kernel counts: 4 custom launches, all 140 us of 140.
launches, coverage, busy_ms, kernels, seen = _profile_summary(profile, names)
check(launches == 4 and abs(coverage - 1.0) < 1e-12, f"declared names alone: {launches} launches, coverage {coverage}")
check(abs(busy_ms - 0.140) < 1e-12, f"busy 0-120 and 130-150 us: {busy_ms} ms")
check(seen == sorted([CUBLAS, "copy_in(float const*, float*, int)", "copy_out(float const*, float*, int)",
                      "reduce_kernel(float const*, float*, int)"]), f"every kernel's full name: {seen}")

# With the reference's names (cuBLAS's gemm and ATen's reduce_kernel) the gemm is the library's: 3
# launches, 40 us of 140 own; the honest reduce_kernel keeps its own full name and stays own.
launches, coverage, _, kernels, _ = _profile_summary(profile, names, {CUBLAS, ATEN_REDUCE})
check(launches == 3 and abs(coverage - 40 / 140) < 1e-12, f"with the reference's names: {launches}, {coverage}")
custom = {k["name"]: k["custom"] for k in kernels}
check(custom[CUBLAS] is False and custom["reduce_kernel(float const*, float*, int)"] is True,
      f"the gemm is the library's, the own reduce_kernel its own: {custom}")

sys.exit(finish("ok: the profiled call's own kernels"))
