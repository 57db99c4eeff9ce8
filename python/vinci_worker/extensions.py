"""The extension cache and the compiles that fill it, on the trusted side.

A candidate's load_inline arguments arrive as data. Their key is a hash of those arguments and of
the toolchain (torch, nvcc, the C++ compiler, the target GPUs), so two candidates share a build only
when they ask for exactly the same thing, and a candidate can never put a library under another's
key. The arguments are checked first, the flags against an allow-list (build_limits.py). Each build
runs in a sandbox of its own, in that sandbox's private tmpfs, bounded in memory, CPU time, wall
time, disk and output (build_limits.py); only the finished library is copied into the staging folder,
the one place the sandbox may write, and the trusted side moves it into place. Builds read a
precompiled torch/extension.h from the same cache (precompiled_headers.py).

A failure is cached too, but only after a retry (build_failures.py), and only under the limits it
met: a build stopped by a limit is as much the source's doing as a compile error (a bomb resent
must not cost a machine its limit again each time), but under larger limits it may build.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import time

from . import build_failures, build_limits, toolchain
from .build_limits import BuildLimits
from .precompiled_headers import PrecompiledHeaders
from .sandbox import Launcher, file_sha256

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
    def __init__(self, launcher: Launcher, ext_root: str, timeout_s: float, limits: BuildLimits | None = None):
        self.launcher = launcher
        self.root = ext_root
        self.timeout_s = timeout_s
        self.limits = limits or BuildLimits()
        if launcher.unguarded:
            raise RuntimeError(f"{', '.join(launcher.unguarded)} assemble inside the compiler (clang), where "
                               "vinci-as-guard cannot see what a library is made of: builds need a GCC toolchain")
        self.library_dirs = toolchain.library_dirs(launcher.cuda_home)
        # The guard is part of the toolchain: a library cached before it (or before a stricter one)
        # was never checked by it, and is built again.
        self.toolchain = (f"{toolchain_id(launcher.cuda_home)};as_guard={file_sha256(launcher.assembler_guard)[:16]};"
                          f"hidden={','.join(build_limits.KERNEL_HEADER_FOLDERS)}")
        self.hidden = self._hidden_folders()
        self.headers = PrecompiledHeaders(launcher, ext_root, self.toolchain, timeout_s)
        self.built: list[str] = []  # keys this process compiled
        # What the importing candidate's file writes (build_limits.written_text), while one imports: its
        # builds' sources and flags must stand in it. None: no candidate's (a trusted build).
        self.written: build_limits.WrittenText | None = None
        self.unwritten_spent = 0
        os.makedirs(ext_root, exist_ok=True)

    def _hidden_folders(self) -> list[tuple[str, str]]:
        """(an empty folder, a kernel folder of torch's headers) for each bind that hides one from builds."""
        empty = os.path.join(self.root, "empty")
        os.makedirs(empty, exist_ok=True)
        os.chmod(empty, 0o555)
        spec = importlib.util.find_spec("torch")
        include = os.path.join(list(spec.submodule_search_locations)[0], "include") if spec else ""
        return [(empty, os.path.join(include, f)) for f in build_limits.KERNEL_HEADER_FOLDERS
                if include and os.path.isdir(os.path.join(include, f))]

    @contextlib.contextmanager
    def writing(self, candidate_source: str | None):
        """Builds asked inside are held to what candidate_source writes (nothing, where the judge could
        not read the file: it then builds nothing); None: a trusted import, held to nothing."""
        self.written = None if candidate_source is None else build_limits.written_text(candidate_source)
        self.unwritten_spent = 0  # by this file's builds so far: the budget is the file's, not each build's
        try:
            yield
        finally:
            self.written = None

    def key(self, arguments: dict) -> str:
        blob = json.dumps(arguments, sort_keys=True, default=str) + "\0" + self.toolchain
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def compile(self, arguments: dict) -> dict:
        """{"ok": True, "path", "key"} or {"ok": False, "reason", "log", "key"}; blocks while another
        process builds the same key. Arguments that may not be built are refused before anything runs
        ("bad_arguments", "forbidden_flag", "forbidden_source"); a build that fails says why
        ("build_failed", "forbidden_source" where the assembler guard refused it, or the limit that
        stopped it: "build_memory", "build_cpu_time", "build_timeout", "build_disk", "build_output_size")."""
        refused = build_limits.refusal(arguments, self.library_dirs)
        if not refused and self.written is not None:
            why, chars = build_limits.unwritten_source(arguments, self.written, self.unwritten_spent)
            refused = ("forbidden_source", why) if why else None
            self.unwritten_spent += chars
        if refused:
            reason, line = refused
            return {"ok": False, "reason": reason, "log": line,
                    "key": self.key(arguments) if reason != "bad_arguments" else ""}
        key = self.key(arguments)
        final = os.path.join(self.root, key)
        limits = dataclasses.asdict(self.limits) | {"timeout_s": self.timeout_s}
        with open(os.path.join(self.root, key + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = self._library(final)
            if done:
                os.utime(final)
                return {"ok": True, "path": done, "key": key}
            failure = build_failures.read(final)
            if failure and failure.get("limits") != limits:
                failure = None  # met other limits: these may let it build
            if failure and failure["attempts"] >= build_failures.ATTEMPTS_BEFORE_TRUSTED:
                return {"ok": False, "reason": failure.get("reason", "build_failed"), "log": failure["log"], "key": key}
            reason, log = self._build(arguments, key, final)
            if reason is None:
                self.built.append(key)
                return {"ok": True, "path": self._library(final), "key": key}
            attempts = (failure["attempts"] if failure else 0) + 1
            build_failures.write(final, {"attempts": attempts, "reason": reason, "log": log,
                                         "toolchain": self.toolchain, "limits": limits})
            return {"ok": False, "reason": reason, "log": log, "key": key}

    @staticmethod
    def _library(folder: str) -> str | None:
        try:
            with open(os.path.join(folder, "library")) as f:
                path = os.path.join(folder, f.read().strip())
            return path if os.path.isfile(path) else None
        except OSError:
            return None

    def _outcome(self, returncode: int, log: str, staging: str) -> tuple[str | None, str]:
        """(None, "") for a library within its limit, else (reason, a line that says why)."""
        library = self._library(staging)
        if returncode != 0 or not library:
            return build_limits.failure_reason(log, self.limits, address_space_applied=not self.launcher.cuda)
        size = os.path.getsize(library)
        if size > self.limits.output_bytes:
            return "build_output_size", (f"[the library is {size} bytes, more than its limit of "
                                         f"{self.limits.output_bytes} (build_output_size)]")
        return None, ""

    def _build(self, arguments: dict, key: str, final: str) -> tuple[str | None, str]:
        """(None, log) when the library is in place, else (reason, log)."""
        limits = self.limits
        staging = os.path.join(self.root, f"{key}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        os.chmod(staging, 0o777)
        with open(os.path.join(staging, "arguments.json"), "w") as f:
            json.dump(arguments, f)
        with self.headers.folder(arguments) as pch:
            t0 = time.monotonic()
            # The build works in "build" under the sandbox's working directory, its private tmpfs.
            proc = self.launcher.spawn(["compile", "--arguments", os.path.join(staging, "arguments.json"),
                                        "--out", staging, "--work", "build", "--pch", pch or ""],
                                       read_only=[pch] if pch else [], read_only_as=self.hidden, read_write=[staging],
                                       file_size=limits.output_bytes, scratch_bytes=limits.scratch_bytes,
                                       cpu_seconds=limits.cpu_seconds + build_limits.CPU_SLACK_S,
                                       address_space=limits.address_space_bytes)
            stopped = build_limits.watch(proc, limits, self.timeout_s)
            proc.close()
        log = proc.log.text()
        reason, line = stopped or self._outcome(proc.proc.returncode, log, staging)
        log += f"\n{line}" if line else ""
        if reason:
            log += f"\n[{time.monotonic() - t0:.1f} s]"
        if len(log) > LOG_CAP:
            log = log[:LOG_CAP // 2] + "\n[... trimmed ...]\n" + log[-LOG_CAP // 2:]
        if reason is None:
            with open(os.path.join(staging, "build.log"), "w") as f:
                f.write(log)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(staging, final)
        else:
            shutil.rmtree(staging, ignore_errors=True)
        return reason, log
