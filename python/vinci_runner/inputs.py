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
  rows      a few rows (about 1.5%, at least one of each row kind where there are rows enough) signed,
            negative, offset, scaled, shrunk (x / 4096: where an epsilon is no longer negligible), zero,
            or spread (16(2x - m): both signs over magnitudes no other kind reaches on a one-sign draw),
            the rest as drawn (kernels that check a handful of values to tell the task's draw from the
            others: round 17's checked 16, which every whole-tensor kind changes; here they miss the
            rows, a scan costs a pass; round 52's RMSNorm without its epsilon was 0.92 off on rows of
            randn/1000 and NaN on a zero row, and its GELU returned 0 below -1.3, which no kind drew
            from a [0, 1) task, both `correct`)
  edges     along each dimension, fibers get a unique maximum and minimum, 16m + 128 or up to half
            as much again, at boundary indices: the first and last two, and both sides of every
            power-of-two chunk edge from 32 and of the last chunk's start (a reduction that skips a
            row's tail or a chunk's last element, which a random draw's extreme seldom sits on:
            session 35 measured an off-by-one row maximum over 131,072 columns exact on every kind
            before it); far above the rest wherever m is (a softmax whose maximum was taken over a
            sample of the row passed exp's overflow by no other kind: round 45)
where m is the largest magnitude of the draw. Integer and boolean inputs are never changed.

With rounding (the vinci protocol, unless narrowed operands are allowed), every fp32 value of every
draw, of every kind, is then moved by under a bf16 ulp so that narrowing it to fp16, TF32 or bf16
rounds it down by nearly half an ulp. On a random draw, rounding errors of narrowed operands take
both signs and average out, so an fp32 matmul with fp16 operands (fp32 accumulation) stays within
fp32's tolerance, its error norm no larger than a naive fp32 summation's (red-team round 13). With
every operand rounded the same way the errors add up: a relative error near 5e-4 in every product,
five times fp32's rtol, while fp32 arithmetic on these values is as exact as on any others. It is
every draw, not a kind of its own, because its bits are recognisable (round 14 narrowed the
operands of every call but those of a rounding kind). A value moves within its bf16 interval (by
under 0.8%, 0.34% for 1.0), so zeros, signs, equal entries, [0, 1) ranges and the integer part of
integers stored as floats are kept. The fp32 values torch's generator draws while a model is built
are moved the same way (rounding_draws), so narrowed weights fail as narrowed inputs do.
"""
from __future__ import annotations

import contextlib
import math
import random

import torch
from torch.utils._python_dispatch import TorchDispatchMode

KINDS = ("task", "signed", "negative", "offset", "scaled", "specials", "rows", "edges")
_ROW_KINDS = ("offset", "scaled", "signed", "negative", "shrunk", "zero", "spread")
OUT_OF_DISTRIBUTION = KINDS[1:]
# A kind's draw with every floating value negated: mirrored(kind) beside kind puts each position's
# value on both sides of zero, so a kernel wrong at some positions only where its answer happens to
# be right on the drawn sign (a ReLU that zeroes a misaligned head: right wherever the head's inputs
# are at most 0, one evaluation in 128 with a 7-element head on signed values) is wrong on one of them.
MIRRORED = "mirrored "


def mirrored(kind: str) -> str:
    return MIRRORED + kind


def seed_everything(seed: int) -> None:
    # torch.manual_seed also queues the seed for devices not yet initialised (CUDA, XPU, MTIA), with
    # a formatted stack trace each: 6 ms of CPU a call, on the judge's path for every call's inputs
    # (a CPU candidate's inputs took longer to seed than to draw). Where CUDA is present but not yet
    # initialised its queue is kept, so a later CUDA draw is seeded as before; vinci runs on no other device.
    if torch.cuda.is_available() and not torch.cuda.is_initialized():
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(seed)
        if torch.cuda.is_initialized():
            torch.cuda.manual_seed_all(seed)
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % (1 << 32))
    except ImportError:
        pass


def make_inputs(task, seed: int, kind: str, device: torch.device, rounding: bool = False, plain: bool = False) -> list:
    """The inputs of the call (seed, kind). rounding: every fp32 and half value rounding-biased (see
    the module). plain: every floating value scaled by one factor of full mantissa in [0.75, 1.25),
    from the seed, so that they leave the grid torch's generator draws on (multiples of 2^-24, which
    every kind's transform keeps) and fill the bits of their own ulp as a user's values do: the
    plain trials' draws, which must not be told from a user's (red-team round 22 recognised them by
    that grid)."""
    base = kind.removeprefix(MIRRORED)
    if base not in KINDS:
        raise ValueError(f"unknown input kind {kind!r}")
    seed_everything(seed)
    with device:  # torch.rand & co. then fill device memory directly: gigabytes take milliseconds
        raw = task.get_inputs()
    if not isinstance(raw, (list, tuple)):
        raw = [raw]
    factor = 0.75 + 0.5 * random.Random(seed ^ 0x5CA1E).random() if plain else 1.0
    out = []
    for x in raw:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            if base == "rows" and x.is_floating_point() and x.numel() > 0:
                x = _rows(x, seed)
            elif base != "task" and x.is_floating_point() and x.numel() > 0:
                x = _transform(x, base)
            if base != kind and x.is_floating_point():
                x = x.neg()
            if plain and x.is_floating_point() and x.numel() > 0:
                x = (x.to(torch.float64) * factor).to(x.dtype)
            if rounding and x.dtype in (torch.float32, *_HALF_ROUNDING) and x.numel() > 0:
                x = _rounding(x)
        out.append(x)
    return out


# The 16 bits bf16 drops from an fp32 value, set so that every narrower format rounds down: bf16 by
# 0x6Fxx/0x10000 of its ulp (0.43-0.44), fp16 and TF32 (13 bits dropped) by 0xFxx/0x2000 (0.47-0.50).
# The lowest 8 bits stay the draw's, so that the values are not all alike in their last bits. An fp16
# value's 3 bits that bf16 drops are set to 0b011 (bf16 rounds it down by 0.375 of its ulp; red-team
# round 17 ran an fp16 task's matmul on bf16 operands within the precision gate), a bf16 value's 4 bits
# that fp8 (e4m3) drops to 0b0111 (0.44 of its ulp).
_ROUNDING_BITS, _ROUNDING_KEEP = 0x6F00, 0xFFFF00FF
_HALF_ROUNDING = {torch.float16: (0x3, ~0x7), torch.bfloat16: (0x7, ~0xF)}  # (bits set, bits kept) of the int16


STRIDED_LAYOUTS = ("transposed", "padded", "offset")
MISALIGNED_BY = 256  # bytes: past any vector width or cache line, so a start one element past it is misaligned


def strided_copy(x, layout: str = "transposed"):
    """x's values in a tensor laid out as a user's view may be, not as the judge's dense inputs are.
    transposed: its last two dimensions of more than one index swapped in memory, or, with one such
    dimension, every other element of a buffer twice as long (stride(-1) is not 1). padded: the last
    dimension dense, every row a pitch 3 elements longer than it, every outer dimension's pitch one
    index longer than its size, and the first element one element past the buffer's start. offset:
    contiguous, one element past the buffer's start (a user's x[1:]
    or a batch's second half). So neither the storage offset nor the alignment is the allocator's (red
    team, round 56: kernels that read the storage's base, peel a misaligned head wrongly, or check
    stride(-1) alone were right on every dense input). The gaps hold NaN (or the dtype's largest
    value). Not a tensor, or fewer than two elements: x itself."""
    if not isinstance(x, torch.Tensor) or x.numel() < 2:
        return x
    gap = float("nan") if x.is_floating_point() or x.is_complex() else (True if x.dtype == torch.bool
                                                                          else torch.iinfo(x.dtype).max)
    if layout in ("offset", "padded"):
        # padded: rows 3 elements longer than the row, and every outer dimension one index longer
        # than its size (a channel or batch slice of a larger tensor), so that no stride is the product
        # of the sizes inside it (red-team round 65: a kernel that read rows stride(-2) apart and took
        # the outer dimensions as packed over them was right on rows padded alone).
        pad = [0] * x.dim()
        if layout == "padded":
            pad = [1] * (x.dim() - 1) + [3]
        strides = [1] * x.dim()
        for d in range(x.dim() - 2, -1, -1):
            strides[d] = strides[d + 1] * (x.shape[d + 1] + pad[d + 1])
        span = 1 + sum((n - 1) * s for n, s in zip(x.shape, strides))
        size = x.element_size()
        buffer = torch.full((span + MISALIGNED_BY // size + 1,), gap, dtype=x.dtype, device=x.device)
        # One element past a MISALIGNED_BY-byte boundary, whatever alignment the allocator gave.
        start = (-buffer.data_ptr() % MISALIGNED_BY) // size + 1
        view = buffer.as_strided(x.shape, strides, start)
        view.copy_(x)
        return view
    long = [d for d in range(x.dim()) if x.shape[d] > 1]
    if len(long) >= 2:
        a, b = long[-2], long[-1]
        return x.transpose(a, b).contiguous().transpose(a, b)
    shape = list(x.shape)
    shape[long[0]] *= 2
    buffer = torch.full(shape, gap, dtype=x.dtype, device=x.device)
    every_other = [slice(None)] * x.dim()
    every_other[long[0]] = slice(None, None, 2)
    view = buffer[tuple(every_other)]
    view.copy_(x)
    return view


def _rounding(x: torch.Tensor) -> torch.Tensor:
    # Every call's inputs go through here, on the judge's critical path: two passes over the values
    # (one allocation) where none is zero or special, the common case; zeros, infinities and NaNs are
    # kept as they were (their bits moved would be denormals or NaNs).
    x = x.contiguous()
    if x.dtype == torch.float32:
        moved = x.view(torch.int32).bitwise_and(_ROUNDING_KEEP - (1 << 32))
        moved.bitwise_or_(_ROUNDING_BITS)
    else:
        bits, keep = _HALF_ROUNDING[x.dtype]
        moved = x.view(torch.int16).bitwise_and(keep)
        moved.bitwise_or_(bits)
    moved = moved.view(x.dtype)
    # Two reductions, no allocation: no zero, and a finite sum (an infinity or a NaN makes it none; a
    # sum that overflows only sends the values the slow way).
    if int(torch.count_nonzero(x)) == x.numel() and math.isfinite(float(x.sum(dtype=torch.float32))):
        return moved
    return torch.where(torch.isfinite(x).logical_and_(x != 0), moved, x)


def _rows(x: torch.Tensor, seed: int) -> torch.Tensor:
    """A few rows of x (its last dimension; 64-value pieces of a vector) through the whole-tensor
    kinds in turn, the rows picked from the call's seed alone, so that inputs of one row count get the
    same rows and the same kinds there: a sum of inputs (a residual add before a norm) then has its zero
    and shrunk rows too (red-team round 53: RMSNorm without its epsilon after a residual add was
    `correct`, its zero row of x beside an ordinary row of the residual)."""
    flat = x.reshape(-1)
    width = x.shape[-1] if x.dim() >= 2 else min(64, flat.numel())
    rows = flat.numel() // width
    if rows < 2:
        return _transform(x, _ROW_KINDS[0])
    count = max(min(len(_ROW_KINDS), rows // 2), round(0.015 * rows))
    picks = torch.Generator().manual_seed((seed ^ 0x20115) & ((1 << 63) - 1))
    picked = torch.randperm(rows, generator=picks)[:count].tolist()
    y = flat.clone()
    for j, row in enumerate(picked):
        piece = y[row * width:(row + 1) * width]
        piece.copy_(_transform(piece, _ROW_KINDS[j % len(_ROW_KINDS)]))
    return y.reshape(x.shape)


# The draws of torch's generator that fill floating tensors with values: what a model's __init__ makes
# its parameters of (nn.Linear's kaiming_uniform_ is a uniform_).
_RANDOM_FILLS = frozenset(("uniform_", "normal_", "rand", "randn", "rand_like", "randn_like"))


class _RoundingDraws(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        # Not inside a CUDA graph's capture: the bias reads the values back, which a capture forbids.
        if func.overloadpacket.__name__ in _RANDOM_FILLS and isinstance(out, torch.Tensor) and \
                out.dtype == torch.float32 and out.numel() > 0 and \
                not (out.is_cuda and torch.cuda.is_current_stream_capturing()):
            out.copy_(_rounding(out))  # in place: uniform_ and normal_ return the tensor they filled
        return out


@contextlib.contextmanager
def rounding_draws(enabled: bool):
    """Every fp32 value torch's generator draws inside the block rounding-biased, as inputs are: a
    model built in it (the reference's Model and the candidate's ModelNew alike, from one seed) has
    parameters a narrowing rounds the same way, so weights narrowed in __init__ fail as narrowed
    inputs do. Values derived from those draws in __init__ (a transpose, a product of two weights)
    are derived from the biased values on both sides."""
    if not enabled:
        yield
        return
    with _RoundingDraws():
        yield


def value_sample(x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """x whole where it holds 256 values or fewer, else 256 of them drawn with replacement (from
    generator, a CPU one, else from torch's seeded generator on x's device): a permutation of a GPU
    task's hundreds of millions of indices took seconds a draw."""
    flat = x.reshape(-1)
    if flat.numel() <= 256:
        return flat
    if generator is None:
        return flat[torch.randint(flat.numel(), (256,), device=x.device)]
    return flat[torch.randint(flat.numel(), (256,), generator=generator).to(x.device)]


def few_distinct(sample: torch.Tensor) -> bool:
    """Fewer distinct values than a quarter of the sample: a mask, a table, integers stored as floats."""
    return sample.unique().numel() * 4 < sample.numel()


def _boundaries(n: int) -> list[int]:
    """The indices of a dimension of n where a looped kernel's bounds go wrong, most likely first."""
    picked = [n - 1, 0, n - 2, 1]
    step = 32
    while step < n:
        last_start = (n - 1) // step * step
        picked += [step - 1, step, last_start - 1, last_start]
        step *= 2
    return list(dict.fromkeys(i for i in picked if 0 <= i < n))


def _edges(x: torch.Tensor, m: float, along: int | str | None = None, signed: bool = False) -> torch.Tensor:
    """Along each dimension d of 8 or more indices, each fiber whose indices along the other such
    dimensions are all off their boundaries gets +(16m + 128)(1 + u/2) at one boundary index and
    -(16m + 128)(1 + u/2) at the next, cycling through them fiber by fiber; zeros stay. A peak placed
    along d has a boundary index there, so it lies in no fiber chosen along another dimension: each
    chosen fiber's extremes are its own. Fibers on the other dimensions' boundaries (the corners) are
    chosen in a call that places extremes along one dimension alone, every fiber along it: half the
    calls where two or more dimensions could take them, the dimension drawn (along names it, or "each"
    for the other calls' way). Where a dimension's fibers are fewer than its boundary indices, the
    first fiber takes the likeliest (the last index) and the others a stretch of the cycle from a
    drawn place, so that calls together reach the inner chunk edges (4 rows of 65,536 columns tried
    only the first four indices before). A shorter dimension gets none (a random draw's extreme sits
    on any of its few indices often) and limits no other. Left alone, as the specials' bands leave
    them: draws of few distinct values (masks, integers stored as floats) and symmetric matrices,
    whose structure a kernel may use. With signed, the rest is first spread over [-m, m] (2x - m), as
    the signed kind spreads it."""
    if few_distinct(value_sample(x)):
        return x.clone()
    if x.dim() >= 2 and x.shape[-1] == x.shape[-2] and torch.equal(x, x.transpose(-1, -2)):
        return x.clone()
    y = x.mul(2).sub_(m) if signed else x.clone()
    shape, dims = list(x.shape), range(x.dim())
    spots = {d: _boundaries(shape[d]) for d in dims if shape[d] >= 8}
    if along is None and len(spots) >= 2 and bool(torch.randint(2, ()) == 1):
        along = list(spots)[int(torch.randint(len(spots), ()))]
    if isinstance(along, int):
        spots = {d: picked for d, picked in spots.items() if d == along}
    off = {}
    for d, picked in spots.items():
        off[d] = torch.ones(shape[d], dtype=torch.bool, device=x.device)
        off[d][picked] = False
    for d, picked in spots.items():
        fiber_shape = [1 if k == d else shape[k] for k in dims]
        chosen = torch.ones(fiber_shape, dtype=torch.bool, device=x.device)
        for k in off:
            if k != d:
                chosen = chosen & off[k].reshape([shape[k] if j == k else 1 for j in dims])
        fiber = torch.arange(chosen.numel(), device=x.device).reshape(fiber_shape)
        at = torch.tensor(picked, device=x.device)
        if int(chosen.sum()) < at.numel():
            fiber = torch.where(fiber == 0, fiber, fiber + int(torch.randint(at.numel(), ())))
        for shift, sign in ((0, 1.0), (1, -1.0)):
            where = at[(fiber + shift) % at.numel()]
            old = y.gather(d, where)
            peak = sign * (16 * m + 128) * (1 + torch.rand(fiber_shape, device=x.device, dtype=y.dtype) / 2)
            y.scatter_(d, where, torch.where(chosen & (old != 0), peak, old))
    return y


def _transform(x: torch.Tensor, kind: str) -> torch.Tensor:
    # Every timed call's inputs come through here (the signed kind): passes without temporaries where
    # they can be, and a mask of the zeros only where there are zeros.
    wide = x.to(torch.float64 if x.dtype == torch.float64 else torch.float32)
    low, high = torch.aminmax(wide)
    m = max(-float(low), float(high))  # the largest magnitude; NaN where a value is
    m = m if m > 0 and m == m and m != float("inf") else 1.0
    zero = wide == 0 if int(torch.count_nonzero(wide)) < wide.numel() else None
    if kind == "signed":
        y = wide.mul(2).sub_(m)
    elif kind == "negative":
        y = wide.abs().neg_()
    elif kind == "offset":
        y = wide.add(64 * m)
    elif kind == "scaled":
        y = wide.mul(128)
    elif kind == "shrunk":
        y = wide.div(4096)
    elif kind == "zero":
        y = torch.zeros_like(wide)
    elif kind == "spread":
        y = wide.mul(32).sub_(16 * m)
    elif kind == "edges":
        # Over signed values where the task draws one sign: a row of small values of both signs with
        # an outlier is what a user's randn rows look like, and red-team round 47 took a fast path
        # (a Taylor series for erf, softmax without its max) only on rows whose samples were small
        # and of both signs, which every other kind's signed rows are throughout.
        y = _edges(wide, m, signed=float(low) >= 0)
    else:
        y = wide.clone()
        # Value bands pick the positions, so equal inputs get equal specials; a draw of few distinct
        # values (masks, integers stored as floats) would have whole bands hit and is left alone.
        for centre, value in ((0.3141, 0.0), (0.5772, 16 * m), (0.7183, -16 * m)):
            band = (wide - centre * m).abs() < 5e-4 * m
            if int(band.sum()) <= max(1, wide.numel() // 100):
                y = torch.where(band, torch.full_like(y, value), y)
    if zero is not None:
        y.masked_fill_(zero, 0.0)
    return y.to(x.dtype)
