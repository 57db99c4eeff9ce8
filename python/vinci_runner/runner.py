"""The sandboxed side of an evaluation: one process runs one candidate's ModelNew (or, in the trusted
reference runner, the task's Model) and answers calls.

Every call gets its inputs from a seed the trusted side picks, runs the model once under the clock,
copies the outputs into the runner's slots, and answers with the claimed time and a commitment to
the slots' bytes; the trusted side asks for the bytes of the calls it checks (all correctness
calls, a random subset of timed ones). Nothing here decides a verdict: replies are claims.

Requests (JSON lines on the control socket) and replies:
  {"op": "load", "task_name", "task_source", "scale", "candidate_name", "candidate_source"|null, "specs",
   "input_specs", "seed", "numerics", "kernel_names", "flush_bytes", "compile"}
                                                      -> {"ok", "load_s"} | a failure
  {"op": "call", "id", "seed", "kind", "key", "deliver", "monitor", "profile", "from_buffer", "input_values"}
                                                      -> {"ok", "id", "ms", "commitment", "values", "signals"}
  {"op": "null", ...same as call}                     -> the call without the forward (overhead probe)
  {"op": "open", "id"}                                -> the last call's outputs into the buffer
  {"op": "time", "calls", "warmup", "seed"}           -> {"ok", "times"} (reference runner: baselines)
  {"op": "coverage", "seeds", "seconds"}              -> {"ok", "calls"} (CPU: forward calls to sample)
While loading, the runner may ask {"op": "compile", "args"} and waits for {"ok", "path" | "log"}.
A failure is {"ok": false, "class", "reason", "message"}.
"""
from __future__ import annotations

import os
import random
import sys
import time
import traceback

import torch

from . import inputs as inputs_mod
from . import loader, monitors, outputs
from .channel import Channel, SharedBuffer
from .logs import trim_log
from .timing import Clock


class Failure(Exception):
    def __init__(self, cls: str, reason: str, message: str, **extra):
        super().__init__(message)
        self.reply = {"ok": False, "class": cls, "reason": reason, "message": message, **extra}


PROFILE_KERNELS = 8  # kernels a profiled call lists, by GPU time


def error_reason(e: BaseException) -> str:
    text = str(e)
    if isinstance(e, (torch.OutOfMemoryError, MemoryError)) or "can't allocate memory" in text:
        return "out_of_memory"
    if "CUDA error" in text or "illegal memory access" in text or type(e).__name__ == "AcceleratorError":
        return "cuda_error"
    if isinstance(e, (SystemExit, KeyboardInterrupt)):
        return "exited"
    return "exception"


