"""What a call leaves changed in its process for its caller: switches, random generators.

A kernel exact in itself can still be wrong for its user by what it leaves changed: red-team round 66's
ReLUs left CPU autocast on (the user's next nn.Linear returned bfloat16) or reseeded torch's generator
on every call (the user's dropout masks repeated). The runner marks this state once its model is
built, and the judge asks it for what changed since (op "state") after its correctness calls and its
check and moved windows, which a candidate cannot tell from timed ones: a change a call leaves is met
whenever the window's last call leaves it, and the judge refuses the candidate for it
(`rejected/process_state`, or `rejected/precision_drop` for a precision switch). The check runs in the
candidate's process, as the other monitors do: a kernel that rewrites it is named in
docs/threat_model.md.

Switches must read as they did. Generators may only move forward: torch's, Python's and NumPy's
Mersenne Twisters to a state their own draws reach (the same seed, a later position or words some
number of twists on), CUDA's Philox generators to the same seed at a later offset. A call may draw
(dropout), never reseed or rewind."""

from __future__ import annotations

import os
import random
import struct

import numpy as np
import torch

from . import monitors

# How far a generator may move between two looks: 2^17 twists of 624 words, 81M 32-bit draws, more than
# a dropout over the judge's largest inputs takes; a walk of about a second where none reaches.
MAX_TWISTS = 1 << 17

_AUTOCAST_DEVICES = ("cpu", "cuda")
_FP32_PRECISION = ("fp32_precision", "cuda.matmul.fp32_precision", "cudnn.fp32_precision",
                   "cudnn.conv.fp32_precision", "cudnn.rnn.fp32_precision", "mkldnn.fp32_precision",
                   "mkldnn.matmul.fp32_precision", "mkldnn.conv.fp32_precision", "mkldnn.rnn.fp32_precision")


def _backend(path: str):
    def get():
        obj = torch.backends
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj
    return get


def pool_threads() -> int:
    """The threads the process holds (its /proc/self/task), at most 64: the size of the largest OpenMP
    team it can have run, torch's or one a kernel opened, whose idle threads keep the floating-point
    environment their last work left. Red-team round 67's kernel left rounding upward and flush-to-zero
    in every pool thread but the caller's, after unmonitored calls alone."""
    try:
        return max(1, min(64, len(os.listdir("/proc/self/task"))))
    except OSError:
        return 1


def _pool_environment(threads: int) -> str:
    """The floating-point environment of the intra-op pool's threads, read on a team of threads."""
    was = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return monitors.fp_environment(pool=True).get("fp.intra_op_threads", "unread")
    finally:
        torch.set_num_threads(was)


def precision_switches(pool: int = 1) -> dict[str, str]:
    """The switches that lower the precision of the caller's later arithmetic: monitors.precision_flags
    (TF32, the float32 matmul precision, reduced-precision reductions, the floating-point environment of
    this thread), with pool > 1 that of a team of pool threads too, and the ones it does not read."""
    found = {k: str(v) for k, v in monitors.precision_flags(False).items()}
    if pool > 1:
        found["fp.intra_op_threads"] = _pool_environment(pool)
    found.update({
        "cuda.matmul.allow_fp16_accumulation": monitors.read_switch(_backend("cuda.matmul.allow_fp16_accumulation")),
        "cpu.allow_fp16_reduced": monitors.read_switch(torch._C._get_cpu_allow_fp16_reduced_precision_reduction),
        **{f"backends.{p}": monitors.read_switch(_backend(p)) for p in _FP32_PRECISION},
    })
    return found


def other_switches() -> dict[str, str]:
    """Switches that change what the caller's later code computes, returns or records: autocast (the
    dtype of its matmuls' outputs), the default dtype, grad and inference mode as they stand between
    calls (a call's own mode is a context the runner leaves, which undoes a change made inside it),
    anomaly detection, deterministic algorithms."""
    found = {}
    for device in _AUTOCAST_DEVICES:
        found[f"autocast.{device}"] = monitors.read_switch(lambda d=device: torch.is_autocast_enabled(d))
        found[f"autocast.{device}.dtype"] = monitors.read_switch(lambda d=device: torch.get_autocast_dtype(d))
    return found | {
        "default_dtype": monitors.read_switch(torch.get_default_dtype),
        "grad_enabled": monitors.read_switch(torch.is_grad_enabled),
        "inference_mode": monitors.read_switch(torch.is_inference_mode_enabled),
        "deterministic_algorithms": monitors.read_switch(torch.are_deterministic_algorithms_enabled),
        "deterministic_warn_only": monitors.read_switch(torch.is_deterministic_algorithms_warn_only_enabled),
        "anomaly_detection": monitors.read_switch(torch.is_anomaly_enabled),
        "anomaly_check_nan": monitors.read_switch(torch.is_anomaly_check_nan_enabled),
        "autocast.cache": monitors.read_switch(torch.is_autocast_cache_enabled),
        "cudnn.deterministic": monitors.read_switch(_backend("cudnn.deterministic")),
    }


