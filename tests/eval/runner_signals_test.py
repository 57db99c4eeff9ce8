"""The shape the judge demands of a runner's in-process signals (python/vinci_worker/runner_signals.py):
the signals a CPU and a GPU runner send (written out by hand from vinci_runner/runner.py's
_monitored) pass, and each way a rewritten harness could bend one is named.

    python3 tests/eval/runner_signals_test.py REPO_ROOT
"""
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
from vinci_worker.runner_signals import malformed  # noqa: E402

CPU = {"torch_ops": {}, "precision_drops": [], "escapes": [], "reference_called": False, "patched": [],
       "flags_changed": [], "launches": 3}
GPU = {"torch_ops": {"mm": 2}, "precision_drops": ["aten._to_copy to torch.float16"], "escapes": [],
       "reference_called": False, "patched": ["torch.nn.functional.relu replaced"], "flags_changed": [],
       "launches": 1, "coverage": 0.93, "gpu_busy_ms": 0.0125,
       "profile": [{"name": "relu_kernel(float*)", "calls": 1, "total_us": 12.5, "custom": True}],
       "mutated_input": 0, "aliased": [0, 1]}

BENT = [
    ("patched", 7, "'patched' is malformed"),
    ("patched", ["ok", 3], "'patched' is malformed"),
    ("escapes", "a thread", "'escapes' is malformed"),
    ("torch_ops", {"mm": "2"}, "'torch_ops' is malformed"),
    ("torch_ops", ["mm"], "'torch_ops' is malformed"),
    ("launches", True, "'launches' is malformed"),
    ("launches", -1, "'launches' is malformed"),
    ("coverage", float("nan"), "'coverage' is malformed"),
    ("coverage", 1.5, "'coverage' is malformed"),
    ("gpu_busy_ms", "1", "'gpu_busy_ms' is malformed"),
    ("mutated_input", "0", "'mutated_input' is malformed"),
    ("aliased", [0], "'aliased' is malformed"),
    ("aliased", [0, None], "'aliased' is malformed"),
    ("reference_called", 0, "'reference_called' is malformed"),
    ("profile", [{"name": 5}], "'profile' is malformed"),
    ("profile", {"name": "k"}, "'profile' is malformed"),
    # Red-team round 47: an entry every field of which was left to its default passed here and failed the
    # judge's own reply later, which ended the judge; what passes must be a whole protocol.KernelTime.
    ("profile", [{}], "'profile' is malformed"),
    ("profile", [{"name": "k", "calls": 1}], "'profile' is malformed"),
    ("profile", [{"name": "k", "calls": 1, "total_us": float("inf")}], "'profile' is malformed"),
    ("whatever", 1, "unknown signal 'whatever'"),
]


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + str(detail) if detail else ''}")
    return ok


def main():
    results = [check("a CPU runner's signals pass", malformed(CPU) == "", malformed(CPU)),
               check("a GPU runner's signals pass", malformed(GPU) == "", malformed(GPU)),
               check("a list is not signals", "not an object" in malformed([]), malformed([])),
               check("nothing is not signals", "not an object" in malformed(None), malformed(None))]
    for key, value, words in BENT:
        why = malformed({**GPU, key: value})
        results.append(check(f"{key}={value!r} is named", words in why, why))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
