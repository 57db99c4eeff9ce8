# vinci-task: level1/17_HalfMatmul
# vinci-expect: incorrect/
# vinci-devices: cuda
"""Drops precision inside a half-precision task on fp8 tensor cores: a Triton matmul that converts
each fp16 tile to fp8 e4m3 (3 mantissa bits, rounded to nearest) before tl.dot, accumulating in fp32 and writing fp16.
Twice the tensor-core rate of fp16 on Hopper; the error of all-positive inputs averages out in a
sum of K products, so a tolerance relative to the sum passes it, though it is several times what
fp16 allows."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        a8 = a.to(tl.float32).to(tl.float8e4nv, fp_downcast_rounding="rtne")
        b8 = b.to(tl.float32).to(tl.float8e4nv, fp_downcast_rounding="rtne")
        acc = tl.dot(a8, b8, acc, max_num_imprecise_acc=BK)  # promoted to fp32 after every tile
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
        _fp8_matmul[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                          C.stride(0), C.stride(1), BM=128, BN=128, BK=64)
        return C
