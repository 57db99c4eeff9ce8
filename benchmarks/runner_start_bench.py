#!/usr/bin/env python3
"""A runner's start, from the request to its first answer: a launcher and an interpreter per runner
(vinci-sandbox, bwrap, `python -m vinci_runner runner`, torch imported) against a fork of the
zygote (python/vinci_runner/zygote.py). Prints wall and CPU seconds per runner, medians of N.

    runner_start_bench.py --sandbox build/src/eval/vinci-sandbox [--device cpu] [-n 10]

CPU is what the kernel charged: for a launched runner its sandbox's cpuacct cgroup where the host has
one (everything that ran in it), else its process tree; for a fork, the zygote's, the keeper's, the
init's and the runner's.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from vinci_worker import process_tree  # noqa: E402
from vinci_worker.sandbox import Launcher  # noqa: E402
from vinci_worker.zygote import Zygote  # noqa: E402

LIMITS = {"file_size": 64 << 20, "scratch_bytes": 1 << 28, "cpu_seconds": 0, "address_space": 0}


def cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def answered(runner) -> None:
    reply = runner.ask({"op": "ping"}, 120)  # an unknown op: the runner's refusal is its first answer
    if reply.get("ok") is not False:
        raise RuntimeError(f"unexpected first answer {reply!r}")


def launched(launcher: Launcher, device: str) -> tuple[float, float]:
    t = time.monotonic()
    runner = launcher.spawn(["runner", "--control", "{control}", "--buffer", "{buffer}", "--inputs", "{inputs}",
                             "--device", device], buffers={"buffer": 64, "inputs": 64}, **LIMITS)
    answered(runner)
    wall = time.monotonic() - t
    ns = process_tree.cgroup_cpu_ns(runner.proc.pid)
    cpu = ns / 1e9 if ns is not None else sum(cpu_s(p) for p in process_tree.descendants(runner.proc.pid))
    runner.close()
    return wall, cpu


def forked(zygote: Zygote, device: str) -> tuple[float, float]:
    # Every process a fork involves is under the zygote's launcher while the runner lives: the zygote,
    # the runner's keeper and init, the runner.
    before = sum(cpu_s(p) for p in process_tree.descendants(zygote.process.tree))
    t = time.monotonic()
    runner = zygote.spawn(device, {"buffer": 64, "inputs": 64}, **LIMITS)
    answered(runner)
    wall = time.monotonic() - t
    after = sum(cpu_s(p) for p in process_tree.descendants(zygote.process.tree))
    runner.close()
    return wall, after - before


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sandbox", required=True, help="the vinci-sandbox binary")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("-n", type=int, default=10, help="runners started each way")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="runner-start-")
    launcher = Launcher(a.sandbox, work, a.device != "cpu", {"max_pids": 1024})
    zygote = Zygote(launcher)
    t = time.monotonic()
    zygote.spawn(a.device, {"buffer": 64, "inputs": 64}, **LIMITS).close()
    zygote_start = time.monotonic() - t
    rows = {"launcher and interpreter": [launched(launcher, a.device) for _ in range(a.n)],
            "fork of the zygote": [forked(zygote, a.device) for _ in range(a.n)]}
    zygote.close()
    print(f"{launcher.description}; the zygote's own start and first runner: {zygote_start:.2f} s")
    print(f"{'runner start':<26} {'wall s (median)':>16} {'CPU s (median)':>15}")
    for name, samples in rows.items():
        print(f"{name:<26} {statistics.median(w for w, _ in samples):>16.3f} "
              f"{statistics.median(c for _, c in samples):>15.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
