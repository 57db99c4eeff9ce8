#!/usr/bin/env python3
"""`vinci curriculum` end to end (ctest: Cli.Curriculum).

Writes a curriculum and checks every task against an independent truth: the manifest's
composition, computed again in NumPy (float64) from the manifest alone, must equal what the task
file's Model computes at a small shape, within fp32 rounding. Also: the two suites hold exactly the
manifest's files, a second run with the same seed writes the same bytes, an existing folder is
refused (exit 4) and left as it was, and bad options are refused with a message naming them.
Usage: curriculum_test.py VINCI
"""
import importlib.util
import json
import math
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, failures  # noqa: E402

VINCI = sys.argv[1]


def gelu_tanh(v):
    return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


OPS = {"relu": lambda v, c: np.maximum(v, 0), "gelu": lambda v, c: gelu_tanh(v), "sigmoid": lambda v, c: sigmoid(v),
       "tanh": lambda v, c: np.tanh(v), "silu": lambda v, c: v * sigmoid(v), "square": lambda v, c: v * v,
       "abs": lambda v, c: np.abs(v), "neg": lambda v, c: -v, "scale": lambda v, c: v * c,
       "shift": lambda v, c: v + c}


def expected(record, x, weight, bias, eps):
    v = x.astype(np.float64)
    for step in record["chain"]:
        v = OPS[step["op"]](v, step.get("constant", 0.0))
    kind = record.get("kind")
    if kind == "sum":
        v = v.sum(-1)
    elif kind == "max":
        v = v.max(-1)
    elif kind == "mean":
        v = v.mean(-1)
    elif kind in ("softmax", "log_softmax"):
        z = v - v.max(-1, keepdims=True)
        lse = np.log(np.exp(z).sum(-1, keepdims=True))
        v = np.exp(z - lse) if kind == "softmax" else z - lse
    elif kind == "rms_norm":
        v = v / np.sqrt((v * v).mean(-1, keepdims=True) + eps)
    elif kind == "layer_norm":
        mu = v.mean(-1, keepdims=True)
        v = (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + eps)
    if record.get("affine") in ("scale", "scale_bias"):
        v = v * weight
    if record.get("affine") == "scale_bias":
        v = v + bias
    return v


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args):
    return subprocess.run([VINCI, "curriculum", *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    out = pathlib.Path(tmp) / "cur"
    r = run("--out", str(out), "--seed", "5", "--elementwise", "40", "--rowwise", "40")
    check(r.returncode == 0, f"vinci curriculum exited {r.returncode}: {r.stderr}")
    records = [json.loads(line) for line in (out / "curriculum.jsonl").read_text().splitlines()]
    check(len(records) == 80, f"{len(records)} records, not 80")
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*.py"))
    named = sorted(f"{rec['split']}/{rec['id']}.py" for rec in records)
    check(files == named, f"the files are not the manifest's: {set(files) ^ set(named)}")
    check(sum(rec["split"] == "heldout" for rec in records) == 20, "not 20 held-out tasks")

    torch.manual_seed(0)
    for rec in records:
        module = load(out / rec["split"] / f"{rec['id']}.py")
        check(module.ROWS == rec["rows"] and module.COLS == rec["cols"], f"{rec['id']}: the shape is not the manifest's")
        check(module.SCALABLE == ("ROWS", "COLS"), f"{rec['id']}: SCALABLE {module.SCALABLE}")
        module.ROWS, module.COLS = 4, 64  # what --scale does, small enough for every task here
        model = module.Model(*module.get_init_inputs())
        (x,) = module.get_inputs()
        check(tuple(x.shape) == (4, 64) and x.dtype == torch.float32, f"{rec['id']}: inputs {tuple(x.shape)} {x.dtype}")
        x = x * 2  # beyond the unit normal the file draws, as the evaluator's out-of-distribution trials go
        with torch.no_grad():
            got = model(x).double().numpy()
        weight = model.weight.detach().double().numpy() if hasattr(model, "weight") else None
        bias = model.bias.detach().double().numpy() if hasattr(model, "bias") else None
        want = expected(rec, x.double().numpy(), weight, bias, getattr(model, "eps", 0.0))
        check(got.shape == want.shape, f"{rec['id']}: shape {got.shape}, the manifest's composition gives {want.shape}")
        if got.shape == want.shape:
            # the evaluator's fp32 tolerance (atol = rtol = 1e-4): the fp32 file against float64
            excess = float(np.max(np.abs(got - want) - 1e-4 * (1 + np.abs(want))))
            check(excess <= 0, f"{rec['id']} ({' '.join(rec['tokens'])}): off by {excess:.3g} beyond 1e-4")

    # vinci teach: a file per task and strategy, each a Python module with ModelNew and a Triton
    # kernel; the listing names them all. Whether they are right and fast is for a GPU
    # (benchmarks/curriculum_gpu.sh).
    sols = pathlib.Path(tmp) / "sols"
    r = subprocess.run([VINCI, "teach", "--curriculum", str(out), "--out", str(sols)], capture_output=True, text=True)
    check(r.returncode == 0, f"vinci teach exited {r.returncode}: {r.stderr}")
    listing = [json.loads(line) for line in (sols / "teacher.jsonl").read_text().splitlines()]
    check(sorted(str(p.relative_to(sols)) for p in sols.rglob("*.py")) == sorted(e["file"] for e in listing),
          "the teacher's files are not its listing's")
    check({e["id"] for e in listing} == {rec["id"] for rec in records}, "a task without solutions")
    import ast
    for e in listing:
        tree = ast.parse((sols / e["file"]).read_text())
        classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        jitted = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.decorator_list]
        check("ModelNew" in classes and jitted, f"{e['file']}: no ModelNew or no Triton kernel")
    check(sum(not e["correct"] for e in listing) == 2 * len(records), "not two wrong solutions per task")

    again = pathlib.Path(tmp) / "again"
    r = run("--out", str(again), "--seed", "5", "--elementwise", "40", "--rowwise", "40")
    same = r.returncode == 0 and all((again / f).read_bytes() == (out / f).read_bytes()
                                     for f in files + ["curriculum.jsonl"])
    check(same, "the same seed wrote other bytes")

    before = sorted(p.name for p in out.iterdir())
    r = run("--out", str(out))
    check(r.returncode == 4 and "exists" in r.stderr, f"an existing folder: exit {r.returncode}, {r.stderr!r}")
    check(sorted(p.name for p in out.iterdir()) == before, "the existing folder changed")
    r = run("--out", str(pathlib.Path(tmp) / "x"), "--heldout-share", "1.5")
    check(r.returncode != 0 and "--heldout-share" in r.stderr, f"--heldout-share 1.5: {r.stderr!r}")
    r = run("--out", str(pathlib.Path(tmp) / "y"), "--max-chain", "1", "--rowwise", "0")
    check(r.returncode == 4 and "elementwise compositions" in r.stderr, f"an impossible count: {r.returncode} {r.stderr!r}")
    check(not (pathlib.Path(tmp) / "y").exists(), "a failed run left its folder")
    r = run("--out", str(pathlib.Path(tmp) / "z"), "--elementwise", "0", "--rowwise", "0")
    check(r.returncode == 4 and "no tasks" in r.stderr, f"no tasks asked for: {r.returncode} {r.stderr!r}")
    check(not (pathlib.Path(tmp) / "z").exists(), "an empty curriculum was written")

sys.exit(1 if failures else 0)
