"""One extension build, in a sandbox of its own: load_inline's arguments (as a candidate passed them)
in, the built library out, into the one folder this sandbox may write.

No candidate Python runs here; the compiler runs on the candidate's sources and flags, so the
outcome is a function of those arguments alone, which is what the trusted cache keys it by.
"""
from __future__ import annotations

import json
import os
import sys


def main(arguments_file: str, out_dir: str) -> int:
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(arguments_file, encoding="utf-8") as f:
        arguments = json.load(f)
    import torch.utils.cpp_extension as cpp_extension

    arguments["build_directory"] = out_dir
    arguments["verbose"] = False
    cpp_extension.load_inline(**arguments)
    name = arguments["name"]
    built = [f for f in os.listdir(out_dir) if f.startswith(name) and f.endswith(".so")]
    if not built:
        print(f"the build finished without {name}.so", file=sys.stderr)
        return 1
    with open(os.path.join(out_dir, "library"), "w", encoding="utf-8") as f:
        f.write(built[0])
    return 0
