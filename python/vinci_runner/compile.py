"""One extension build, in a sandbox of its own: load_inline's arguments in, a library out.

One extension build, in a sandbox of its own: load_inline's arguments (as a candidate passed them)
in, the built library out, into the one folder this sandbox may write.

Only the toolchain runs here: no candidate Python, and the library is never loaded (load_inline
would import it, running its constructors and module init, the candidate's native code, in a
sandbox that can write the staging folder on disk). The compiler runs on the candidate's sources
and the flags the trusted side allowed, so the outcome is a function of those arguments alone,
which is what the trusted cache keys it by. The build works in the sandbox's private tmpfs (--work)
and only the library is copied out. A precompiled torch/extension.h, when the trusted side passes
one, changes how long that takes, not what comes out.

nvcc cannot read GCC's precompiled header, and a CUDA source that includes torch/extension.h
makes nvcc parse all of libtorch's C++ API and pybind11 (78 s of nvcc on the 2-core CI machine,
against 36 s for torch/types.h, which load_inline puts at the top of every .cu anyway). So the
CUDA sources are first built with those includes taken out. If that build fails anywhere but in
main.cpp, which the change does not touch, the sources are built again as written, in the same
folder (ninja keeps main.o), and only that build's errors are reported.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys

_EXTENSION_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][^\n]*$', re.M)
RETRY_NOTE = "the CUDA sources did not build without torch/extension.h; building them as written"
_FAILED_TARGET = re.compile(r"^FAILED: (?:\[code=\d+\] )?(\S+)", re.M)


def lean_arguments(arguments: dict) -> dict | None:
    """The arguments with every torch/extension.h include of the CUDA sources removed, or None when
    they have none to remove."""
    sources = arguments.get("cuda_sources")
    if isinstance(sources, str):
        lean = _EXTENSION_INCLUDE.sub("", sources)
    elif isinstance(sources, list) and all(isinstance(s, str) for s in sources):
        lean = [_EXTENSION_INCLUDE.sub("", s) for s in sources]
    else:
        return None
    if lean == sources:
        return None
    return dict(arguments, cuda_sources=lean)


def worth_retrying(error: str) -> bool:
    """Whether a failed lean build may succeed with the sources as written: not when main.cpp alone
    failed, since both builds compile the same main.cpp."""
    return set(_FAILED_TARGET.findall(error)) != {"main.o"}


def forget_build(cpp_extension, name: str) -> None:
    """Makes load_inline treat the next build of `name` as its first. Otherwise it counts the
    changed sources as a new version and builds name_v1, whose module the runner, importing by
    the candidate's name, could not load; and the changed -DTORCH_EXTENSION_NAME would also make
    ninja compile main.cpp again."""
    cpp_extension.JIT_EXTENSION_VERSIONER.entries.pop(name, None)


def build(arguments: dict, cpp_extension, try_lean: bool = True) -> None:
    """Builds the extension with cpp_extension.load_inline, first with lean CUDA sources when there
    are any and try_lean."""
    lean = lean_arguments(arguments) if try_lean else None
    if lean is not None:
        try:
            cpp_extension.load_inline(**lean)
            return
        except Exception as e:  # noqa: BLE001 - any failure of the lean build means: build as written
            if not worth_retrying(str(e)):
                raise
        print(RETRY_NOTE, file=sys.stderr)
        forget_build(cpp_extension, arguments["name"])
    cpp_extension.load_inline(**arguments)


def never_load(cpp_extension) -> None:
    """Makes load_inline stop once the library is built: its last step imports the module (or
    dlopens the library), which would run the candidate's code here."""
    cpp_extension._import_module_from_library = lambda name, path, is_python_module: None


def main(arguments_file: str, out_dir: str, pch_dir: str, lean_cuda: bool = True, work_dir: str = "") -> int:
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(arguments_file, encoding="utf-8") as f:
        arguments = json.load(f)
    import torch.utils.cpp_extension as cpp_extension

    work = os.path.abspath(work_dir or out_dir)
    os.makedirs(work, exist_ok=True)
    arguments["build_directory"] = work
    arguments["verbose"] = False
    if pch_dir:
        # Searched before torch's own include folders, so GCC finds torch/extension.h.gch there.
        arguments["extra_include_paths"] = [pch_dir]
    never_load(cpp_extension)
    build(arguments, cpp_extension, try_lean=lean_cuda)
    name = arguments["name"]
    built = [f for f in os.listdir(work) if f.startswith(name) and f.endswith(".so")]
    if not built:
        print(f"the build finished without {name}.so", file=sys.stderr)
        return 1
    if work != os.path.abspath(out_dir):
        shutil.copyfile(os.path.join(work, built[0]), os.path.join(out_dir, built[0]))
    with open(os.path.join(out_dir, "library"), "w", encoding="utf-8") as f:
        f.write(built[0])
    return 0
