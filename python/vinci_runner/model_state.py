"""Constant parameters and buffers of a freshly built model, drawn anew from the judge's seed.

`nn.LayerNorm` and `nn.GroupNorm` start with weight 1 and bias 0, `nn.BatchNorm*` with running mean 0
and variance 1: judged at those values only, a kernel that drops them is exact and wrong for any
trained model (red-team round 42: 5_LayerNorm without its affine part `correct`, 0.249x against its
honest 0.202x). The reference and the candidate are built from one seed, each in its own runner, and
each runner calls vary_constants on its model with the judge's seed: a floating tensor of two or more
elements that all hold one value v is filled with draws around v (v * U(0.5, 1.5), or U(-0.5, 0.5)
for v = 0). The draws of a tensor follow from the seed, its shape, dtype and value, and how many
such tensors came before it in the model's order, so the two models' tensors agree wherever the
candidate holds the reference's state under any names; a candidate that holds none of it (or bakes
its value in) is then judged against state it ignores. Scalars, integer and boolean tensors stay.

A tensor that packs several such pieces (LayerNorm's weight and bias as the rows of one (2, dim)
parameter, or as its columns) is varied piece by piece: each row, or else each column, that holds one
value is keyed as a tensor of its own, so an honest packed candidate gets the reference's draws (round
43 judged one incorrect). Keys count elements, not shape, so (C, 1, 1) and (C,) agree. A tensor with
any row and any column of mixed values (a causal mask, an identity) stays.
"""
from __future__ import annotations

import zlib

import torch

SPREAD = 0.5


def _holds_one_value(t: torch.Tensor) -> bool:
    return bool((t == t.reshape(-1)[0]).all())


def _constant_pieces(t: torch.Tensor) -> list[torch.Tensor]:
    """Views of t that each hold one value: t itself, or else all its rows, or else all its columns."""
    if _holds_one_value(t):
        return [t]
    if t.dim() < 2:
        return []
    for axis in (0, t.dim() - 1):
        if t.numel() // t.shape[axis] >= 2 and all(_holds_one_value(t.select(axis, i)) for i in range(t.shape[axis])):
            return [t.select(axis, i) for i in range(t.shape[axis])]
    return []


def _draws(seed: int, key: tuple, occurrence: int, shape: torch.Size) -> torch.Tensor:
    generator = torch.Generator().manual_seed((seed * 1_000_003 + zlib.crc32(repr((key, occurrence)).encode()))
                                              % (1 << 63))
    return torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1  # U(-1, 1)


def vary_constants(model: torch.nn.Module, seed: int) -> list[str]:
    """Fills model's constant floating parameters and buffers with draws around their value, in place;
    returns their names."""
    seen, counts, varied = set(), {}, []
    named = list(model.named_parameters(remove_duplicate=False)) + list(model.named_buffers(remove_duplicate=False))
    with torch.no_grad():
        for name, t in named:
            if t is None or id(t) in seen or not t.is_floating_point() or t.numel() < 2:
                continue
            seen.add(id(t))
            pieces = _constant_pieces(t)
            for piece in pieces:
                value = float(piece.reshape(-1)[0])
                key = (piece.numel(), str(t.dtype), value)
                occurrence = counts.get(key, 0)
                counts[key] = occurrence + 1
                u = _draws(seed, key, occurrence, piece.shape)
                new = u * SPREAD if value == 0 else value * (1 + SPREAD * u)
                piece.copy_(new.to(device=t.device, dtype=t.dtype))
            if pieces:
                varied.append(name)
    return varied
