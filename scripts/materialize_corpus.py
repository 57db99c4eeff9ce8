#!/usr/bin/env python3
"""Writes a corpus of candidate templates out as candidate files, so that shared sources live once
in the repository and the extension cache still builds them once (every file gets them verbatim).

    materialize_corpus.py SRC DST [--suite TASKS]

Each SRC/candidates/*.py.in becomes DST/candidates/<name>.py: a line `# vinci-include: FILE` is
replaced by SRC/FILE's text, in which a line `@OTHER@` is replaced by SRC/OTHER's text. DST/tasks is
the suite the candidates name: links to every task of TASKS (the main suite) and of SRC/tasks, the
corpus's own (numbered from 101, apart from the main suite's). DST is emptied first.
"""
import os
import re
import shutil
import sys

INCLUDE = re.compile(r"^# vinci-include: (\S+)\s*$")
EMBED = re.compile(r"^@(\S+)@\s*$")


def read(src: str, name: str) -> str:
    path = os.path.join(src, name)
    if os.path.dirname(os.path.normpath(name)) or not os.path.isfile(path):
        raise SystemExit(f"{path}: not a file of {src} (includes name files beside the candidates' folder)")
    with open(path, encoding="utf-8") as f:
        return f.read()


def expand(src: str, text: str, template: str) -> str:
    out = []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        m = INCLUDE.match(line)
        if not m:
            out.append(line)
            continue
        for inner in read(src, m.group(1)).splitlines(keepends=True):
            e = EMBED.match(inner)
            embedded = read(src, e.group(1)) if e else inner
            if e and '"""' in embedded:
                raise SystemExit(f"{template}:{number}: {e.group(1)} holds a triple quote and cannot be embedded")
            out.append(embedded if embedded.endswith("\n") else embedded + "\n")
    return "".join(out)


def link_suite(suites: list[str], dst: str) -> int:
    """Links every levelN/*.py task of each suite under dst; returns how many."""
    count = 0
    for suite in suites:
        for level in sorted(os.listdir(suite)) if os.path.isdir(suite) else []:
            if not re.fullmatch(r"level\d+", level):
                continue
            os.makedirs(os.path.join(dst, level), exist_ok=True)
            for name in sorted(os.listdir(os.path.join(suite, level))):
                if name.endswith(".py"):
                    target = os.path.join(dst, level, name)
                    if os.path.lexists(target):
                        raise SystemExit(f"{suite}/{level}/{name}: a task of that name is already in the suite")
                    os.symlink(os.path.abspath(os.path.join(suite, level, name)), target)
                    count += 1
    return count


def main() -> int:
    args = sys.argv[1:]
    suites = []
    if "--suite" in args:
        i = args.index("--suite")
        suites = args[i + 1:i + 2]
        del args[i:i + 2]
    if len(args) != 2 or "--suite" in sys.argv and not suites:
        print(__doc__, file=sys.stderr)
        return 64
    src, dst = args
    templates = sorted(f for f in os.listdir(os.path.join(src, "candidates")) if f.endswith(".py.in"))
    if not templates:
        raise SystemExit(f"{src}/candidates holds no *.py.in templates")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "candidates"))
    for name in templates:
        path = os.path.join(src, "candidates", name)
        with open(path, encoding="utf-8") as f:
            text = expand(src, f.read(), path)
        with open(os.path.join(dst, "candidates", name[:-3]), "w", encoding="utf-8") as f:
            f.write(text)
    tasks = link_suite(suites + [os.path.join(src, "tasks")], os.path.join(dst, "tasks"))
    print(f"{len(templates)} candidates and {tasks} tasks written to {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
