"""A judge (`python -m vinci_worker judge`) started by hand and asked over its wire, one JSON line
each way, as vinci's C++ pool asks it: for tests and benchmarks that check the judge without vinci.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class JudgeProcess:
    def __init__(self, device: str, cache: str, sandbox: str, env: dict | None = None, unset: tuple = ()):
        environment = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), **(env or {}))
        for name in unset:
            environment.pop(name, None)
        self.proc = subprocess.Popen([sys.executable, "-m", "vinci_worker", "judge", "--device",
                                      "cuda:0" if device == "cuda" else device, "--cache", cache, "--sandbox", sandbox],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment)

    def ask(self, request: dict) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the judge ended (exit status {self.proc.wait()}) before answering {request.get('op')!r}")
        return json.loads(line)

    def evaluate(self, task: str, candidate: str, config: dict, log: str, scale: float, baseline: dict | None = None,
                 static: dict | None = None) -> dict:
        """The judge's verdict on candidate, with baseline's timings (a baseline reply) where given."""
        base = baseline or {}
        return self.ask({"op": "evaluate", "path": task, "scale": scale, "candidate": candidate, "static": static or {},
                         "config": config, "log": log, "eager_times": base.get("eager_times") or [1.0],
                         "compile_times": base.get("compile_times"),
                         "calls_per_window": base.get("calls_per_window", 1),
                         "reference_kernels": base.get("reference_kernels", [])})

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(60)
