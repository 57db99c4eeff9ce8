"""Comparing a candidate's outputs with the reference's, on the trusted side.

Two questions per call: do the values agree within the task's tolerance (KernelBench's rule, per
element), and, in a half-precision task, does the candidate keep the precision the task's dtype
promises? The second is asked against an fp64 reference: the candidate's RMS error may be at most
twice the task's own reference's error plus half a unit roundoff (the error of one correct
rounding): a kernel that rounds its operands, or accumulates, below the dtype's precision does not
fit under that, and one that rounds once from a wider accumulator does.

Out-of-distribution inputs (large offsets, large magnitudes) make sums cancel, where the task's own
reference is no longer the truth: there the values are compared with the fp64 reference, and each
output's tolerance grows by a few times the RMS error of the task's reference, so a kernel more
accurate than the reference is never the one that fails.
"""
from __future__ import annotations

import math

import torch

PRECISION_FACTOR = 2.0
REFERENCE_ERROR_FACTOR = 8.0
UNIT_ROUNDOFF = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def tolerance(dtype: torch.dtype, tolerances: dict) -> tuple[float, float]:
    name = str(dtype).replace("torch.", "")
    atol, rtol = tolerances.get(name, tolerances.get("default", (1e-4, 1e-4)))
    return float(atol), float(rtol)


def _fail(reason: str, message: str) -> dict:
    return {"ok": False, "reason": reason, "message": message, "max_abs_diff": None, "mean_abs_diff": None}


def compare(got: list, expected: list, tolerances: dict, finite_only: bool = False, exact: list | None = None) -> dict:
    """{'ok', 'reason', 'message', 'max_abs_diff', 'mean_abs_diff'}. finite_only compares only where
    the reference is finite (out-of-distribution inputs may drive the reference itself to inf);
    with exact (the fp64 reference), values are compared with it instead, each output's tolerance
    widened by the task reference's own RMS error."""
    if len(got) != len(expected):
        return _fail("shape_mismatch", f"returned {len(got)} outputs, the reference returns {len(expected)}")
    worst, total, count, bad = 0.0, 0.0, 0, 0
    for i, (c, r) in enumerate(zip(got, expected)):
        if not isinstance(r, torch.Tensor):
            if c != r and not (isinstance(r, float) and isinstance(c, float) and math.isnan(r) and math.isnan(c)):
                return _fail("mismatch", f"output {i}: {c!r} != reference {r!r}")
            continue
        if not isinstance(c, torch.Tensor):
            return _fail("shape_mismatch", f"output {i} is a {type(c).__name__}, the reference returns a tensor")
        if c.shape != r.shape:
            return _fail("shape_mismatch", f"output {i} has shape {tuple(c.shape)}, the reference {tuple(r.shape)}")
        if c.dtype != r.dtype:
            return _fail("dtype_mismatch", f"output {i} is {c.dtype}, the reference {r.dtype}")
        c = c.to(r.device)
        if not r.is_floating_point() and not r.is_complex():
            if not torch.equal(c, r):
                n = int((c != r).sum())
                return _fail("mismatch", f"output {i}: {n} of {r.numel()} integer elements differ")
            continue
        cd, rd = c.detach().double(), r.detach().double()
        slack = 0.0
        if exact is not None and isinstance(exact[i], torch.Tensor):
            ed = exact[i].detach().double().to(rd.device)
            both = torch.isfinite(ed) & torch.isfinite(rd)
            if bool(both.any()):
                slack = REFERENCE_ERROR_FACTOR * float((rd[both] - ed[both]).pow(2).mean().sqrt())
            rd = torch.where(torch.isfinite(rd), ed, rd)
        c_bad, r_bad = ~torch.isfinite(cd), ~torch.isfinite(rd)
        if bool((c_bad & ~r_bad).any()):
            n = int((c_bad & ~r_bad).sum())
            return _fail("nan_inf", f"output {i}: {n} of {r.numel()} elements are NaN/Inf where the reference is finite")
        if not finite_only and bool(r_bad.any()):
            same = cd[r_bad].nan_to_num(nan=0.5) == rd[r_bad].nan_to_num(nan=0.5)
            if not bool(same.all()):
                return _fail("mismatch", f"output {i}: non-finite reference elements differ")
        atol, rtol = tolerance(r.dtype, tolerances)
        finite = ~r_bad
        diff = (cd - rd).abs()[finite]
        if diff.numel():
            worst = max(worst, float(diff.max()))
            total += float(diff.sum())
            count += diff.numel()
            bad += int((diff > atol + slack + rtol * rd.abs()[finite]).sum())
    result = {"ok": bad == 0, "max_abs_diff": worst, "mean_abs_diff": total / count if count else 0.0}
    if bad:
        result.update(reason="mismatch",
                      message=f"{bad} elements beyond tolerance; max |diff| {worst:.3g}, mean {result['mean_abs_diff']:.3g}")
    return result


def precision(got: list, exact: list, task_reference: list) -> dict | None:
    """A failure when a half-precision output is less precise than its dtype allows, else None.
    exact is the reference computed in fp64; task_reference the reference in the task's dtype."""
    for i, (c, e, r) in enumerate(zip(got, exact, task_reference)):
        if not isinstance(c, torch.Tensor) or c.dtype not in UNIT_ROUNDOFF or not isinstance(e, torch.Tensor):
            continue
        e = e.detach().double()
        finite = torch.isfinite(e) & torch.isfinite(r.double()) & torch.isfinite(c.to(e.device).double())
        if not bool(finite.any()):
            continue
        ev = e[finite]
        rms_c = float((c.to(e.device).double()[finite] - ev).pow(2).mean().sqrt())
        rms_r = float((r.double()[finite] - ev).pow(2).mean().sqrt())
        scale = float(ev.pow(2).mean().sqrt())
        bound = PRECISION_FACTOR * rms_r + UNIT_ROUNDOFF[c.dtype] / 2 * scale
        if rms_c > bound:
            return _fail("precision_loss",
                         f"output {i}: RMS error {rms_c:.3g} against an fp64 reference, where the task's own "
                         f"{str(c.dtype).replace('torch.', '')} reference has {rms_r:.3g}; {str(c.dtype).replace('torch.', '')} "
                         f"precision allows at most {bound:.3g} ({PRECISION_FACTOR:g}x that plus half a unit roundoff "
                         f"of the output's RMS {scale:.3g})")
    return None
