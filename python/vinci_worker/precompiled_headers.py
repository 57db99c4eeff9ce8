"""Precompiled torch/extension.h in the extension cache, per flag list and flavour.

Precompiled torch/extension.h in the extension cache, one per list of extra_cflags and flavour.

Every load_inline main.cpp starts with torch/extension.h; parsing it is half of a small CPU
extension's compile (24 s of CPU on the 2-core CI machine, 12 s with the header precompiled), and
a CUDA extension's main.cpp is the same C++ compile beside nvcc's, with CUDA's include folder
added (the "cuda" flavour; nvcc's own cuda.cu cannot use a GCC header and is untouched). Each
header is built once by its own sandboxed `vinci_runner precompile` from torch's headers alone and
moved into ext/pch-<key>/, where builds read it and nothing sandboxed can write. Its key covers what
GCC does not check when it loads one: the flags, the toolchain, Python's headers and torch's files.

Only flag lists of common options get one: each header is ~750 MB, and a flag list chosen by a
candidate (-include, -D, -wrapper) should not shape a file other candidates' builds read.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import sysconfig
import time

from . import build_failures
from .sandbox import Launcher, wait_for

COMMON_FLAG = re.compile(r"-(O[0-3sg]?|Ofast|march=native|mtune=native|ffast-math|funroll-loops|fopenmp|g|"
                         r"DNDEBUG|w|Wall|Wextra|std=c\+\+(17|20))")


def _torch_files() -> str:
    """A hash of torch's installed-file record (every header's own hash), so a reinstall under the
    same version string still gets a header of its own."""
    from importlib import metadata

    try:
        record = metadata.distribution("torch").read_text("RECORD") or ""
    except metadata.PackageNotFoundError:
        record = "absent"
    return hashlib.sha256(record.encode()).hexdigest()


def flavour(arguments: dict) -> str | None:
    """"cpu" or "cuda": the include folders load_inline will compile main.cpp with, when that file
    starts with torch/extension.h and its flags may have a precompiled header; None otherwise."""
    flags = arguments.get("extra_cflags") or []
    if (arguments.get("sycl_sources") or arguments.get("with_sycl") or arguments.get("extra_include_paths") or
            arguments.get("no_implicit_headers") or not isinstance(flags, list) or
            not all(isinstance(f, str) and COMMON_FLAG.fullmatch(f) for f in flags)):
        return None
    with_cuda = arguments.get("with_cuda")
    if with_cuda is None:  # load_inline's own rule: CUDA when there is a .cu source
        with_cuda = bool(arguments.get("cuda_sources"))
    return "cuda" if with_cuda is True else "cpu" if with_cuda is False else None


class PrecompiledHeaders:
    def __init__(self, launcher: Launcher, ext_root: str, toolchain: str, timeout_s: float):
        self.launcher = launcher
        self.root = ext_root
        self.timeout_s = timeout_s
        self.identity = (f"{toolchain};python={sys.version};python_include={sysconfig.get_path('include')};"
                         f"torch_files={_torch_files()}")

    def key(self, flags: list[str], kind: str) -> str:
        blob = f"torch/extension.h\0{kind}\0" + json.dumps(flags) + "\0" + self.identity
        return "pch-" + hashlib.sha256(blob.encode()).hexdigest()[:32]

    @contextlib.contextmanager
    def folder(self, arguments: dict):
        """Yields the folder to put first on the include path of this build, or None; while the build
        runs, the folder's lock is held shared, so the cache janitor leaves it alone.

        A header is made for the second build that asks for it, not the first: it costs 25-45 s of
        CPU and saves 12 s a build, and a flag list that only one candidate chose (-O3 -march=native)
        would pay it for nothing. One build makes a missing header and waits for it; builds that
        arrive meanwhile go on without one, since a cold batch of CUDA builds would otherwise all
        stand idle for the header's ~30 s before their nvcc compiles, which need no header, could
        start."""
        kind = flavour(arguments)
        if kind is None:
            yield None
            return
        flags = arguments.get("extra_cflags") or []
        key = self.key(flags, kind)
        final = os.path.join(self.root, key)
        with open(final + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
            if not self._ready(final) and not self._asked_before(final):
                yield None
                return
            if not self._ready(final):
                with open(final + ".building.lock", "w") as building:
                    try:
                        fcntl.flock(building, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        yield None
                        return
                    if (not self._ready(final) and
                            build_failures.attempts(final) < build_failures.ATTEMPTS_BEFORE_TRUSTED):
                        self._build(flags, kind, key, final)
            if self._ready(final):
                os.utime(final)
                yield final
            else:
                yield None

    @staticmethod
    def _asked_before(folder: str) -> bool:
        """Whether a build asked for this header before; marks that one has."""
        try:
            os.close(os.open(folder + ".asked", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return False
        except FileExistsError:
            return True

    @staticmethod
    def _ready(folder: str) -> bool:
        return os.path.isfile(os.path.join(folder, "torch", "extension.h.gch"))

    def _build(self, flags: list[str], kind: str, key: str, final: str) -> None:
        staging = os.path.join(self.root, f"{key}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        os.chmod(staging, 0o777)
        flags_file = os.path.join(staging, "flags.json")
        with open(flags_file, "w") as f:
            json.dump({"extra_cflags": flags, "with_cuda": kind == "cuda"}, f)
        t0 = time.monotonic()
        proc = self.launcher.spawn(["precompile", "--flags", flags_file, "--out", os.path.join(staging, "include")],
                                   read_write=[staging], file_size=4 << 30, scratch_bytes=1 << 30)
        wait_for(proc, self.timeout_s)
        timed_out = proc.proc.poll() is None
        proc.close()
        log = proc.log.text() + f"\n[{time.monotonic() - t0:.1f} s{', stopped at the time limit' if timed_out else ''}]"
        ok = not timed_out and proc.proc.returncode == 0 and self._ready(os.path.join(staging, "include"))
        if ok:
            with open(os.path.join(staging, "include", "build.log"), "w") as f:
                f.write(log)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(os.path.join(staging, "include"), final)
        else:
            build_failures.write(final, {"attempts": build_failures.attempts(final) + 1, "log": log[-(64 << 10):]})
        shutil.rmtree(staging, ignore_errors=True)
