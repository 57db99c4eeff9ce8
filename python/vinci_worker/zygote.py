"""Runners forked by a zygote (python/vinci_runner/zygote.py), seen from the judge.

The zygote imports torch once, in a sandbox of its own; each runner it forks makes namespaces and
mounts of its own before any candidate code exists, and reaches the judge as any runner does: a
Sandboxed whose launcher (`vinci-sandbox --adopt`) holds the sandbox's cgroups, ends it on SIGTERM
and exits with its status. What the judge learns of the new runner comes from the kernel, never
from the runner: its pid is the one SCM_CREDENTIALS attaches to its first byte, checked to lie
under the zygote's sandbox.

A host where the zygote cannot start or fork (bwrap missing, nested user namespaces refused) keeps
today's path, a launcher and an interpreter per runner, and the judge says so once. So does a GPU
host: CUDA does not start in a runner whose pid namespace has no /proc of its own
(benchmarks/zygote_cuda_probe.py).
"""
from __future__ import annotations

import os
import select
import socket
import struct
import subprocess
import time

from vinci_runner.channel import Channel, ProtocolError, SharedBuffer

from . import process_tree
from .sandbox import CappedLog, Launcher, Sandboxed

# What a runner may write of a process its /proc lists, where the sandbox's user is the judge's (root):
# ownership is all these files check. Red-team round 19 raised the zygote's oom_score_adj, which every
# later fork inherits (first in line for the OOM killer), and its autogroup's nice.
WRITABLE_ATTRIBUTES = ("oom_score_adj", "oom_adj", "autogroup", "coredump_filter", "timerslack_ns")
START_S = 120.0  # the zygote's own start: an import of torch on a loaded host
FORK_S = 30.0  # a runner's namespaces, mounts and first byte


class ZygoteError(Exception):
    pass


def _read_until(fd: int, want: bytes, seconds: float) -> bytes:
    got, deadline = b"", time.monotonic() + seconds
    while not got.endswith(want):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 64) if ready else b""
        if not chunk:
            break
        got += chunk
    return got


def _sender(sock: socket.socket, seconds: float) -> int:
    """Reads the one byte a new runner sends first, and returns the pid the kernel says sent it."""
    ready, _, _ = select.select([sock], [], [], seconds)
    if not ready:
        raise ZygoteError(f"the runner did not start within {seconds:.0f} s")
    data, ancillary, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(12))
    if data != b"h":
        raise ZygoteError("the runner ended before it started")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= 12:
            return struct.unpack("iII", payload[:12])[0]
    raise ZygoteError("the runner's first byte came without the kernel's credentials")


def _attributes(pids: list[int]) -> dict:
    """WRITABLE_ATTRIBUTES of each process, as the judge reads them from outside."""
    seen = {}
    for pid in pids:
        for name in WRITABLE_ATTRIBUTES:
            try:
                with open(f"/proc/{pid}/{name}") as f:
                    seen[(pid, name)] = f.read().split("/autogroup-")[-1].split(" ", 1)[-1]
            except OSError:
                seen[(pid, name)] = None
    return seen


class Zygote:
    def __init__(self, launcher: Launcher):
        self.launcher = launcher
        self.process: Sandboxed | None = None
        self.attributes: dict = {}  # of the zygote's sandbox's processes, when it had forked nothing
        self.replaced = 0  # zygotes replaced because a runner had changed one of their attributes

    def _untouched(self) -> bool:
        """Whether every process of the zygote's sandbox that was there at its start still is, with the
        attributes it had: checked before each fork, when no runner of this zygote is alive."""
        return _attributes(sorted({pid for pid, _ in self.attributes})) == self.attributes

    def _start(self) -> Sandboxed:
        if self.process is not None and self.process.proc.poll() is None:
            if self._untouched():
                return self.process
            self.replaced += 1
        if self.process is not None:
            self.process.close()
        # Its tmpfs mounts are only mount points: each runner mounts its own over them. Its rlimits
        # are the runners' ceilings (a hard limit is never raised), so it gets none but the files'.
        self.process = self.launcher.spawn(["zygote", "--control", "{control}", "--device",
                                            "cuda" if self.launcher.cuda else "cpu"], zygote=True, scratch_bytes=1 << 20,
                                           file_size=1 << 50)
        try:
            hello = self.process.ask(None, START_S)
        except (ProtocolError, OSError, Exception) as e:  # noqa: BLE001 - any failure is the zygote's
            raise ZygoteError(f"the zygote did not start ({e}): {self.process.log.last_lines(4)}") from None
        if hello.get("op") != "zygote" or not hello.get("ok"):
            raise ZygoteError(f"the zygote answered {hello!r}")
        self.attributes = _attributes(process_tree.descendants(self.process.proc.pid))
        return self.process

    def spawn(self, device: str, buffers: dict, file_size: int, scratch_bytes: int, cpu_seconds: int,
              address_space: int) -> Sandboxed:
        """A runner as Launcher.spawn(["runner", ...]) makes one, forked by the zygote."""
        zygote = self._start()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        shared = {name: SharedBuffer.create(size) for name, size in buffers.items() if size}
        log_read, log_write = os.pipe()
        status_read, status_write = os.pipe()
        names = ["control", "log", "status", *shared]
        sent = [theirs.fileno(), log_write, status_write, *(b.fd for b in shared.values())]
        scratch = zygote.scratch
        request = {"op": "spawn", "names": names, "device": device, "cwd": scratch,
                   "tmpfs": [[scratch, scratch_bytes], ["/tmp", scratch_bytes], ["/dev/shm", 64 << 20]],
                   "file_size": file_size, "cpu_seconds": cpu_seconds,
                   "address_space": 0 if self.launcher.cuda else address_space}
        adopter = None
        try:
            reply = zygote.ask(request, FORK_S, fds=sent)
            theirs.close()
            os.close(status_write)
            status_write = -1
            if not reply.get("ok"):
                raise ZygoteError(f"the zygote refused: {reply.get('message')}")
            pid = _sender(ours, FORK_S)
            init = process_tree.parent_of(pid)
            if init is None or init not in process_tree.descendants(zygote.proc.pid):
                raise ZygoteError(f"process {pid} is not a runner of this zygote")
            ready_read, ready_write = os.pipe()
            try:
                adopter = subprocess.Popen(
                    [self.launcher.binary, "--adopt", str(pid), "--status-fd", str(status_read), "--ready-fd",
                     str(ready_write), "--max-pids", str(self.launcher.limits.get("max_pids", 1024))],
                    pass_fds=[status_read, ready_write], stdin=subprocess.DEVNULL, stdout=log_write,
                    stderr=log_write, start_new_session=True)
                os.close(ready_write)
                ready_write = -1
                if _read_until(ready_read, b"ready\n", FORK_S) != b"ready\n":
                    raise ZygoteError(f"vinci-sandbox --adopt {pid} did not take the runner in")
            finally:
                os.close(ready_read)
                if ready_write >= 0:
                    os.close(ready_write)
            ours.sendall(b"g")
        except BaseException:
            if adopter is not None:
                adopter.kill()
                adopter.wait()
            for b in shared.values():
                b.close()
            ours.close()
            os.close(log_read)
            raise
        finally:
            os.close(log_write)
            os.close(status_read)
            if status_write >= 0:
                os.close(status_write)
            if theirs.fileno() >= 0:
                theirs.close()
        return Sandboxed(adopter, Channel(ours), shared, CappedLog(log_read), scratch, tree=init, interpreter=pid,
                         owns_scratch=False)

    def close(self) -> None:
        if self.process is not None:
            self.process.close()
            self.process = None