class Runner:
    def __init__(self, channel: Channel, buffer_fd: int, inputs_fd: int, device: str):
        self.channel = channel
        self.buffer_fds = (buffer_fd, inputs_fd)
        self.buffer = self.input_buffer = None
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda:
            torch.cuda.set_device(self.device)
        self.calls = monitors.ExtensionCalls()
        self.model = None
        self.slots: list = []
        self._warm_up()

    def _warm_up(self):
        """Done on start, while the trusted side keeps this runner as a spare and the previous
        candidate is still measured: the CUDA context, the profiler and Triton's import cost seconds
        that would otherwise sit on the one GPU worker's critical path in every load. The monitors'
        first use also lazily rebinds torch attributes, which must happen before any patch
        snapshot."""
        self._warm_up_monitors()
        if self.cuda:
            try:
                import triton  # noqa: F401
                import triton.language  # noqa: F401
            except ImportError:
                pass

    # --- loading ---------------------------------------------------------------------------
    def compile_remote(self, arguments: dict) -> dict:
        self.channel.send({"op": "compile", "args": arguments})
        return self.channel.receive()

    @staticmethod
    def _materialize(folder: str, name: str, source: str) -> str:
        """Writes a source the judge sent into this runner's scratch: it imports from files (Triton
        reads its kernels' source back), and no other path of the host is needed."""
        os.makedirs(folder, exist_ok=True)
        path = os.path.abspath(os.path.join(folder, os.path.basename(name)))
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        return path

    def load(self, req):
        # The judge sized the shared buffers for this task before sending the request (a reference
        # runner loads one task after another).
        for b in (self.buffer, self.input_buffer):
            if b is not None:
                b.unmap()
        self.buffer, self.input_buffer = (SharedBuffer(fd) if fd >= 0 else None for fd in self.buffer_fds)
        numerics = req.get("numerics", {})
        torch.backends.cuda.matmul.allow_tf32 = bool(numerics.get("allow_tf32_matmul", False))
        torch.backends.cudnn.allow_tf32 = bool(numerics.get("allow_tf32_cudnn", False))
        torch.set_float32_matmul_precision("high" if numerics.get("allow_tf32_matmul") else "highest")
        t0 = time.perf_counter()
        task = self._materialize("task", req["task_name"], req["task_source"])
        try:
            self.task, _ = loader.load_task(task, float(req.get("scale", 1.0)), "vinci_task")
        except loader.TaskError as e:
            raise Failure("invalid_task", e.reason, str(e)) from None
        self.kernel_names = set(req.get("kernel_names", []))
        self.low_precision = bool(req.get("low_precision", False))
        candidate = None
        if req.get("candidate_source") is not None:
            candidate = self._materialize("candidate", req["candidate_name"], req["candidate_source"])
        self.snapshot = None
        if candidate:
            loader.install_compile_hook(self.compile_remote, wrap=self.calls.wrap_module)
            self.snapshot = monitors.PatchSnapshot()
            module = self._import_candidate(candidate)
            cls = getattr(module, "ModelNew", None)
            if not isinstance(cls, type):
                raise Failure("compile_error", "no_model_new", "the candidate defines no class ModelNew")
            if issubclass(cls, self.task.Model):
                raise Failure("rejected", "reference_model", "ModelNew is a subclass of the reference Model")
        else:
            cls = self.task.Model
        inputs_mod.seed_everything(int(req.get("seed", 42)))
        try:
            with self.device:  # parameters are created where they live
                model = cls(*self.task.get_init_inputs()).to(self.device).eval()
        except loader.BuildError as e:
            raise Failure("compile_error", "build_failed", trim_log(str(e))) from None
        except Exception as e:
            raise Failure("runtime_error", error_reason(e), f"ModelNew(*get_init_inputs()) raised "
                          f"{type(e).__name__}: {trim_log(str(e))}") from None
        if req.get("compile"):
            model = torch.compile(model)
        self.model = model
        self.specs = req["specs"]
        self.slots = [torch.empty(s["shape"], dtype=outputs.dtype_of(s["dtype"]), device=self.device)
                      if s["kind"] == "tensor" else None for s in self.specs]
        self.null_outputs = None  # the overhead probe's outputs, made on its first call (reference runner)
        # On the CPU the commitment works in buffers of its own, so a call allocates the same every
        # time (the CPU-time check reads it); a GPU's caching allocator needs no such help.
        self.scratch = None if self.cuda else outputs.commitment_scratch(self.slots)
        self.input_specs = req.get("input_specs") or []
        self.input_tensors = [torch.empty(s["shape"], dtype=outputs.dtype_of(s["dtype"]), device=self.device)
                              if s["kind"] == "tensor" else None for s in self.input_specs]
        self.clock = Clock(self.device, int(req.get("flush_bytes", 32 << 20)))
        return {"ok": True, "load_s": time.perf_counter() - t0}

    def _import_candidate(self, path: str):
        name = loader.candidate_module_name(path)
        try:
            return loader.import_file(path, name)
        except loader.BuildError as e:
            raise Failure("compile_error", "build_failed", trim_log(str(e))) from None
        except SyntaxError as e:
            raise Failure("compile_error", "syntax_error", f"{e.msg} (line {e.lineno})") from None
        except BaseException as e:  # SystemExit included: the module's code is the candidate's
            raise Failure("compile_error", "import_failed",
                          f"importing the candidate raised {type(e).__name__}: {trim_log(str(e))}") from None

    def _warm_up_monitors(self):
        """Runs the monitors once before any snapshot: their first use lazily rebinds torch
        attributes, which must not read as a candidate's patch."""
        x = torch.ones(4, device=self.device)
        with monitors.TorchOpMonitor(False), torch.no_grad():
            (x + 1).sum()
        if self.cuda:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
                (x * 2).sum()
            torch.cuda.synchronize(self.device)

    # --- calls -----------------------------------------------------------------------------
    def call(self, req):
        return self._call(req, self.model)

    def null(self, req):
        """Everything a call does but the forward: the trusted overhead probe."""
        if self.null_outputs is None:
            self.null_outputs = [torch.zeros_like(t) if t is not None else None for t in self.slots]
        return self._call(req, lambda *a: self.null_outputs[0] if len(self.null_outputs) == 1 else
                          tuple(self.null_outputs))

    def _call(self, req, model):
        if model is None:
            raise Failure("runtime_error", "protocol", "call before load")
        args = self._arguments(req)
        monitor = bool(req.get("monitor"))
        profile = bool(req.get("profile")) and self.cuda
        signals: dict = {}
        before = [a.clone() if isinstance(a, torch.Tensor) else None for a in args] if monitor else None
        if monitor:
            _poison_free_memory(self.device, self.slots)
        self.clock.flush()
        self.clock.sync()
        try:
            with torch.no_grad():
                if monitor:
                    out, elapsed, signals = self._monitored(model, args, profile)
                else:
                    out, elapsed = self.clock.timed(model, args)
                outs = outputs.flatten(out)
                mismatch = self._fill_slots(outs)
                commitment = outputs.commitment(self.slots, int(req.get("key", 0)), self.scratch) if not mismatch else 0
                self.clock.sync()
        except Failure:
            raise
        except BaseException as e:
            raise Failure("runtime_error", error_reason(e), f"forward raised {type(e).__name__}: "
                          f"{trim_log(str(e))}") from None
        ms = elapsed()
        if monitor:
            signals.update(self._after_call(outs, args, before))
        if mismatch:
            raise Failure("rejected" if mismatch[0] == "output_not_dense" else "incorrect", *mismatch)
        if req.get("deliver"):
            self._deliver()
        values = [o if s["kind"] == "value" else None for o, s in zip(outs, self.specs)]
        return {"ok": True, "id": req.get("id"), "ms": ms, "commitment": commitment,
                "values": [v if isinstance(v, (int, float, bool, str, type(None))) else repr(v) for v in values],
                "signals": signals}

    def _arguments(self, req) -> list:
        """The call's inputs: made from its seed, or (timed CPU calls) copied from the input buffer
        the trusted side filled while this process was stopped."""
        if req.get("from_buffer"):
            if self.input_buffer is None:
                raise Failure("runtime_error", "protocol", "a buffered call without an input buffer")
            outputs.read_into(self.input_buffer, self.input_specs, self.input_tensors)
            values = req.get("input_values") or []
            return [t if s["kind"] == "tensor" else v for t, s, v in zip(self.input_tensors, self.input_specs, values)]
        try:
            return inputs_mod.make_inputs(self.task, int(req["seed"]), req.get("kind", "task"), self.device)
        except Exception as e:
            raise Failure("invalid_task", "get_inputs_failed", f"get_inputs() raised {type(e).__name__}: {e}") from None

    def _monitored(self, model, args, profile: bool):
        op_monitor = monitors.TorchOpMonitor(self.low_precision)
        census = monitors.Census()
        tripwire = monitors.Tripwire(self.task.Model)
        self.calls.reset()
        prof = None
        if profile:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
            prof.__enter__()
        try:
            with tripwire, op_monitor:
                out, elapsed = self.clock.timed(model, args)
            self.clock.sync()
        finally:
            if prof is not None:
                prof.__exit__(None, None, None)
        signals = {"torch_ops": op_monitor.compute_ops, "precision_drops": op_monitor.precision_drops,
                   "escapes": census.escapes(), "reference_called": tripwire.called,
                   "patched": self.snapshot.changes() if self.snapshot else [],
                   "flags_changed": self.snapshot.flag_changes() if self.snapshot else []}
        if prof is not None:
            launches, coverage, busy_ms, kernels = _profile_summary(prof, self.kernel_names)
            signals.update(launches=launches, coverage=coverage, gpu_busy_ms=busy_ms, profile=kernels)
        elif not self.cuda:
            signals["launches"] = self.calls.calls
        return out, elapsed, signals

    def _fill_slots(self, outs) -> tuple[str, str] | None:
        """Copies the outputs into the slots; (reason, message) when they do not fit the specs."""
        if len(outs) != len(self.specs):
            return "shape_mismatch", f"returned {len(outs)} outputs, the reference returns {len(self.specs)}"
        for i, (o, s, slot) in enumerate(zip(outs, self.specs, self.slots)):
            if s["kind"] != "tensor":
                continue
            if type(o) is not torch.Tensor:
                what = type(o).__name__
                return ("shape_mismatch", f"output {i} is a {what}, not a plain tensor") if not isinstance(o, torch.Tensor) \
                    else ("output_not_dense", f"output {i} is a {what}, a tensor subclass")
            if o.layout != torch.strided:
                return "output_not_dense", f"output {i} has layout {o.layout}"
            if list(o.shape) != s["shape"]:
                return "shape_mismatch", f"output {i} has shape {tuple(o.shape)}, the reference {tuple(s['shape'])}"
            if outputs.dtype_name(o.dtype) != s["dtype"]:
                return "dtype_mismatch", f"output {i} is {o.dtype}, the reference torch.{s['dtype']}"
            if o.device != slot.device:
                return "shape_mismatch", f"output {i} is on {o.device}, the reference on {slot.device}"
            slot.copy_(o)
        return None

    def _after_call(self, outs, args, before) -> dict:
        found: dict = {}
        for i, (a, b) in enumerate(zip(args, before)):
            if isinstance(a, torch.Tensor) and not torch.equal(a, b):
                found["mutated_input"] = i
                break
        storages = {x.untyped_storage().data_ptr(): j for j, x in enumerate(args) if isinstance(x, torch.Tensor)}
        for i, o in enumerate(outs):
            if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in storages:
                found["aliased"] = [i, storages[o.untyped_storage().data_ptr()]]
                break
        return found

    def coverage(self, req):
        """Calls forward over a few prepared inputs for a while, so that the trusted side's CPU
        sampler sees where a call's time goes (inputs are made first, outside the sampled calls)."""
        sets = [inputs_mod.make_inputs(self.task, int(seed), "task", self.device) for seed in req["seeds"]]
        calls, start = 0, time.perf_counter()
        with torch.no_grad():
            while time.perf_counter() - start < float(req["seconds"]) or calls < len(sets):
                self.model(*sets[calls % len(sets)])
                calls += 1
        return {"ok": True, "calls": calls}

    def open(self, req):
        self._deliver()
        return {"ok": True, "id": req.get("id")}

    def _deliver(self) -> None:
        if self.cuda:
            self.buffer.pin()  # once per load; unpinned, it still works, slower
        outputs.write(self.buffer, self.specs, self.slots)

    def time(self, req):
        """Timed calls of this runner's model in one request: the trusted reference runner's
        baselines (a candidate's calls go one by one, each seen by the trusted wall clock)."""
        start = time.perf_counter()
        n, warmup = int(req["calls"]), int(req.get("warmup", 5))
        rng = random.Random(int(req.get("seed", 0)))
        times = []
        for i in range(warmup + n):
            args = inputs_mod.make_inputs(self.task, rng.getrandbits(62), "task", self.device)
            self.clock.flush()
            self.clock.sync()
            with torch.no_grad():
                out, elapsed = self.clock.timed(self.model, args)
                self._fill_slots(outputs.flatten(out))
                outputs.commitment(self.slots, i, self.scratch)
                self.clock.sync()
            if i >= warmup:
                times.append(elapsed())
            if req.get("budget_s") and i >= warmup + int(req.get("min_calls", 10)) and \
                    time.perf_counter() - start > float(req["budget_s"]):
                break
        return {"ok": True, "times": times}


