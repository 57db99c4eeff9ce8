"""Comparing a candidate's output with the reference's, and the inputs each trial feeds them."""
from __future__ import annotations

import torch


def flatten(out) -> list:
    if isinstance(out, (tuple, list)):
        items = []
        for o in out:
            items.extend(flatten(o))
        return items
    return [out]


def tolerance(dtype: torch.dtype, tolerances: dict) -> tuple[float, float]:
    name = str(dtype).replace("torch.", "")
    atol, rtol = tolerances.get(name, tolerances.get("default", (1e-4, 1e-4)))
    return float(atol), float(rtol)


def compare(candidate, reference, tolerances: dict) -> dict:
    """{'ok', 'reason', 'message', 'max_abs_diff', 'mean_abs_diff', 'mismatched'} for one trial."""
    cs, rs = flatten(candidate), flatten(reference)
    if len(cs) != len(rs):
        return _fail("shape_mismatch", f"returned {len(cs)} outputs, the reference returns {len(rs)}")
    worst, total, count, bad = 0.0, 0.0, 0, 0
    for i, (c, r) in enumerate(zip(cs, rs)):
        if not isinstance(r, torch.Tensor):
            if c != r:
                return _fail("mismatch", f"output {i}: {c!r} != reference {r!r}")
            continue
        if not isinstance(c, torch.Tensor):
            return _fail("shape_mismatch", f"output {i} is a {type(c).__name__}, the reference returns a tensor")
        if c.shape != r.shape:
            return _fail("shape_mismatch", f"output {i} has shape {tuple(c.shape)}, the reference {tuple(r.shape)}")
        if c.dtype != r.dtype:
            return _fail("dtype_mismatch", f"output {i} is {c.dtype}, the reference {r.dtype}")
        if c.device != r.device:
            return _fail("shape_mismatch", f"output {i} is on {c.device}, the reference on {r.device}")
        if not r.is_floating_point() and not r.is_complex():
            if not torch.equal(c, r):
                n = int((c != r).sum())
                return _fail("mismatch", f"output {i}: {n} of {r.numel()} integer elements differ")
            continue
        cd, rd = c.detach().double(), r.detach().double()
        c_bad = ~torch.isfinite(cd)
        r_bad = ~torch.isfinite(rd)
        if bool((c_bad & ~r_bad).any()):
            n = int((c_bad & ~r_bad).sum())
            return _fail("nan_inf", f"output {i}: {n} of {r.numel()} elements are NaN/Inf where the reference is finite")
        atol, rtol = tolerance(r.dtype, tolerances)
        finite = ~r_bad
        same_nonfinite = (cd[r_bad].nan_to_num(nan=0.5) == rd[r_bad].nan_to_num(nan=0.5)) if bool(r_bad.any()) else None
        if same_nonfinite is not None and not bool(same_nonfinite.all()):
            return _fail("mismatch", f"output {i}: non-finite reference elements differ")
        diff = (cd - rd).abs()[finite]
        if diff.numel():
            worst = max(worst, float(diff.max()))
            total += float(diff.sum())
            count += diff.numel()
            limit = atol + rtol * rd.abs()[finite]
            bad += int((diff > limit).sum())
    result = {"ok": bad == 0, "max_abs_diff": worst, "mean_abs_diff": total / count if count else 0.0,
              "mismatched": bad}
    if bad:
        result.update(reason="mismatch",
                      message=f"{bad} elements beyond tolerance; max |diff| {worst:.3g}, mean {result['mean_abs_diff']:.3g}")
    return result


def _fail(reason: str, message: str) -> dict:
    return {"ok": False, "reason": reason, "message": message, "max_abs_diff": None, "mean_abs_diff": None,
            "mismatched": None}


def same_values(a, b) -> bool:
    xs, ys = flatten(a), flatten(b)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not torch.equal(x, y):
                return False
        elif x != y:
            return False
    return True


def make_inputs(task, seed: int, trial: int, trials: int, device: torch.device) -> list:
    """Fresh inputs for one trial; the last two trials reshape the distribution.

    Uniform [0, 1) inputs let constants and subsamples pass loose tolerances (a mean of many
    uniforms is ~0.5 whatever the data), so one trial rescales every float input by a random
    factor and another plants sparse large positive spikes. Both keep inputs non-negative, so
    domains such as log or sqrt stay valid. Inputs are made on the device: at scale 1 they are
    gigabytes, which the CPU generator would take seconds to fill.
    """
    torch.manual_seed(seed)
    with device:  # torch.rand & co. then fill device memory directly: gigabytes take milliseconds
        inputs = task.get_inputs()
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    gen = torch.Generator(device=device).manual_seed(seed ^ 0x5EED)
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            if x.is_floating_point() and trials >= 3:
                if trial == trials - 2:
                    x = x * (0.25 + 3.75 * torch.rand((), generator=gen, device=device)).to(x.dtype)
                elif trial == trials - 1 and x.numel() >= 16:
                    mask = torch.rand(x.shape, generator=gen, device=device) < 0.005
                    x = torch.where(mask, x * 4 + 1, x)
        out.append(x)
    return out
