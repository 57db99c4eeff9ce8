# vinci-task: level1/13_ReLU
# vinci-expect: correct/
# vinci-expect-speedup-below: 3
# vinci-devices: cuda
"""Unwatched work on a side stream: forward launches its Triton ReLU on a torch.cuda.Stream of its
own, which waits for the caller's stream (so it reads finished inputs) but is never waited for,
and returns at once. Events recorded on the
caller's stream time only the launch; whoever reads the output before the side stream is done
reads it half written."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream()
        y = torch.empty_like(x)
        n = x.numel()
        self.side.wait_stream(torch.cuda.current_stream())  # the inputs are ready; only the end is not awaited
        with torch.cuda.stream(self.side):
            _relu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
