"""Precompiled torch/extension.h in the extension cache, one per list of extra_cflags, for CPU builds.

Every load_inline source starts with torch/extension.h; parsing it is half of a small CPU
extension's compile (24 s of CPU on the 2-core CI machine, 12 s with the header precompiled). Each
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


def eligible(arguments: dict) -> bool:
    """Whether load_inline will compile a CPU main.cpp that starts with torch/extension.h and whose
    flags have a precompiled header."""
    flags = arguments.get("extra_cflags") or []
    return (not arguments.get("cuda_sources") and not arguments.get("sycl_sources") and
            not arguments.get("with_cuda") and not arguments.get("with_sycl") and
            not arguments.get("extra_include_paths") and not arguments.get("no_implicit_headers") and
            isinstance(flags, list) and all(isinstance(f, str) and COMMON_FLAG.fullmatch(f) for f in flags))


class PrecompiledHeaders:
    def __init__(self, launcher: Launcher, ext_root: str, toolchain: str, timeout_s: float):
        self.launcher = launcher
        self.root = ext_root
        self.timeout_s = timeout_s
        self.identity = (f"{toolchain};python={sys.version};python_include={sysconfig.get_path('include')};"
                         f"torch_files={_torch_files()}")

    def key(self, flags: list[str]) -> str:
        blob = "torch/extension.h\0" + json.dumps(flags) + "\0" + self.identity
        return "pch-" + hashlib.sha256(blob.encode()).hexdigest()[:32]

    @contextlib.contextmanager
    def folder(self, arguments: dict):
        """Yields the folder to put first on the include path of this build, or None; while the build
        runs, the folder's lock is held shared, so the cache janitor leaves it alone."""
        if not eligible(arguments):
            yield None
            return
        flags = arguments.get("extra_cflags") or []
        key = self.key(flags)
        final = os.path.join(self.root, key)
        with open(final + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
            if not self._ready(final):
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not self._ready(final) and build_failures.attempts(final) < build_failures.ATTEMPTS_BEFORE_TRUSTED:
                    self._build(flags, key, final)
                fcntl.flock(lock, fcntl.LOCK_SH)
            if self._ready(final):
                os.utime(final)
                yield final
            else:
                yield None

    @staticmethod
    def _ready(folder: str) -> bool:
        return os.path.isfile(os.path.join(folder, "torch", "extension.h.gch"))

    def _build(self, flags: list[str], key: str, final: str) -> None:
        staging = os.path.join(self.root, f"{key}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        os.chmod(staging, 0o777)
        flags_file = os.path.join(staging, "flags.json")
        with open(flags_file, "w") as f:
            json.dump(flags, f)
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
