#!/usr/bin/env python3
"""`vinci train sft` end to end on the CPU (ctest: Cli.TrainSft).

Six conversations for the tiny random Qwen2 fixture, one of them a near duplicate of another and
one of them answered with a tool call; the diversity filter must drop the duplicate and say so,
training must lower the loss, and the trained checkpoint, loaded by `vinci generate` like any other,
must answer each trained conversation's prompt greedily with the answer it was trained on. A run
stopped by --max-steps, or killed with SIGKILL at whatever moment, and resumed must reproduce the
uninterrupted run's losses bit for bit and end with byte-identical weights. `vinci plot` must draw
the loss curve of metrics.jsonl with its values. Under torchrun, 2 ranks must train what one process
trains.
Usage: train_sft_test.py VINCI FIXTURES_DIR   (FIXTURES_DIR: tests/fixtures/llm)
"""
import json
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

VINCI, FIXTURES = sys.argv[1], pathlib.Path(sys.argv[2])
QWEN2, TEMPLATE = FIXTURES / "models" / "qwen2", FIXTURES / "templates" / "qwen2_5.jinja"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checkpoint_files import checkpoint_bytes, checkpoint_tensors  # noqa: E402
from checks import check, finish  # noqa: E402


def conversation(task, role, user, answer, skills=(), tool_calls=None):
    assistant = {"role": "assistant", "content": answer}
    if tool_calls:
        assistant["tool_calls"] = tool_calls
    return {"messages": [{"role": "user", "content": user}, assistant],
            "meta": {"task": task, "level": 1, "role": role, "skills": list(skills)}}


