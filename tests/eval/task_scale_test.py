"""A task's SCALABLE sizes under --scale (python/vinci_runner/loader.py apply_scale): multiplied and
rounded, never below a listed minimum, in both directions; a name that is no integer constant is an
invalid task. The expected sizes are worked by hand.

    python3 tests/eval/task_scale_test.py REPO_ROOT
"""
import sys
import types

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")
from vinci_runner.loader import TaskError, apply_scale  # noqa: E402
from checks import check, finish  # noqa: E402


def task(**constants) -> types.ModuleType:
    module = types.ModuleType("task")
    for name, value in constants.items():
        setattr(module, name, value)
    return module


m = task(ROWS=4096, COLS=2048, SCALABLE=("ROWS", "COLS"))
check(apply_scale(m, 8.0) == {"ROWS": [4096, 32768], "COLS": [2048, 16384]} and (m.ROWS, m.COLS) == (32768, 16384),
      f"scale 8 grows both: {m.ROWS} x {m.COLS}")
m = task(ROWS=4096, COLS=2048, SCALABLE=("ROWS", "COLS"))
check(apply_scale(m, 0.05) == {"ROWS": [4096, 205], "COLS": [2048, 102]}, f"scale 0.05 rounds 204.8 and 102.4: {m.COLS}")
m = task(ROWS=4096, COLS=2048, SCALABLE={"ROWS": 300, "COLS": 1})
apply_scale(m, 0.05)
check((m.ROWS, m.COLS) == (300, 102), f"a minimum holds: {m.ROWS}")
m = task(ROWS=3, SCALABLE=("ROWS",))
check(apply_scale(m, 1.0) == {} and m.ROWS == 3, "scale 1 changes nothing")
check(apply_scale(task(ROWS=3), 8.0) == {}, "a task without SCALABLE keeps its sizes")
try:
    apply_scale(task(FLAG=True, SCALABLE=("FLAG",)), 2.0)
    check(False, "a bool named in SCALABLE was scaled")
except TaskError as e:
    check(e.reason == "bad_scalable" and "FLAG" in str(e), f"a bool named in SCALABLE: {e}")

sys.exit(finish("ok: task sizes under --scale"))