def python_state() -> dict[str, str]:
    """State of torch's Python side that changes what the caller's later code computes: the global
    module hooks (a forward hook over every module's outputs), the saved-tensor hooks autograd applies by
    default (every later gradient), and Python kernels registered over aten's CPU and CUDA operators
    (torch.library: F.gelu as another function). A fresh process has none of the first two; the third is
    held to what torch itself had registered before any candidate ran (red-team round 67: all three, from
    a ReLU's first call, exact itself)."""
    module = torch.nn.modules.module
    found = {name: str(len(getattr(module, name))) for name in _GLOBAL_HOOKS}
    found["saved_tensors_default_hooks"] = monitors.read_switch(
        lambda: torch._C._autograd._top_saved_tensors_default_hooks(False) is not None)
    found["aten_python_kernels"] = ", ".join(sorted(_aten_python_kernels() - _ATEN_PYTHON_KERNELS_AT_START)) or "none"
    return found


def _aten_python_kernels() -> set[str]:
    return {k for k in getattr(torch.library, "_impls", ())
            if k.startswith("aten/") and k.rsplit("/", 1)[-1] in ("CPU", "CUDA", "AutogradCPU", "AutogradCUDA",
                                                                 "CompositeImplicitAutograd", "Autograd")}


_GLOBAL_HOOKS = tuple(sorted(n for n in vars(torch.nn.modules.module) if n.startswith("_global_")
                             and n.endswith("hooks") and isinstance(getattr(torch.nn.modules.module, n), dict)))
_ATEN_PYTHON_KERNELS_AT_START = frozenset(_aten_python_kernels())
_TORCH_DIR = os.path.dirname(torch.__file__)


def aten_dispatch() -> dict[str, int]:
    """Each aten operator's dispatch table (torch._C._dispatch_dump, every key), hashed, without the
    lines of kernels torch's own Python files register as they are first imported (a candidate's kernel
    over one of torch's C++ kernels replaces that kernel's line, wherever it says it was registered).
    About 130 ms for 2,600 operators, so read on the looks the judge picks (DISPATCH_LOOK_SHARE) and
    each runner's first. Red-team round 68: a native TORCH_LIBRARY_IMPL over aten::tanh, made as the
    extension loaded, and a Python kernel at ADInplaceOrView, which the list of Python kernels'
    keys left out, each made every later torch.tanh of the user's 1% low."""
    found = {}
    for op in torch._C._dispatch_get_all_op_names():
        if op.startswith("aten::"):
            found[op] = hash("\n".join(line for line in torch._C._dispatch_dump(op).splitlines()
                                        if _TORCH_DIR not in line))
    return found


def dispatch_changes() -> list[str]:
    """The aten operators whose dispatch table differs from the one this process started with."""
    now = aten_dispatch()
    return sorted(op for op in now.keys() | _ATEN_DISPATCH_AT_START.keys()
                  if now.get(op) != _ATEN_DISPATCH_AT_START.get(op))


class Twister:
    """A Mersenne Twister's state: its 624 words and its position among them."""

    def __init__(self, words, position: int, seed: int | None = None):
        self.words = np.asarray(words, dtype=np.uint32)
        self.position = position
        self.seed = seed

    def reached_by_draws_from(self, earlier: Twister) -> bool:
        """Whether draws from earlier lead here: the same seed (where one is kept), and the same words at
        a position no earlier, or the words of some number of twists on."""
        if self.seed != earlier.seed:
            return False
        if np.array_equal(self.words, earlier.words):
            return self.position >= earlier.position
        return twisted_from(earlier.words, self.words)


