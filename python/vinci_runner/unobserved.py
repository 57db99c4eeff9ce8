"""The judge's moves of a model's state, where the candidate's code cannot watch them happen.

The judge moves the model's state between calls (model_state.perturb, op `perturb`) inside the
candidate's own process. A cache refreshed exactly when a move runs, and never otherwise, is right on
every judged call and stale after every change a user makes. Red-team round 48 did it twice on
8_MatmulRowSum (`correct` at 2.6-3.4x, 31.9 off after a user's load_state_dict): by replacing
model_state.perturb from ModelNew.__init__, and with weights of an nn.Parameter subclass whose
__torch_function__ saw the move's widening copy. So a move must look to the candidate like any other
change of its weights. Before each one the runner checks the ways to watch it that rounds 48 and 49
used and their neighbours, against what held before the candidate was imported (Watchers; round 49
reached the move through a module global, an instance's own method, the checker itself and
nn.Parameter's class, so all four are recorded, and nn.Parameter is in monitors.PatchSnapshot):

  the runner's code      its modules' globals, functions and classes, their code objects, and its own
                         objects (the Runner, its Channel, this checker), as they were
  the state's tensors    plain torch.Tensor or nn.Parameter: a subclass intercepts every op on them
  torch's hooks          no torch function or dispatch mode on the stacks, and the kernels of every
                         ATen op a move runs registered as before (no torch.library override)
  the interpreter        no trace or profile function; no Python thread the candidate started; the
                         signal handlers as before (a handler is handed the running frame)

and runs the move with the garbage collector off (no finalizer or gc callback runs inside it) and
torch function handling disabled. refuse_watchers(), installed first when a runner starts, is an
audit hook that refuses new audit hooks (which see a move's reads), trace and profile functions, and
other threads' frames, from Python and from an extension's C alike.

What is left: a thread started natively (an extension's, or through ctypes) reading the control
socket, code or this checker's record rewritten in memory, and whatever Python object the move
reaches that is not recorded yet. A move written by the judge from outside while the runner is frozen closes that too, at the
price of caches keyed on `_version` (docs/threat_model.md, round 48).
"""
from __future__ import annotations

import contextlib
import gc
import signal
import sys
import threading
import types

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from . import model_state

# sys.monitoring's event exists from Python 3.12; naming it earlier is harmless.
REFUSED_EVENTS = frozenset({"sys.addaudithook", "sys.settrace", "sys.setprofile", "sys._current_frames",
                            "sys._current_exceptions", "sys.monitoring.register_callback"})
PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def refuse_watchers() -> types.FunctionType:
    """Installs the audit hook that refuses REFUSED_EVENTS; returns it, for Watchers to guard its
    code. Call before any candidate code exists: audit hooks cannot be removed, and one that raises
    on sys.addaudithook keeps every later one out."""
    refused = REFUSED_EVENTS

    def refuse(event, _args):
        if event in refused:
            raise RuntimeError(f"vinci's runner refuses {event}: a candidate may not watch the runner")
    sys.addaudithook(refuse)
    return refuse


def _runner_code(extra: tuple, objects: tuple = ()) -> dict:
    """Identity of every global of vinci_runner's modules (a module, a function, a constant: round 49
    swapped the runner's global `model_state` for a proxy), of their functions' and classes' methods,
    of each one's code, defaults and closure, and of every attribute of the runner's own objects
    (round 49 set an instance's `receive`, and replaced the runner's Watchers)."""
    found = {}

    def record(label, value):
        if isinstance(value, types.FunctionType):
            found[label] = (id(value), id(value.__code__), id(value.__defaults__), id(value.__kwdefaults__),
                            tuple(id(c.cell_contents) for c in value.__closure__ or ()))
        elif isinstance(value, (staticmethod, classmethod)):
            record(label, value.__func__)
        elif isinstance(value, type):
            found[label] = (id(value),)
            for k, v in list(vars(value).items()):
                if isinstance(v, (types.FunctionType, staticmethod, classmethod)):
                    record(f"{label}.{k}", v)
    for name, module in list(sys.modules.items()):
        if name != "vinci_runner" and not name.startswith("vinci_runner."):
            continue
        for k, v in list(vars(module).items()):
            if k.startswith("__"):
                continue
            if isinstance(v, (types.FunctionType, type)) and getattr(v, "__module__", "") == name:
                record(f"{name}.{k}", v)
            elif v is not None:  # a global set lazily (device_memory's driver) starts as None
                found[f"{name}.{k}"] = (id(v),)
    for i, f in enumerate(extra):
        record(f"<runner function {i}>", f)
    for label, obj, names in objects:
        found[label] = (id(type(obj)),)
        fields = object.__getattribute__(obj, "__dict__")
        shadowing = sorted(k for k in fields if hasattr(type(obj), k))  # an instance's own `receive`
        found[f"{label} (its own methods)"] = tuple(shadowing)
        for k in set(names) | set(shadowing):
            found[f"{label}.{k}"] = (id(fields.get(k)),)
    return found


