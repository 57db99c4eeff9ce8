#!/usr/bin/env python3
"""Issue 16's pipeline at toy scale on the CPU, through the same commands a learning run uses:
`vinci curriculum`, scripts/train_tokenizer.py, `vinci init-model`, `vinci sft-data` (the teacher
through the agents; Triton does not run on a CPU, so its policy turns fail and only the selection
answers become targets), `vinci train sft` for 2 steps from the random model, one `vinci train rl`
step from it on two training tasks, and `vinci bench-model` of the SFT model on the held-out suite.
Checked: each stage's files, that the SFT data is in the agents' format, that training moved the
weights with a finite loss, and that bench-model scored every held-out task.

The SFT model writes no kernel, so that RL step's rewards are all equal and its update is 0. To see
a non-zero update, the SFT model is then taught (tests/support/taught_fixture.py: `vinci train sft`
on that step's own turn-0 policy prompts) to answer each task with one of two torch-only ModelNew
files, about equally often: a right one (the task's Model, renamed) and a wrong one (its output + 1).
One more RL step from the taught model, under --torch-ops allow with speed and coverage weighing
nothing (no measured time decides a reward), then has rewards that differ within a group: its
grad_norm is > 0 and its final model's weights differ from the taught model's. What this cannot show
on a CPU (a model that writes kernels) is the GPU run's (benchmarks/sft_data_gpu.sh,
benchmarks/mrs_gpu.sh).

    learning_pipeline_test.py VINCI SOURCE_ROOT
"""
import ast
import json
import math
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

VINCI, ROOT = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(ROOT / "tests" / "support"))
from checkpoint_files import checkpoint_tensors  # noqa: E402
from checks import check, failures  # noqa: E402
from taught_fixture import REWARD_BY_CORRECTNESS, policy_prompts, teach  # noqa: E402

# A model small enough for two CPU steps, with room for the agents' prompts.
TOY = {"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 16384,
       "tie_word_embeddings": True, "rope_theta": 100000.0}

# The RL steps: one step of two training tasks, 6 policy answers each (the null scheme and one more,
# 3 samples each), so that a group of all-right or all-wrong answers is rare for both tasks at once.
# The taught answers are at most ~145 tokens under the toy tokenizer (checked below). The toy model
# learns them to ~0.015 nats a token; sampled at temperature 1 about half come out garbled, at 0.5
# whole, while the taught choice between right and wrong stays about even (65/35 at worst). The
# reward counts correctness only (REWARD_BY_CORRECTNESS).
MAX_NEW_TOKENS = 160
RL_CONFIG = f"""
[run]
steps = 1
tasks_per_step = 2
[agents]
schemes = 1
samples = 3
turns = 1
max_new_tokens = {MAX_NEW_TOKENS}
selection_max_new_tokens = 32
temperature = 0.5
[model]
training = "full"
[optimizer]
lr = 1e-3
""" + REWARD_BY_CORRECTNESS
TEACH_EPOCHS, TEACH_LR = 80, 1e-2  # the toy model starts near random: more and faster than the fixture's


def taught_answers(tasks):
    """answers(task): a right and a wrong torch-only ModelNew for a curriculum task under tasks. The
    right one is the task's Model class renamed (an elementwise chain or a row-wise reduction, ending
    `return v`); the wrong one returns v + 1, of the right shape."""
    def answers(task):
        source = (tasks / f"{task}.py").read_text()
        model = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Model")
        body = "\n".join(source.splitlines()[model.lineno - 1:model.end_lineno])
        check(body.endswith("        return v"), f"{task}: Model.forward ends with `return v`: {body}")
        body = body.replace("class Model(", "class ModelNew(", 1)
        head = "```python\nimport torch\nimport torch.nn as nn\n\n\n"
        return [f"{head}{body}\n```", f"{head}{body} + 1\n```"]
    return answers


