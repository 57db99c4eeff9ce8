"""What a call's outputs and inputs are: their specs and the flattening both sides agree on.

What a call's outputs and inputs are: their specs (a tensor's dtype, shape and size, or a plain
value), and the flattening both sides agree on. Where the bytes travel is call_window's business
(python/vinci_worker): the judge reads them in place.
"""
from __future__ import annotations

import torch

from .channel import layout  # noqa: F401 - both sides lay out shared buffers the same way


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
