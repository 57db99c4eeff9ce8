"""A model taught to answer `vinci train rl`'s policy prompts with given answers, so that RL on a CPU
has rewards that differ within a group, and so an update that is not zero.

A small random model writes no kernel: every reward is equal, every advantage 0, and the update with
them. teach() first runs `vinci train rl` once from the model (the prep run, shortened) to collect its
turn-0 policy prompts, then fine-tunes the model by `vinci train sft` to answer each of them with every one
of answers(task), once each: taught one right and one wrong answer, the model samples either about
equally often. The RL run after it must use the prep run's arguments (the prompts are the same).
"""
import json
import re
import subprocess

from checks import check

# What an RL run from a taught model needs in its config: speed and coverage weigh nothing, so a
# right answer earns correct_weight and a wrong one 0 however loaded the machine is, and PRS is off
# (it would drop the torch-only answers, whose coverage is 0).
REWARD_BY_CORRECTNESS = """[reward]
speedup_weight = 0.0
coverage_weight = 0.0
[rejection]
prs = false
"""


def policy_prompts(run):
    """The turn-0 policy prompts of a `vinci train rl` run folder's episodes: {messages as JSON: task}."""
    prompts = {}
    for step in sorted((run / "episodes").glob("step-*.jsonl")):
        for line in step.read_text().splitlines():
            episode = json.loads(line)
            for c in episode["calls"]:
                if c["role"] == "policy" and c["turn"] == 0:
                    prompts[json.dumps(c["messages"])] = episode["task"]
    return prompts


# What the prep run changes in the RL run's config: it needs only each task's turn-0 policy prompt,
# which one step (that deals out every task), one sample, one turn and a few new tokens ask alike, in
# less than half the time (the prompts compared equal, 2026-11-29).
PROMPTS_ONLY = {"steps": "1", "samples": "1", "turns": "1", "max_new_tokens": "4"}


def prompts_only(rl_args, work):
    """rl_args with its --config replaced by a copy (in work) that has PROMPTS_ONLY's values."""
    args = list(rl_args)
    at = args.index("--config") + 1
    config = open(args[at], encoding="utf-8").read()
    for key, value in PROMPTS_ONLY.items():
        config = re.sub(rf"^{key}\s*=.*$", f"{key} = {value}", config, flags=re.M)
    (work / "prep.toml").write_text(config)
    args[at] = work / "prep.toml"
    return args


def teach(vinci, rl_args, model, work, answers, env, epochs, lr=5e-3, chat_template=None):
    """model fine-tuned to answer the turn-0 policy prompts of `vinci train rl` (rl_args, with a
    --config, from model) with answers(task), a list of answer texts. Writes work/prep (the prep run),
    work/sft.jsonl and work/taught; returns (the taught model, the prep run's folder)."""
    work.mkdir(parents=True, exist_ok=True)
    prep = work / "prep"
    p = subprocess.run([vinci, *prompts_only(rl_args, work), "--model", model, "--out", prep],
                       capture_output=True, text=True, timeout=900, env=env)
    check(p.returncode == 0, f"the prompt-collecting run exited {p.returncode}: {p.stderr[-3000:]}")
    prompts = policy_prompts(prep)
    check(len(prompts) >= 2, f"turn-0 policy prompts of both tasks: {len(prompts)}")
    with open(work / "sft.jsonl", "w") as f:
        for messages, task in sorted(prompts.items()):
            level = re.match(r"level(\d+)/", task)
            for text in answers(task):
                answer = {"role": "assistant", "content": text}
                f.write(json.dumps({"messages": json.loads(messages) + [answer],
                                    "meta": {"task": task, "level": int(level[1]) if level else 1,
                                             "role": "policy"}}) + "\n")
    taught = work / "taught"
    template = ["--chat-template", chat_template] if chat_template else []
    p = subprocess.run([vinci, "train", "sft", "--data", work / "sft.jsonl", "--model", model, *template,
                        "--device", "cpu", "--lora-rank", "0", "--lr", str(lr), "--epochs", str(epochs), "--no-filter",
                        "--out", taught], capture_output=True, text=True, timeout=900, env=env)
    check(p.returncode == 0, f"vinci train sft exited {p.returncode}: {p.stderr[-3000:]}")
    return taught / "final", prep
