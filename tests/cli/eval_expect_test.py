#!/usr/bin/env python3
"""`vinci eval --expect` as a corpus check (ctest: Cli.EvalExpect): every label met gives exit 0, a
label not met exit 1 naming the file, and a file that would go unchecked (no task, no label) exit 4
before anything runs. The candidates are ones that need no compile, so the test stays quick.
Usage: eval_expect_test.py VINCI SOURCE_ROOT
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

VINCI, ROOT = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(ROOT / "tests" / "support"))
from checks import check, failures  # noqa: E402

ADVERSARIAL = ROOT / "tests" / "adversarial"
# Each ends before any C++ is built: a syntax error, no ModelNew, a plain-PyTorch forward, a
# source rule; and a CUDA-only file, which --expect skips on the CPU.
QUICK = ["syntax_error.py", "no_model_new.py", "plain_pytorch_add.py", "exit_zero_python.py", "cuda_ok_add.py"]
work = pathlib.Path(tempfile.mkdtemp(prefix="vinci-eval-expect-"))
env = {**os.environ, "HOME": str(work), "VINCI_CACHE": str(work / "cache")}


def corpus(name, extra=None):
    """A candidate folder: the quick files, plus extra {file name: text}."""
    d = work / name
    d.mkdir()
    for f in QUICK:
        shutil.copy(ADVERSARIAL / "candidates" / f, d / f)
    for f, text in (extra or {}).items():
        (d / f).write_text(text)
    return d


def expect_run(candidates, out):
    p = subprocess.run([VINCI, "eval", "--tasks", ADVERSARIAL / "tasks", "--candidates", candidates, "--device", "cpu",
                        "--scale", "0.05", "--no-compile-baseline", "--expect", "-q", "--out", out],
                       capture_output=True, text=True, timeout=900, env=env)
    return p.returncode, p.stdout, p.stderr


plain = (ADVERSARIAL / "candidates" / "plain_pytorch_add.py").read_text()
assert "# vinci-expect: rejected/no_custom_kernel" in plain

rc, out, err = expect_run(corpus("labelled"), work / "labelled.jsonl")
check(rc == 0 and "expectations: 4 passed, 0 failed" in out, f"every label met: {rc} {out[-300:]!r} {err[-500:]!r}")
lines = (work / "labelled.jsonl").read_text().splitlines() if (work / "labelled.jsonl").exists() else []
check(len(lines) == 4, f"four results written (the CUDA file skipped): {len(lines)}")
check(re.search(r"^4 results \(\d+ from cache\) in \d+ s \([\d.]+ a minute\)", out, re.M),
      f"the summary says how long the run took and its throughput: {out[-300:]!r}")

wrong = plain.replace("# vinci-expect: rejected/no_custom_kernel", "# vinci-expect: correct/")
rc, out, err = expect_run(corpus("mislabelled", {"claims_correct.py": wrong}), work / "mislabelled.jsonl")
check(rc == 1 and "expectations: 4 passed, 1 failed" in out and
      re.search(r"UNEXPECTED \S*claims_correct\.py: expected correct/, got rejected/no_custom_kernel", err),
      f"a label not met: {rc} {out[-300:]!r} {err[-500:]!r}")

for name, text, why in [
        ("unlabelled.py", re.sub(r"# vinci-expect: .*\n", "", plain), "no '# vinci-expect: class/reason' header"),
        ("no_task.py", plain.replace("# vinci-task: level1/1_Add", "# vinci-task: level1/999_Missing"), "no_task.py")]:
    d = corpus(name.removesuffix(".py"), {name: text})
    result = work / f"{name}.jsonl"
    rc, out, err = expect_run(d, result)
    lines = [l for l in err.strip().splitlines() if l]
    check(rc == 4 and len(lines) == 1 and name in err and why in err and "--expect" in err,
          f"{name} refused in one line, exit 4: {rc} {err!r}")
    check(not result.exists(), f"{name}: nothing written before the refusal")

shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
