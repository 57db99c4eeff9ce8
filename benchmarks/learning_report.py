#!/usr/bin/env python3
"""The table of issue 16's learning run (benchmarks/learning_gpu.sh) from what its stages left in the
state folder: bench-model's summary and attempts of the four models on the held-out tasks (also by
kind of task and by the strategy of the correct answers), the SFT and RL runs' metrics, what the RL
policy wrote at each turn, and the skills the RL run's summaries had admitted. Prints Markdown and
writes docs/learning.json's form:
  {"sft": {...}, "rl": {...}, "rl_no_skills": {...}, "sft_no_skills": {...}}
each with correct, fast_1, fast_1_5 (fractions of the held-out tasks), mean_speedup (the arithmetic
mean over the correct answers of the speedup over eager; null without one), geomean_speedup,
tasks and gpu. A model whose bench has not run yet is left out. RL_DIR (rl) names the RL stage whose
run and benches fill the RL rows (learning_gpu.sh's RL_DIR).

    learning_report.py STATE_DIR GPU_TXT OUT_JSON [RL_DIR]
"""
import json
import pathlib
import sys

MODELS = [("sft", "SFT, skills injected"), ("sft_no_skills", "SFT, no skills"), ("rl", "RL, skills injected"),
          ("rl_no_skills", "RL, no skills")]


def jsonl(path: pathlib.Path) -> list:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def model_entry(bench: pathlib.Path, gpu: str) -> dict | None:
    if not (bench / "summary.json").exists():
        return None
    summary = json.loads((bench / "summary.json").read_text())
    overall = summary["fast_p"]["eager"]["overall"]
    speedups = [a["speedup"] for a in jsonl(bench / "attempts.jsonl") if a["class"] == "correct" and a["speedup"]]
    return {"correct": summary["counts"]["solved_tasks"] / summary["tasks"] if summary["tasks"] else 0.0,
            "fast_1": overall.get("fast_1"), "fast_1_5": overall.get("fast_1.5"),
            "mean_speedup": sum(speedups) / len(speedups) if speedups else None,
            "geomean_speedup": overall.get("geomean_speedup"), "tasks": summary["tasks"], "gpu": gpu,
            # correct tasks whose timing was mostly host launch work: their fast_1 verdicts are noise
            # (docs/learning.md); None for benches from before the flag
            "launch_bound": overall.get("launch_bound")}


def policy_outcomes(episodes: pathlib.Path) -> dict:
    """{turn: {class: count}} over every policy call of the RL run's episodes: the evaluator's class,
    or the parse failure of an answer that held no kernel."""
    counts = {}
    for f in sorted(episodes.glob("step-*.jsonl")) if episodes.exists() else []:
        for episode in jsonl(f):
            for call in episode["calls"]:
                if call["role"] != "policy":
                    continue
                result = call.get("result")
                kind = result["class"] if result else call.get("parse_failure") or "no answer"
                per_turn = counts.setdefault(call["turn"], {})
                per_turn[kind] = per_turn.get(kind, 0) + 1
    return counts


def task_kind(entry: dict) -> str:
    """A held-out task's row of the breakdown: row-wise, or an elementwise chain by its length."""
    if entry.get("family") != "elementwise":
        return str(entry.get("family", "?"))
    n = len(entry.get("chain", []))
    return "chain, 2-3 ops" if n <= 3 else "chain, 4 ops" if n == 4 else "chain, 5-6 ops"


def breakdown(state: pathlib.Path, benches: dict[str, pathlib.Path]) -> list[str]:
    """Markdown: per kind of held-out task, each benched model's correct and faster-than-eager counts;
    then per strategy the correct answers named, how many and their mean speedup."""
    kinds = {e["id"]: task_kind(e) for e in jsonl(state / "cur" / "curriculum.jsonl") if e.get("split") == "heldout"}
    keys = list(benches)
    attempts = {k: [a for a in jsonl(benches[k] / "attempts.jsonl") if a.get("turn", 0) == 0] for k in keys}
    if not kinds or not any(attempts.values()):
        return []
    lines = ["\n| held-out tasks | " + " | ".join(f"{k}: correct, faster" for k in keys) + " |",
             "|---|" + "---|" * len(keys)]
    for kind in sorted(set(kinds.values())):
        tasks = [t for t, v in kinds.items() if v == kind]
        cells = []
        for k in keys:
            mine = [a for a in attempts[k] if kinds.get(a["task"]) == kind]
            correct = [a for a in mine if a["class"] == "correct"]
            cells.append(f"{len(correct)}, {sum(1 for a in correct if (a.get('speedup') or 0) > 1)}")
        lines.append(f"| {kind} ({len(tasks)}) | " + " | ".join(cells) + " |")
    lines += ["\n| model | strategy of a correct answer | answers | mean speedup |", "|---|---|---|---|"]
    for k in keys:
        by_strategy: dict = {}
        for a in attempts[k]:
            if a["class"] == "correct" and a.get("speedup"):
                by_strategy.setdefault(a.get("strategy") or "?", []).append(a["speedup"])
        for strategy, speedups in sorted(by_strategy.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"| {k} | {strategy} | {len(speedups)} | {sum(speedups) / len(speedups):.2f}x |")
    return lines


def pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def ratio(v) -> str:
    return "-" if v is None else f"{v:.2f}x"


def print_table(table: dict) -> None:
    """The Markdown table of docs/learning.json's entries, in MODELS' order (learning_table.py's too)."""
    print("| model | tasks | correct | fast_1 | fast_1.5 | mean speedup | geomean speedup | timed launch-bound |")
    print("|---|---|---|---|---|---|---|---|")
    for key, label in MODELS:
        if e := table.get(key):
            bound = "-" if e["launch_bound"] is None else e["launch_bound"]
            print(f"| {label} | {e['tasks']} | {pct(e['correct'])} | {pct(e['fast_1'])} | {pct(e['fast_1_5'])} | "
                  f"{ratio(e['mean_speedup'])} | {ratio(e['geomean_speedup'])} | {bound} |")


def main() -> int:
    state, gpu_txt, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    rl_dir = sys.argv[4] if len(sys.argv) > 4 else "rl"
    gpu = gpu_txt.read_text().strip().split(",")[0] if gpu_txt.exists() else "unknown"
    benches = {key: state / ("bench-" + (rl_dir + key[2:] if key.startswith("rl") else key)) for key, _ in MODELS}
    table = {}
    for key, _ in MODELS:
        if entry := model_entry(benches[key], gpu):
            table[key] = entry
    out.write_text(json.dumps(table, indent=2) + "\n")

    print(f"## Held-out tasks, greedy, one answer each ({gpu})\n")
    print_table(table)

    print("\n".join(breakdown(state, {k: benches[k] for k in table})))

    sft = jsonl(state / "sft-run" / "metrics.jsonl")
    if sft:
        print(f"\nSFT: {len(sft)} steps, loss {sft[0]['loss']:.3f} -> {sft[-1]['loss']:.3f}")
    rl = jsonl(state / rl_dir / "metrics.jsonl")
    if rl:
        print("\n| RL step | policy reward | fast_1 (train) | trained samples | grad norm | skills proposed | admitted | "
              "library | candidates | per min | step s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for m in rl:
            print(f"| {m['step']} | {m['reward_mean_policy']:.3f} | {m['fast_1']:.2f} | {m['trained_samples']} | "
                  f"{m['grad_norm']:.3g} | {m['skills_proposed']} | {m['skills_admitted']} | {m['library_size']} | "
                  f"{m['candidates']} | {m['candidates_per_min']:.1f} | {m['step_s']:.0f} |")
    outcomes = policy_outcomes(state / rl_dir / "episodes")
    if outcomes:
        classes = sorted({c for per_turn in outcomes.values() for c in per_turn})
        print("\nWhat the RL policy wrote, by turn (a parse failure: no kernel to evaluate)\n")
        print("| turn | " + " | ".join(classes) + " |")
        print("|---|" + "---|" * len(classes))
        for turn in sorted(outcomes):
            print(f"| {turn + 1} | " + " | ".join(str(outcomes[turn].get(c, 0)) for c in classes) + " |")
    seeded = {s["name"] for f in ("skills/seed.jsonl", "skills/curriculum.jsonl") for s in jsonl(pathlib.Path(f))}
    library = state / f"{rl_dir}-library.jsonl"
    grown = [s for s in jsonl(library) if s["name"] not in seeded]
    if library.exists():
        print(f"\nSkills the RL run admitted: {len(grown)}")
        for s in grown:
            v = s.get("verification") or {}
            print(f"- {s['name']}: {s.get('description', '')[:100]} (verification: {json.dumps(v)[:160]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
