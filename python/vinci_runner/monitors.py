"""In-process monitors around a runner's correctness calls: cheap early signals.

They run in the candidate's own process, so a candidate can blind them; they catch the naive hacks
with a clear reason, and the trusted side's checks (fresh inputs, opened timed calls, the wall
clock) must hold without them.

- TorchOpMonitor sees every ATen op dispatched while forward runs, including the ones an
  extension's C++ makes through the dispatcher, and tells compute from allocation/view/copy.
- ExtensionCalls counts and times calls into load_inline extensions (the CPU analogue of kernel
  launches and of time coverage).
- PatchSnapshot records the identity of every attribute of the modules a harness relies on, so
  a candidate that replaces a timer or a comparison function is caught.
- Census sees Python threads and child processes a call left behind; Tripwire sees calls of the
  reference Model.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import types

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_perf_counter = time.perf_counter

# ATen ops that only allocate, view, copy or read metadata: allowed inside forward under the
# "forbid" policy, because a kernel needs its output allocated and its inputs laid out.
ALLOWED_OPS = frozenset("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like new_zeros ones ones_like
new_ones full full_like new_full fill_ zero_ view _unsafe_view reshape _reshape_alias as_strided expand
expand_as permute transpose t squeeze unsqueeze flatten unflatten slice select narrow split split_with_sizes
unbind chunk detach alias clone copy_ _to_copy lift_fresh lift_fresh_copy view_as contiguous
_local_scalar_dense cat stack set_ resize_ is_same_size _has_compatible_shallow_copy_type item
""".split())
LOW_PRECISION = (torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2)


class TorchOpMonitor(TorchDispatchMode):
    """Records compute ops and precision drops seen while forward runs."""

    def __init__(self, low_precision_task: bool):
        super().__init__()
        self.compute_ops: dict[str, int] = {}
        self.precision_drops: list[str] = []
        self.low_precision_task = low_precision_task

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name not in ALLOWED_OPS:
            self.compute_ops[name] = self.compute_ops.get(name, 0) + 1
        elif name == "_to_copy" and not self.low_precision_task:
            dtype = kwargs.get("dtype")
            if dtype in LOW_PRECISION:
                self.precision_drops.append(f"aten._to_copy to {dtype}")
        return func(*args, **kwargs)


class ExtensionCalls:
    """Counts and times the calls made into load_inline extension modules."""

    def __init__(self):
        self.calls = 0
        self.seconds = 0.0

    def reset(self):
        self.calls = 0
        self.seconds = 0.0

    def wrap_module(self, module: types.ModuleType) -> types.ModuleType:
        """Returns a stand-in module whose callables count and time themselves."""
        proxy = types.ModuleType(module.__name__)
        for attr in dir(module):
            value = getattr(module, attr)
            if callable(value) and not attr.startswith("__") and not isinstance(value, type):
                proxy.__dict__[attr] = self._wrap(value)
            else:
                proxy.__dict__[attr] = value
        return proxy

    def _wrap(self, fn):
        calls = self

        def counted(*args, **kwargs):
            t0 = _perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                calls.calls += 1
                calls.seconds += _perf_counter() - t0
        counted.__name__ = getattr(fn, "__name__", "extension_function")
        counted.__doc__ = getattr(fn, "__doc__", None)
        return counted


_WATCHED_MODULE_NAMES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.cuda", "torch.testing", "torch.utils.cpp_extension",
    "torch.backends", "torch.backends.cuda", "torch.backends.cudnn", "torch.autograd", "torch.profiler",
    "time", "math", "os", "sys", "builtins", "random", "gc", "threading",
)


def _watched_objects():
    objs = []
    for name in _WATCHED_MODULE_NAMES:
        mod = sys.modules.get(name)
        if mod is not None:
            objs.append((name, mod))
    objs += [("torch.Tensor", torch.Tensor), ("torch.nn.Module", torch.nn.Module),
             ("torch.nn.Parameter", torch.nn.Parameter)]  # round 49: its methods patched to see a move
    # Every module class torch.nn exports: red-team round 67 replaced nn.Linear.forward from a call.
    objs += [(f"torch.nn.{name}", cls) for name, cls in sorted(vars(torch.nn).items())
             if isinstance(cls, type) and issubclass(cls, torch.nn.Module) and cls is not torch.nn.Module]
    if torch.cuda.is_available():
        objs += [("torch.cuda.Event", torch.cuda.Event), ("torch.cuda.Stream", torch.cuda.Stream)]
    return objs


