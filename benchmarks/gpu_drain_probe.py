"""When does the CUDA driver refuse to drain a process (cuCheckpointProcessLock: CUDA_ERROR_NOT_SUPPORTED)?

The judge locks a runner after every call (python/vinci_worker/gpu_drain.py). On an H200 (driver 580)
the lock worked on a child doing plain CUDA work (benchmarks/gpu_trust_probe.py), yet a judge's runners
were refused, some and not others. A runner differs from that child in the shared memory it holds: it
maps the judge's input allocations (imported descriptors) and exports the pages of its outputs. This
probe steps one child through those states, one at a time, and tries a lock and an unlock after each.
Usage: [SANDBOX=build-gpu/src/eval/vinci-sandbox] python3 benchmarks/gpu_drain_probe.py   (a table last)
With SANDBOX, a child also runs in vinci's own sandbox and in bubblewrap with some of its options.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

CHILD = r"""
import os, socket, sys, time
sys.path.insert(0, sys.argv[2])
import torch
from vinci_runner import device_memory as dm
sock = socket.socket(fileno=int(sys.argv[1]))
keep = []
def reply(text, fds=()):
    socket.send_fds(sock, [text.encode()], list(fds))
while True:
    msg, fds, _, _ = socket.recv_fds(sock, 1024, 4)
    cmd = msg.decode()
    if cmd == "init":
        keep.append(torch.zeros(1, device="cuda")); torch.cuda.synchronize(); reply("ok")
    elif cmd == "alloc":
        keep.append(torch.randn(1 << 22, device="cuda")); torch.cuda.synchronize(); reply("ok")
    elif cmd == "import":
        m = dm.Mapping.attach(fds[0], int(1 << 21)); os.close(fds[0]); keep.append(m)
        m.tensor(0, 1024).fill_(1); torch.cuda.synchronize(); reply("ok")
    elif cmd == "unimport":
        for m in [k for k in keep if isinstance(k, dm.Mapping)]:
            m.close(); keep.remove(m)
        reply("ok")
    elif cmd == "export":
        t = [k for k in keep if isinstance(k, torch.Tensor)][-1]
        fd = dm.export_page(t.data_ptr())
        reply("ok" if fd is not None else "no export", [fd] if fd is not None else [])
        if fd is not None: os.close(fd)
    elif cmd == "work":
        x = torch.randn(1 << 24, device="cuda")
        for _ in range(200): x = x * 1.0001
        reply("ok")
    elif cmd == "profile":
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
            (torch.ones(4, device="cuda") * 2).sum()
        torch.cuda.synchronize(); reply("ok")
    elif cmd == "quit":
        break