def run(*args, **kwargs):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900, **kwargs)
    check(p.returncode == 0, f"{' '.join(map(str, args[:2]))}: exit {p.returncode}: {p.stderr[-1500:]}")
    return p


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        cur, tok, model = work / "cur", work / "tok", work / "model"
        run(VINCI, "curriculum", "--out", cur, "--elementwise", "8", "--rowwise", "8", "--rows", "64", "--cols", "128")
        run(sys.executable, ROOT / "scripts/train_tokenizer.py", "--corpus", cur, ROOT / "prompts", ROOT / "skills",
            "--vocab-size", "1200", "--out", tok)
        (work / "toy.json").write_text(json.dumps(TOY))
        run(VINCI, "init-model", "--config", work / "toy.json", "--tokenizer", tok, "--out", model, "--seed", "1")
        if failures:
            return 1

        env = {**__import__("os").environ, "VINCI_CACHE": str(work / "cache")}
        run(VINCI, "sft-data", "--curriculum", cur, "--out", work / "sft", "--device", "cpu", "--scale", "0.05",
            "--no-compile-baseline", "--trials", "3", "--max-tasks", "2", "--turns", "1", "--schemes", "1", env=env)
        lines = [json.loads(line) for line in (work / "sft" / "sft.jsonl").read_text().splitlines()]
        episodes = (work / "sft" / "episodes.jsonl").read_text().splitlines()
        check(len(episodes) == 2, f"one episode per task: {len(episodes)}")
        check(len(lines) >= 2 and all(r["meta"]["role"] == "selection" for r in lines),
              f"selection targets only on a CPU: {[r['meta']['role'] for r in lines]}")
        check(all(r["messages"][-1]["role"] == "assistant" and r["tools"][0]["function"]["name"] == "select_skills"
                  for r in lines), "each target is the assistant's select_skills call, with its tool schema")

        run(VINCI, "train", "sft", "--data", work / "sft" / "sft.jsonl", "--model", model, "--out", work / "trained",
            "--device", "cpu", "--lora-rank", "0", "--lr", "1e-3", "--max-steps", "2", "--batch-tokens", "8192",
            "--no-filter")
        metrics = [json.loads(line) for line in (work / "trained" / "metrics.jsonl").read_text().splitlines()]
        check(len(metrics) == 2 and all(math.isfinite(m["loss"]) and m["loss"] > 0 for m in metrics),
              f"two steps with a finite loss: {metrics}")
        # --max-steps stops at a checkpoint (a later --resume goes on); its model is a checkpoint folder
        trained = work / "trained" / "checkpoints" / "step-2" / "model"
        before, after = checkpoint_tensors(model), checkpoint_tensors(trained)
        moved = max(float(np.max(np.abs(after[k].astype(np.float64) - before[k]))) for k in before)
        check(moved > 0, "the SFT steps moved the weights")

        # One co-evolution step from the SFT model on two training tasks: the toy model writes no
        # kernel on a CPU, so its rewards (and update) are 0. It is also the run whose turn-0 policy
        # prompts the SFT model is then taught to answer (teach's prep run: one sample, a few tokens).
        (work / "rl.toml").write_text(RL_CONFIG)
        rl_args = ["train", "rl", "--config", work / "rl.toml", "--model-device", "cpu", "--tasks", cur / "train",
                   "--device", "cpu", "--scale", "0.05", "--no-compile-baseline", "--trials", "3",
                   "--torch-ops", "allow"]
        answers = taught_answers(cur / "train")
        taught, prep = teach(VINCI, rl_args, trained, work / "teach", answers, env, TEACH_EPOCHS, lr=TEACH_LR)
        rl = [json.loads(line) for line in (prep / "metrics.jsonl").read_text().splitlines()] \
            if (prep / "metrics.jsonl").exists() else []
        check(len(rl) == 1 and rl[0]["tasks"] == 2 and rl[0]["samples"] > 0 and math.isfinite(rl[0]["grad_norm"]),
              f"one RL step over 2 training tasks: {rl}")
        check((prep / "final").is_dir() and (prep / "episodes" / "step-1.jsonl").exists(),
              "the RL run's final model and episodes")
        for task in sorted(set(policy_prompts(prep).values())):
            for answer in answers(task):
                p = run(VINCI, "tokenize", "--model", trained, "--text", answer, "--json", "--no-special")
                ids = json.loads(p.stdout)["ids"] if p.returncode == 0 else []
                # whole within max_new_tokens, and in the tokenizer's merges (bytes would be 1 a character)
                check(0 < len(ids) < MAX_NEW_TOKENS and len(answer) >= 2 * len(ids),
                      f"{task}: a taught answer is {len(ids)} tokens for {len(answer)} characters")
        if failures:
            return 1

        # The RL step from the taught model: right and wrong answers in each group, a non-zero update.
        run(VINCI, *rl_args, "--model", taught, "--out", work / "rl", env=env)
        rl = [json.loads(line) for line in (work / "rl" / "metrics.jsonl").read_text().splitlines()] \
            if (work / "rl" / "metrics.jsonl").exists() else [{}]
        check(len(rl) == 1 and rl[0].get("tasks") == 2 and rl[0].get("reward_std_policy", 0) > 0,
              f"the taught model's answers differ in reward: {rl}")
        check(rl[0].get("grad_norm", 0) > 0, f"the taught RL step's update is not zero: {rl}")
        before, after = checkpoint_tensors(taught), checkpoint_tensors(work / "rl" / "final")
        moved = max(float(np.max(np.abs(after[k].astype(np.float64) - before[k]))) for k in before) \
            if sorted(before) == sorted(after) else 0.0
        check(moved > 0, "the RL step moved the taught model's weights")
        print(f"taught RL step: grad_norm {rl[0].get('grad_norm')}, policy reward std "
              f"{rl[0].get('reward_std_policy')}, max weight change {moved:.3g}")

        run(VINCI, "bench-model", "--model", trained, "--tasks", cur / "heldout", "--device", "cpu",
            "--scale", "0.05", "--no-compile-baseline", "--trials", "3", "--max-new-tokens", "32", "--batch-tasks", "4",
            "--out", work / "bench", env=env)
        heldout = sorted(p.relative_to(cur / "heldout").with_suffix("").as_posix() for p in (cur / "heldout").rglob("*.py"))
        scored = sorted(json.loads(line)["task"] for line in (work / "bench" / "episodes.jsonl").read_text().splitlines())
        check(scored == heldout, f"bench-model ran every held-out task once: {scored} vs {heldout}")
        summary = json.loads((work / "bench" / "summary.json").read_text())
        overall = summary["fast_p"]["compile"]["overall"]
        check(overall["tasks"] == len(heldout) and summary["counts"]["attempts"] == len(heldout),
              f"the summary counts {len(heldout)} tasks and attempts: {overall['tasks']}, {summary['counts']}")
        check(0.0 <= overall["fast_1"] <= 1.0, f"fast_1 is a fraction: {overall['fast_1']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
