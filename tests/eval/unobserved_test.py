"""What could watch the judge's moves of a model's state (python/vinci_runner/unobserved.py).

Red-team round 48 refreshed a cache exactly when the judge's move ran in the candidate's process.
Each way Python offers to watch a move is set up here, one at a time, and must be named by
Watchers.problems with its reason; undone, nothing is named:
- the runner's code: a function replaced in a module's dictionary, a function's __code__ swapped, a
  method of a runner class replaced, a method set on one of the runner's objects (round 49: the
  channel's own `receive`);
- the state: an nn.Parameter subclass (its __torch_function__ sees the move), while plain tensors,
  nn.Parameters and buffers pass;
- a dispatch mode left active; a torch.library kernel registered anew for an operator a move runs
  (the recorded operators include isin and _to_copy, which a move runs);
- a trace function; a Python thread alive past its call; a signal handler set;
- quiet(): no garbage collection and no torch function handling inside, both restored after;
- refuse_watchers(): afterwards sys.settrace and sys._current_frames raise, and an audit hook added
  later never sees an event (checked last: audit hooks cannot be removed).

    python3 tests/eval/unobserved_test.py REPO_ROOT
"""
import gc
import os
import signal
import sys
import threading

ROOT = sys.argv[1]
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from vinci_runner import model_state, runner, unobserved  # noqa: E402

failures = []


def expect(label: str, problems: list, reason: str | None) -> None:
    reasons = [r for r, _ in problems]
    ok = reasons == [] if reason is None else reason in reasons
    print(("ok   " if ok else "FAIL ") + f"{label}: {problems}")
    if not ok:
        failures.append(label)


runner.warm_up_interpreter(False)
watchers = unobserved.Watchers(torch.device("cpu"))
plain = [("weight", torch.nn.Parameter(torch.randn(4, 4))), ("running_mean", torch.randn(4))]
expect("as imported", watchers.problems(plain), None)
for op in ("aten::isin.Tensor_Tensor", "aten::_to_copy", "aten::copy_"):
    expect(f"{op} is among a move's operators", [] if op in watchers.kernels else [("missing", op)], None)

original = model_state.perturb
model_state.perturb = lambda *a, **k: original(*a, **k)
expect("a module's function replaced", watchers.problems(plain), "monkey_patch")
model_state.perturb = original
expect("put back", watchers.problems(plain), None)

code = original.__code__
original.__code__ = code.replace(co_name="perturb")  # an equal code object, yet another one
expect("a function's code swapped", watchers.problems(plain), "monkey_patch")
original.__code__ = code

class Served:
    def receive(self):
        return {}


served = Served()
watchers.guard(("channel", served, ()))
served.receive = lambda: {"op": "perturb"}
expect("an object's own method set", watchers.problems(plain), "monkey_patch")
del served.receive
expect("its own method removed", watchers.problems(plain), None)

method = runner.Runner.perturb
runner.Runner.perturb = lambda self, req: method(self, req)
expect("a runner method replaced", watchers.problems(plain), "monkey_patch")
runner.Runner.perturb = method


class Watched(torch.nn.Parameter):
    pass


expect("a Parameter subclass in the state", watchers.problems(plain + [("w2", Watched(torch.ones(3)))]),
       "watched_the_judge")


class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


with Mode():
    expect("a dispatch mode active", watchers.problems(plain), "watched_the_judge")
expect("the mode left", watchers.problems(plain), None)

library = torch.library.Library("aten", "IMPL")
library.impl("isin.Tensor_Tensor", lambda *a, **k: None, "CPU")
expect("isin's CPU kernel registered anew", watchers.problems(plain), "watched_the_judge")
del library  # the registration goes with its library
expect("the registration gone", watchers.problems(plain), None)

sys.settrace(lambda *a: None)
expect("a trace function", watchers.problems(plain), "watched_the_judge")
sys.settrace(None)

release = threading.Event()
thread = threading.Thread(target=release.wait, name="left-behind")
thread.start()
expect("a thread alive past its call", watchers.problems(plain), "threads_processes")
release.set()
thread.join()
expect("the thread ended", watchers.problems(plain), None)

previous = signal.signal(signal.SIGUSR1, lambda *a: None)
expect("a signal handler set", watchers.problems(plain), "watched_the_judge")
signal.signal(signal.SIGUSR1, previous)
expect("the handler put back", watchers.problems(plain), None)

with watchers.quiet():
    inside = (gc.isenabled(), torch._C._is_torch_function_enabled())
after = (gc.isenabled(), torch._C._is_torch_function_enabled())
expect("quiet(): gc and torch function off inside, on after",
       [] if inside == (False, False) and after == (True, True) else [("state", (inside, after))], None)

unobserved.refuse_watchers()
for name, attempt in (("sys.settrace", lambda: sys.settrace(lambda *a: None)),
                      ("sys._current_frames", sys._current_frames)):
    try:
        attempt()
        refused = False
    except RuntimeError:
        refused = True
    sys.settrace(None) if not refused and name == "sys.settrace" else None
    expect(f"{name} refused", [] if refused else [("allowed", name)], None)
seen = []
sys.addaudithook(lambda event, args: seen.append(event))
open(os.devnull).close()
expect("a later audit hook sees nothing", [("saw", seen[:3])] if seen else [], None)

if failures:
    print(f"{len(failures)} failed: {failures}")
    sys.exit(1)
print("ok")
