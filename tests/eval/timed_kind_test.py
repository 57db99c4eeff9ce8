"""The inputs a task's calls are timed on (python/vinci_worker/judge.py, timed_kind), and why.

Red-team round 18 narrowed a matmul's operands to fp16 with stochastic rounding: the errors average
out, so on the task's own values (all in [0, 1), rounding-biased) the product stays inside fp32's
relative-error bound, and the kernel took the exact path on any draw a scan told apart from those.
Timed on signed values, where a dot product cancels, the same narrowing fails the bound, so such a
fast path is never the one timed. A kind on which the reference is not finite leaves the timed
calls nothing to be checked against, and is passed over.

    python3 tests/eval/timed_kind_test.py REPO_ROOT
"""
import os
import sys
import tempfile

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import torch  # noqa: E402

from vinci_runner import inputs, loader  # noqa: E402
from vinci_worker import compare  # noqa: E402
from vinci_worker.judge import timed_kind  # noqa: E402


def task_with(forward: str) -> object:
    source = f'''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return {forward}


def get_inputs():
    return [torch.rand(64, 256), torch.rand(256, 32)]


def get_init_inputs():
    return []
'''
    folder = tempfile.mkdtemp(prefix="timed-kind-")
    path = os.path.join(folder, "task.py")
    with open(path, "w") as f:
        f.write(source)
    module, _ = loader.load_task(path, 1.0, f"timed_kind_{abs(hash(forward))}")
    return module


def chosen(forward: str) -> str:
    module = task_with(forward)
    model = module.Model()
    return timed_kind(module, lambda args: [model(*args)], 11, torch.device("cpu"), True)


check(chosen("a @ b") == "signed", f"a matmul is timed on signed values: {chosen('a @ b')}")
check(chosen("torch.log(a) @ b") == "offset", f"log needs positive inputs, offset keeps them: {chosen('torch.log(a) @ b')}")
both = "(torch.log(a) + torch.log(1 - a)) @ b"
check(chosen(both) == "task", f"no kind but the task's keeps log(a) + log(1 - a) finite: {chosen(both)}")


def stochastic_fp16(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """x narrowed to fp16 precision, rounding up with the probability of the dropped fraction (zero-mean
    errors, whatever the dropped bits are)."""
    down = x.half().float()
    down = torch.where(down > x, torch.nextafter(down.half(), torch.tensor(-float("inf")).half()).float(), down)
    up = torch.nextafter(down.half(), torch.tensor(float("inf")).half()).float()
    fraction = ((x - down) / (up - down)).clamp(0, 1)
    return torch.where(torch.rand(x.shape, generator=generator) < fraction, up, down)


class Matmul:
    @staticmethod
    def get_inputs():
        return [torch.rand(64, 1024), torch.rand(1024, 64)]


def narrowed_verdict(kind: str):
    a, b = inputs.make_inputs(Matmul, 5, kind, torch.device("cpu"), rounding=True)
    g = torch.Generator().manual_seed(6)
    exact = a.double() @ b.double()
    reference = a @ b
    narrowed = stochastic_fp16(a, g) @ stochastic_fp16(b, g)
    return compare.relative_error([reference], [exact], [reference]), compare.relative_error([narrowed], [exact], [reference])


honest, narrowed = narrowed_verdict("task")
check(honest is None and narrowed is None,
      f"on the task's values stochastically rounded fp16 operands pass the relative-error bound: {narrowed}")
honest, narrowed = narrowed_verdict("signed")
check(honest is None and narrowed is not None,
      f"on signed values they fail it, and fp32 passes: honest {honest}, narrowed {narrowed}")

sys.exit(finish("timed kinds: ok"))
