"""torch/extension.h precompiled in a sandbox of its own, for one flag list and flavour.

torch/extension.h precompiled, in a sandbox of its own, for the extensions built with one list of
extra_cflags, CPU or CUDA: the header every load_inline main.cpp starts with, parsed once instead of
per build.

The compiler flags are the ones load_inline itself writes for main.cpp (its ninja file),
because GCC uses a precompiled header only when the flags it was made with match the compile's.
A probe then compiles against the result with -Winvalid-pch: a header GCC would refuse is not kept.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

HEADER = os.path.join("torch", "extension.h")


def load_inline_flags(extra_cflags: list[str], with_cuda: bool, work: str) -> tuple[str, list[str]]:
    """(compiler, flags) of load_inline's compile of an extension's main.cpp, less its name."""
    import torch.utils.cpp_extension as cpp_extension

    ninja = os.path.join(work, "build.ninja")
    cpp_extension._write_ninja_file_to_build_library(
        path=ninja, name="vinci_pch", sources=[os.path.join(work, "main.cpp")], extra_cflags=extra_cflags,
        extra_cuda_cflags=[], extra_sycl_cflags=[], extra_ldflags=[], extra_include_paths=[], with_cuda=with_cuda,
        with_sycl=False, is_standalone=False)
    variables = {}
    with open(ninja, encoding="utf-8") as f:
        for line in f:
            name, eq, value = line.partition(" = ")
            if eq and name in ("cxx", "cflags"):
                variables[name] = value.strip()
    if "cxx" not in variables or "cflags" not in variables:
        raise RuntimeError(f"load_inline's ninja file has no cxx or cflags line: {sorted(variables)}")
    flags = [f for f in shlex.split(variables["cflags"]) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    return variables["cxx"], flags


def main(flags_file: str, out_dir: str) -> int:
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(flags_file, encoding="utf-8") as f:
        wanted = json.load(f)
    import torch.utils.cpp_extension as cpp_extension

    work = os.environ.get("TMPDIR", "/tmp")
    cxx, flags = load_inline_flags(wanted["extra_cflags"], wanted["with_cuda"], work)
    header = os.path.join(cpp_extension.include_paths("cpu")[0], HEADER)
    # GCC looks for <dir>/torch/extension.h.gch only beside <dir>/torch/extension.h; the copy is also
    # what a compile reads if it ever refuses the precompiled one.
    os.makedirs(os.path.join(out_dir, "torch"))
    shutil.copyfile(header, os.path.join(out_dir, HEADER))
    build = [cxx, "-x", "c++-header", header, *flags, "-o", os.path.join(out_dir, HEADER + ".gch")]
    print(shlex.join(build))
    if subprocess.run(build).returncode != 0:
        return 1
    probe = os.path.join(work, "probe.cpp")
    with open(probe, "w", encoding="utf-8") as f:
        f.write("#include <torch/extension.h>\n")
    check = subprocess.run([cxx, "-fsyntax-only", "-Winvalid-pch", "-H", f"-I{out_dir}", *flags, probe],
                           capture_output=True, text=True)
    used = f"! {os.path.join(out_dir, HEADER)}.gch"
    if check.returncode != 0 or used not in check.stderr.splitlines():
        print(f"GCC does not use the header it just precompiled:\n{check.stderr[-4000:]}")
        return 1
    return 0