def _profile_summary(prof, names):
    """(custom launches, time coverage, GPU busy ms, kernels by GPU time) of one profiled call."""
    custom, total, custom_t = 0, 0.0, 0.0
    spans, by_name = [], {}
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        dt = getattr(ev, "device_time", None)
        dt = ev.cuda_time if dt is None else dt
        total += dt
        spans.append((ev.time_range.start, ev.time_range.end))
        mine = _kernel_identifier(ev.name) in names
        if mine:
            custom += 1
            custom_t += dt
        k = by_name.setdefault(ev.name, {"name": ev.name[:160], "calls": 0, "total_us": 0.0, "custom": mine})
        k["calls"] += 1
        k["total_us"] += dt
    kernels = sorted(by_name.values(), key=lambda k: -k["total_us"])[:PROFILE_KERNELS]
    return custom, (custom_t / total if total > 0 else 0.0), _union_ms(spans), kernels


def _kernel_identifier(name: str) -> str:
    import re

    name = re.sub(r"^void\s+", "", name.strip()).split("(", 1)[0]
    depth, plain = 0, []
    for ch in name:
        depth += ch == "<"
        if depth == 0:
            plain.append(ch)
        depth -= ch == ">"
    return "".join(plain).split("::")[-1].strip()


def _union_ms(spans) -> float:
    """Length of the union of [start, end] intervals in microseconds, as milliseconds."""
    total, end = 0.0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total / 1000.0


