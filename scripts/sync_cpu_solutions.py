"""Writes tasks/solutions/cpu/kernels.cpp into every CPU reference solution.

Each solution must stay a self-contained candidate file, yet compiling torch's headers for each of
25 extensions costs over an hour on a 2-core machine. Embedding one identical source (with one
identical load_inline call) lets the content-addressed extension cache build it once.

    python3 scripts/sync_cpu_solutions.py          # rewrite the solutions
    python3 scripts/sync_cpu_solutions.py --check  # exit 1 if any solution is out of date
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU = os.path.join(ROOT, "tasks", "solutions", "cpu")
SOURCE_BLOCK = re.compile(r'_CPP_SRC = r""".*?"""', re.S)
LOAD_CALL = re.compile(r"_ext = load_inline\(.*?\)\n", re.S)


def expected(text: str, kernels: str, functions: list) -> str:
    if '"""' in kernels:
        sys.exit("kernels.cpp must not contain a triple quote")
    text = SOURCE_BLOCK.sub(lambda _: f'_CPP_SRC = r"""\n{kernels}"""', text, count=1)
    call = ('_ext = load_inline(name="vinci_cpu_kernels", cpp_sources=_CPP_SRC,\n'
            f'                   functions={functions!r},\n'
            '                   extra_cflags=["-O2"], verbose=False)\n')
    return LOAD_CALL.sub(lambda _: call, text, count=1)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="only check; change nothing")
    args = p.parse_args()
    with open(os.path.join(CPU, "kernels.cpp"), encoding="utf-8") as f:
        kernels = f.read()
    functions = re.findall(r"^(?:torch::Tensor|std::vector<torch::Tensor>) (\w+)\(", kernels, re.M)
    stale = []
    for path in sorted(glob.glob(os.path.join(CPU, "level*", "*.py"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not SOURCE_BLOCK.search(text) or not LOAD_CALL.search(text):
            print(f"{path}: no _CPP_SRC block or _ext = load_inline(...) call to replace", file=sys.stderr)
            return 1
        new = expected(text, kernels, functions)
        if new == text:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not args.check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    if args.check and stale:
        print("out of date (run python3 scripts/sync_cpu_solutions.py):", *stale, sep="\n  ", file=sys.stderr)
        return 1
    if not args.check:
        print(f"{len(stale)} solutions rewritten with {len(functions)} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
