#!/usr/bin/env python3
"""`vinci sft-data --first-turns N --only-first-turns` (ctest: Cli.SftFirstTurns): N unevaluated
first-turn policy conversations per task of the split, checked against what `vinci teach` writes for
the same curriculum, which lists every strategy's solution and whether it is correct. Each answer's
kernel must be, byte for byte, one of the teacher's correct solutions of that very task, never a
planted wrong one; the prompt must be the policy agent's, quoting the task's file; half the prompts
show skills; the records say they were not evaluated; and a second run writes the same file. Each
task also gets one selection conversation: a select_skills call naming at most 3 skills, all of them
shown in its prompt; the policy prompts that show skills show those it picked.

    sft_first_turns_test.py VINCI
"""
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, failures  # noqa: E402

VINCI = sys.argv[1]
N = 4


def first_turns(cur, out):
    return subprocess.run([VINCI, "sft-data", "--curriculum", str(cur), "--out", str(out), "--first-turns", str(N),
                           "--only-first-turns", "--seed", "5"], capture_output=True, text=True, timeout=300)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        subprocess.run([VINCI, "curriculum", "--out", str(work / "cur"), "--elementwise", "8", "--rowwise", "8",
                        "--heldout-share", "0.25", "--seed", "2"], check=True, capture_output=True)
        subprocess.run([VINCI, "teach", "--curriculum", str(work / "cur"), "--out", str(work / "teach"),
                        "--split", "train"], check=True, capture_output=True)
        solutions = collections.defaultdict(dict)  # task -> code -> correct
        for line in (work / "teach" / "teacher.jsonl").read_text().splitlines():
            s = json.loads(line)
            solutions[s["id"]][(work / "teach" / s["file"]).read_text()] = s["correct"]
        train = [json.loads(line)["id"] for line in (work / "cur" / "curriculum.jsonl").read_text().splitlines()
                 if json.loads(line)["split"] == "train"]

        p = first_turns(work / "cur", work / "a")
        check(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-800:]}")
        if failures:
            return 1
        check(not (work / "a" / "sft.jsonl").exists() and not (work / "a" / "candidates").exists(),
              "--only-first-turns evaluated something")
        everything = [json.loads(line) for line in (work / "a" / "first_turns.jsonl").read_text().splitlines()]
        selections = [r for r in everything if r["meta"]["role"] == "selection"]
        records = [r for r in everything if r["meta"]["role"] != "selection"]
        check(sorted(r["meta"]["task"] for r in selections) == sorted(train),
              f"selection conversations for {[r['meta']['task'] for r in selections]}, not one per training task")
        picked_any, picks = 0, {}
        for r in selections:
            task, meta = r["meta"]["task"], r["meta"]
            check(meta["evaluated"] is False and [t["function"]["name"] for t in r["tools"]] == ["select_skills"],
                  f"{task}: selection meta {meta} or tools")
            call = re.search(r"<tool_call>\s*(\{.*\})\s*</tool_call>", r["messages"][-1]["content"], re.S)
            check(call is not None, f"{task}: no tool call in the selection answer {r['messages'][-1]['content'][:200]!r}")
            if call is None:
                continue
            picked = [s["name"] for s in json.loads(call.group(1))["arguments"]["selected_skills"]]
            picks[task] = picked
            shown = r["messages"][1]["content"]
            check(len(picked) <= 3 and all(name in shown for name in picked),
                  f"{task}: picked {picked}, not at most 3 of the skills shown")
            picked_any += bool(picked)
        check(picked_any > 0, "no selection conversation picks a skill")
        check(len(records) == N * len(train), f"{len(records)} records for {len(train)} tasks x {N}")
        per_task = collections.Counter(r["meta"]["task"] for r in records)
        check(set(per_task) == set(train) and set(per_task.values()) == {N}, f"records per task: {dict(per_task)}")
        with_skills, strategies = 0, collections.defaultdict(set)
        for r in records:
            task, meta = r["meta"]["task"], r["meta"]
            check(meta["role"] == "policy" and meta["evaluated"] is False, f"{task}: meta {meta}")
            roles = [m["role"] for m in r["messages"]]
            check(roles == ["system", "user", "assistant"], f"{task}: roles {roles}")
            source = (work / "cur" / "train" / (task + ".py")).read_text()
            check(source.strip() in r["messages"][1]["content"], f"{task}: the prompt does not quote the task file")
            with_skills += "###" in r["messages"][0]["content"]
            shown_skills = re.findall(r"^### (\S+)$", r["messages"][0]["content"], re.M)
            if shown_skills and picks.get(task):
                check(shown_skills == picks[task], f"{task}: the prompt shows {shown_skills}, the selection picked "
                                                   f"{picks[task]}")
            answer = r["messages"][2]["content"]
            code = re.search(r"```python\n(.*?)```", answer, re.S)
            check(code is not None, f"{task}: no code block in {answer[:200]!r}")
            if code is None:
                continue
            correct = solutions[task].get(code.group(1))
            check(correct is True, f"{task}: the answer is {'a planted wrong' if correct is False else 'no'} "
                                   f"teacher solution of the task")
            strategies[task].add(answer.splitlines()[0])
        check(with_skills == len(records) // 2, f"{with_skills} of {len(records)} prompts show skills")
        check(sum(len(s) for s in strategies.values()) > len(strategies),
              "every task got one strategy only: the teacher's draws do not vary")

        p = first_turns(work / "cur", work / "b")
        check(p.returncode == 0 and (work / "b" / "first_turns.jsonl").read_text() ==
              (work / "a" / "first_turns.jsonl").read_text(), "a second run wrote another file")
        p = subprocess.run([VINCI, "sft-data", "--curriculum", str(work / "cur"), "--out", str(work / "c"),
                            "--only-first-turns"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 4 and "--first-turns" in p.stderr, f"--only-first-turns alone: exit {p.returncode}")
    if failures:
        print("\n".join(failures))
        return 1
    print(f"first turns: {len(records)} records, all correct teacher solutions, {with_skills} with skills")
    return 0


if __name__ == "__main__":
    sys.exit(main())
