"""One extension build, in a sandbox of its own: load_inline's arguments (as a candidate passed them)
in, the built library out, into the one folder this sandbox may write.

No candidate Python runs here; the compiler runs on the candidate's sources and flags, so the
outcome is a function of those arguments alone, which is what the trusted cache keys it by. A
precompiled torch/extension.h, when the trusted side passes one, changes how long that takes, not
what comes out.
"""
from __future__ import annotations

import json
import os
import sys


def main(arguments_file: str, out_dir: str, pch_dir: str) -> int:
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(arguments_file, encoding="utf-8") as f:
        arguments = json.load(f)
    import torch.utils.cpp_extension as cpp_extension

    arguments["build_directory"] = out_dir
    arguments["verbose"] = False
    if pch_dir:
        # Searched before torch's own include folders, so GCC finds torch/extension.h.gch there.
        arguments["extra_include_paths"] = [pch_dir]
    cpp_extension.load_inline(**arguments)
    name = arguments["name"]
    built = [f for f in os.listdir(out_dir) if f.startswith(name) and f.endswith(".so")]
    if not built:
        print(f"the build finished without {name}.so", file=sys.stderr)
        return 1
    with open(os.path.join(out_dir, "library"), "w", encoding="utf-8") as f:
        f.write(built[0])
    return 0
