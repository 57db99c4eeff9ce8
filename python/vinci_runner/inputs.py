"""The inputs of one call, made from a seed the trusted side picks, by both sides alike.

A runner makes its own inputs (cheaper than shipping gigabytes), and the trusted side makes the
same ones again from the same seed to compute the reference: tampering with the runner's copy only
makes the candidate's output answer a different question.

Besides the task's own distribution ("task"), correctness trials draw out-of-distribution inputs,
so a kernel that is right only on uniform [0, 1) values fails. Each transform is an elementwise
function of the task's own draw that keeps zeros at zero, so the structure a task builds into its
inputs (triangular, symmetric, sparse, equal entries) survives:
  signed    2x - m: values spread over [-m, m) where the draw had [0, m)   (dropped ReLUs, abs tricks)
  negative  -|x|: every value at or below zero                   (maxima that start at zero, clamps)
  offset    x + 64m: a large common offset             (one-pass variances that cancel catastrophically)
  scaled    128x: large magnitudes                       (softmax without its max, overflow, fitted curves)
  specials  a few values set to 0, +16m and -16m        (edge values, sign handling)
where m is the largest magnitude of the draw. Integer and boolean inputs are never changed.
"""
from __future__ import annotations

import random

import torch

KINDS = ("task", "signed", "negative", "offset", "scaled", "specials")
OUT_OF_DISTRIBUTION = KINDS[1:]


def seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % (1 << 32))
    except ImportError:
        pass


def make_inputs(task, seed: int, kind: str, device: torch.device) -> list:
    if kind not in KINDS:
        raise ValueError(f"unknown input kind {kind!r}")
    seed_everything(seed)
    with device:  # torch.rand & co. then fill device memory directly: gigabytes take milliseconds
        raw = task.get_inputs()
    if not isinstance(raw, (list, tuple)):
        raw = [raw]
    out = []
    for x in raw:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            if kind != "task" and x.is_floating_point() and x.numel() > 0:
                x = _transform(x, kind)
        out.append(x)
    return out


def _transform(x: torch.Tensor, kind: str) -> torch.Tensor:
    wide = x.to(torch.float64 if x.dtype == torch.float64 else torch.float32)
    m = float(wide.abs().max())
    m = m if m > 0 and m == m and m != float("inf") else 1.0
    zero = wide == 0
    if kind == "signed":
        y = 2 * wide - m
    elif kind == "negative":
        y = -wide.abs()
    elif kind == "offset":
        y = wide + 64 * m
    elif kind == "scaled":
        y = wide * 128
    else:
        y = wide.clone()
        # Value bands pick the positions, so equal inputs get equal specials; a draw of few distinct
        # values (masks, integers stored as floats) would have whole bands hit and is left alone.
        for centre, value in ((0.3141, 0.0), (0.5772, 16 * m), (0.7183, -16 * m)):
            band = (wide - centre * m).abs() < 5e-4 * m
            if int(band.sum()) <= max(1, wide.numel() // 100):
                y = torch.where(band, torch.full_like(y, value), y)
    y = torch.where(zero, torch.zeros_like(y), y)
    return y.to(x.dtype)
