"""Comparing a candidate's outputs with the reference's, on the trusted side.

Two questions per call: do the values agree within the task's tolerance (KernelBench's rule, per
element), and, in a half-precision task, does the candidate keep the precision the task's dtype
promises? The second is asked against an fp64 reference: the candidate's RMS error may be at most
twice the task's own reference's error plus half a unit roundoff (the error of one correct
rounding): a kernel that rounds its operands, or accumulates, below the dtype's precision does not
fit under that, and one that rounds once from a wider accumulator does.

An element-wise tolerance is blind where the outputs are far below its atol (a softmax over a long
row, a mean of random values): zeros, or values a few percent off everywhere, pass it. So every
output is also held to a bound on its error's norm relative to the fp64 reference's norm: at most
the dtype's rtol, or REFERENCE_ERROR_FACTOR times the task reference's own relative error where that
is larger (outputs whose computation cancels), whatever the outputs' scale.

Out-of-distribution inputs (large offsets, large magnitudes) make sums cancel, where the task's own
reference is no longer the truth: there the values are compared with the fp64 reference, and each
output's tolerance grows by the task reference's own error (8x its RMS or 2x its largest, whichever
is larger), so a kernel as accurate as the reference is never the one that fails. Where an
output is ill-conditioned in its inputs (a softmax over near-ties at logits of 4e4), one rounding of
another summation order moves a few elements by far more than that global slack: an honest
attention kernel failed 2.1% of the scaled calls. So an output that fails is looked at again with
per-element slack: LOCAL_FACTOR times how far the task's reference moves from the fp64 one when its
inputs move by one ulp (SENSITIVITY_DRAWS draws, the largest per element; Judge._sensitivity). That
is the reference's own conditioning on the judge's inputs, which no candidate chooses; 8 draws and
a factor 2 left none of 3,000 such calls failing (4 draws: 2).

Moving the inputs says nothing of rounding inside a computation, and an output that cancels (a sum
of signed values beside a large maximum and minimum, the edges kind's) carries the rounding of its
partial sums, as large as those peaks: the honest CUDA sum over 4,096 rows of the suite, eight
sequential partial sums a column, failed 6 of 20 plain edges calls by up to 0.037 on outputs of
400, where torch's cascaded sum erred by 3e-4. So the second look also allows each element
rounding_slack(): sqrt(fan-in) unit roundoffs of the reference on the inputs' magnitudes (the task's
reference on |x|; for a sum, the sum of |x|), the usual bound of a summation's rounding error, with
fan-in the inputs' elements per output element. That kernel's error was at most 0.14 of it.
"""
from __future__ import annotations

import math

import torch

PRECISION_FACTOR = 2.0
REFERENCE_ERROR_FACTOR = 8.0
LOCAL_FACTOR = 2.0
SENSITIVITY_DRAWS = 8
UNIT_ROUNDOFF = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def tolerance(dtype: torch.dtype, tolerances: dict) -> tuple[float, float]:
    name = str(dtype).replace("torch.", "")
    atol, rtol = tolerances.get(name, tolerances.get("default", (1e-4, 1e-4)))
    return float(atol), float(rtol)


def _fail(reason: str, message: str) -> dict:
    return {"ok": False, "reason": reason, "message": message, "max_abs_diff": None, "mean_abs_diff": None}


# Elements compared at once: fp64 temporaries of a multi-gigabyte output stay bounded. On the CPU
# they stay a few MiB, within the caches and the allocator's reuse: a 4M-element comparison took
# 4-20x longer in chunks of 16M (fresh pages for every temporary) on the 2-core CI machine.
CHUNK = {"cuda": 1 << 24, "cpu": 1 << 18}


def _chunks(*tensors):
    """Matching flat slices of tensors of one shape (None passes through as None)."""
    flat = [t.detach().reshape(-1) if t is not None else None for t in tensors]
    first = next(t for t in flat if t is not None)
    step = CHUNK.get(first.device.type, CHUNK["cuda"])
    for start in range(0, first.numel(), step):
        yield [t[start:start + step] if t is not None else None for t in flat]


