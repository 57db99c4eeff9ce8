"""The end of a timed GPU call, seen from outside: the driver's checkpoint lock.

The end of a timed GPU call, seen from outside the candidate's process: the CUDA driver's
checkpoint lock (cuCheckpointProcessLock) blocks the process's further CUDA calls and returns once
all the work it submitted has finished, on every stream. A call's time ends when the lock returns,
so work the candidate queued without waiting for it is inside its time, and nothing it queued can
run while the judge reads its outputs or prepares the next call.

Seen on an H200 (driver 580, benchmarks/gpu_trust_probe.py): a lock of an idle sandboxed process takes
0.17 ms and an unlock 0.14 ms; a lock right after 2 or 20 ms of queued work returns after 2.0 or
20.1 ms, also for work on a side stream; a lock of a SIGSTOPped process never returns (its timeout is
not honoured), so a process is always locked while running and stopped only after, and continued
before it is unlocked.
"""
from __future__ import annotations

import ctypes
import os

from vinci_runner.device_memory import DeviceMemoryError, driver

LOCK_TIMEOUT_MS = 60_000


# What a lock answers when the process's own GPU work faulted: CUDA's sticky kernel errors, which
# leave its context unusable. Then the candidate's kernel failed (a float4 read of an input that
# starts one element past an aligned address: CUDA_ERROR_MISALIGNED_ADDRESS on an H200), not the
# drain, and the call ends as the candidate's runtime error, not the host's.
KERNEL_FAULTS = frozenset({"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                           "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_HARDWARE_STACK_ERROR",
                           "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_ASSERT"})


class DrainError(RuntimeError):
    def __init__(self, message: str, fault: bool = False):
        super().__init__(message)
        self.fault = fault  # the driver's answer is one of KERNEL_FAULTS


class _LockArgs(ctypes.Structure):
    _fields_ = [("timeoutMs", ctypes.c_uint), ("reserved0", ctypes.c_uint), ("reserved1", ctypes.c_uint64 * 7)]


class _UnlockArgs(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_uint64 * 8)]


def _name(rc: int) -> str:
    text = ctypes.c_char_p()
    driver().cuGetErrorName(rc, ctypes.byref(text))
    return text.value.decode() if text.value else str(rc)


def unavailable() -> str:
    """Why this driver cannot drain another process ('' when it can)."""
    try:
        d = driver()
    except DeviceMemoryError as e:
        return str(e)
    for symbol in ("cuCheckpointProcessLock", "cuCheckpointProcessUnlock", "cuCheckpointProcessGetState"):
        if not hasattr(d, symbol):
            return f"the CUDA driver has no {symbol} (needs driver 555 or newer)"
    return ""


def is_cuda_process(pid: int) -> bool:
    state = ctypes.c_int(-1)
    return driver().cuCheckpointProcessGetState(ctypes.c_int(pid), ctypes.byref(state)) == 0


def lock(pid: int, timeout_ms: int = LOCK_TIMEOUT_MS) -> None:
    """Returns once every piece of GPU work pid submitted has finished; its CUDA calls block from now
    on. pid must be running (not stopped)."""
    args = _LockArgs()
    args.timeoutMs = timeout_ms
    rc = driver().cuCheckpointProcessLock(ctypes.c_int(pid), ctypes.byref(args))
    if rc != 0:
        name = _name(rc)
        raise DrainError(f"cuCheckpointProcessLock of process {pid}: {name} ({_describe(pid)})", fault=name in KERNEL_FAULTS)


_STATES = {0: "running", 1: "locked", 2: "checkpointed", 3: "failed"}


def _describe(pid: int) -> str:
    """What the driver and /proc say of a process a lock refused: its checkpoint state, its program
    and whether it maps the CUDA driver at all (a refusal's cause is not in the error code)."""
    state = ctypes.c_int(-1)
    rc = driver().cuCheckpointProcessGetState(ctypes.c_int(pid), ctypes.byref(state))
    said = [f"state {_STATES.get(state.value, state.value)}" if rc == 0 else f"state unknown: {_name(rc)}"]
    try:
        said.append(os.path.basename(os.readlink(f"/proc/{pid}/exe")))
        with open(f"/proc/{pid}/maps") as f:
            maps = f.read()
        said.append("maps libcuda" if "libcuda.so" in maps else "no libcuda mapped")
        if "libcupti" in maps:  # benchmarks/gpu_drain_probe.py: after any use of CUPTI, never again
            said.append("maps libcupti: a process that has used a profiler cannot be drained")
        with open(f"/proc/{pid}/status") as f:
            said += [line.split(":\t")[1].strip() for line in f if line.startswith(("State:", "Threads:"))]
    except OSError as e:
        said.append(f"/proc unreadable: {e.strerror}")
    return ", ".join(said)


def unlock(pid: int) -> None:
    args = _UnlockArgs()
    rc = driver().cuCheckpointProcessUnlock(ctypes.c_int(pid), ctypes.byref(args))
    if rc != 0:
        raise DrainError(f"cuCheckpointProcessUnlock of process {pid}: {_name(rc)}")