data = [
    conversation("level1/1_A", "selection", "pick skills for softmax", "warp reduce", ["warp_reduce"]),
    conversation("level1/2_B", "selection", "pick skills for matmul", "shared tiles", ["tiling"]),
    conversation("level1/2_B", "selection", "pick skills for matmul again", "shared tiles", ["tiling"]),  # duplicate
    conversation("level1/3_C", "summary", "distill the relu rollout", "vectorize loads"),
    conversation("level1/4_D", "summary", "distill the gelu rollout", "fuse the chain"),
    conversation("level1/5_E", "selection", "pick skills for layernorm", "",
                 tool_calls=[{"type": "function", "function": {"name": "select_skills", "arguments": "{\"think\": \"x\"}"}}]),
]
work = pathlib.Path(tempfile.mkdtemp(prefix="vinci-sft-"))
try:
    (work / "data.jsonl").write_text("".join(json.dumps(c) + "\n" for c in data))
    out = work / "run"
    p = subprocess.run([VINCI, "train", "sft", "--data", work / "data.jsonl", "--model", QWEN2, "--chat-template", TEMPLATE,
                        "--device", "cpu", "--out", out, "--lora-rank", "0", "--epochs", "40", "--lr", "1e-2",
                        "--batch-tokens", "100000"], capture_output=True, text=True, timeout=900)
    check(p.returncode == 0, f"vinci train sft exited {p.returncode}: {p.stderr[-3000:]}")
    if p.returncode == 0:
        removed = [json.loads(l) for l in (out / "filter_report.jsonl").read_text().splitlines()]
        check([(r["line"], r["rule"]) for r in removed] == [(3, "near_duplicate")],
              f"the duplicate on line 3 is removed and reported: {removed}")
        check("repeats line 2" in removed[0]["detail"] if removed else False, "the report names the line it repeats")
        steps = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]
        check(len(steps) == 40, f"one step per epoch (one batch holds everything): {len(steps)} steps")
        check(steps[-1]["loss"] < 0.2 * steps[0]["loss"], f"loss {steps[0]['loss']:.3f} -> {steps[-1]['loss']:.3f}")
        check(all(k in steps[0] for k in ("epoch", "step", "loss", "lr", "grad_norm", "tokens", "tokens_per_s")),
              f"metrics fields: {sorted(steps[0])}")
        # vinci plot draws these very values
        g = subprocess.run([VINCI, "plot", out / "metrics.jsonl", "--out", work / "curves.svg"], capture_output=True,
                           text=True, timeout=120)
        check(g.returncode == 0, f"vinci plot exited {g.returncode}: {g.stderr}")
        if g.returncode == 0:
            svg = (work / "curves.svg").read_text()
            m = re.search(r'data-key="loss" data-points="([^"]*)"', svg)
            plotted = [tuple(map(float, p.split(","))) for p in m.group(1).split()] if m else []
            check(len(plotted) == len(steps) and all(abs(x - s["step"]) < 1e-9 and abs(y - s["loss"]) <= 1e-5 * abs(s["loss"])
                                                     for (x, y), s in zip(plotted, steps)), "the plotted loss curve")
        for c in data[:2] + data[3:5]:
            (work / "m.json").write_text(json.dumps(c["messages"][:1]))
            g = subprocess.run([VINCI, "generate", "--model", out / "final", "--chat-template", TEMPLATE, "--device", "cpu",
                                "--messages", work / "m.json", "--greedy", "--max-new-tokens", "12", "--json"],
                               capture_output=True, text=True, timeout=600)
            check(g.returncode == 0, f"generate on the trained model exited {g.returncode}: {g.stderr[-2000:]}")
            if g.returncode == 0:
                got = json.loads(g.stdout)
                answer = c["messages"][1]["content"]
                check(got["text"] == answer and got["finish_reason"] == "stop",
                      f"trained answer to {c['messages'][0]['content']!r}: got {got['text']!r} ({got['finish_reason']}), "
                      f"want {answer!r}")
    # resume: stopped by --max-steps, or killed at whatever moment, a resumed run reproduces the
    # uninterrupted run's losses bit for bit and ends with the same weights
    few = data[:2] + data[3:5]
    (work / "few.jsonl").write_text("".join(json.dumps(c) + "\n" for c in few))
    base = [VINCI, "train", "sft", "--data", work / "few.jsonl", "--model", QWEN2, "--chat-template", TEMPLATE,
            "--device", "cpu", "--lora-rank", "0", "--epochs", "4", "--lr", "1e-2", "--batch-tokens", "40",
            "--checkpoint-every", "3"]

    def losses(run):
        return [json.loads(l)["loss"] for l in (run / "metrics.jsonl").read_text().splitlines()]

    def train(run, *extra):
        return subprocess.run(base + ["--out", run, *extra], capture_output=True, text=True, timeout=600)

    whole = work / "whole"
    check(train(whole).returncode == 0, "the uninterrupted run")
    want = losses(whole)
    check(len(want) >= 8, f"enough steps to interrupt: {len(want)}")
    stopped = work / "stopped"
    p = train(stopped, "--max-steps", "4")
    check(p.returncode == 0 and "--resume" in p.stdout and not (stopped / "final").exists(), f"--max-steps 4: {p.stdout}")
    p = train(stopped)
    check(p.returncode == 1 and "--resume" in p.stderr, "a used --out is refused without --resume")
    check(train(stopped, "--resume").returncode == 0, "resumed after --max-steps")
    check(losses(stopped) == want, f"resumed losses {losses(stopped)} != uninterrupted {want}")
    killed = work / "killed"
    proc = subprocess.Popen(base + ["--out", killed], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while proc.poll() is None and time.time() < deadline:
        metrics = killed / "metrics.jsonl"
        if metrics.exists() and len(metrics.read_text().splitlines()) >= 5:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    check(train(killed, "--resume").returncode == 0, "resumed after SIGKILL")
    check(losses(killed) == want, f"losses after a kill and --resume {losses(killed)} != uninterrupted {want}")
    for run in (stopped, killed):
        check(checkpoint_bytes(run / "final") == checkpoint_bytes(whole / "final"),
              f"{run.name}: the final weights equal the uninterrupted run's")

    # data parallel: 2 ranks under torchrun (Gloo) train what one process trains, each on its share
    # of every batch; rank 0 alone writes
    dp = base[:base.index("--epochs")] + ["--epochs", "3", "--lr", "1e-2", "--batch-tokens", "1000"]
    env = dict(os.environ, OMP_NUM_THREADS="1")  # both runs do their arithmetic alike
    one = subprocess.run(dp + ["--out", work / "dp1"], capture_output=True, text=True, timeout=600, env=env)
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                          "--no-python", *dp, "--out", work / "dp2"], capture_output=True, text=True, timeout=600, env=env)
    check(one.returncode == 0 and two.returncode == 0, f"data parallel runs exited {one.returncode}, {two.returncode}: "
                                                        f"{two.stderr[-2000:]}")
    if one.returncode == 0 and two.returncode == 0:
        check("rank 1 of 2 (local rank 1) joined" in two.stderr, "both ranks joined")
        a, b = losses(work / "dp1"), losses(work / "dp2")
        check(len(a) == 3 and len(b) == 3 and all(math.isclose(x, y, rel_tol=1e-5) for x, y in zip(a, b)),
              f"2 ranks' losses {b} are one process's {a}")
        # The update (trained minus initial weights) of 2 ranks against one process's, as
        # ||difference|| / ||update||: Adam's steps of about lr x sign(g) let rounding flip the
        # smallest gradients' elements, so a per-element bound would measure those alone.
        start = checkpoint_tensors(QWEN2)
        w1, w2 = checkpoint_tensors(work / "dp1" / "final"), checkpoint_tensors(work / "dp2" / "final")
        d1 = np.concatenate([(w1[k].astype(np.float64) - start[k]).ravel() for k in sorted(w1)])
        d2 = np.concatenate([(w2[k].astype(np.float64) - start[k]).ravel() for k in sorted(w1)])
        error = float(np.linalg.norm(d2 - d1) / np.linalg.norm(d1))
        check(error < 1e-3, f"2 ranks' update is one process's: relative difference {error:.3g}")
        print(f"data parallel SFT, 2 ranks vs 1 process: losses {b} vs {a}; update relative difference {error:.3g}")

    # a bad line stops everything before training, naming the file, line and field
    (work / "bad.jsonl").write_text(json.dumps(data[0]) + "\n" + json.dumps({"messages": data[1]["messages"]}) + "\n")
    p = subprocess.run([VINCI, "train", "sft", "--data", work / "bad.jsonl", "--model", QWEN2, "--chat-template", TEMPLATE,
                        "--device", "cpu", "--out", work / "bad"], capture_output=True, text=True, timeout=600)
    check(p.returncode == 1 and "bad.jsonl:2: meta:" in p.stderr, f"bad line refused with its place: {p.stderr[-500:]!r}")
    check(not (work / "bad" / "final").exists(), "nothing trained on a bad file")
finally:
    shutil.rmtree(work, ignore_errors=True)

sys.exit(finish("vinci train sft: every check passed"))
