#!/usr/bin/env python3
"""`vinci train rl` end to end on the CPU (ctest: Cli.TrainRl).

Two co-evolution steps of the tiny random Qwen2 fixture on the fixture task (tests/fixtures/agents),
with the real evaluator: every step must run selection over the seeded library and policy turns,
build the mixed batch, update, flush the library's snapshot, write its metrics line, its episodes
and a checkpoint. Random weights write no kernel, so no reward and no summary: the stages that
need a correct kernel are covered by the optimize test and the training-sample tests. A run
stopped after step 1 and resumed must write the same step 2 as the uninterrupted run, and so must
a run stopped by --deadline before its first step.
Usage: train_rl_test.py VINCI FIXTURES_DIR ROOT
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

VINCI, FIXTURES, ROOT = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checkpoint_files import checkpoint_tensors  # noqa: E402
from checks import check, finish  # noqa: E402


CONFIG = """
[run]
steps = 2
tasks_per_step = 1
checkpoint_every = 1
[agents]
schemes = 1
samples = 2
turns = 2
max_new_tokens = 32
selection_max_new_tokens = 32
[model]
training = "full"
[optimizer]
lr = 1e-3
[heldout]
tasks = "HELDOUT"
every = 2
count = 1
"""
CONFIG = CONFIG.replace("HELDOUT", str(ROOT / "tests" / "fixtures" / "agents"))
# What depends on timing, or on what the evaluation cache already held (a resumed run finds the
# whole run's results there).
TIMING = {"generate_s", "evaluate_s", "train_s", "step_s", "tokens_per_s", "mfu", "candidates_measured",
          "candidates_per_min", "heldout_fast_1"}

work = pathlib.Path(tempfile.mkdtemp(prefix="vinci-rl-"))
try:
    (work / "rl.toml").write_text(CONFIG)
    base = [VINCI, "train", "rl", "--config", work / "rl.toml", "--model", FIXTURES / "models" / "qwen2",
            "--chat-template", FIXTURES / "templates" / "qwen2_5.jinja", "--model-device", "cpu",
            "--tasks", ROOT / "tests" / "fixtures" / "agents", "--device", "cpu", "--scale", "0.05", "--no-compile-baseline"]

    def train(out, *extra):
        p = subprocess.run(base + ["--out", out, *extra], capture_output=True, text=True, timeout=900)
        check(p.returncode == 0, f"vinci train rl {' '.join(map(str, extra))} exited {p.returncode}: {p.stderr[-3000:]}")
        return p

    def metrics(out):
        return [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]

    whole = work / "whole"
    p = train(whole)
    if p.returncode == 0:
        rows = metrics(whole)
        check([r["step"] for r in rows] == [1, 2], f"one metrics line per step: {[r.get('step') for r in rows]}")
        for key in ("reward_mean_policy", "reward_std_selection", "fast_1", "pg_loss", "clip_fraction_high", "grad_norm",
                    "lr", "logprob_diff", "entropy", "mrs_rejected", "prs_rejected", "response_tokens_policy", "skills_proposed", "mfu",
                    "skills_admitted", "library_size", "tokens_per_s", "generate_s", "evaluate_s", "train_s",
                    "candidates", "candidates_measured", "candidates_per_min"):
            check(key in rows[0], f"metrics field {key}")
        check(rows[0]["library_size"] == 57, f"the seeded library is flushed as the step's snapshot: {rows[0]['library_size']}")
        check(rows[0]["samples"] == 1 + 2 * 2 * 2, f"1 selection + 2 schemes x 2 samples x 2 turns: {rows[0]['samples']}")
        check(rows[0]["untrainable_calls"] == 0, "every native call is trainable")
        check(rows[0]["candidates_measured"] <= rows[0]["candidates"] and
              (rows[0]["candidates"] == 0) == (rows[0]["candidates_per_min"] == 0),
              f"evaluation throughput: {rows[0]['candidates']} candidates, {rows[0]['candidates_measured']} measured, "
              f"{rows[0]['candidates_per_min']} per minute")
        episode = json.loads((whole / "episodes" / "step-1.jsonl").read_text().splitlines()[0])
        roles = sorted({c["role"] for c in episode["calls"]})
        check(roles == ["policy", "selection"], f"the episode's roles: {roles}")
        check(sorted(x.name for x in (whole / "checkpoints").iterdir()) == ["latest", "step-1", "step-2"],
              f"checkpoints: {sorted(x.name for x in (whole / 'checkpoints').iterdir())}")
        check(len(checkpoint_tensors(whole / "final")) > 0, "the final model")
        state = json.loads((whole / "checkpoints" / "step-2" / "trainer.json").read_text())
        check(state["step"] == 2 and state["skills_snapshot"] == 2 and state["library"].endswith("skills.db"),
              f"the checkpoint names the library snapshot it goes with: {state}")
        check((whole / "config.toml").read_text() == CONFIG, "the config is kept with the run")
        # The held-out curve: a point at step 2 only ([heldout] every = 2), one task, whose answer is
        # the one `vinci bench-model` gives greedily with step 2's model.
        check("heldout_tasks" not in rows[0] and rows[1].get("heldout_tasks") == 1 and
              0.0 <= rows[1].get("heldout_correct", -1) <= 1.0, f"a held-out point at step 2: {rows[1]}")
        point = [json.loads(l) for l in (whole / "heldout" / "step-2" / "episodes.jsonl").read_text().splitlines()] \
            if (whole / "heldout" / "step-2" / "episodes.jsonl").exists() else []
        check(len(point) == 1, f"the point's episode: {len(point)}")
        if point:
            bench = work / "bench-step-2"
            p = subprocess.run([VINCI, "bench-model", "--model", whole / "checkpoints" / "step-2" / "model",
                                "--chat-template", FIXTURES / "templates" / "qwen2_5.jinja", "--model-device", "cpu",
                                "--tasks", ROOT / "tests" / "fixtures" / "agents", "--filter", point[0]["task"],
                                "--temperature", "0", "--max-new-tokens", "32", "--device", "cpu", "--scale", "0.05",
                                "--no-compile-baseline", "--out", bench], capture_output=True, text=True, timeout=600)
            check(p.returncode == 0, f"bench-model of step 2's model: {p.stderr[-1500:]}")
            answers = lambda episode: [c["response_text"] for c in episode["calls"] if c["role"] == "policy"]  # noqa: E731
            benched = [json.loads(l) for l in (bench / "episodes.jsonl").read_text().splitlines()] \
                if (bench / "episodes.jsonl").exists() else []
            check(len(benched) == 1 and answers(benched[0]) == answers(point[0]),
                  "the held-out point's answer is bench-model's, greedy, with step 2's model")
        p = subprocess.run(base + ["--out", whole], capture_output=True, text=True, timeout=600)
        check(p.returncode == 1 and "--resume" in p.stderr, "a used --out is refused without --resume")

    stopped = work / "stopped"
    train(stopped, "--steps", "1")
    train(stopped, "--resume")
    if (stopped / "metrics.jsonl").exists() and (whole / "metrics.jsonl").exists():
        a, b = metrics(whole), metrics(stopped)
        strip = lambda r: {k: v for k, v in r.items() if k not in TIMING}
        check(len(a) == len(b) and all(strip(x) == strip(y) for x, y in zip(a, b)),
              f"a resumed run writes the uninterrupted run's steps:\n{a}\n{b}")

    # A job's time limit: --deadline stops the run before a step starts (here before the first),
    # saves final/ and exits 3; --resume then writes the uninterrupted run's steps.
    late = work / "late"
    p = subprocess.run(base + ["--out", late, "--deadline", "0.001"], capture_output=True, text=True, timeout=600)
    check(p.returncode == 3 and "stopped by --deadline after step 0 of 2" in p.stdout,
          f"--deadline: exit {p.returncode}: {p.stdout[-300:]} {p.stderr[-600:]}")
    check((late / "final").is_dir() and not (late / "metrics.jsonl").read_text(), "final/ and no step")
    train(late, "--resume")
    if (late / "metrics.jsonl").exists() and (whole / "metrics.jsonl").exists():
        strip = lambda r: {k: v for k, v in r.items() if k not in TIMING}
        check([strip(r) for r in metrics(late)] == [strip(r) for r in metrics(whole)],
              "a run stopped by its deadline and resumed writes the uninterrupted run's steps")

    # a config with a typo is refused before anything runs, naming the file, line and key
    (work / "bad.toml").write_text("[run]\nsteps = 2\n\n[agents]\nturn = 3\n")
    p = subprocess.run([*base[:3], "--config", work / "bad.toml", *base[5:], "--out", work / "bad"], capture_output=True,
                       text=True, timeout=600)
    check(p.returncode == 1 and "bad.toml:5: agents.turn is not a setting" in p.stderr, f"typo refused: {p.stderr[-400:]!r}")
finally:
    shutil.rmtree(work, ignore_errors=True)

sys.exit(finish("vinci train rl: every check passed"))
