"""What a call leaves changed in its process for the caller's later code
(python/vinci_runner/process_state.py): switches read back as they were, and random generators may only
move forward. Red-team round 66's exact ReLUs left CPU autocast on or reseeded torch's generator on every
call, both `correct`. The walk of regenerations is held to CPython's generator drawn as a user draws,
and each generator's moves are made as a kernel or a user makes them: torch's and NumPy's own draws.

    python3 tests/eval/process_state_test.py REPO_ROOT
"""
import importlib
import random
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from checks import check, finish  # noqa: E402
from vinci_runner import process_state  # noqa: E402


def changed(action) -> list[str]:
    """The names of what action leaves changed, as a state look after it sees them."""
    before = process_state.Mark()
    action()
    return [c["what"] for c in before.changes(process_state.Mark())]


def precision_of(action) -> list[bool]:
    before = process_state.Mark()
    action()
    return [c["precision"] for c in before.changes(process_state.Mark())]


def main() -> int:
    # The walk against CPython's generator, drawn as a user draws: 624 draws regenerate its words once.
    for seed, twists in ((0, 1), (1, 7), (2**31 + 7, 3000)):
        rng = random.Random(seed)
        words = np.array(rng.getstate()[1][:624], dtype=np.uint32)
        for _ in range(624 * twists):
            rng.getrandbits(32)
        later = np.array(rng.getstate()[1][:624], dtype=np.uint32)
        check(process_state.twisted_from(words, later), f"seed {seed}: {twists} regenerations found")
        check(not process_state.twisted_from(later, words), f"seed {seed}: no walk leads back")
    check(not process_state.twisted_from(words, np.array(random.Random(5).getstate()[1][:624], dtype=np.uint32)),
          "another seed's words are reached by no walk")

    check(changed(lambda: None) == [], "nothing done, nothing changed")

    # Draws move every generator forward, however many: allowed, as a dropout's are.
    check(changed(lambda: torch.rand(10)) == [], "a few of torch's draws")
    check(changed(lambda: torch.rand(3_000_000)) == [], "millions of torch's draws (thousands of twists)")
    check(changed(lambda: (random.random(), np.random.rand(5000))) == [], "Python's and NumPy's draws")

    # Reseeding or rewinding is what a user's later draws would repeat.
    check(changed(lambda: torch.manual_seed(0)) == ["torch.default_generator"], "torch reseeded")
    saved = torch.default_generator.get_state()
    torch.rand(5000)
    check(changed(lambda: torch.default_generator.set_state(saved)) == ["torch.default_generator"],
          "torch's generator rewound to a state it had")
    check(changed(lambda: random.seed(3)) == ["random"], "Python's generator reseeded")
    check(changed(lambda: np.random.seed(3)) == ["numpy.random"], "NumPy's global generator reseeded")
    # Rewound, then drawn past where it was: the user's draws from here are those a kernel drawing that
    # many would have left, so nothing repeats for them.
    here = torch.default_generator.get_state()
    torch.rand(100)
    look = process_state.Mark()
    torch.default_generator.set_state(here)
    torch.rand(1000)
    check(look.changes(process_state.Mark()) == [], "rewound and drawn past where it was: forward")

    # Switches, each named, and put back after.
    def autocast_on():
        torch.set_autocast_enabled("cpu", True)
    check(changed(autocast_on) == ["autocast.cpu"], "CPU autocast left on")
    torch.set_autocast_enabled("cpu", False)
    check(changed(lambda: torch.set_autocast_dtype("cpu", torch.float16)) == ["autocast.cpu.dtype"],
          "CPU autocast's dtype changed")
    torch.set_autocast_dtype("cpu", torch.bfloat16)
    check(changed(lambda: torch.set_default_dtype(torch.float64)) == ["default_dtype"], "the default dtype")
    torch.set_default_dtype(torch.float32)
    check(changed(lambda: torch.use_deterministic_algorithms(True)) == ["deterministic_algorithms"],
          "deterministic algorithms switched on")
    torch.use_deterministic_algorithms(False)
    check(changed(lambda: torch.autograd.set_detect_anomaly(True)) == ["anomaly_detection"], "anomaly detection")
    torch.autograd.set_detect_anomaly(False)

    # Precision switches are told apart: TF32 and the newer fp32_precision settings. Setting one of those
    # apart from the legacy switch makes torch's matmul precision unreadable: a change, not an error.
    def tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
    check(precision_of(tf32) and all(precision_of(tf32)), "TF32 (and the matmul precision it sets) is a precision switch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    before = process_state.Mark()
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"
    found = {c["what"]: c for c in before.changes(process_state.Mark())}
    check("backends.mkldnn.matmul.fp32_precision" in found and all(c["precision"] for c in found.values()),
          f"oneDNN's fp32 matmul precision lowered: {sorted(found)}")
    torch.backends.mkldnn.matmul.fp32_precision = "none"
    check(changed(lambda: torch.set_autocast_enabled("cpu", False)) == [], "a switch set to what it was")

    # Torch's Python side (red-team round 67): a global module hook, autograd's default saved-tensor
    # hooks, a Python kernel over an aten operator; each named, and gone again once removed.
    handle = None

    def global_hook():
        nonlocal handle
        handle = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
    check(changed(global_hook) == ["_global_forward_hooks"], "a global forward hook left registered")
    check(changed(handle.remove) == ["_global_forward_hooks"], "and its removal is a change back")
    hooks = torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    check(changed(hooks.__enter__) == ["saved_tensors_default_hooks"], "default saved-tensor hooks left pushed")
    hooks.__exit__(None, None, None)
    libraries = []

    def gelu_override():
        libraries.append(torch.library.Library("aten", "IMPL"))
        libraries[-1].impl("gelu", lambda x, approximate="none": x, "CPU")
    check(changed(gelu_override) == ["aten_python_kernels"], "a Python kernel over aten::gelu on the CPU")

    # aten's dispatch tables, read whole (red-team round 68): a kernel at a key no list names is a change;
    # torch's own lazily imported registrations (dynamo, inductor) are not.
    importlib.import_module("torch._dynamo")
    importlib.import_module("torch._inductor")
    before_tanh = set(process_state.dispatch_changes())
    libraries.append(torch.library.Library("aten", "IMPL"))
    libraries[-1].impl("tanh", lambda x: x, "ADInplaceOrView")
    check(set(process_state.dispatch_changes()) - before_tanh == {"aten::tanh"},
          f"a kernel over aten::tanh at ADInplaceOrView: {process_state.dispatch_changes()}")
    check(before_tanh == {"aten::gelu"}, f"only the earlier gelu kernel, torch's imports none: {before_tanh}")

    # The pool: a team as large as the process's threads is read; flush-to-zero set in it through torch's
    # own switch, which sets it in every thread that runs the switch's parallel region.
    torch.set_num_threads(4)
    torch.ones(1 << 20).add_(1)  # the pool started
    threads = process_state.pool_threads()
    check(threads >= 4, f"the pool's threads are the process's: {threads}")
    before = process_state.Mark(threads)
    check(before.precision.get("fp.intra_op_threads") == "nearest, subnormals kept", f"a clean pool: {before.precision}")
    return finish("what a call leaves changed in its process")


if __name__ == "__main__":
    sys.exit(main())
