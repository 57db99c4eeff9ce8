#!/usr/bin/env python3
"""The front door, tried as a new user would (ctest: Cli.FrontDoor): mistakes on the command line
and in what the user brings get one clear line naming the cause, and their own exit code
(README: "Exit codes"): 64 for the command line, 4 for a setup error found before any work.
Usage: front_door_test.py VINCI SOURCE_ROOT
"""
import pathlib
import subprocess
import sys
import tempfile
import time

VINCI, ROOT = sys.argv[1], pathlib.Path(sys.argv[2])
sys.path.insert(0, str(ROOT / "tests" / "support"))
from checks import check, failures  # noqa: E402

TASK = ROOT / "tests" / "adversarial" / "tasks" / "level1" / "1_Add.py"
work = pathlib.Path(tempfile.mkdtemp(prefix="vinci-front-door-"))
env = {"HOME": str(work), "VINCI_CACHE": str(work / "cache"), "PATH": "/usr/bin:/bin"}


def vinci(*args):
    t0 = time.monotonic()
    p = subprocess.run([VINCI, *map(str, args)], capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, **env})
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


rc, out, err, _ = vinci("bogus")
check(rc == 64 and "unknown subcommand 'bogus'" in err and "eval" in err, f"unknown subcommand: {rc} {err!r}")

rc, out, err, _ = vinci("--version")
check(rc == 0 and out.startswith("vinci 0.") and "commit" in out and "torch 2." in out and "GPUs seen:" in out,
      f"--version: {rc} {out!r} {err!r}")

rc, out, err, _ = vinci("eval", "--bogus-flag")
check(rc == 64 and "--bogus-flag" in err and "--tasks is required" not in err, f"eval --bogus-flag: {rc} {err!r}")

rc, out, err, _ = vinci("eval", "--tasks", TASK.parent, "--scale", "65")
check(rc == 64 and "65" in err and "64" in err and len(err) < 300, f"eval --scale 65: {rc} {err!r}")

# The evaluator's options are one block in every command that judges kernels, checks included.
model = ROOT / "tests" / "fixtures" / "llm" / "models" / "qwen2"
for command in (["eval", "--candidates", TASK.parent], ["bench-model", "--model", model], ["train", "rl", "--model", model]):
    rc, out, err, _ = vinci(*command, "--tasks", TASK.parent, "--trials", "0")
    check(rc == 64 and "--trials" in err and "0" in err and len(err) < 300, f"{command[0]} --trials 0: {rc} {err!r}")

rc, out, err, _ = vinci("generate", "--model", ROOT / "tests" / "fixtures" / "llm" / "models" / "qwen2",
                        "--prompt", "hi", "--max-new-tokens", "-3")
check(rc == 64 and "-3" in err and "at least 1" in err and len(err) < 300, f"--max-new-tokens -3: {rc} {err!r}")

# A length beyond the model's context fails at once, before the weights load or a cache is sized
# for it (it used to grow to 24 GB); with the prompt counted, it says how many tokens fit.
QWEN2 = ROOT / "tests" / "fixtures" / "llm" / "models" / "qwen2"  # a 512-token context
rc, out, err, seconds = vinci("generate", "--model", QWEN2, "--device", "cpu", "--prompt", "hi",
                              "--max-new-tokens", "100000000")
check(rc == 4 and "context is 512 tokens" in err and len(err) < 300, f"--max-new-tokens 1e8: {rc} {err!r}")
check(seconds < 30, f"--max-new-tokens 1e8 took {seconds:.0f} s to fail")
rc, out, err, _ = vinci("generate", "--model", QWEN2, "--device", "cpu", "--prompt", "hi", "--max-new-tokens", "511")
check(rc == 4 and "ask for at most" in err, f"--max-new-tokens 511 with a prompt: {rc} {err!r}")


def sampled(*seed):
    rc, out, err, _ = vinci("generate", "--model", QWEN2, "--device", "cpu", "--prompt", "hi", "--max-new-tokens", "8",
                            "--temperature", "1", *seed)
    check(rc == 0, f"generate {seed}: {rc} {err[-500:]!r}")
    return out


# Unseeded sampling differs from one start to the next (8 tokens of a near-uniform 1024-token model
# agree by chance with probability ~1e-24); a seed reproduces.
check(sampled() != sampled(), "two unseeded runs sampled the same tokens: the default seed is fixed")
check(sampled("--seed", "7") == sampled("--seed", "7"), "the same --seed sampled different tokens")

for k in ("0", "-1"):
    rc, out, err, _ = vinci("skills", "search", "-k", k, "softmax")
    check(rc == 64 and "at least 1" in err, f"skills search -k {k}: {rc} {err!r}")

# An unreachable server stops optimize before any agent runs, and before it writes anything.
out_dir = work / "run"
rc, out, err, seconds = vinci("optimize", TASK, "--llm", "http://127.0.0.1:9/v1", "--model-name", "m",
                              "--device", "cpu", "--out", out_dir)
check(rc == 4 and "http://127.0.0.1:9/v1" in err and "does not answer" in err, f"unreachable --llm: {rc} {err!r}")
check(seconds < 60, f"unreachable --llm took {seconds:.0f} s to fail")
check(not out_dir.exists(), "optimize wrote its output folder although nothing ran")

# A task that does not parse is reported with its file and line, before any agent runs.
bad = work / "level1" / "1_Broken.py"
bad.parent.mkdir()
bad.write_text("import torch\n\nclass Model(torch.nn.Module)\n    pass\n")
rc, out, err, _ = vinci("optimize", bad, "--llm", "http://127.0.0.1:9/v1", "--model-name", "m", "--device", "cpu",
                        "--out", out_dir)
check(rc == 4 and f"{bad}:3: syntax error" in err, f"syntax error in the task: {rc} {err!r}")
incomplete = work / "level1" / "2_NoInputs.py"
incomplete.write_text("import torch\n\nclass Model(torch.nn.Module):\n    pass\n")
rc, out, err, _ = vinci("optimize", incomplete, "--llm", "http://127.0.0.1:9/v1", "--model-name", "m",
                        "--device", "cpu", "--out", out_dir)
check(rc == 4 and "get_inputs, get_init_inputs" in err, f"task without get_inputs: {rc} {err!r}")

sys.exit(1 if failures else 0)