def fp_environment(pool: bool = False) -> dict:
    """The floating-point environment (x86's MXCSR and x87 control word, Arm's FPCR) as arithmetic
    shows it, in this thread and, with pool, in torch's intra-op threads: the rounding direction, whether
    subnormal results are flushed (FTZ) or subnormal operands read as zero (DAZ), and the x87's precision
    and rounding as long double arithmetic shows them. A kernel that leaves them changed changes every
    later computation of its caller (red-team round 52: a ReLU that set flush-to-zero, denormals-are-zero
    and rounding upward, exact itself, turned 1/3*3 into 1.0000001 and log(1e-39) into -inf after it,
    `correct`; round 53: DAZ in the intra-op threads alone, and the x87's control word). Floating-point
    exceptions left unmasked are met by the arithmetic itself: an invalid operation and a division by
    zero run here, and raise SIGFPE, which ends the runner (`runtime_error`), where a kernel unmasked
    them. Values come from calls, not literals, so that no compiler folds the arithmetic.

    The pool's check spans 2^19 elements, a chunk for each of up to 16 intra-op threads, a few
    subnormals in each: a millisecond or two, so only where there are such threads (a GPU host's runner,
    with its cores' count of OpenMP threads oversubscribed in the sandbox, took 90 ms over it)."""
    one, two, zero = float("1"), float("2"), float("0")
    half, three_quarters = float.fromhex("0x1p-53"), float.fromhex("0x1.8p-53")
    tiny, smallest_normal = float.fromhex("0x0.0000000000001p-1022"), float.fromhex("0x1p-1022")
    rounding = (one + half, one + three_quarters, -one - three_quarters)
    flushes = (tiny * two == 0, smallest_normal / two == 0)
    scalar = torch.tensor([one, zero])
    _ = (scalar / scalar[1], scalar[1] / scalar[1])  # division by zero, invalid: SIGFPE where unmasked
    found = {"fp.rounding": "nearest" if rounding == (one, one + 2 * half, -one - 2 * half) else repr(rounding),
             "fp.subnormals": "kept" if flushes == (False, False) else f"flushed {flushes}",
             "fp.x87": _x87_arithmetic()}
    if pool:
        many = torch.full((1 << 19,), 1.0)
        pool_rounding = bool(((many + 2.0 ** -24) != 1.0).any()) or \
            bool(((many + 1.5 * 2.0 ** -24) != 1.0 + 2.0 ** -23).any())
        many[::4096] = 2.0 ** -126
        flushed = bool((many[::4096] != (many / 2)[::4096] * 2).any())
        many[::4096] = 2.0 ** -140  # a subnormal operand: DAZ reads it as zero
        zeroed = bool(((many * 2.0 ** 20)[::4096] == 0).any())
        _ = many / 0  # division by zero in every thread
        found["fp.intra_op_threads"] = "nearest, subnormals kept" if not (pool_rounding or flushed or zeroed) \
            else f"rounding changed {pool_rounding}, results flushed {flushed}, operands read as zero {zeroed}"
    return found


def _x87_arithmetic() -> str:
    """2/3 and -2/3 in long double, as the x87 computes them (its precision and rounding fields):
    compared with the values before the candidate ran, not with constants (long double differs by
    platform)."""
    try:
        import numpy
    except ImportError:
        return "no numpy"
    two, three = numpy.longdouble("2"), numpy.longdouble("3")
    return f"{numpy.format_float_scientific(two / three)} {numpy.format_float_scientific(-two / three)}"


