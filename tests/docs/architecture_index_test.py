#!/usr/bin/env python3
"""ARCHITECTURE.md's index against the tree: every unit has its line, every line a unit, no line over
120 characters, and each line's text the first sentence of its unit's first comment.

The rule is scripts/architecture_index.py's; this test names each unit that breaks it and prints the
diff that `scripts/architecture_index.py --write` would apply. Usage: architecture_index_test.py ROOT
"""
import difflib
import importlib.util
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
spec = importlib.util.spec_from_file_location("architecture_index", ROOT / "scripts/architecture_index.py")
index = importlib.util.module_from_spec(spec)
spec.loader.exec_module(index)

failures = []


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


def lines_by_unit(lines: list[str]) -> dict[str, str]:
    """"src/eval/pool.h" -> its line, read from an index's headings and lines."""
    found, folder = {}, None
    for line in lines:
        heading = re.match(r"### `([^`]+)/`", line)
        if heading:
            folder = heading.group(1)
            continue
        unit = re.match(r"- `([^`]+)` — ", line)
        if unit:
            found[f"{folder}/{unit.group(1)}"] = line
        elif line.strip():
            failures.append(f"ARCHITECTURE.md's index: a line that is neither a heading nor a unit's: {line!r}")
    return found


# The rule on hand-made files: the first paragraph's first sentence, its lines joined.
with tempfile.TemporaryDirectory() as scratch:
    header = Path(scratch) / "a.h"
    header.write_text("// One unit: its first\n// sentence. The rest.\n//\n// Another paragraph.\n#pragma once\n")
    check(index.cpp_first_comment(header) == "One unit: its first sentence",
          f"rule: two-line first sentence read as {index.cpp_first_comment(header)!r}")
    header.write_text("// vinci-x: no full stop at all\n//\n// Then more. Text.\n")
    check(index.cpp_first_comment(header) == "vinci-x: no full stop at all",
          f"rule: a paragraph without a full stop read as {index.cpp_first_comment(header)!r}")
    header.write_text("#pragma once\n// Too late to be the first comment.\n")
    check(index.cpp_first_comment(header) is None, "rule: a comment after code counted as the first comment")
    module = Path(scratch) / "m.py"
    module.write_text('"""A module (file.py) does this. More.\n\nDetails."""\nimport os\n')
    check(index.python_first_comment(module) == "A module (file.py) does this",
          f"rule: a docstring's first sentence read as {index.python_first_comment(module)!r}")

# The tree.
units = index.units()
check(len(units) > 100, f"only {len(units)} units found under {ROOT}: is ROOT the repository?")
for problem in index.problems(units):
    failures.append(problem)

document = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
current = index.document_index(document)
if current is None:
    failures.append(f"ARCHITECTURE.md has no index markers ({index.BEGIN!r} ... {index.END!r})")
else:
    written = lines_by_unit(current)
    generated = {unit.path: unit.line for unit in units if unit.text is not None}
    for path in sorted(generated.keys() - written.keys()):
        failures.append(f"{path}: a unit with no line in ARCHITECTURE.md")
    for path in sorted(written.keys() - {unit.path for unit in units}):
        failures.append(f"{path}: ARCHITECTURE.md has a line for it, but it is no unit of the tree")
    for path, line in sorted(written.items()):
        check(len(line) <= index.MAX_LINE, f"{path}: its line is {len(line)} characters, over {index.MAX_LINE}")
        if path in generated and generated[path] != line:
            failures.append(f"{path}: stale line\n    ARCHITECTURE.md: {line}\n    its header:      {generated[path]}")
    expected = index.generate(units)
    if index.strip_blank_edges(current) != expected:
        failures.append("ARCHITECTURE.md's index differs from the generated one:\n" + "".join(
            difflib.unified_diff([l + "\n" for l in index.strip_blank_edges(current)], [l + "\n" for l in expected],
                                 "ARCHITECTURE.md", "scripts/architecture_index.py")))

# The floors the opening states are the ones scripts/check_floors.sh enforces.
floors_line = re.search(r"^#   (core -> .*)$", (ROOT / "scripts/check_floors.sh").read_text(), re.MULTILINE)
check(floors_line is not None, "scripts/check_floors.sh no longer states the floors in a '#   core -> ...' line")
if floors_line:
    stated = floors_line.group(1).replace("->", "→")
    check(f"`{stated}`" in document, f"ARCHITECTURE.md does not state the floors as check_floors.sh does: `{stated}`")

if failures:
    print("\n".join(failures))
    print(f"\n{len(failures)} failure(s); run scripts/architecture_index.py --write after mending the headers")
    sys.exit(1)
print(f"ARCHITECTURE.md's index: {len(units)} units, each line as its header says")
