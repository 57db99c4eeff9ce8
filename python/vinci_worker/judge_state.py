"""What the judge keeps of a task and of a loaded runner, and how a window's failures are classified.

The plain records the judge's parts (judge.py, correctness.py, timed_windows.py,
trusted_sampling.py) share."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from vinci_runner import model_state, outputs

from .call_window import CallWindow
from .sandbox import Sandboxed

# How a window's failure to show the judge the runner's outputs is classified.
WINDOW_CLASSES = {"unreadable_output": "incorrect", "shape_mismatch": "incorrect", "protocol_violation": "rejected",
                  "output_aliases_input": "rejected",
                  "gpu_drain_failed": "rejected", "gpu_helper_process": "rejected", "runner_lost": "runtime_error",
                  "gpu_fault": "runtime_error"}


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
    scaled: dict | None = None  # {size: [the file's value, this state's]} (loader.apply_scale)
    sizes: dict | None = None  # sizes set past the scale (shapes.grown_sizes), sent to its runners
    pristine: list | None = None  # ref's state as built: each evaluation starts from it (reset_state)
    constants: dict | None = None  # the reference's constant keys, each with its pieces' names (model_state.vary_constants)
    reads_training_flag: bool = True  # the reference's forward reads its training flag (model_state.reads_training_flag)


def _state(model: torch.nn.Module) -> list[torch.Tensor]:
    return [t for _, t in model_state.named_state(model)]


def keep_pristine(task: TaskState) -> None:
    task.pristine = [t.detach().clone() for t in _state(task.ref)]


def reset_state(task: TaskState) -> None:
    """The reference's state as built, for an evaluation whose runner builds its model afresh."""
    with torch.no_grad():
        for t, p in zip(_state(task.ref), task.pristine or []):
            t.copy_(p)
    _sync_exact(task)


def movable(task: TaskState) -> list[tuple[str, torch.Tensor]]:
    """The reference's tensors a move can change (model_state.floating_state, less what perturb leaves)."""
    return [(n, t) for n, t in model_state.floating_state(task.ref) if not model_state.left_alone(t)]


def perturb_state(task: TaskState, key: int, rounding: bool, only: torch.Tensor | None = None,
                  factor: float | None = None) -> None:
    """The reference's state moved as the runner's is (model_state.perturb, one key, the same values)."""
    model_state.perturb(model_state.floating_state(task.ref), key, rounding, only, factor=factor)
    _sync_exact(task)


def _sync_exact(task: TaskState) -> None:
    # The fp64 reference holds the fp32 reference's values, so that it is exact for the state the
    # candidate holds.
    if task.ref64 is not None:
        with torch.no_grad():
            for t, wide in zip(_state(task.ref), _state(task.ref64)):
                wide.copy_(t)


@dataclass
class Loaded:
    """A runner with a task loaded, and the window its calls go through; candidate: a candidate's
    runner (else the trusted reference's)."""
    runner: Sandboxed
    window: CallWindow
    candidate: bool = True
    looked: bool = False  # the judge has looked at its process's state (Correctness._state_left)


def flat(out) -> list:
    return [o.detach() if isinstance(o, torch.Tensor) else o for o in outputs.flatten(out)]
