"""The extension cache and the compiles that fill it, on the trusted side.

A candidate's load_inline arguments arrive as data. Their key is a hash of those arguments and of
the toolchain (torch, nvcc, the C++ compiler, the target GPUs), so two candidates share a build only
when they ask for exactly the same thing, and a candidate can never put a library under another's
key. Each build runs in a sandbox of its own that may write only its staging folder; the trusted
side moves the result into place. Builds read a precompiled torch/extension.h from the same
cache (precompiled_headers.py). A failure is cached too, but only after a retry (build_failures.py).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time

from . import build_failures
from .precompiled_headers import PrecompiledHeaders
from .sandbox import Launcher, wait_for

LOG_CAP = 256 << 10


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
        return out[-1] if argv[0].endswith("nvcc") and out else (out[0] if out else "")
    except (OSError, subprocess.SubprocessError):
        return "absent"


def toolchain_id(cuda_home: str) -> str:
    """What a compiled extension depends on besides its source, read without importing torch."""
    from importlib import metadata

    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = "absent"
    nvcc = _first_line([os.path.join(cuda_home, "bin", "nvcc"), "--version"]) if cuda_home else "no-nvcc"
    gpus = []
    root = "/proc/driver/nvidia/gpus"
    if os.path.isdir(root):
        for bus in sorted(os.listdir(root)):
            try:
                with open(os.path.join(root, bus, "information")) as f:
                    gpus += [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("Model:")]
            except OSError:
                pass
    return (f"torch={torch_version};nvcc={nvcc};cxx={_first_line([os.environ.get('CXX', 'c++'), '--version'])};"
            f"arch={os.environ.get('TORCH_CUDA_ARCH_LIST', '')};gpus={','.join(gpus)}")


class CompileService:
    def __init__(self, launcher: Launcher, ext_root: str, timeout_s: float):
        self.launcher = launcher
        self.root = ext_root
        self.timeout_s = timeout_s
        self.toolchain = toolchain_id(launcher.cuda_home)
        self.headers = PrecompiledHeaders(launcher, ext_root, self.toolchain, timeout_s)
        self.built: list[str] = []  # keys this process compiled
        os.makedirs(ext_root, exist_ok=True)

    def key(self, arguments: dict) -> str:
        blob = json.dumps(arguments, sort_keys=True, default=str) + "\0" + self.toolchain
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def compile(self, arguments: dict) -> dict:
        """{"ok": True, "path", "key"} or {"ok": False, "log", "key"}; blocks while another process
        builds the same key."""
        if not isinstance(arguments, dict) or not isinstance(arguments.get("name"), str) or \
                not arguments["name"].isidentifier():
            return {"ok": False, "log": "load_inline needs a name that is a Python identifier", "key": ""}
        key = self.key(arguments)
        final = os.path.join(self.root, key)
        with open(os.path.join(self.root, key + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = self._library(final)
            if done:
                os.utime(final)
                return {"ok": True, "path": done, "key": key}
            failure = build_failures.read(final)
            if failure and failure["attempts"] >= build_failures.ATTEMPTS_BEFORE_TRUSTED:
                return {"ok": False, "log": failure["log"], "key": key}
            ok, log = self._build(arguments, key, final)
            if ok:
                self.built.append(key)
                return {"ok": True, "path": self._library(final), "key": key}
            attempts = (failure["attempts"] if failure else 0) + 1
            build_failures.write(final, {"attempts": attempts, "log": log, "toolchain": self.toolchain})
            return {"ok": False, "log": log, "key": key}

    @staticmethod
    def _library(folder: str) -> str | None:
        try:
            with open(os.path.join(folder, "library")) as f:
                path = os.path.join(folder, f.read().strip())
            return path if os.path.isfile(path) else None
        except OSError:
            return None

    def _build(self, arguments: dict, key: str, final: str) -> tuple[bool, str]:
        staging = os.path.join(self.root, f"{key}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        os.chmod(staging, 0o777)
        with open(os.path.join(staging, "arguments.json"), "w") as f:
            json.dump(arguments, f)
        with self.headers.folder(arguments) as pch:
            t0 = time.monotonic()
            proc = self.launcher.spawn(["compile", "--arguments", os.path.join(staging, "arguments.json"),
                                        "--out", staging, "--pch", pch or ""], read_only=[pch] if pch else [],
                                       read_write=[staging], file_size=2 << 30, scratch_bytes=4 << 30)
            wait_for(proc, self.timeout_s)
            timed_out = proc.proc.poll() is None
            proc.close()
        log = proc.log.text()
        if timed_out:
            log += f"\n[the build took longer than {self.timeout_s:.0f} s and was stopped]"
        ok = not timed_out and proc.proc.returncode == 0 and self._library(staging) is not None
        if not ok:
            log += f"\n[{time.monotonic() - t0:.1f} s]"
        if len(log) > LOG_CAP:
            log = log[:LOG_CAP // 2] + "\n[... trimmed ...]\n" + log[-LOG_CAP // 2:]
        if ok:
            with open(os.path.join(staging, "build.log"), "w") as f:
                f.write(log)
            for leftover in os.listdir(staging):  # objects and ninja files: only the library is used
                if leftover.endswith((".o", ".ninja", ".ninja_deps", ".ninja_log")):
                    os.remove(os.path.join(staging, leftover))
            shutil.rmtree(final, ignore_errors=True)
            os.rename(staging, final)
        else:
            shutil.rmtree(staging, ignore_errors=True)
        return ok, log

