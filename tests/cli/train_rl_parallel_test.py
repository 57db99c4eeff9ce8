#!/usr/bin/env python3
"""`vinci train rl` data parallel on the CPU (ctest: Cli.TrainRlDataParallel).

Two co-evolution steps of two tasks each, once in one process and once under torchrun with two
ranks (c10d over Gloo). The ranks deal the step's tasks out and exchange the episodes, so the
two-rank run must write what the one-process run writes: the same episodes, the same metrics up
to the order floating-point sums are taken in, and (nearly) the same trained weights. Rank 0
alone writes: one metrics line per step, one episodes file, the checkpoints and the library.
The fixture's random weights write no kernel, so every reward and advantage would be 0 and the
update with them. The test first teaches the fixture (tests/support/taught_fixture.py), by `vinci
train sft` on its own policy prompts, to answer with one of two torch-only ModelNew files, one right
(relu) and one wrong (sigmoid), about equally often: rewards then differ within a group, and the
update is not zero.
Speed and coverage weigh nothing in the reward, identical answers in a run are measured once, and
the second run reads the first's results from the evaluation cache, so both runs see the same
rewards and the same feedback (which quotes timings) however loaded the machine is.
Usage: train_rl_parallel_test.py VINCI FIXTURES_DIR ROOT
"""
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

VINCI, FIXTURES, ROOT = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checkpoint_files import checkpoint_tensors  # noqa: E402
from checks import check, finish  # noqa: E402
from taught_fixture import REWARD_BY_CORRECTNESS, teach  # noqa: E402


CONFIG = """
[run]
steps = 2
tasks_per_step = 2
checkpoint_every = 1
[agents]
schemes = 1
samples = 2
turns = 2
max_new_tokens = 64
selection_max_new_tokens = 32
[model]
training = "full"
[optimizer]
lr = 1e-3
""" + REWARD_BY_CORRECTNESS
# The two answers the fixture is taught, in equal number: the reward of a correct one is
# correct_weight (0.5), of a wrong one 0.
ANSWER = """```python
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.{op}(x)
```"""
# Timing differs between runs, and the rank count is what differs on purpose; how many candidates
# the evaluator measured rather than found in its cache depends on the order the ranks ran in.
UNCOMPARED = {"generate_s", "evaluate_s", "train_s", "step_s", "tokens_per_s", "mfu", "ranks", "candidates_measured",
              "candidates_per_min"}


SFT_EPOCHS = int(os.environ.get("VINCI_TEST_SFT_EPOCHS", "30"))