def _move_ops(device: torch.device) -> list[str]:
    """The ATen operators (every overload) a move runs on the device, found by running moves of each
    floating dtype under modes that record the Python functions and the dispatched operators."""
    seen = set()

    class Functions(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            seen.add(getattr(func, "__name__", ""))
            return func(*args, **(kwargs or {}))

    class Operators(TorchDispatchMode):
        def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
            seen.add(func._schema.name.split("::")[-1])
            return func(*args, **(kwargs or {}))
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        sample = torch.linspace(-2, 2, 64, device=device).to(dtype).reshape(8, 8)
        only = model_state.value_set([sample[:2]]).to(device)
        for rounding, values in ((True, None), (False, only)):
            with Functions(), Operators():
                model_state.perturb([("sample", sample.clone())], 7, rounding, values)
    bases = set()
    for name in seen:
        bases |= {name, name.strip("_")}
    return sorted(n for n in torch._C._dispatch_get_all_op_names() if n.split("::")[-1].split(".")[0] in bases)


def _handlers() -> dict:
    found = {}
    for s in signal.valid_signals():
        try:
            found[int(s)] = signal.getsignal(s)
        except (OSError, ValueError):
            pass
    return found


class Watchers:
    """What could watch a move, as it was before the candidate was imported."""

    def __init__(self, device: torch.device, runner_functions: tuple = ()):
        self.extra = tuple(runner_functions)
        self.threads = {t.ident for t in threading.enumerate()}
        self.handlers = _handlers()
        self.kernels = {name: torch._C._dispatch_dump(name) for name in _move_ops(device)}
        self.objects = (("watchers", self, ("extra", "threads", "handlers", "kernels", "objects")),)
        self.code = _runner_code(self.extra, self.objects)
        self.code["watchers.code"] = (id(self.code),)

    def guard(self, *runner_objects) -> None:
        """Records more of the runner's objects, (label, object, attribute names), as they are now."""
        self.objects = tuple(runner_objects) + self.objects
        self.code = _runner_code(self.extra, self.objects)
        self.code["watchers.code"] = (id(self.code),)

    def problems(self, state: list) -> list[tuple[str, str]]:
        """(reason, message) for each way the move about to run could be watched."""
        found = []
        now = _runner_code(self.extra, self.objects)
        now["watchers.code"] = (id(self.code),)
        changed = sorted(k for k in self.code if now.get(k) != self.code[k])
        if changed:
            found.append(("monkey_patch", f"the runner's own code changed: {', '.join(changed[:5])}"))
        subclassed = [f"{name} is a {type(t).__name__}" for name, t in state if type(t) not in PLAIN_TYPES]
        if subclassed:
            found.append(("watched_the_judge", f"the model's state must be plain tensors or nn.Parameters "
                                               f"(a subclass sees every operation on it): {'; '.join(subclassed[:3])}"))
        if torch._C._len_torch_function_stack() or torch._C._len_torch_dispatch_stack():
            found.append(("watched_the_judge", "a torch function or dispatch mode was left active"))
        overridden = [n for n, dump in self.kernels.items() if torch._C._dispatch_dump(n) != dump]
        if overridden:
            found.append(("watched_the_judge", f"kernels registered anew for {', '.join(overridden[:5])}"))
        if sys.gettrace() is not None or sys.getprofile() is not None:
            found.append(("watched_the_judge", "a trace or profile function is set"))
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None and any(monitoring.get_tool(i) is not None for i in range(6)):
            found.append(("watched_the_judge", "a sys.monitoring tool is registered"))
        threads = [t.name for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        if threads:
            found.append(("threads_processes", f"Python threads outlive the calls that started them: {threads[:5]}"))
        handlers = _handlers()
        moved = sorted(signal.Signals(s).name for s in self.handlers if handlers.get(s) is not self.handlers[s])
        if moved:
            found.append(("watched_the_judge", f"signal handlers changed: {', '.join(moved[:5])}"))
        return found

    @staticmethod
    @contextlib.contextmanager
    def quiet():
        """No garbage collection (finalizers, gc.callbacks) and no torch function handling inside."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            with torch._C.DisableTorchFunction():
                yield
        finally:
            if collecting:
                gc.enable()
