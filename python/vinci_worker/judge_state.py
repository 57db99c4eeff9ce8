"""What the judge keeps of a task and of a loaded runner, and how a window's failures are classified.

The plain records the judge's parts (judge.py, correctness.py, timed_windows.py,
trusted_sampling.py) share."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from vinci_runner import outputs

from .call_window import CallWindow
from .sandbox import Sandboxed

# How a window's failure to show the judge the runner's outputs is classified.
WINDOW_CLASSES = {"unreadable_output": "incorrect", "shape_mismatch": "incorrect", "protocol_violation": "rejected",
                  "output_aliases_input": "rejected",
                  "gpu_drain_failed": "rejected", "gpu_helper_process": "rejected", "runner_lost": "runtime_error"}


class ReferenceFailed(Exception):
    """The reference itself raised on some inputs."""


@dataclass
class TaskState:
    path: str
    scale: float
    module: object
    ref: torch.nn.Module
    ref64: torch.nn.Module | None
    specs: list
    input_specs: list
    source: str
    low_precision: bool
    ref_aliases: bool
    moved_bytes: int
    timed_kind: str = "task"  # the inputs every timed call draws (Judge._timed_kind)


@dataclass
class Loaded:
    """A runner with a task loaded, and the window its calls go through."""
    runner: Sandboxed
    window: CallWindow


def flat(out) -> list:
    return [o.detach() if isinstance(o, torch.Tensor) else o for o in outputs.flatten(out)]