def twisted_from(earlier: np.ndarray, later: np.ndarray) -> bool:
    """Whether later's words are earlier's after 1 to MAX_TWISTS regenerations. CPython's own Mersenne
    Twister walks them, set to earlier's words: the block of 624 outputs after each regeneration is those
    words tempered, so later's tempered words are looked for among the blocks, a chunk of blocks a draw."""
    walker = random.Random()
    walker.setstate((3, tuple(int(w) for w in earlier) + (624,), None))
    target = _tempered(later)
    chunk = 1024  # blocks a draw: 2.5 MiB of outputs
    for _ in range(0, MAX_TWISTS, chunk):
        block = np.frombuffer(walker.getrandbits(32 * 624 * chunk).to_bytes(4 * 624 * chunk, "little"),
                              dtype=np.uint32).reshape(chunk, 624)
        if (block == target).all(axis=1).any():
            return True
    return False


def _tempered(words: np.ndarray) -> np.ndarray:
    """MT19937's output function, word by word."""
    y = words.astype(np.uint32)
    y = y ^ (y >> 11)
    y = y ^ ((y << 7) & np.uint32(0x9D2C5680))
    y = y ^ ((y << 15) & np.uint32(0xEFC60000))
    return y ^ (y >> 18)


def _torch_cpu() -> Twister:
    # CPUGeneratorImplState: the initial seed (u64), left (i32), seeded (i32), next (u64), then the 624
    # words each in a u64; what follows is the normal distribution's cache, no position of the stream.
    raw = torch.default_generator.get_state().numpy().tobytes()
    seed, _, _, position = struct.unpack_from("<QiiQ", raw)
    words = np.frombuffer(raw, dtype=np.uint64, count=624, offset=24).astype(np.uint32)
    return Twister(words, position, seed)


def _python() -> Twister:
    state = random.getstate()[1]
    return Twister(state[:624], state[624])


def _numpy() -> Twister:
    _, words, position, *_ = np.random.get_state()
    return Twister(words, int(position))


def _cuda() -> dict[int, tuple[int, int]]:
    """Each initialised CUDA device's Philox generator: (seed, offset)."""
    if not torch.cuda.is_initialized():
        return {}
    return {i: struct.unpack_from("<QQ", g.get_state().numpy().tobytes())
            for i, g in enumerate(torch.cuda.default_generators)}


class Mark:
    """The process's state at one moment, to be compared with a later one (changes)."""

    def __init__(self, pool: int = 1):
        """pool: the team of threads whose floating-point environment is read too (pool_threads)."""
        self.precision = precision_switches(pool)
        self.other = other_switches() | python_state()
        self.twisters = {"torch.default_generator": _torch_cpu(), "random": _python(), "numpy.random": _numpy()}
        self.cuda = _cuda()

    def changes(self, now: Mark) -> list[dict]:
        """What differs in now (a later mark) from this one, each {"what", "was", "now", "precision"}."""
        found = [{"what": k, "was": v, "now": now.precision[k], "precision": True}
                 for k, v in self.precision.items() if k in now.precision and now.precision[k] != v]
        if "fp.intra_op_threads" not in now.precision and "fp.intra_op_threads" in self.precision:
            now.precision["fp.intra_op_threads"] = self.precision["fp.intra_op_threads"]  # unread: kept
        found += [{"what": k, "was": v, "now": now.other.get(k), "precision": False}
                  for k, v in self.other.items() if now.other.get(k) != v]
        for name, before in self.twisters.items():
            after = now.twisters[name]
            if not after.reached_by_draws_from(before):
                found.append({"what": name, "was": f"seed {before.seed}, position {before.position}",
                              "now": f"seed {after.seed}, position {after.position}, reached by no draws from it",
                              "precision": False})
        for device, (seed, offset) in self.cuda.items():
            later = now.cuda.get(device, (seed, offset))
            if later[0] != seed or later[1] < offset:
                found.append({"what": f"torch.cuda.default_generators[{device}]", "was": f"seed {seed}, offset {offset}",
                              "now": f"seed {later[0]}, offset {later[1]}", "precision": False})
        return found


# Taken as the runner's module is imported, before any candidate: in the zygote, once for every runner.
_ATEN_DISPATCH_AT_START = aten_dispatch()
