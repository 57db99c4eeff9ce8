"""A sandboxed runner's calls, each a window the judge opens, times and closes from outside.

A sandboxed runner's calls as the judge sees them: each call is a window that the judge opens,
times and closes from outside the runner's process, and between windows the runner does nothing.

Between calls the runner is frozen: its processes stopped, and on a GPU its CUDA work drained and
its CUDA calls locked (gpu_drain). While it is frozen the judge writes the next call's inputs into
memory the runner maps (a memfd on the CPU, a shareable GPU allocation), flushes the caches with
its own writes, and reads the last call's outputs in place (/proc/PID/mem on the CPU; on a GPU the
pages of the runner's allocations that hold them, exported to the judge once each).

A window is: thaw, ask for the call, receive the reply, freeze. Its time is
  GPU  the wall clock from just before the thaw to the end of the drain: everything the runner
       queued on any stream during the window is inside it
  CPU  the CPU time of everything that ran in the sandbox during the window, from its cpuacct
       cgroup: work moved to a helper thread or process counts in full (a child that ends unwaited-for
       too, which no process tree shows), and a loaded host's waiting does not. Where the host has no
       such cgroup, the larger of the live process tree's CPU time and the window's wall time
so a runner's claims about its time, its outputs or the caches decide nothing. What the window
also holds is the runner's own harness (a message received and answered, the forward called): the
same code in a candidate's runner and in the trusted reference runner, and nothing a candidate
could leave out to look faster, since the inputs are in place before and the outputs are read
after.
"""
from __future__ import annotations

import glob
import os
import re
import time

import torch

from vinci_runner import device_memory, outputs
from vinci_runner.channel import ALIGN

from . import gpu_drain, process_tree
from .sandbox import Sandboxed

MAX_PIECES = 4096  # pages of a runner's outputs the judge maps; more end the evaluation


class WindowError(Exception):
    """The runner's replies or memory do not allow the judge to see its outputs."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def input_layout(specs: list[dict], sets: int) -> tuple[list[list[int]], int]:
    """Byte offsets of each tensor input of each set in the input buffer, and its size."""
    offsets, size = [], 0
    for _ in range(sets):
        row = []
        for s in specs:
            row.append(size)
            if s["kind"] == "tensor":
                size += (s["nbytes"] + ALIGN - 1) // ALIGN * ALIGN
        offsets.append(row)
    return offsets, max(size, ALIGN)


def cache_bytes() -> int:
    """The largest CPU cache's size (the last level, shared by the cores), from sysfs."""
    largest = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path).read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        try:
            largest = max(largest, int(text.rstrip("KMG")) * scale)
        except ValueError:
            pass
    return largest or (32 << 20)


