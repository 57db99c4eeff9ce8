"""The build toolchain as a sandbox sees it: guarded assemblers, the linker's folders.

The build toolchain as a sandbox sees it: the assemblers that vinci-as-guard stands in for
(src/eval/assembler_guard.h), and the folders the linker takes -l libraries from (build_limits.py's
rule on static archives). Both serve one rule: a candidate's library holds only code compiled from its
sources.

A compiler runs the assembler that `<compiler> -print-prog-name=as` names: a path of its own (an
/opt/gcc/bin/as beside it), or, as a bare name, the first `as` on PATH. Every compiler a build may
run is asked, on the PATH the sandbox gives: CXX, CC and CUDAHOSTCXX where set, and c++, cc, g++ and
gcc (torch's default, and nvcc's host compilers). Every `as` on that PATH is guarded too. clang
assembles inside the compiler, where no guard can stand in, so a toolchain that builds with clang is
refused (`unguarded`).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

COMPILER_VARIABLES = ("CXX", "CC", "CUDAHOSTCXX")
DEFAULT_COMPILERS = ("c++", "cc", "g++", "gcc")


def _output(argv: list[str], path: str | None = None) -> str:
    env = dict(os.environ, PATH=path) if path is not None else None
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def compilers(path: str) -> list[str]:
    """The compilers a build may run, as absolute paths found on path."""
    names = [os.environ[v] for v in COMPILER_VARIABLES if os.environ.get(v)] + list(DEFAULT_COMPILERS)
    found = (shutil.which(name, path=path) for name in names)
    return list(dict.fromkeys(os.path.abspath(f) for f in found if f))


def assemblers(path: str) -> list[str]:
    """The real paths of every assembler a compiler on path would run, and of every `as` on path."""
    found = [shutil.which("as", path=d) for d in path.split(":") if d]
    for compiler in compilers(path):
        named = _output([compiler, "-print-prog-name=as"], path).strip()
        found.append(named if os.path.isabs(named) else shutil.which(named or "as", path=path))
    return sorted({os.path.realpath(f) for f in found if f and os.path.isfile(f)})


def unguarded(path: str) -> list[str]:
    """The compilers torch and nvcc run (CXX or c++; CC, gcc and g++ as nvcc's host compiler) that
    assemble inside themselves (clang), out of the guard's sight."""
    used = [os.environ.get("CXX") or "c++", os.environ.get("CC") or "gcc", "g++"]
    found = [shutil.which(name, path=path) for name in used]
    return [f for f in dict.fromkeys(found) if f and "clang" in _output([f, "--version"], path).lower()]


def library_dirs(cuda_home: str = "") -> list[str]:
    """Every folder a build's link may take an -l library from: the C++ compiler's library folders,
    the linker's own search folders, and the ones torch's link line names (torch's lib, CUDA's lib64)."""
    cxx = os.environ.get("CXX") or "c++"
    dirs = []
    for line in _output([cxx, "-print-search-dirs"]).splitlines():
        if line.startswith("libraries:"):
            dirs += line.split(":", 1)[1].strip().lstrip("=").split(":")
    linker = _output([cxx, "-print-prog-name=ld"]).strip() or "ld"
    dirs += [d.lstrip("=") for d in re.findall(r'SEARCH_DIR\("([^"]*)"\)', _output([linker, "--verbose"]))]
    spec = importlib.util.find_spec("torch")
    if spec and spec.submodule_search_locations:
        dirs.append(os.path.join(list(spec.submodule_search_locations)[0], "lib"))
    if cuda_home:
        dirs.append(os.path.join(cuda_home, "lib64"))
    return list(dict.fromkeys(os.path.normpath(d) for d in dirs if d and os.path.isdir(d)))
