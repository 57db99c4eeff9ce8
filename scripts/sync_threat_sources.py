#!/usr/bin/env python3
"""Writes the shared native sources of tests/threats into every file of it.

Every CPU threat file embeds threat_kernels.cpp verbatim, and every CUDA threat file that needs
CUDA C++ embeds threat_kernels.cu, each with the same load_inline call, so that the extension
cache (keyed by the content of the load_inline arguments) builds each source once for the whole
corpus. Edit the .cpp/.cu, then run this script; `--check` only reports files that are out of date.

A file opts in by holding the marker pair of a block:
    # --- shared native source: ... ---      ...      # --- end of shared native source ---
    # --- shared CUDA source: ... ---        ...      # --- end of shared CUDA source ---
Everything between the markers is rewritten.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "tests" / "threats"
SIGNATURE = re.compile(r"^(?!static\b)([A-Za-z_][\w:<>, ]*?[\w>])\s+(\w+)\(([^)]*)\)\s*\{", re.M)


def exported(source: str) -> list[tuple[str, str, str]]:
    """(return type, name, parameters) of every non-static function defined at column 0."""
    out = []
    for m in SIGNATURE.finditer(source):
        ret, name, params = m.group(1).strip(), m.group(2), " ".join(m.group(3).split())
        if ret in ("struct", "namespace", "typedef") or ret.startswith(("[[", "}")) or name == "main":
            continue
        out.append((ret, name, params))
    return out


def cpp_block() -> str:
    source = (HERE / "threat_kernels.cpp").read_text()
    assert '"""' not in source
    names = [name for _, name, _ in exported(source)]
    return ("# --- shared native source: tests/threats/threat_kernels.cpp, written in by scripts/sync_threat_sources.py ---\n"
            f'_THREAT_CPP = r"""\n{source}"""\n'
            '_ext = load_inline(name="vinci_threat_kernels", cpp_sources=_THREAT_CPP,\n'
            f"                   functions={names!r},\n"
            '                   extra_cflags=["-O2"], verbose=False)\n'
            "# --- end of shared native source ---")


def cuda_block() -> str:
    source = (HERE / "threat_kernels.cu").read_text()
    assert '"""' not in source
    # Host entry points: the functions returning a tensor or a number, defined at column 0.
    funcs = [(r, n, p) for r, n, p in exported(source) if "__global__" not in r and r != "__device__"]
    decls = "#include <torch/extension.h>\n" + "".join(f"{r} {n}({p});\n" for r, n, p in funcs)
    names = [n for _, n, _ in funcs]
    return ("# --- shared CUDA source: tests/threats/threat_kernels.cu, written in by scripts/sync_threat_sources.py ---\n"
            f'_THREAT_CU_DECL = r"""\n{decls}"""\n'
            f'_THREAT_CU = r"""\n{source}"""\n'
            '_cuda = load_inline(name="vinci_threat_cuda_kernels", cpp_sources=_THREAT_CU_DECL, cuda_sources=_THREAT_CU,\n'
            f"                    functions={names!r},\n"
            '                    extra_cflags=["-O2"], extra_cuda_cflags=["-O2"], verbose=False)\n'
            "# --- end of shared CUDA source ---")


BLOCKS = {
    "native": (re.compile(r"# --- shared native source:.*?# --- end of shared native source ---", re.S), cpp_block),
    "CUDA": (re.compile(r"# --- shared CUDA source:.*?# --- end of shared CUDA source ---", re.S), cuda_block),
}


def main() -> int:
    check = "--check" in sys.argv[1:]
    built = {}
    stale = []
    for path in sorted(HERE.glob("*.py")):
        text = path.read_text()
        new = text
        for kind, (rx, make) in BLOCKS.items():
            if rx.search(new):
                if kind not in built:
                    built[kind] = make()
                block = built[kind]
                new = rx.sub(lambda _m: block, new)
        if new != text:
            stale.append(path.name)
            if not check:
                path.write_text(new)
    verb = "out of date" if check else "rewritten"
    print(f"{len(stale)} file(s) {verb}" + (": " + ", ".join(stale) if stale else ""))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