"""


def _cuda_pid(root: int) -> int:
    """The process below root (a sandbox's launcher) that maps the CUDA driver: the child itself."""
    from vinci_worker import process_tree

    for pid in process_tree.descendants(root):
        try:
            with open(f"/proc/{pid}/maps") as f:
                if "libcuda.so" in f.read():
                    return pid
        except OSError:
            pass
    return root


def main() -> int:
    import torch
    from vinci_runner import device_memory as dm
    from vinci_worker import gpu_drain

    torch.zeros(1, device="cuda")
    print("driver says:", gpu_drain.unavailable() or "has the checkpoint API", flush=True)
    rows = []

    repo_python = os.path.realpath(os.path.join(HERE, "..", "python"))

    def child(env_extra: dict, wrap=None):
        """A child over a socket pair; wrap(fd) gives the command's prefix (a sandbox) or None."""
        a, b = socket.socketpair()
        env = dict(os.environ, **env_extra)
        prefix = wrap(b.fileno(), env_extra) if wrap else []
        p = subprocess.Popen(prefix + [sys.executable, "-c", CHILD, str(b.fileno()), repo_python],
                             pass_fds=[b.fileno()], env=env)
        b.close()
        return p, a

    sandbox_bin = os.environ.get("SANDBOX")
    launcher = None
    if sandbox_bin:
        from vinci_worker.sandbox import Launcher
        launcher = Launcher(sandbox_bin, "/tmp/drain-probe", True, {})

    def vinci_sandbox(shm: bool):
        def wrap(fd, env_extra):
            cmd = [sandbox_bin, "--gpu", "--ro", repo_python]
            for path in launcher.python_paths:
                cmd += ["--ro", path]
            cmd += ["--tmpfs", f"/tmp={1 << 30}"] + (["--tmpfs", f"/dev/shm={64 << 20}"] if shm else [])
            for k, v in {**launcher._environment("/tmp"), **env_extra}.items():
                cmd += ["--env", f"{k}={v}"]
            return cmd + ["--keep-fd", str(fd), "--"]
        return wrap

    def bwrap(extra):
        def wrap(fd, env_extra):
            cmd = ["bwrap", "--die-with-parent", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
                   "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", *extra]
            for d in ("/usr", "/opt", "/etc", "/lib", "/lib64", "/bin", "/sbin", "/root", "/workspace", repo_python):
                cmd += ["--ro-bind-try", d, d]
            for name in os.listdir("/dev"):
                if name.startswith("nvidia"):
                    cmd += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
            return cmd + ["--"]
        return wrap

    def ask(sock, cmd, fds=()):
        socket.send_fds(sock, [cmd.encode()], list(fds))
        msg, got, _, _ = socket.recv_fds(sock, 1024, 4)
        for fd in got:
            os.close(fd)
        return msg.decode()

    def try_lock(label, pid):
        t = time.perf_counter()
        try:
            gpu_drain.lock(pid, 20_000)
            ms = (time.perf_counter() - t) * 1e3
            gpu_drain.unlock(pid)
            rows.append((label, f"locked in {ms:.2f} ms"))
        except gpu_drain.DrainError as e:
            rows.append((label, str(e).split(": ", 1)[-1]))
        print(f"{label:55s} {rows[-1][1]}", flush=True)

    for name, env in (("plain allocator", {}), ("expandable segments", {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})):
        p, s = child(env)
        try_lock(f"[{name}] before CUDA init", p.pid)
        print(ask(s, "init"))
        try_lock(f"[{name}] after init", p.pid)
        ask(s, "alloc")
        try_lock(f"[{name}] after a 16 MB tensor", p.pid)
        ask(s, "work")
        try_lock(f"[{name}] with 200 queued kernels", p.pid)
        shared = dm.Mapping.create(1 << 21)
        fd = shared.export()
        ask(s, "import", [fd])
        os.close(fd)
        try_lock(f"[{name}] holding the parent's allocation (imported fd)", p.pid)
        ask(s, "unimport")
        try_lock(f"[{name}] after unmapping it", p.pid)
        print(ask(s, "export"))
        try_lock(f"[{name}] after exporting its own page", p.pid)
        ask(s, "profile")
        try_lock(f"[{name}] after a torch.profiler (CUPTI) call", p.pid)
        ask(s, "work")
        try_lock(f"[{name}] after it, with 200 queued kernels", p.pid)
        shared.close()
        socket.send_fds(s, [b"quit"], [])
        p.wait(timeout=30)

    expandable = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    variants = [("bwrap as gpu_trust_probe", bwrap([])),
                ("bwrap +new-session +cap-drop +disable-userns",
                 bwrap(["--new-session", "--cap-drop", "ALL", "--disable-userns"]))]
    if sandbox_bin:
        variants += [("vinci-sandbox (seccomp, rlimits)", vinci_sandbox(True)),
                     ("vinci-sandbox without the /dev/shm tmpfs", vinci_sandbox(False))]
    for name, wrap in variants:
        try:
            p, s = child(expandable, wrap)
            print(ask(s, "init"))
            try_lock(f"[{name}] after init", _cuda_pid(p.pid))
            socket.send_fds(s, [b"quit"], [])
            p.wait(timeout=30)
        except Exception as e:  # a variant that cannot start says why and the rest still run
            rows.append((f"[{name}]", f"did not run: {e}"))
            print(rows[-1], flush=True)

    p, s = child(expandable)
    ask(s, "init")
    ask(s, "profile")
    try_lock("[fresh child] profiler right after init, as vinci_runner's warm-up", p.pid)
    socket.send_fds(s, [b"quit"], [])
    p.wait(timeout=30)

    # Several children at once, as a judge's spare runner beside the running one.
    procs = [child({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}) for _ in range(3)]
    for p, s in procs:
        ask(s, "init")
    for i, (p, s) in enumerate(procs):
        try_lock(f"[three children] child {i}", p.pid)
    for p, s in procs:
        socket.send_fds(s, [b"quit"], [])
        p.wait(timeout=30)

    print("\n| state | cuCheckpointProcessLock |\n|---|---|")
    for label, result in rows:
        print(f"| {label} | {result} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