class Flush:
    """The judge's own writes over a buffer twice the size of the cache a call could find warm (the
    GPU's L2, the CPU's last level), done while the runner is frozen."""

    def __init__(self, device: torch.device, nbytes: int):
        self.device = device
        self.nbytes = nbytes
        self.buffer = torch.empty(max(1, nbytes // 4), dtype=torch.float32, device=device)

    def __call__(self) -> None:
        self.buffer.fill_(1.0)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


GPU_NODES = "/dev/nvidia"


def gpu_helpers(tree: int, interpreter: int, nodes: str = GPU_NODES) -> list[int]:
    """The processes of a sandbox's tree other than its interpreter that hold a GPU device node open.
    The drain locks the interpreter's GPU work only, and a stopped process's queued kernels still run:
    red-team round 36's helpers, each with a CUDA context of its own, queued kernels as a window
    closed that ran through the reference's paired window. A candidate has one process on the GPU."""
    return [p for p in process_tree.device_holders(tree, nodes) if p != interpreter]


def refuse_gpu_helpers(tree: int, interpreter: int, nodes: str = GPU_NODES) -> None:
    helpers = gpu_helpers(tree, interpreter, nodes)
    if helpers:
        raise WindowError("gpu_helper_process",
                          f"processes {helpers} of the runner's sandbox, besides its interpreter {interpreter}, hold "
                          f"the GPU ({nodes}*): a candidate's GPU work runs in its own process alone, which the "
                          "judge drains; another's kernels outlive the window")


class Gate:
    """Freezes and thaws one runner: through the sandbox's freezer cgroup where the host has one (no
    signal: nothing the candidate could catch, nothing that disturbs a tracer), else by stopping its
    processes. On a GPU the runner's interpreter is locked before it is frozen, and thawed before it
    is unlocked: a lock of a stopped process never returns; and once frozen, no other process of the
    sandbox may hold the GPU (refuse_gpu_helpers), the drain's blind side."""

    def __init__(self, sandboxed: Sandboxed, pid: int, drain: bool, freezer: bool, gpu_nodes: str | None = None):
        self.sandboxed = sandboxed
        self.pid = pid
        self.drain = drain
        self.gpu_nodes = gpu_nodes
        self.freezer = process_tree.freezer_state(sandboxed.proc.pid) if freezer else None
        self.stopped: list[int] = []
        self.frozen = False
        self.undrained_after_thaw = False

    def stop_draining(self) -> None:
        """The next thaw unlocks as before, and no freeze after it drains: for the call after which
        the runner can no longer be drained (the profiled one)."""
        self.undrained_after_thaw = True

    def freeze(self) -> float:
        """Freezes the runner; returns when (perf_counter) its work ended: after the drain on a GPU."""
        if self.frozen:
            return time.perf_counter()
        if self.drain:
            try:
                gpu_drain.lock(self.pid)
            except gpu_drain.DrainError as e:
                if e.fault:
                    raise WindowError("gpu_fault", f"the runner's GPU work faulted: {e}") from None
                if self.sandboxed.proc.poll() is None:
                    raise WindowError("gpu_drain_failed", f"the judge could not drain the runner's GPU work: {e}") \
                        from None
        ended = time.perf_counter()
        if not (self.freezer and process_tree.freeze_cgroup(self.freezer, True)):
            self.stopped = process_tree.stop_tree(self.sandboxed.tree)
        self.frozen = True
        if self.gpu_nodes:
            refuse_gpu_helpers(self.sandboxed.tree, self.pid, self.gpu_nodes)
        return ended

    def thaw(self) -> None:
        if not self.frozen:
            return
        if self.freezer:
            process_tree.freeze_cgroup(self.freezer, False)
        process_tree.continue_tree(self.stopped)
        self.stopped = []
        if self.drain:
            try:
                gpu_drain.unlock(self.pid)
            except gpu_drain.DrainError:
                pass  # an unlocked or ended process: its next call answers for itself
            self.drain = not self.undrained_after_thaw
        self.frozen = False


class CallWindow:
    """The calls of one runner for one task: input sets written by the judge, windows timed from
    outside, outputs read in place."""

    def __init__(self, sandboxed: Sandboxed, device: torch.device, python_binary: str, input_specs: list,
                 specs: list, sets: int, drain: bool, flush: Flush, deliver_in_place: bool = True):
        self.sandboxed = sandboxed
        self.device = device
        self.cuda = device.type == "cuda"
        self.python_binary = python_binary
        self.input_specs, self.specs, self.sets = input_specs, specs, sets
        self.flush = flush
        self.drain = drain and self.cuda
        self.gate: Gate | None = None
        self.pid = 0
        self.cpu_cgroup = False  # decided in bind(), once the launcher has certainly made it
        self.offsets, self.input_bytes = input_layout(input_specs, sets)
        self.aliases_allowed = False  # set by the judge where the reference's own outputs alias its inputs
        self.inputs_gpu: device_memory.Mapping | None = None
        self.memory_fd = -1
        self.pieces: dict[int, tuple[int, int, device_memory.Mapping]] = {}  # id -> runner base, size, mapping
        # Where the judge may not read a runner's memory (a host's ptrace policy), the runner copies
        # its outputs into a shared buffer inside the call, a copy a candidate could leave out.
        self.delivered_by_runner = not self.cuda and not deliver_in_place
        if self.cuda:
            self.inputs_gpu = device_memory.Mapping.create(self.input_bytes)
        else:
            sandboxed.inputs.resize(self.input_bytes)
            if self.delivered_by_runner:
                sandboxed.buffer.resize(max(ALIGN, sets * outputs.layout(specs)[1]))

    def bind(self, cpu_cgroup: bool, freezer_cgroup: bool) -> None:
        """Finds the runner's interpreter once it has answered its load: the process the drain
        locks and whose memory the judge reads; and the sandbox's cgroups, which the launcher (by its
        probe) makes on this host and so must be there."""
        pid = self.sandboxed.interpreter or process_tree.interpreter_of(self.sandboxed.tree, self.python_binary)
        if pid is None:
            raise WindowError("runner_lost", "the runner's interpreter is not among the sandbox's processes")
        launcher = self.sandboxed.proc.pid
        if (cpu_cgroup and not self.cuda and process_tree.cgroup_cpu_ns(launcher) is None) or \
                (freezer_cgroup and process_tree.freezer_state(launcher) is None):
            raise WindowError("runner_lost", f"the sandbox of launcher {launcher} has lost its cgroups")
        self.cpu_cgroup = cpu_cgroup and not self.cuda
        self.pid = pid
        if self.drain:  # the runner is idle: a lock that fails now fails for the host, not the candidate
            try:
                gpu_drain.lock(pid)
                gpu_drain.unlock(pid)
            except gpu_drain.DrainError as e:
                raise WindowError("gpu_drain_failed", str(e)) from None
        if self.cuda:  # a helper started by the import or __init__, before the first freeze looks
            refuse_gpu_helpers(self.sandboxed.tree, pid)
        self.gate = Gate(self.sandboxed, pid, self.drain, freezer_cgroup, GPU_NODES if self.cuda else None)
        if not self.cuda and not self.delivered_by_runner:
            try:
                self.memory_fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
            except OSError as e:
                raise WindowError("runner_lost", f"the judge cannot read /proc/{pid}/mem ({e.strerror})") from None

    # --- the load request's share -------------------------------------------------------------
    def load_fields(self) -> tuple[dict, list[int]]:
        """What the runner needs to find its inputs and deliver its outputs, and the descriptors
        that go with it (the caller closes them after sending)."""
        fields = {"input_sets": self.sets, "input_offsets": self.offsets, "input_bytes": self.input_bytes,
                  "deliver": "buffer" if self.delivered_by_runner else "in_place"}
        fds = []
        if self.inputs_gpu is not None:
            fds.append(self.inputs_gpu.export())
            fields["input_mapping_size"] = self.inputs_gpu.size
        return fields, fds

    # --- one window ------------------------------------------------------------------------------
    def write_inputs(self, k: int, args: list) -> list:
        """Puts set k's tensors where the runner reads them; returns the set's plain values."""
        values = []
        for spec, off, a in zip(self.input_specs, self.offsets[k], args):
            if spec["kind"] != "tensor":
                values.append(a if isinstance(a, (int, float, bool, str, type(None))) else repr(a))
                continue
            values.append(None)
            raw = a.detach().contiguous().reshape(-1).view(torch.uint8)
            if self.inputs_gpu is not None:
                self.inputs_gpu.tensor(off, spec["nbytes"]).copy_(raw)
            else:
                dst = torch.frombuffer(self.sandboxed.inputs.map, dtype=torch.uint8, count=spec["nbytes"], offset=off)
                dst.copy_(raw)
                del dst
        return values

    def run(self, request: dict, timeout: float, ask) -> tuple[dict, float]:
        """One window: the runner frozen with its inputs in place, the caches flushed, then thawed,
        asked, and frozen again. Returns the reply and the window's milliseconds (see the module)."""
        self.gate.freeze()
        if self.cuda:
            torch.cuda.synchronize(self.device)  # the inputs the judge wrote are in place
        self.flush()
        cpu0 = None if self.cuda else self.cpu_ns()
        t0 = time.perf_counter()
        self.gate.thaw()
        try:
            reply = ask(request, timeout)
        finally:
            ended = self.gate.freeze()
        wall = (ended - t0) * 1e3
        if self.cuda:
            return reply, wall
        cpu = (self.cpu_ns() - cpu0) / 1e6
        return reply, cpu if self.cpu_cgroup else max(cpu, wall)

    def cpu_ns(self) -> int:
        """The sandbox's CPU time so far: its cgroup's, else its live process tree's."""
        counted = process_tree.cgroup_cpu_ns(self.sandboxed.proc.pid) if self.cpu_cgroup else None
        return counted if counted is not None else process_tree.cpu_ns(self.sandboxed.tree)

    def thaw(self) -> None:
        self.gate.thaw()

    # --- the outputs -----------------------------------------------------------------------------
    def take_pieces(self, reply: dict) -> None:
        """Maps the pages a GPU runner exported with this reply (their descriptors are closed here)."""
        fds = reply.get("fds") or []
        try:
            pieces = reply.get("pieces") or []
            if not isinstance(pieces, list) or len(pieces) != len(fds):
                raise WindowError("protocol_violation", f"{len(fds)} descriptors for {len(pieces)} pages")
            for piece, fd in zip(pieces, fds):
                if not isinstance(piece, dict) or not all(isinstance(piece.get(k), int) and piece[k] >= 0
                                                          for k in ("id", "base", "size")):
                    raise WindowError("protocol_violation", f"a malformed page {str(piece)[:120]}")
                if piece["id"] in self.pieces or len(self.pieces) >= MAX_PIECES or piece["size"] == 0:
                    raise WindowError("protocol_violation", f"page {piece['id']} announced twice, empty, or too many")
                for base, size, _ in self.pieces.values():
                    if piece["base"] < base + size and base < piece["base"] + piece["size"]:
                        raise WindowError("protocol_violation", "two pages announced over the same addresses")
                # Every page is mapped on its own: descriptors of different allocations can share one
                # file identity (an H200 showed every export as inode 142), so nothing is deduplicated.
                try:
                    mapping = device_memory.Mapping.attach(fd, piece["size"])
                except device_memory.DeviceMemoryError as e:
                    raise WindowError("unreadable_output", f"page {piece['id']} cannot be mapped: {e}") from None
                self.pieces[piece["id"]] = (piece["base"], piece["size"], mapping)
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def read(self, described: list, k: int) -> list:
        """Call k's outputs (of the last window), copied into the judge's memory while the runner is
        frozen: tensors on the judge's device, plain values as the runner gave them."""
        assert self.gate.frozen, "outputs are read only while the runner is frozen"
        if not isinstance(described, list) or len(described) != len(self.specs):
            raise WindowError("shape_mismatch", f"returned {len(described) if isinstance(described, list) else '?'} "
                                                f"outputs, the reference returns {len(self.specs)}")
        inputs_at = [] if self.aliases_allowed or self.delivered_by_runner or self.cuda else self._input_mappings()
        got = []
        for i, (spec, d) in enumerate(zip(self.specs, described)):
            if spec["kind"] != "tensor":
                got.append(d.get("value") if isinstance(d, dict) else None)
                continue
            if not isinstance(d, dict):
                raise WindowError("protocol_violation", f"output {i}: {str(d)[:80]}")
            ptr = d.get("ptr")
            if isinstance(ptr, int) and any(ptr < high and low < ptr + spec["nbytes"] for low, high in inputs_at):
                # An output in the memory the judge writes the inputs to is the inputs' own storage, which
                # the runner's monitors report only during the trials: computed in place, it skips the
                # output's allocation the reference pays for, and the next window's inputs overwrite it.
                raise WindowError("output_aliases_input", f"output {i} lies in the inputs' memory at {ptr:#x}, where the "
                                  "reference's outputs are its own")
            raw = self._bytes(i, d, spec["nbytes"], k)
            got.append(raw.view(outputs.dtype_of(spec["dtype"])).reshape(spec["shape"]))
        return got

    def _input_mappings(self) -> list[tuple[int, int]]:
        """Every address range where the runner maps the inputs' memfd (under any name, at any place),
        read while it is frozen. The lines are found by the memfd's inode in one scan of the text: a
        torch process maps about 1,800 ranges, and splitting each line in Python took 10 ms a read."""
        st = os.fstat(self.sandboxed.inputs.fd)
        try:
            with open(f"/proc/{self.pid}/maps") as f:
                text = f.read()
        except OSError as e:
            raise WindowError("runner_lost", f"the judge cannot read the runner's mappings ({e.strerror})") from None
        ranges = []
        for m in re.finditer(rf"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ ([0-9a-f]+):([0-9a-f]+) {st.st_ino}(?: |$)", text, re.M):
            if (int(m[3], 16), int(m[4], 16)) == (os.major(st.st_dev), os.minor(st.st_dev)):
                ranges.append((int(m[1], 16), int(m[2], 16)))
        return ranges

    def changed_input(self, k: int, args: list) -> int | None:
        """The index of the first tensor input of set k that no longer holds what the judge wrote
        there (compared after the window, while the runner is frozen), or None."""
        assert self.gate.frozen, "inputs are compared only while the runner is frozen"
        for i, (spec, off, a) in enumerate(zip(self.input_specs, self.offsets[k], args)):
            if spec["kind"] != "tensor" or not spec["nbytes"]:
                continue
            raw = a.detach().contiguous().reshape(-1).view(torch.uint8)
            if self.inputs_gpu is not None:
                now = self.inputs_gpu.tensor(off, spec["nbytes"])
            else:
                now = torch.frombuffer(self.sandboxed.inputs.map, dtype=torch.uint8, count=spec["nbytes"], offset=off)
            same = torch.equal(now, raw.to(now.device))
            del now
            if not same:
                return i
        return None

    def _bytes(self, i: int, d: dict, nbytes: int, k: int) -> torch.Tensor:
        if self.delivered_by_runner:
            off = k * outputs.layout(self.specs)[1] + outputs.layout(self.specs)[0][i]
            view = torch.frombuffer(self.sandboxed.buffer.map, dtype=torch.uint8, count=nbytes, offset=off)
            return view.clone()
        ptr = d.get("ptr")
        if not isinstance(ptr, int) or isinstance(ptr, bool) or not 0 <= ptr < (1 << 64) - nbytes or \
                d.get("nbytes") != nbytes:
            raise WindowError("protocol_violation", f"output {i} is described as {str(d)[:120]}, "
                                                   f"the reference's has {nbytes} bytes")
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8, device=self.device)
        if self.cuda:
            return self._gpu_bytes(i, ptr, nbytes)
        out = torch.empty(nbytes, dtype=torch.uint8)
        view, done = out.numpy(), 0
        while done < nbytes:
            try:
                n = os.preadv(self.memory_fd, [view[done:]], ptr + done)
            except (OSError, OverflowError, ValueError) as e:
                raise WindowError("unreadable_output", f"output {i}: the runner's memory at {ptr + done:#x} cannot be "
                                                       f"read ({getattr(e, 'strerror', None) or e})") from None
            if n <= 0:
                raise WindowError("unreadable_output", f"output {i}: the runner's memory ends at {ptr + done:#x}")
            done += n
        return out

    def _gpu_bytes(self, i: int, ptr: int, nbytes: int) -> torch.Tensor:
        out = torch.empty(nbytes, dtype=torch.uint8, device=self.device)
        at, end = ptr, ptr + nbytes
        while at < end:
            piece = next(((b, s, m) for b, s, m in self.pieces.values() if b <= at < b + s), None)
            if piece is None:
                raise WindowError("unreadable_output", f"output {i}: the runner exported no page holding {at:#x}")
            base, size, mapping = piece
            n = min(end, base + size) - at
            out[at - ptr:at - ptr + n].copy_(mapping.tensor(at - base, n))
            at += n
        torch.cuda.synchronize(self.device)
        return out

    def close(self) -> None:
        """Lets go of the runner's memory and thaws it (a reference runner takes the next task)."""
        if self.gate is not None:
            self.gate.thaw()
        for _, _, m in self.pieces.values():
            m.close()
        self.pieces.clear()
        if self.inputs_gpu is not None:
            self.inputs_gpu.close()
            self.inputs_gpu = None
        if self.memory_fd >= 0:
            os.close(self.memory_fd)
            self.memory_fd = -1
