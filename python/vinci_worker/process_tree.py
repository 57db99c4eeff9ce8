"""A sandboxed process tree seen from outside: its processes, their CPU time, freezing.

A sandboxed process tree as the kernel sees it, from outside: its processes, the CPU time they
(and a runner's main thread) used, and a way to freeze them.

These are the trusted side's own measurements: a candidate can lie about its clock, but not about
the CPU time the kernel charged to its processes, nor keep running while it is stopped.
"""
from __future__ import annotations

import ctypes
import os
import signal
import time

_libc = ctypes.CDLL(None, use_errno=True)
_TICK = os.sysconf("SC_CLK_TCK")


def descendants(root: int) -> list[int]:
    """root and every process below it, parents first (children are listed per forking thread)."""
    seen, order, queue = set(), [], [root]
    while queue:
        pid = queue.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        order.append(pid)
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    queue.extend(int(c) for c in f.read().split())
            except OSError:
                pass
    return order


def parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _process_clock_ns(pid: int) -> int:
    clock = ctypes.c_int()
    if _libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
        return 0
    try:
        return time.clock_gettime_ns(clock.value)
    except OSError:  # the process ended in between
        return 0


def _reaped_children_ns(pid: int) -> int:
    """CPU time of the process's children that ended and were reaped (kernel ticks)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[13]) + int(fields[14])) * 1_000_000_000 // _TICK
    except (OSError, IndexError, ValueError):
        return 0


def cpu_ns(root: int) -> int:
    """CPU time used so far by the tree under root: live processes to the nanosecond, ended and
    reaped ones to the kernel tick."""
    return sum(_process_clock_ns(p) + _reaped_children_ns(p) for p in descendants(root))


def cgroup_cpu_ns(launcher: int) -> int | None:
    """CPU time of everything that ever ran in the sandbox a launcher runs, from its cpuacct cgroup
    (src/core/sandbox.cpp, sandbox_cpu_cgroup): processes that ended unwaited-for included, which
    cpu_ns cannot see. None where the host gave the sandbox no such cgroup."""
    try:
        with open(f"/sys/fs/cgroup/cpuacct/vinci-sandbox-{launcher}/cpuacct.usage") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def freezer_state(launcher: int) -> str | None:
    """The freezer.state file of the sandbox a launcher runs (src/core/sandbox.cpp,
    sandbox_freezer_cgroup), or None where the host gave it none."""
    path = f"/sys/fs/cgroup/freezer/vinci-sandbox-{launcher}/freezer.state"
    return path if os.path.exists(path) else None


def freeze_cgroup(state_file: str, frozen: bool, timeout_s: float = 10.0) -> bool:
    """Freezes (or thaws) every process of a freezer cgroup without a signal; True once the kernel
    says it is done, False when it is not within timeout_s or the cgroup is gone. Freezing waits for
    each task to reach the freezer: a stopped or traced one counts."""
    want = "FROZEN" if frozen else "THAWED"
    deadline = time.monotonic() + timeout_s
    try:
        with open(state_file, "w") as f:
            f.write(want)
        while True:
            with open(state_file) as f:
                if f.read().strip() == want:
                    return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0001)
    except OSError:  # the sandbox ended, and its launcher removed the cgroup
        return False


def interpreter_of(root: int, binary: str) -> int | None:
    """The first process under root that runs binary: a runner's Python, below the launcher and
    bubblewrap (a process the candidate forks comes after it)."""
    for pid in descendants(root):
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == binary:
                return pid
        except OSError:
            pass
    return None


def thread_cpu_ns(pid: int) -> int:
    """CPU time of a process's main thread, to the nanosecond (its other threads not counted)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        return 0


def stop_tree(root: int) -> list[int]:
    """Stops every process below root (SIGSTOP cannot be caught); the stopped ones, parents first. A
    process forked while the tree was being stopped is caught by the next round. root itself, the
    sandbox's launcher, keeps running: it must still take the signal that ends the sandbox when its
    parent dies."""
    stopped: list[int] = [root]
    for _ in range(3):
        fresh = [p for p in descendants(root) if p not in stopped]
        if not fresh:
            break
        for p in fresh:
            try:
                os.kill(p, signal.SIGSTOP)
                stopped.append(p)
            except OSError:
                pass
    return stopped[1:]


def continue_tree(stopped: list[int]) -> None:
    for p in reversed(stopped):
        try:
            os.kill(p, signal.SIGCONT)
        except OSError:
            pass


def device_holders(root: int, device_prefix: str = "/dev/nvidia") -> list[int]:
    """The processes of a tree that hold a device node under device_prefix: by a descriptor, or by a
    mapping of it (a CUDA context lives on in its mappings after its descriptors are closed)."""
    holders = []
    for pid in descendants(root):
        if _holds_descriptor(pid, device_prefix) or _maps(pid, device_prefix):
            holders.append(pid)
    return holders


def _holds_descriptor(pid: int, device_prefix: str) -> bool:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(device_prefix):
                return True
        except OSError:
            pass
    return False


def _maps(pid: int, device_prefix: str) -> bool:
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as f:
            return any(device_prefix in line for line in f)
    except OSError:
        return False
