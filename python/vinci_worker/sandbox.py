"""What the worker does to contain a candidate beyond the limits its parent set at spawn.

The C++ pool starts the worker in a scratch directory, in its own process group, with rlimits
(processes, file size, core dumps; address space on CPU) and, where the kernel allows, in a
fresh network namespace. Here the worker adds a per-candidate CPU-time budget, a socket ban when
no network namespace could be made, and the before/after census of threads, child processes and
scratch files that turns an escape attempt into a classified result.
"""
from __future__ import annotations

import os
import resource
import signal
import socket
import threading


def network_fallback_if_needed() -> str:
    """Bans sockets in-process when the parent could not isolate the network (documented fallback)."""
    if os.environ.get("VINCI_NETNS") == "1":
        return "network namespace"

    def refuse(*_a, **_k):
        raise PermissionError("vinci: network access is disabled for candidates")

    socket.socket.connect = refuse  # type: ignore[assignment]
    socket.create_connection = refuse  # type: ignore[assignment]
    socket.getaddrinfo = refuse  # type: ignore[assignment]
    return "socket ban (no network namespace available)"


def ignore_file_size_signal() -> None:
    # Past RLIMIT_FSIZE a write then fails with EFBIG instead of killing the worker.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class CpuBudget:
    """Per-candidate CPU seconds, as a soft RLIMIT_CPU above what the worker already used."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self):
        if self.seconds > 0:
            used = resource.getrusage(resource.RUSAGE_SELF)
            spent = used.ru_utime + used.ru_stime
            _, hard = resource.getrlimit(resource.RLIMIT_CPU)
            soft = int(spent + self.seconds) + 1
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        return self

    def __exit__(self, *exc):
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        return False


def child_pids() -> list[int]:
    me = str(os.getpid())
    kids = []
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            kids = [int(p) for p in f.read().split()]
    except OSError:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        if f.read().rsplit(")", 1)[1].split()[1] == me:
                            kids.append(int(entry))
                except (OSError, IndexError):
                    pass
    return kids


class Census:
    """Python threads, child processes and scratch files before a candidate ran."""

    def __init__(self, scratch: str):
        self.scratch = scratch
        self.threads = {t.ident for t in threading.enumerate()}
        self.children = set(child_pids())
        self.files = set(_list_files(scratch))

    def escapes(self) -> tuple[list[str], list[str]]:
        """(threads_processes findings, file_io findings) since the census was taken."""
        procs = []
        new_threads = [t.name for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        if new_threads:
            procs.append(f"started Python threads {new_threads}")
        new_children = [p for p in child_pids() if p not in self.children]
        if new_children:
            procs.append(f"started child processes {new_children}")
            for p in new_children:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
        files = sorted(set(_list_files(self.scratch)) - self.files)
        return procs, ([f"wrote {', '.join(files[:5])}"] if files else [])


def _list_files(root: str):
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            yield os.path.relpath(os.path.join(dirpath, n), root)