def read_switch(getter) -> str:
    """A switch's value as text; a getter that raises (torch's float32 matmul precision where the newer
    fp32_precision settings were set apart from it) reads as that error, so that a change to it shows
    as one instead of ending the call that reads it."""
    try:
        return str(getter())
    except Exception as e:  # noqa: BLE001 - any failure to read is a state of its own
        return f"unreadable ({type(e).__name__})"


def precision_flags(pool: bool = False) -> dict:
    flags = {
        "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "matmul_precision": read_switch(torch.get_float32_matmul_precision),
        "cuda.matmul.allow_fp16_reduced": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "cuda.matmul.allow_bf16_reduced": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        **fp_environment(pool),
    }
    return flags


class PatchSnapshot:
    """Identity of every attribute of the watched modules and classes, taken before a candidate runs."""

    def __init__(self, pool: bool = False):
        """pool: torch's intra-op threads' floating-point environment is watched too (fp_environment)."""
        self.pool = pool
        self.entries = {}
        for label, obj in _watched_objects():
            d = vars(obj)
            self.entries[label] = (obj, {k: id(v) for k, v in list(d.items())})
        self.flags = precision_flags(pool)

    def changes(self) -> list[str]:
        changed = []
        for label, (obj, ids) in self.entries.items():
            d = vars(obj)
            for k, v in ids.items():
                if k not in d:
                    changed.append(f"{label}.{k} deleted")
                elif id(d[k]) != v and not _benign(label, k):
                    changed.append(f"{label}.{k} replaced")
            for k in d.keys() - ids.keys():
                if not _benign(label, k):
                    changed.append(f"{label}.{k} added")
        return changed

    def flag_changes(self) -> list[str]:
        now = precision_flags(self.pool)
        return [f"{k}: {self.flags[k]} -> {now[k]}" for k in now if now[k] != self.flags[k]]


def _benign(label: str, key: str) -> bool:
    # Module-level caches and lazily imported submodules change without anyone patching anything.
    if key.startswith("__") or key in ("_initialized", "_queued_calls", "_tls", "_lazy_seed_tracker",
                                       "_is_in_bad_fork", "_cached_device_count", "_original_pid"):
        return True
    if label in ("sys", "os", "builtins", "gc", "threading", "random"):
        # These hold interpreter state (sys.modules, os.environ, …) that imports legitimately touch;
        # only functions are watched there.
        return key in ("modules", "path_importer_cache", "last_value", "last_type", "last_traceback",
                       "last_exc", "environ", "_", "meta_path", "path", "path_hooks", "flags")
    if label.startswith("torch") and isinstance(sys.modules.get(f"{label}.{key}"), types.ModuleType):
        return True
    return False


def child_pids() -> list[int]:
    """The children every thread of this process forked, as /proc/self names them: a runner forked by a
    zygote has another number in its own pid namespace (os.getpid()) than in the /proc it sees."""
    found = []
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return []
    for tid in threads:
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                found += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return found


def own_number(pid: int) -> int:
    """A process's pid in this process's namespace, from its pid as /proc numbers it (NSpid's last)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return pid


class Census:
    """Python threads and child processes before a call; escapes() lists (and kills) what is new."""

    def __init__(self):
        self.threads = {t.ident for t in threading.enumerate()}
        self.children = set(child_pids())

    def escapes(self) -> list[str]:
        found = []
        new_threads = [t.name for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        if new_threads:
            found.append(f"started Python threads {new_threads}")
        new_children = [p for p in child_pids() if p not in self.children]
        if new_children:
            found.append(f"started child processes {new_children}")
            for p in new_children:
                try:
                    os.kill(own_number(p), signal.SIGKILL)
                except OSError:
                    pass
        return found


class Tripwire:
    """Records calls of the reference Model's forward while the candidate runs."""

    def __init__(self, model_cls):
        self.cls = model_cls
        self.called = False

    def __enter__(self):
        self.original = self.cls.forward
        tripwire = self

        def forward(model_self, *a, **k):
            tripwire.called = True
            return tripwire.original(model_self, *a, **k)
        self.cls.forward = forward
        return self

    def __exit__(self, *exc):
        self.cls.forward = self.original
        return False
