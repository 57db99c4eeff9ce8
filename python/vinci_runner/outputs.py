"""Tensors on the wire: their specs, their bytes in a shared buffer (a call's outputs; on the CPU, a
timed call's inputs too), and the commitment a runner sends for every call.

The commitment lets the trusted side open a random subset of timed calls after the fact: a runner
that did not compute call i's output when it answered cannot name the number the output's bytes
hash to, so opening a call proves its work was done inside the measured window. The mix is xor
with a per-call key, then a wrapping 32-bit multiply, summed in 64 bits: integer arithmetic, so
the GPU and the CPU get the same number from the same bytes.
"""
from __future__ import annotations

import torch

from .channel import SharedBuffer, layout

_MIX = -1640531535  # 0x9E3779B1 as a signed 32-bit integer


def flatten(out) -> list:
    if isinstance(out, (tuple, list)):
        items = []
        for o in out:
            items.extend(flatten(o))
        return items
    return [out]


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def dtype_of(name: str) -> torch.dtype:
    d = getattr(torch, name, None)
    if not isinstance(d, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return d


def specs_of(out) -> list[dict]:
    """What each output of a reference call is: a tensor's dtype, shape and size, or a plain value."""
    specs = []
    for o in flatten(out):
        if isinstance(o, torch.Tensor):
            specs.append({"kind": "tensor", "dtype": dtype_name(o.dtype), "shape": list(o.shape),
                          "nbytes": o.numel() * o.element_size()})
        else:
            specs.append({"kind": "value", "value": o if isinstance(o, (int, float, bool, str, type(None))) else repr(o)})
    return specs


def _as_bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def write(buffer: SharedBuffer, specs: list[dict], outputs: list) -> None:
    offsets, _ = layout(specs)
    for spec, off, o in zip(specs, offsets, outputs):
        if spec["kind"] == "tensor":
            dst = torch.frombuffer(buffer.map, dtype=torch.uint8, count=spec["nbytes"], offset=off)
            dst.copy_(_as_bytes(o))
            del dst


def read(buffer: SharedBuffer, specs: list[dict], values: list, device: torch.device | None = None) -> list:
    """Private copies of the delivered tensors (the runner may keep writing the buffer), on device
    (the CPU by default); plain values come from the runner's message."""
    offsets, _ = layout(specs)
    out = []
    for spec, off, value in zip(specs, offsets, values):
        if spec["kind"] == "tensor":
            raw = torch.frombuffer(buffer.map, dtype=torch.uint8, count=spec["nbytes"], offset=off)
            raw = raw.to(device, copy=True) if device is not None else raw.clone()
            out.append(raw.view(dtype_of(spec["dtype"])).reshape(spec["shape"]))
        else:
            out.append(value)
    return out


def read_into(buffer: SharedBuffer, specs: list[dict], targets: list) -> None:
    """Copies the buffer's tensors into existing ones (no allocation: a timed call's harness work
    stays the same size every call)."""
    offsets, _ = layout(specs)
    for spec, off, t in zip(specs, offsets, targets):
        if spec["kind"] == "tensor":
            src = torch.frombuffer(buffer.map, dtype=torch.uint8, count=spec["nbytes"], offset=off)
            t.view(-1).view(torch.uint8).copy_(src)
            del src


def commitment_scratch(outputs: list) -> list:
    """Buffers commitment() can work in, so it allocates nothing per call."""
    return [torch.empty((o.numel() * o.element_size() + 3) // 4, dtype=torch.int32, device=o.device)
            if isinstance(o, torch.Tensor) else None for o in outputs]


def commitment(outputs: list, key: int, scratch: list | None = None) -> int:
    total = 0
    for i, o in enumerate(outputs):
        if not isinstance(o, torch.Tensor):
            continue
        b = _as_bytes(o)
        pad = (-b.numel()) % 4
        if pad:
            b = torch.cat([b, torch.zeros(pad, dtype=torch.uint8, device=b.device)])
        words = b.view(torch.int32)
        k = ((key + 0x632BE5AB * (i + 1)) & 0xFFFFFFFF) - (1 << 31)
        mixed = torch.bitwise_xor(words, k, out=scratch[i]) if scratch else torch.bitwise_xor(words, k)
        mixed.mul_(_MIX)
        total += int(mixed.sum(dtype=torch.int64))
    return total & 0xFFFFFFFFFFFFFFFF