def _squares(d: torch.Tensor) -> float:
    """The sum of d's squares. Finite only where every value of d is, so where d is a difference of
    two tensors, it also says that both are finite everywhere (inf - inf and anything with NaN are
    not) and their masks of non-finite values are not needed: the common case, in one pass. A sum
    that overflowed takes the masked path, which answers the same."""
    return float(torch.dot(d, d))


def _reference_error(r: torch.Tensor, e: torch.Tensor) -> float:
    """The task reference's own error against the fp64 one: the larger of 8x its RMS and 2x its
    largest, so both spread-out and concentrated (cancelling) errors of the reference are allowed."""
    squares, count, largest = 0.0, 0, 0.0
    for rc, ec in _chunks(r, e):
        rd, ed = rc.double(), ec.double().to(rc.device)
        d = rd - ed
        sq = _squares(d)
        if not math.isfinite(sq):
            d = d[torch.isfinite(rd) & torch.isfinite(ed)]
            sq = _squares(d)
        if d.numel():
            squares += sq
            count += d.numel()
            largest = max(largest, float(d.abs().max()))
    return max(REFERENCE_ERROR_FACTOR * math.sqrt(squares / count), 2 * largest) if count else 0.0


def ulp_moved(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """x with each finite value moved by -1, 0 or +1 ulp at random: an input as one other rounding of
    it. Infinities and NaNs stay as they are (no other rounding gives them)."""
    # One nextafter toward x + s * (|x| + 1), which lies past x in the direction of s and equals x
    # where s is -0.0: s is the drawn step negated (a symmetric draw), so a step of 0 adds -0.0 and
    # leaves even a -0.0 as it was. torch.where over scalars made two passes of 40 ms per 13 million
    # elements; this is six cheap ones, bit for bit the same moves on finite values (compare_test).
    s = torch.randint(-1, 2, x.shape, generator=generator, dtype=torch.int8).to(x.device).to(x.dtype).neg_()
    reach = x.abs().add_(1).nan_to_num_(nan=1.0, posinf=1.0)
    return torch.nextafter(x, torch.addcmul(x, s, reach))


def sensitivity(moved_outputs: list[list], exact: list) -> list:
    """Per output, the largest |moved - exact| per element over the references on moved inputs
    (None where an output is not a floating tensor); non-finite differences count as zero, since
    only finite reference elements are compared."""
    local = []
    for i, e in enumerate(exact):
        if not isinstance(e, torch.Tensor) or not e.is_floating_point():
            local.append(None)
            continue
        wide = e.double()
        worst = torch.zeros(e.shape, dtype=torch.float64, device=e.device)
        for outs in moved_outputs:
            d = outs[i].to(device=e.device, dtype=torch.float64, copy=True).sub_(wide).abs_()
            torch.maximum(worst, d.nan_to_num_(nan=0.0, posinf=0.0), out=worst)
        local.append(worst)
    return local


def rounding_slack(local: list, magnitudes: list, fan_in: float) -> list:
    """local (sensitivity()) with each element raised to at least sqrt(fan_in) unit roundoffs (fp32's,
    fp64's for a double output) of its magnitude: the reference's output on the inputs' absolute
    values, where it has the output's shape (non-finite magnitudes count as zero)."""
    out = []
    for near, m in zip(local, magnitudes):
        if near is None or not isinstance(m, torch.Tensor) or tuple(m.shape) != tuple(near.shape) or \
                not m.is_floating_point():
            out.append(near)
            continue
        roundoff = 2.0 ** -53 if m.dtype == torch.float64 else 2.0 ** -24
        term = m.to(near.device).double().abs_().nan_to_num_(nan=0.0, posinf=0.0).mul_(math.sqrt(max(1.0, fan_in)) * roundoff)
        out.append(torch.maximum(near, term))
    return out


def compare(got: list, expected: list, tolerances: dict, finite_only: bool = False, exact: list | None = None,
            local: list | None = None) -> dict:
    """{'ok', 'reason', 'message', 'max_abs_diff', 'mean_abs_diff'}. finite_only compares only where
    the reference is finite (out-of-distribution inputs may drive the reference itself to inf);
    with exact (the fp64 reference), values are compared with it instead, each output's tolerance
    widened by the task reference's own error (_reference_error), and with local (sensitivity())
    each element's by LOCAL_FACTOR times the reference's own movement there."""
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
        if not r.is_floating_point() and not r.is_complex():
            differ = sum(int((cc.to(rc.device) != rc).sum()) for cc, rc in _chunks(c, r))
            if differ:
                return _fail("mismatch", f"output {i}: {differ} of {r.numel()} integer elements differ")
            continue
        e = exact[i] if exact is not None and isinstance(exact[i], torch.Tensor) else None
        slack = _reference_error(r, e) if e is not None else 0.0
        near = local[i] if local is not None and e is not None else None
        atol, rtol = tolerance(r.dtype, tolerances)
        nonfinite_differ = False
        for cc, rc, ec, lc in _chunks(c, r, e, near):
            cd, rd = cc.to(rc.device).double(), rc.double()
            if ec is not None:
                rd = torch.where(torch.isfinite(rd), ec.to(rc.device).double(), rd)
            diff = (cd - rd).abs_()
            bound = rd.abs().mul_(rtol).add_(atol + slack)
            if lc is not None:
                bound.add_(lc.to(rc.device), alpha=LOCAL_FACTOR)
            largest = float(diff.max())  # NaN or inf where a value of either is: then the masks
            if math.isfinite(largest):
                worst = max(worst, largest)
                total += float(diff.sum())
                count += diff.numel()
                bad += int(torch.count_nonzero(diff > bound))
                continue
            c_bad, r_bad = ~torch.isfinite(cd), ~torch.isfinite(rd)
            if bool((c_bad & ~r_bad).any()):
                n = sum(int((~torch.isfinite(x.to(y.device).double()) & torch.isfinite(y.double())).sum())
                        for x, y in _chunks(c, r))
                return _fail("nan_inf", f"output {i}: {n} of {r.numel()} elements are NaN/Inf where the reference is finite")
            if not finite_only and bool(r_bad.any()):
                # Told once the whole output is read: a NaN in a later chunk is still nan_inf, so the
                # verdict does not hang on where chunks begin.
                nonfinite_differ |= not bool((cd[r_bad].nan_to_num(nan=0.5) == rd[r_bad].nan_to_num(nan=0.5)).all())
            finite = ~r_bad
            diff = diff[finite]
            if diff.numel():
                worst = max(worst, float(diff.max()))
                total += float(diff.sum())
                count += diff.numel()
                bad += int((diff > bound[finite]).sum())
        if nonfinite_differ:
            return _fail("mismatch", f"output {i}: non-finite reference elements differ")
    result = {"ok": bad == 0, "max_abs_diff": worst, "mean_abs_diff": total / count if count else 0.0}
    if bad:
        result.update(reason="mismatch",
                      message=f"{bad} elements beyond tolerance; max |diff| {worst:.3g}, mean {result['mean_abs_diff']:.3g}")
    return result


def relative_error(got: list, exact: list, task_reference: list, tolerances: dict | None = None,
                   local: list | None = None) -> dict | None:
    """A failure when an output's error, as a norm relative to the fp64 reference's norm, exceeds
    both the dtype's rtol and REFERENCE_ERROR_FACTOR times the task reference's own; else None. With
    local (sensitivity()), each element's error counts only beyond LOCAL_FACTOR times the reference's
    own movement there: an element forgiven its own conditioning, never another's (red-team round
    37: a norm of the movement as the bound would let one element that flips at a discontinuity
    excuse the whole output). Only where the fp64 and the task's reference are finite; outputs whose
    reference is all zeros are left to the element-wise rule."""
    for i, (c, e, r) in enumerate(zip(got, exact, task_reference)):
        if not isinstance(c, torch.Tensor) or not isinstance(e, torch.Tensor) or not isinstance(r, torch.Tensor) \
                or not r.is_floating_point() or c.numel() == 0:
            continue
        near = local[i] if local is not None else None
        sq_c = sq_r = sq_e = 0.0
        for cc, ec, rc, lc in _chunks(c, e, r, near):
            ed = ec.double()
            cd, rd = cc.to(ed.device).double(), rc.to(ed.device).double()
            dc = cd - ed
            if lc is not None:
                dc = dc.abs_().sub_(lc.to(ed.device), alpha=LOCAL_FACTOR).clamp_min_(0.0)
            dr = rd - ed
            sq = _squares(dr)
            if math.isfinite(sq):  # ed and rd finite everywhere: no masks
                sq_c += _squares(dc)
                sq_r += sq
                sq_e += _squares(ed)
                continue
            finite = torch.isfinite(ed) & torch.isfinite(rd)
            ev = ed[finite]
            sq_c += float(dc[finite].pow(2).sum())
            sq_r += float((rd[finite] - ev).pow(2).sum())
            sq_e += float(ev.pow(2).sum())
        if sq_e == 0.0 or not math.isfinite(sq_c):
            continue
        norm = math.sqrt(sq_e)
        mine, theirs = math.sqrt(sq_c) / norm, math.sqrt(sq_r) / norm
        _, rtol = tolerance(r.dtype, tolerances or {})
        bound = max(rtol, REFERENCE_ERROR_FACTOR * theirs)
        if mine > bound:
            name = str(r.dtype).replace("torch.", "")
            beyond = f", beyond {LOCAL_FACTOR:g}x the reference's movement on inputs one ulp away" if near is not None else ""
            return _fail("relative_error",
                         f"output {i}: its error{beyond} is {mine:.3g} of the fp64 reference's norm, above the bound "
                         f"{bound:.3g} (the larger of {name}'s rtol {rtol:g} and {REFERENCE_ERROR_FACTOR:g}x the task "
                         f"reference's own {theirs:.3g}): values far below the element-wise atol are wrong all the same")
    return None


def precision(got: list, exact: list, task_reference: list) -> dict | None:
    """A failure when a half-precision output is less precise than its dtype allows, else None.
    exact is the reference computed in fp64; task_reference the reference in the task's dtype."""
    for i, (c, e, r) in enumerate(zip(got, exact, task_reference)):
        if not isinstance(c, torch.Tensor) or c.dtype not in UNIT_ROUNDOFF or not isinstance(e, torch.Tensor):
            continue
        sq_c = sq_r = sq_e = 0.0
        n = 0
        for cc, ec, rc in _chunks(c, e, r):
            ed = ec.double()
            cd, rd = cc.to(ed.device).double(), rc.to(ed.device).double()
            mine, theirs = _squares(cd - ed), _squares(rd - ed)
            if math.isfinite(mine) and math.isfinite(theirs):  # all three finite everywhere: no masks
                sq_c += mine
                sq_r += theirs
                sq_e += _squares(ed)
                n += ed.numel()
                continue
            finite = torch.isfinite(ed) & torch.isfinite(rd) & torch.isfinite(cd)
            ev = ed[finite]
            sq_c += float((cd[finite] - ev).pow(2).sum())
            sq_r += float((rd[finite] - ev).pow(2).sum())
            sq_e += float(ev.pow(2).sum())
            n += ev.numel()
        if not n:
            continue
        rms_c, rms_r, scale = math.sqrt(sq_c / n), math.sqrt(sq_r / n), math.sqrt(sq_e / n)
        bound = PRECISION_FACTOR * rms_r + UNIT_ROUNDOFF[c.dtype] / 2 * scale
        if rms_c > bound:
            return _fail("precision_loss",
                         f"output {i}: RMS error {rms_c:.3g} against an fp64 reference, where the task's own "
                         f"{str(c.dtype).replace('torch.', '')} reference has {rms_r:.3g}; {str(c.dtype).replace('torch.', '')} "
                         f"precision allows at most {bound:.3g} ({PRECISION_FACTOR:g}x that plus half a unit roundoff "
                         f"of the output's RMS {scale:.3g})")
    return None