work = pathlib.Path(tempfile.mkdtemp(prefix="vinci-rl-dp-"))
try:
    (work / "rl.toml").write_text(CONFIG)
    tasks = work / "tasks" / "level1"
    tasks.mkdir(parents=True)
    source = ROOT / "tests" / "fixtures" / "agents" / "level1" / "1_RowwiseRelu.py"
    shutil.copy(source, tasks / "1_RowwiseRelu.py")
    shutil.copy(source, tasks / "2_RowwiseReluAgain.py")
    args = ["train", "rl", "--config", work / "rl.toml",
            "--chat-template", FIXTURES / "templates" / "qwen2_5.jinja", "--model-device", "cpu",
            "--tasks", work / "tasks", "--device", "cpu", "--scale", "0.05", "--no-compile-baseline",
            "--torch-ops", "allow"]
    # One thread in both runs, so both do their arithmetic alike (torchrun's default per rank).
    env = dict(os.environ, OMP_NUM_THREADS="1")
    model, _ = teach(VINCI, args, FIXTURES / "models" / "qwen2", work,
                     lambda task: [ANSWER.format(op=op) for op in ("relu", "sigmoid")], env, SFT_EPOCHS,
                     chat_template=FIXTURES / "templates" / "qwen2_5.jinja")
    args += ["--model", model]

    one, two = work / "one", work / "two"
    p1 = subprocess.run([VINCI, *args, "--out", one], capture_output=True, text=True, timeout=900, env=env)
    check(p1.returncode == 0, f"one process exited {p1.returncode}: {p1.stderr[-3000:]}")
    p2 = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                         "--no-python", VINCI, *args, "--out", two], capture_output=True, text=True, timeout=900, env=env)
    check(p2.returncode == 0, f"two ranks exited {p2.returncode}: {p2.stderr[-3000:]}")

    if p1.returncode == 0 and p2.returncode == 0:
        log = p2.stdout + p2.stderr
        for rank, task in ((0, "1/2"), (1, "2/2")):
            check(f"rank {rank}: step 1: task {task}" in log, f"rank {rank} ran task {task}:\n{log[-2000:]}")
        check("rank 1 of 2 (local rank 1) joined" in log, "the ranks report joining")

        a = [json.loads(l) for l in (one / "metrics.jsonl").read_text().splitlines()]
        b = [json.loads(l) for l in (two / "metrics.jsonl").read_text().splitlines()]
        check([r["step"] for r in b] == [1, 2], f"rank 0 alone writes metrics, one line per step: {[r['step'] for r in b]}")
        check(all(r["ranks"] == 2 for r in b) and all(r["ranks"] == 1 for r in a), "metrics name the rank count")
        for x, y in zip(a, b):
            for key in sorted(set(x) - UNCOMPARED):
                u, v = x[key], y.get(key)
                same = math.isclose(u, v, rel_tol=1e-4, abs_tol=1e-6) if isinstance(u, float) else u == v
                check(same, f"step {x['step']}: {key} is {u} in one process, {v} with two ranks")
        check(a[0]["tasks"] == 2 and a[0]["samples"] >= 2 * (1 + 2 * 2 * 2), f"two tasks' calls per step: {a[0]}")
        check(a[0]["reward_std_policy"] > 0, f"the taught fixture's answers differ in reward: {a[0]}")
        # A step whose every (task, turn) group agrees has no advantage; the first never does here.
        check(a[0]["grad_norm"] > 0, f"the first step's update is not zero: {[r['grad_norm'] for r in a]}")

        for step in (1, 2):
            e1 = [json.loads(l) for l in (one / "episodes" / f"step-{step}.jsonl").read_text().splitlines()]
            e2 = [json.loads(l) for l in (two / "episodes" / f"step-{step}.jsonl").read_text().splitlines()]
            check([e["task"] for e in e1] == [e["task"] for e in e2] and len(e2) == 2,
                  f"step {step}: the episodes' tasks, in batch order: {[e['task'] for e in e1]} / {[e['task'] for e in e2]}")
            ids = lambda es: [[c["response_ids"] for c in e["calls"]] for e in es]
            check(ids(e1) == ids(e2), f"step {step}: the two-rank rollouts are the one-process rollouts, token for token")
        check(not list((two / "episodes").glob("*rank*")), "no per-rank episode files")
        check(sorted(x.name for x in (two / "checkpoints").iterdir()) == ["latest", "step-1", "step-2"],
              f"checkpoints: {sorted(x.name for x in (two / 'checkpoints').iterdir())}")

        w1, w2 = checkpoint_tensors(one / "final"), checkpoint_tensors(two / "final")
        check(sorted(w1) == sorted(w2), "the same tensors are saved")
        worst = max(float(np.max(np.abs(w1[k].astype(np.float64) - w2[k].astype(np.float64)))) for k in w1)
        check(worst < 1e-5, f"the trained weights agree: max |difference| {worst:.3g}")
        print(f"max weight difference, 2 ranks vs 1 process: {worst:.3g}")
        w0 = checkpoint_tensors(model)
        moved = max(float(np.max(np.abs(w1[k].astype(np.float64) - w0[k].astype(np.float64)))) for k in w1)
        check(moved > 1e-4, f"training moved the weights: max |change| {moved:.3g}")
        print(f"max weight change over 2 steps: {moved:.3g}; policy reward std per step: "
              f"{[round(r['reward_std_policy'], 3) for r in a]}; grad norms {[r['grad_norm'] for r in a]}")
finally:
    if not os.environ.get("VINCI_KEEP_TEST_DIR"):
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept {work}")

sys.exit(finish("vinci train rl with 2 ranks: every check passed"))
