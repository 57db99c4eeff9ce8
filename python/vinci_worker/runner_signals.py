"""The shape of the in-process monitors' signals a runner reports beside a correctness call.

They come from the candidate's process, so any of them may be forged or malformed: the judge only
ever rejects on them, and a reply that does not have this shape is itself a protocol violation
rather than something for the judge to trip over (an int where a list belongs once crashed it).
"""
from __future__ import annotations

import math

from . import protocol


def _strings(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _op_counts(v) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and _count(n) for k, n in v.items())


def _pair(v) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_count(x) for x in v)


def _kernel(v) -> bool:
    """A profiled kernel as the judge's reply carries it (protocol.KernelTime): its required fields present,
    so that what passes here cannot fail the reply's own check later (red-team round 47 sent `{}`,
    passed here on defaults, and ended the judge when its reply failed that check)."""
    if not (isinstance(v, dict) and isinstance(v.get("name"), str) and _count(v.get("calls")) and
            _number(v.get("total_us")) and isinstance(v.get("custom", False), bool)):
        return False
    try:
        protocol.KernelTime.from_dict(v)
    except protocol.MalformedMessage:
        return False
    return True


SHAPES = {
    "torch_ops": _op_counts, "precision_drops": _strings, "escapes": _strings, "patched": _strings,
    "flags_changed": _strings, "reference_called": lambda v: isinstance(v, bool), "launches": _count,
    "coverage": lambda v: v is None or (_number(v) and 0.0 <= v <= 1.0),
    "gpu_busy_ms": lambda v: v is None or (_number(v) and v >= 0), "mutated_input": _count, "aliased": _pair,
    "profile": lambda v: isinstance(v, list) and all(_kernel(k) for k in v),
    "kernels_seen": lambda v: _strings(v) and len(v) <= 256,
}


def malformed(signals) -> str:
    """Why signals do not have the runner's shape ('' when they do): an unknown key, or a value of the
    wrong type."""
    if not isinstance(signals, dict):
        return f"signals are a {type(signals).__name__}, not an object"
    for key, value in signals.items():
        check = SHAPES.get(key)
        if check is None:
            return f"unknown signal {str(key)[:40]!r}"
        if not check(value):
            return f"signal {key!r} is malformed: {str(value)[:80]!r}"
    return ""