def _poison_free_memory(device, like) -> None:
    """Fills free allocator blocks of the outputs' size with NaN, so an output never written reads
    as NaN rather than as whatever an earlier call left there."""
    nbytes = max(sum(x.numel() * x.element_size() for x in like if isinstance(x, torch.Tensor)), 1 << 20) * 3 // 2
    junk = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(float("nan"))
    del junk


OPS = ("load", "call", "null", "open", "time", "coverage")


def serve(control_fd: int, buffer_fd: int, inputs_fd: int, device: str) -> int:
    os.dup2(2, 1)  # whatever the candidate prints goes to the log, never anywhere else
    sys.stdout = sys.stderr
    channel = Channel.from_fd(control_fd)
    runner = Runner(channel, buffer_fd, inputs_fd, device)
    while True:
        try:
            req = channel.receive()
        except Exception:
            return 0
        op = req.get("op")
        if op == "exit":
            return 0
        try:
            if op not in OPS:
                raise Failure("runtime_error", "protocol", f"unknown op {op!r}")
            reply = getattr(runner, op)(req)
        except Failure as f:
            reply = f.reply
        except BaseException as e:  # noqa: BLE001 - the runner reports, the trusted side decides
            reply = {"ok": False, "class": "runtime_error", "reason": error_reason(e),
                     "message": trim_log(f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")}
        channel.send(reply)
