"""Runners forked by one zygote (python/vinci_runner/zygote.py) keep nothing from each other, and reach
nothing of the zygote's.

One judge evaluates two probes in turn, so the second runner is forked from the zygote the first one
came from. The probes' module code runs in the runner (the text rules, layer 1, are left out: this
checks the sandbox beneath them) and ends by raising what it found, which the judge reports as the
import's failure. The first writes a marker everywhere it can, and raises the OOM score and the
autogroup's nice of every process its /proc lists where it may (round 19: where the judge runs as
root, ownership is all those files check); the second looks for the markers and its own OOM score
and nice,
and tries the memory, environment, maps and open descriptors of every other process its /proc lists
(the zygote's, its keepers' and inits'; where the judge runs as root their descriptors' numbers can be
listed, but none opened). The truth is the kernel's answers, read from the probes' own
reports: written where a fresh tmpfs is, refused on the root and /dev, nothing found by the second,
nothing readable of another process.

    python3 tests/eval/zygote_test.py REPO_ROOT SANDBOX_BINARY
"""
import os
import sys
import tempfile

ROOT, SANDBOX = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
from judge_process import JudgeProcess  # noqa: E402
TASK = os.path.join(ROOT, "tasks", "level1", "13_ReLU.py")
MARKER = "vinci-zygote-marker"

WRITER = f'''
import os
import torch.nn as nn

wrote = []
for folder in (os.environ["HOME"], "/tmp", "/dev/shm", "/", "/dev"):
    try:
        with open(os.path.join(folder, "{MARKER}"), "w") as f:
            f.write("left by the first runner")
        wrote.append(folder)
    except OSError as e:
        wrote.append(f"{{folder}}:{{e.errno}}")
me = os.readlink("/proc/self")
for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != me]:
    for name, value in (("oom_score_adj", "1000"), ("autogroup", "19")):
        try:
            with open(f"/proc/{{pid}}/{{name}}", "w") as f:
                f.write(value)
        except OSError:
            pass
raise RuntimeError("WROTE " + " ".join(wrote))


class ModelNew(nn.Module):
    pass
'''

READER = f'''
import os
import torch.nn as nn

found = []
for folder in (os.environ["HOME"], "/tmp", "/dev/shm", "/", "/dev"):
    if os.path.exists(os.path.join(folder, "{MARKER}")):
        found.append("marker:" + folder)
me = os.readlink("/proc/self")
others = [p for p in os.listdir("/proc") if p.isdigit() and p != me]
for pid in others:
    for what in ("environ", "mem", "maps"):
        try:
            with open(f"/proc/{{pid}}/{{what}}", "rb") as f:
                f.read(1)
            found.append(f"read:{{pid}}/{{what}}")
        except OSError:
            pass
    try:
        numbers = os.listdir(f"/proc/{{pid}}/fd")
    except OSError:
        numbers = []
    for n in numbers:
        try:
            os.close(os.open(f"/proc/{{pid}}/fd/{{n}}", os.O_RDONLY))
            found.append(f"opened:{{pid}}/fd/{{n}}")
        except OSError:
            pass
with open("/proc/self/oom_score_adj") as f:
    if f.read().strip() != "0":
        found.append("inherited:oom_score_adj")
with open("/proc/self/autogroup") as f:
    if not f.read().strip().endswith("nice 0"):
        found.append("inherited:autogroup")
raise RuntimeError(f"SAW {{len(others)}} FOUND " + " ".join(found))


class ModelNew(nn.Module):
    pass
'''


def main() -> int:
    work = tempfile.mkdtemp(prefix="zygote-test-")
    probes = []
    for name, source in (("writer", WRITER), ("reader", READER)):
        path = os.path.join(work, f"{name}.py")
        with open(path, "w") as f:
            f.write(source)
        probes.append(path)
    judge = JudgeProcess("cpu", os.path.join(work, "cache"), SANDBOX, unset=("VINCI_RUNNER_ZYGOTE",))
    hello = judge.ask({"op": "hello"})
    config = {"compile_baseline": False, "timing": {"trials": 5, "min_trials": 5, "budget_s": 5}}
    messages = []
    for probe in probes:
        reply = judge.evaluate(TASK, probe, config, os.path.join(work, os.path.basename(probe) + ".log"), 0.05)
        messages.append(reply.get("message") or "")
    warnings = judge.ask({"op": "hello"}).get("warnings", [])
    judge.close()
    check("runners forked by a zygote" in hello.get("sandbox", "") and not any("zygote" in w for w in warnings),
          f"the runners were not forked by a zygote: {hello.get('sandbox')!r}, {warnings}")
    wrote, saw = messages
    if "WROTE" not in wrote or "SAW" not in saw:
        check(False, f"a probe did not report: {messages}")
    else:
        written = wrote.split("WROTE ", 1)[1].split("\n")[0].split()
        for folder in ("/tmp", "/dev/shm"):
            check(folder in written, f"the first runner could not write its own {folder}: {written}")
        for folder in ("/", "/dev"):
            check(folder not in written, f"the first runner wrote {folder}, which the next runner shares: {written}")
        report = saw.split("SAW ", 1)[1].split("\n")[0]
        check("FOUND " in report and not report.split("FOUND ", 1)[1].strip(),
              f"the second runner found what it should not: {report}")
        check(report.split()[0] != "0", "the second runner's /proc listed no other process: the probe checked nothing")
    return finish("zygote: runners keep nothing from each other and read nothing of the zygote's")


if __name__ == "__main__":
    sys.exit(main())
