#!/usr/bin/env python3
"""Which step of a zygote runner's sandbox (python/vinci_runner/zygote.py) keeps CUDA from starting.

A parent imports torch without touching CUDA, as the zygote does, then for each variant forks a
keeper that unshares the variant's namespaces, an init inside them, and a runner under it that
creates a CUDA tensor. One line per variant: what was unshared or mounted, and what CUDA said.
Run on a GPU host, as root and again inside bubblewrap (benchmarks/judge_gpu.sh's host):

    python3 benchmarks/zygote_cuda_probe.py
"""
import ctypes
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from vinci_runner.zygote import (CLONE_NEWIPC as NEWIPC, CLONE_NEWNET as NEWNET, CLONE_NEWNS as NEWNS,  # noqa: E402
                                 CLONE_NEWPID as NEWPID, CLONE_NEWUSER as NEWUSER, CLONE_NEWUTS as NEWUTS,
                                 map_own_ids)

libc = ctypes.CDLL(None, use_errno=True)
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 1 << 18
VARIANTS = [
    ("plain fork", 0, False),
    ("user", NEWUSER, False),
    ("user+mount", NEWUSER | NEWNS, False),
    ("user+mount+pid", NEWUSER | NEWNS | NEWPID, False),
    ("user+mount+pid, own /proc", NEWUSER | NEWNS | NEWPID, True),
    ("user+net", NEWUSER | NEWNET, False),
    ("user+ipc", NEWUSER | NEWIPC, False),
    ("user+uts", NEWUSER | NEWUTS, False),
    ("all six", NEWUSER | NEWNS | NEWPID | NEWNET | NEWIPC | NEWUTS, False),
    ("all six, own /proc", NEWUSER | NEWNS | NEWPID | NEWNET | NEWIPC | NEWUTS, True),
]


def child(flags: int, own_proc: bool, out: int) -> str:
    uid, gid = os.getuid(), os.getgid()
    if flags and libc.unshare(flags) != 0:
        return f"unshare: {os.strerror(ctypes.get_errno())}"
    if flags & NEWUSER:
        map_own_ids(uid, gid)
    pid = os.fork()
    if pid:
        _, raw = os.waitpid(pid, 0)
        return f"init's child ended {raw}"
    try:
        if flags & NEWNS:
            libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)
        if own_proc and libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
            os.write(out, f"mount /proc: {os.strerror(ctypes.get_errno())}\n".encode())
            os._exit(0)
        x = torch.ones(4, device="cuda")
        os.write(out, f"ok: {float((x + 1).sum())} (pid {os.getpid()})\n".encode())
    except BaseException as e:  # noqa: BLE001 - the line says what CUDA said
        os.write(out, f"{type(e).__name__}: {str(e)[:200]}\n".encode())
    os._exit(0)


def main() -> int:
    print(f"uid {os.getuid()}, threads after import {len(os.listdir('/proc/self/task'))}, "
          f"cuda initialised {torch.cuda.is_initialized()}", flush=True)
    for name, flags, own_proc in VARIANTS:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                note = child(flags, own_proc, w)
            except BaseException as e:  # noqa: BLE001
                note = f"{type(e).__name__}: {e}"
            os.write(w, f"({note})\n".encode())
            os._exit(0)
        os.close(w)
        os.waitpid(pid, 0)
        said = b""
        while chunk := os.read(r, 4096):
            said += chunk
        os.close(r)
        print(f"{name:<28} {said.decode().strip()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
