"""The call window's gate on a GPU (python/vinci_worker/call_window.py Gate), on a real stopped and
continued child, with the driver's lock and unlock recorded instead of called (CI has no GPU):
- every freeze drains (locks) before it stops, every thaw continues before it unlocks;
- after stop_draining, the next thaw still unlocks, and no freeze or thaw after it touches the
  driver (the profiled call: a process that has used CUPTI can never be locked again);
- a lock refused while the runner lives is the window's gpu_drain_failed, one refused after the
  runner ended is not (its next call answers for itself), and one that reports a kernel fault of the
  runner's (a sticky CUDA error) is gpu_fault, the runner's runtime error;
- a process of the sandbox other than the interpreter that holds a GPU node open (here a file named
  like one), or only a mapping of it, ends the freeze as gpu_helper_process (red-team round 36's
  helper contexts); the interpreter holding it does not.

    python3 tests/eval/gate_test.py REPO_ROOT
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")
from vinci_worker import gpu_drain, process_tree  # noqa: E402
from vinci_worker.call_window import Gate, WindowError  # noqa: E402
from checks import check, finish  # noqa: E402

calls = []
refuse = {"lock": False, "fault": False}


def fake_lock(pid):
    calls.append(("lock", pid, process_state(pid) != "T"))
    if refuse["fault"]:
        raise gpu_drain.DrainError("cuCheckpointProcessLock: CUDA_ERROR_MISALIGNED_ADDRESS", fault=True)
    if refuse["lock"]:
        raise gpu_drain.DrainError("cuCheckpointProcessLock: CUDA_ERROR_NOT_SUPPORTED")


def fake_unlock(pid):
    calls.append(("unlock", pid, process_state(pid) != "T"))


def process_state(pid, becomes=None):
    """The state letter in /proc; with becomes, waits up to 2 s for it (a signal lands asynchronously)."""
    deadline = time.monotonic() + 2
    while becomes and read_state(pid) != becomes and time.monotonic() < deadline:
        time.sleep(0.005)
    return read_state(pid)


def read_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


gpu_drain.lock, gpu_drain.unlock = fake_lock, fake_unlock


class Sandboxed:
    """A launcher (the sandbox's, which the gate leaves running) and the runner below it; with node,
    a second process below it that holds that file open."""

    def __init__(self, node: str | None = None, mapped: bool = False):
        # mapped: libc's mmap, then the descriptor closed (Python's mmap keeps a copy of it open).
        holder = (f"exec {sys.executable} -c \"import ctypes, os, time; fd = os.open('{node}', os.O_RDWR); "
                  "libc = ctypes.CDLL(None); libc.mmap.restype = ctypes.c_void_p; "
                  "libc.mmap(None, 4096, 3, 1, fd, 0); os.close(fd); time.sleep(61)\"" if mapped
                  else f"exec 3<'{node}'; exec sleep 61")
        script = "sleep 60 & wait" if node is None else f"sleep 60 & ({holder}) & wait"
        self.proc = subprocess.Popen(["sh", "-c", script], start_new_session=True)
        self.tree = self.proc.pid  # a launched sandbox's processes are all below its launcher
        deadline = time.monotonic() + 10
        while len(self.below()) < (1 if node is None else 2) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.runner = self.below()[0]

    def below(self):
        return [p for p in process_tree.descendants(self.proc.pid) if p != self.proc.pid]


box = Sandboxed()
runner = box.runner
try:
    gate = Gate(box, runner, drain=True, freezer=False)
    gate.freeze()
    check(calls == [("lock", runner, True)], f"a freeze locks the running runner first: {calls}")
    check(process_state(runner, "T") == "T", "a freeze stops the runner after the lock")
    calls.clear()
    gate.thaw()
    check(calls == [("unlock", runner, True)], f"a thaw continues the runner, then unlocks: {calls}")
    calls.clear()

    gate.freeze()
    gate.stop_draining()
    gate.thaw()
    check([c[0] for c in calls] == ["lock", "unlock"], f"the thaw after stop_draining still unlocks: {calls}")
    calls.clear()
    gate.freeze()
    check(process_state(runner, "T") == "T", "a freeze after the profiled call still stops the runner")
    gate.thaw()
    gate.freeze()
    gate.thaw()
    check(calls == [], f"no lock or unlock after the profiled call: {calls}")

    refuse["lock"] = True
    refused = Gate(box, runner, drain=True, freezer=False)
    try:
        refused.freeze()
        check(False, "a lock refused while the runner lives ends the window")
    except WindowError as e:
        check(e.reason == "gpu_drain_failed", f"the refusal's reason: {e.reason}")
        check("CUDA_ERROR_NOT_SUPPORTED" in str(e), f"the driver's answer is in the message: {e}")
    refuse["fault"] = True
    try:
        Gate(box, runner, drain=True, freezer=False).freeze()
        check(False, "a lock that reports the runner's kernel fault ends the window")
    except WindowError as e:
        check(e.reason == "gpu_fault" and "MISALIGNED" in str(e), f"a kernel fault is the runner's: {e.reason}: {e}")
    refuse["fault"] = False
    os.killpg(box.proc.pid, signal.SIGKILL)
    box.proc.wait()
    ended = Gate(box, runner, drain=True, freezer=False)
    calls.clear()
    try:
        ended.freeze()
    except WindowError as e:
        check(False, f"a runner that ended is not a drain failure: {e}")
finally:
    try:
        os.killpg(box.proc.pid, signal.SIGKILL)  # the runner too: an orphan would hold ctest's pipe
    except ProcessLookupError:
        pass
    box.proc.wait()

nodes = tempfile.mkdtemp(prefix="gate-nodes-")
node = os.path.join(nodes, "nvidia0")
with open(node, "wb") as f:
    f.write(bytes(4096))
for mapped in (False, True):
    helped = Sandboxed(node, mapped)
    try:
        holder = [p for p in helped.below() if p != helped.runner]
        prefix = os.path.join(nodes, "nvidia")

        def settled():  # the helper's exec and open land asynchronously; the mapped one closes its descriptor
            if mapped:
                return process_tree._maps(holder[0], prefix) and not process_tree._holds_descriptor(holder[0], prefix)
            return process_tree._holds_descriptor(holder[0], prefix)

        deadline = time.monotonic() + 10
        while not settled() and time.monotonic() < deadline:
            time.sleep(0.01)
        check(settled(), f"the helper (mapped: {mapped}) never held the node as it should")
        gate = Gate(helped, helped.runner, drain=False, freezer=False, gpu_nodes=os.path.join(nodes, "nvidia"))
        try:
            gate.freeze()
            check(False, f"a helper process holding a GPU node (mapped: {mapped}) ends the freeze")
        except WindowError as e:
            check(e.reason == "gpu_helper_process", f"the helper's reason: {e.reason}")
            check(str(holder[0]) in str(e), f"the helper's pid {holder} is named: {e}")
        gate.thaw()
        # The same holder as the interpreter: its own GPU is what it is for.
        own = Gate(helped, holder[0], drain=False, freezer=False, gpu_nodes=os.path.join(nodes, "nvidia"))
        try:
            own.freeze()
        except WindowError as e:
            check(False, f"the interpreter holding the GPU is not a helper: {e}")
        own.thaw()
    finally:
        os.killpg(helped.proc.pid, signal.SIGKILL)
        helped.proc.wait()

sys.exit(finish("ok: the call window's gate"))
