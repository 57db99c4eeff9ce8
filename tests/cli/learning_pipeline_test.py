#!/usr/bin/env python3
"""Issue 16's pipeline at toy scale on the CPU, through the same commands a learning run uses:
`vinci curriculum`, scripts/train_tokenizer.py, `vinci init-model`, `vinci sft-data` (the teacher
through the agents; Triton does not run on a CPU, so its policy turns fail and only the selection
answers become targets), `vinci train sft` for 2 steps from the random model, one `vinci train rl` step from it on two
training tasks, and `vinci bench-model` of the SFT model on the held-out suite. Checked: each stage's files, that the SFT data is in the
agents' format, that training moved the weights with a finite loss, and that bench-model scored
every held-out task. What this cannot show on a CPU (a model that writes kernels, RL with a
non-zero update from them) is the GPU run's (benchmarks/sft_data_gpu.sh, benchmarks/mrs_gpu.sh); a
non-zero update on the CPU is Cli.TrainRlDataParallel's, from a taught fixture.

    learning_pipeline_test.py VINCI SOURCE_ROOT
"""
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

# A model small enough for two CPU steps, with room for the agents' prompts.
TOY = {"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 16384,
       "tie_word_embeddings": True, "rope_theta": 100000.0}


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
        # kernel on a CPU, so its rewards (and update) are 0 here; Cli.TrainRlDataParallel is where
        # a taught model earns a non-zero one.
        (work / "rl.toml").write_text("[run]\nsteps = 1\ntasks_per_step = 2\n[agents]\nschemes = 1\nsamples = 2\n"
                                      "turns = 1\nmax_new_tokens = 32\nselection_max_new_tokens = 32\n"
                                      "[model]\ntraining = \"full\"\n")
        run(VINCI, "train", "rl", "--config", work / "rl.toml", "--model", trained, "--model-device", "cpu",
            "--tasks", cur / "train", "--device", "cpu", "--scale", "0.05", "--no-compile-baseline", "--trials", "3",
            "--out", work / "rl", env=env)
        rl = [json.loads(line) for line in (work / "rl" / "metrics.jsonl").read_text().splitlines()] \
            if (work / "rl" / "metrics.jsonl").exists() else []
        check(len(rl) == 1 and rl[0]["tasks"] == 2 and rl[0]["samples"] > 0 and math.isfinite(rl[0]["grad_norm"]),
              f"one RL step over 2 training tasks: {rl}")
        check((work / "rl" / "final").is_dir() and (work / "rl" / "episodes" / "step-1.jsonl").exists(),
              "the RL run's final model and episodes")

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
