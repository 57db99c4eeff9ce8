"""The sandboxed side of an evaluation: one process runs one model and answers calls.

The model is a candidate's ModelNew, or in the trusted reference runner the task's Model.

The judge writes each call's inputs where this process maps them (input sets: views over a memfd on
the CPU, over a GPU allocation the judge shares), starts the call, and reads the outputs in place
once the call has returned and this process is frozen. So a call here is only: run the model on the
input sets named, keep the outputs alive, and say where they are. Nothing here times, hashes or
decides anything: the judge does all of that from outside.

Requests (JSON lines on the control socket) and replies:
  {"op": "load", "task_name", "task_source", "scale", "candidate_name", "candidate_source"|null, "specs",
   "input_specs", "seed", "numerics", "kernel_names", "library_kernels", "low_precision", "compile", "protocol",
   "rounding", "threads" (the CPU's intra-op threads: 1 but in the plain trials' runner),
   "sizes"? (SCALABLE constants set after the scale: the plain trials' second shape), "constants"
   (the reference's constant tensors' keys, each with its pieces' names: model_state.vary_constants),
   "input_sets", "input_offsets", "input_bytes", "deliver", ["input_mapping_size" + 1 descriptor]}
                                          -> {"ok", "load_s"} | a failure
  {"op": "call", "id", "sets", "values", "monitor", "profile", "threads"?, "strided"? ("transposed",
   "padded" or "offset": inputs as inputs.strided_copy lays them out, outputs of any layout),
   "strided_inputs"? (the inputs' indices "strided" applies to; all when absent), "strided_state"? (a
   layout: the model's floating parameters and buffers re-laid so before the call, model_state.relay),
   "mode"? (one of model_state.CALL_MODES, a user's mode: training, gradients, inputs that require grad,
   inference mode, deterministic algorithms)}
                                          -> {"ok", "id", "outputs": [[{"ptr", "nbytes"} | {"value"}, ...] per set],
                                              "pieces": [{"id", "base", "size"}, ...] + one descriptor each (GPU),
                                              "signals"}
  {"op": "coverage", "seconds"}           -> {"ok", "calls"} (CPU: forward on input set 0, for the sampler)
  {"op": "state", "dispatch"?}            -> {"ok", "changes": [{"what", "was", "now", "precision"}, ...]}
                                             (what calls left changed in the process since the load or
                                             the last "state": process_state.Mark; with dispatch,
                                             aten's dispatch tables since the process started too)
  {"op": "perturb", "key", "rounding", "parameters"?, "assign"?, "positional"?: [{"name", "shape", "dtype"}],
   [descriptors: the values to move; for a lone move the whole state's values; with
   positional, the reference's moved tensors' bytes, in its order]}
                                          -> {"ok", "moved"} (the model's state moved as a new checkpoint
                                             would be loaded, or its parameters alone as an optimizer's
                                             step moves them: model_state.perturb; with assign, into
                                             new tensors put in the old ones' places, as a load with
                                             assign=True does: model_state.assign_moved; with
                                             "stage_at": j, the values to move are spiked in place by
                                             the next call, before its set j: model_state.spike_plan)
While loading, the runner may ask {"op": "compile", "args"} and waits for {"ok", "name", "reason"?, "log"?}
with the built library as a descriptor. A failure is {"ok": false, "class", "reason", "message"}.
"""
from __future__ import annotations

import functools
import os
import sys
import time
import traceback

import torch

from . import device_memory, loader, model_state, monitors, outputs, process_state, unobserved
from .channel import Channel, SharedBuffer
from .logs import trim_log


class Failure(Exception):
    def __init__(self, cls: str, reason: str, message: str, **extra):
        super().__init__(message)
        self.reply = {"ok": False, "class": cls, "reason": reason, "message": message, **extra}


PROFILE_KERNELS = 8  # kernels a profiled call lists, by GPU time
PROFILE_NAMES = 256  # distinct kernel names a profiled call reports
_perf_counter = time.perf_counter  # bound before any candidate code runs: replacing time's clocks leaves it alone


def error_reason(e: BaseException) -> str:
    text = str(e)
    if isinstance(e, (torch.OutOfMemoryError, MemoryError)) or "can't allocate memory" in text:
        return "out_of_memory"
    if "CUDA error" in text or "illegal memory access" in text or type(e).__name__ == "AcceleratorError":
        return "cuda_error"
    if isinstance(e, (SystemExit, KeyboardInterrupt)):
        return "exited"
    return "exception"


def warm_up_interpreter(cuda: bool) -> None:
    """What a runner's first load would otherwise pay, on no device: the monitors' first use (about
    0.9 s of CPU; it lazily rebinds torch attributes, which must happen before any patch snapshot)
    and, for a GPU, Triton's import. A zygote does it once before it forks (zygote.py): it starts no
    thread and creates no CUDA context."""
    x = torch.ones(4)
    with monitors.TorchOpMonitor(False), torch.no_grad():
        (x + 1).sum()
    if cuda:
        try:
            import triton  # noqa: F401
            import triton.language  # noqa: F401
        except ImportError:
            pass


class Runner:
    def __init__(self, channel: Channel, buffer_fd: int, inputs_fd: int, device: str, refuse=None):
        self.channel = channel
        self.buffer_fds = (buffer_fd, inputs_fd)
        self.output_buffer = self.input_buffer = None
        self.input_mapping: device_memory.Mapping | None = None
        self.strided_call = False  # this call's inputs strided, so its outputs may be too (call)
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda:
            torch.cuda.set_device(self.device)
        else:
            # The judge times the CPU time of every thread: intra-op threads would only add their
            # synchronisation, for the reference and the candidate alike.
            torch.set_num_threads(1)
        self.calls = monitors.ExtensionCalls()
        self.model = None
        self.state: list = []  # the model's floating tensors, taken at load (model_state.floating_state)
        self.input_views: list[list] = []
        self.kept: list = []  # the last call's outputs, alive until the judge has read them
        self.pieces: list[tuple[int, int]] = []  # (base, size) of each GPU page exported, by id
        self.shared: set[tuple[int, int]] = set()  # (ptr, nbytes) of outputs whose pages were exported
        self.staging: dict[tuple[int, int], torch.Tensor] = {}  # by (call, output)
        self._warm_up()
        # Taken before any candidate code exists: what could watch the judge's moves (unobserved.py).
        self.watchers = unobserved.Watchers(self.device, (refuse,) if refuse else ())
        self.watchers.guard(("runner", self, ("channel", "watchers", "calls")), ("channel", channel, ()))

    @staticmethod
    def _set_threads(n: int) -> None:
        """torch's intra-op thread count, set only where it changes: setting it runs MKL's service code
        (mkl_set_num_threads_local, mkl_set_dynamic) inside the call's window, where the trusted sampler
        weighs it as a math library's CPU time against the candidate (an honest GELU and a native-thread
        file of two CI runs were rejected as library_compute for 3-4 samples there)."""
        if torch.get_num_threads() != n:
            torch.set_num_threads(n)

    def _warm_up(self):
        """Done on start, before any load: the CUDA context costs seconds that would otherwise sit
        in the first load."""
        warm_up_interpreter(self.cuda)
        if self.cuda:
            x = torch.ones(4, device=self.device)
            with monitors.TorchOpMonitor(False), torch.no_grad():
                (x + 1).sum()
            # No profiler here: a process that has used CUPTI can never again be drained by the judge
            # (cuCheckpointProcessLock answers CUDA_ERROR_NOT_SUPPORTED, benchmarks/gpu_drain_probe.py);
            # the one profiled call comes after the timing.
            torch.cuda.synchronize(self.device)

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
        t0 = time.perf_counter()
        numerics = req.get("numerics", {})
        torch.backends.cuda.matmul.allow_tf32 = bool(numerics.get("allow_tf32_matmul", False))
        torch.backends.cudnn.allow_tf32 = bool(numerics.get("allow_tf32_cudnn", False))
        torch.set_float32_matmul_precision("high" if numerics.get("allow_tf32_matmul") else "highest")
        if not self.cuda:
            self._set_threads(max(1, int(req.get("threads", 1))))
        self._attach_inputs(req)
        task = self._materialize("task", req["task_name"], req["task_source"])
        try:
            self.task, _ = loader.load_task(task, float(req["scale"]), "vinci_task", req.get("sizes"))
        except loader.TaskError as e:
            raise Failure("invalid_task", e.reason, str(e)) from None
        self.kernel_names = set(req.get("kernel_names", []))
        self.library_kernels = set(req.get("library_kernels", []))
        self.low_precision = bool(req.get("low_precision", False))
        self.lenient_layout = req.get("protocol") == "kernelbench"
        candidate = None
        if req.get("candidate_source") is not None:
            candidate = self._materialize("candidate", req["candidate_name"], req["candidate_source"])
        self.snapshot = None
        if candidate:
            loader.install_compile_hook(self.compile_remote, wrap=self.calls.wrap_module)
            # The pool on every CPU runner, whatever its first count of threads: a runner whose first
            # call was on one thread never read it (red-team round 67, one evaluation in two).
            self.snapshot = monitors.PatchSnapshot(pool=not self.cuda)
            module = self._import_candidate(candidate)
            cls = getattr(module, "ModelNew", None)
            if not isinstance(cls, type):
                raise Failure("compile_error", "no_model_new", "the candidate defines no class ModelNew")
            if issubclass(cls, self.task.Model):
                raise Failure("rejected", "reference_model", "ModelNew is a subclass of the reference Model")
        else:
            cls = self.task.Model
        from . import inputs as inputs_mod
        inputs_mod.seed_everything(int(req.get("seed", 42)))
        try:
            # Parameters are created where they live, from rounding-biased draws where the judge's are.
            with self.device, inputs_mod.rounding_draws(bool(req.get("rounding"))):
                model = cls(*self.task.get_init_inputs()).to(self.device).eval()
            # A candidate's constants are drawn only where the reference has them (its keys and names).
            allowed = model_state.constant_counts_from_wire(req.get("constants")) if candidate else None
            model_state.vary_constants(model, int(req.get("seed", 42)), allowed)
            self.state = model_state.floating_state(model)
        except loader.BuildError as e:
            raise Failure("compile_error", e.reason, trim_log(str(e))) from None
        except Exception as e:
            raise Failure("runtime_error", error_reason(e), f"ModelNew(*get_init_inputs()) raised "
                          f"{type(e).__name__}: {trim_log(str(e))}") from None
        if req.get("compile"):
            model = torch.compile(model)
        self.model = model
        self.specs = req["specs"]
        return {"ok": True, "load_s": time.perf_counter() - t0}

    def _attach_inputs(self, req) -> None:
        """Views of the input sets the judge fills: a reference runner loads task after task, so
        the previous task's views and mappings go first."""
        self.input_views, self.kept = [], []
        for b in (self.output_buffer, self.input_buffer):
            if b is not None:
                b.unmap()
        self.output_buffer = self.input_buffer = None
        if self.input_mapping is not None:
            self.input_mapping.close()
            self.input_mapping = None
        fds = req.get("fds") or []
        specs = req["input_specs"]
        try:
            if self.cuda:
                if len(fds) != 1:
                    raise Failure("runtime_error", "protocol", "a GPU load without its input allocation")
                self.input_mapping = device_memory.Mapping.attach(fds[0], int(req["input_mapping_size"]))
            else:
                self.input_buffer = SharedBuffer(self.buffer_fds[1])
        finally:
            for fd in fds:
                os.close(fd)
        if req.get("deliver") == "buffer":
            self.output_buffer = SharedBuffer(self.buffer_fds[0])
        for row in req["input_offsets"]:
            self.input_views.append([self._view(s, off) if s["kind"] == "tensor" else None
                                     for s, off in zip(specs, row)])

    def _view(self, spec: dict, offset: int) -> torch.Tensor:
        dtype = outputs.dtype_of(spec["dtype"])
        if spec["nbytes"] == 0:
            return torch.empty(spec["shape"], dtype=dtype, device=self.device)
        if self.input_mapping is not None:
            raw = self.input_mapping.tensor(offset, spec["nbytes"])
        else:
            raw = torch.frombuffer(self.input_buffer.map, dtype=torch.uint8, count=spec["nbytes"], offset=offset)
        return raw.view(dtype).reshape(spec["shape"])

    def _import_candidate(self, path: str):
        name = loader.candidate_module_name(path)
        try:
            return loader.import_file(path, name)
        except loader.BuildError as e:
            raise Failure("compile_error", e.reason, trim_log(str(e))) from None
        except SyntaxError as e:
            raise Failure("compile_error", "syntax_error", f"{e.msg} (line {e.lineno})") from None
        except BaseException as e:  # SystemExit included: the module's code is the candidate's
            raise Failure("compile_error", "import_failed",
                          f"importing the candidate raised {type(e).__name__}: {trim_log(str(e))}") from None

    # --- calls -----------------------------------------------------------------------------
    def _arguments(self, k: int, values: list) -> list:
        if not 0 <= k < len(self.input_views):
            raise Failure("runtime_error", "protocol", f"no input set {k}")
        return [v if v is not None else value for v, value in zip(self.input_views[k], values)]

    def call(self, req, spikes: list | None = None):
        if self.model is None:
            raise Failure("runtime_error", "protocol", "call before load")
        sets, values = req.get("sets") or [0], req.get("values") or []
        monitor, profile = bool(req.get("monitor")), bool(req.get("profile")) and self.cuda
        from .inputs import STRIDED_LAYOUTS, strided_copy
        strided = req.get("strided") if req.get("strided") in STRIDED_LAYOUTS else None
        chosen = req.get("strided_inputs")
        chosen = set(chosen) if isinstance(chosen, list) and all(type(i) is int for i in chosen) else None
        relaid = req.get("strided_state") if req.get("strided_state") in STRIDED_LAYOUTS else None
        self.strided_call = strided is not None or relaid is not None
        if req.get("threads") is not None and not self.cuda:
            self._set_threads(max(1, int(req["threads"])))
        signals: dict = {}
        self.kept = []
        results = []
        mode = req.get("mode") if req.get("mode") in model_state.CALL_MODES else None

        def spike() -> None:
            spikes.pop()[1]()

        if relaid:
            model_state.relay(self.model, relaid)
            self.state = model_state.floating_state(self.model)
        try:
            try:
                with model_state.called_in(self.model, mode):
                    for j, k in enumerate(sets):
                        if spikes and j == spikes[0][0]:
                            spike()
                        args = self._arguments(k, values[j] if j < len(values) else [None] * len(self.input_views[0]))
                        if strided:
                            args = [strided_copy(a, strided) if chosen is None or i in chosen else a
                                    for i, a in enumerate(args)]
                        args = model_state.inputs_for(mode, args)
                        if monitor and j == 0:
                            out, signals = self._monitored(args, profile)
                        else:
                            out = self.model(*args)
                        results.append([o.detach() if isinstance(o, torch.Tensor) else o for o in outputs.flatten(out)])
            finally:
                if spikes:
                    spike()  # the judge's reference has moved: so does the model, whatever ran
            if self.cuda:
                torch.cuda.synchronize(self.device)
        except Failure:
            raise
        except BaseException as e:
            raise Failure("runtime_error", error_reason(e), f"forward raised {type(e).__name__}: "
                          f"{trim_log(str(e))}") from None
        pieces, fds, described = [], [], []
        for k, outs in zip(sets, results):
            described.append(self._describe(outs, k, pieces, fds))
        reply = {"ok": True, "id": req.get("id"), "outputs": described, "pieces": pieces, "signals": signals}
        return reply, fds

    def _describe(self, outs: list, k: int, pieces: list, fds: list) -> list:
        """Where each output is, once it meets the output contract (the reference's dtype, shape,
        device and, under the vinci protocol, a dense row-major layout but in a call on strided
        inputs, where torch's own ops return strided outputs too)."""
        if len(outs) != len(self.specs):
            raise Failure("incorrect", "shape_mismatch", f"returned {len(outs)} outputs, the reference returns "
                                                         f"{len(self.specs)}")
        described = []
        for i, (o, s) in enumerate(zip(outs, self.specs)):
            if s["kind"] != "tensor":
                described.append({"value": o if isinstance(o, (int, float, bool, str, type(None))) else repr(o)})
                continue
            o = self._contract(i, o, s)
            self.kept.append(o)
            if self.output_buffer is not None:
                off = k * outputs.layout(self.specs)[1] + outputs.layout(self.specs)[0][i]
                dst = torch.frombuffer(self.output_buffer.map, dtype=torch.uint8, count=s["nbytes"], offset=off)
                dst.copy_(o.reshape(-1).view(torch.uint8))
                del dst
                described.append({"buffer": True})
                continue
            if self.cuda and s["nbytes"]:
                o = self._share((k, i), o, pieces, fds)
            described.append({"ptr": o.data_ptr(), "nbytes": s["nbytes"]})
        return described

    def _contract(self, i: int, o, s: dict) -> torch.Tensor:
        if type(o) is not torch.Tensor:
            if isinstance(o, torch.Tensor):
                raise Failure("rejected", "output_not_dense", f"output {i} is a {type(o).__name__}, a tensor subclass")
            raise Failure("incorrect", "shape_mismatch", f"output {i} is a {type(o).__name__}, not a tensor")
        if o.layout != torch.strided:
            raise Failure("rejected", "output_not_dense", f"output {i} has layout {o.layout}")
        if list(o.shape) != s["shape"]:
            raise Failure("incorrect", "shape_mismatch", f"output {i} has shape {tuple(o.shape)}, the reference "
                                                         f"{tuple(s['shape'])}")
        if outputs.dtype_name(o.dtype) != s["dtype"]:
            raise Failure("incorrect", "dtype_mismatch", f"output {i} is {o.dtype}, the reference torch.{s['dtype']}")
        if o.device != self.device:
            raise Failure("incorrect", "device_mismatch", f"output {i} is on {o.device}, the reference on {self.device}")
        if not o.is_contiguous():
            if not (self.lenient_layout or self.strided_call):
                raise Failure("incorrect", "layout", f"output {i} has strides {o.stride()}, the reference's is dense "
                                                     "row-major (contiguous)")
            o = o.contiguous()  # KernelBench compares values whatever the layout: the copy is the candidate's time
        return o.detach()

    def _share(self, slot: tuple[int, int], o: torch.Tensor, pieces: list, fds: list) -> torch.Tensor:
        """Exports the GPU pages that hold o, those not exported before. Memory that cannot be
        shared (a candidate's own cudaMalloc) is copied into memory that can, in the candidate's
        time: a staging tensor per (call, output) slot of the window, so that each call's copy stays
        until the judge has read it (one per output alone held only the window's last call: red-team
        round 13 found an honest kernel rejected so)."""
        key = (o.data_ptr(), o.numel() * o.element_size())
        if key in self.shared:
            return o
        if not self._export(key, pieces, fds):
            staged = self.staging.get(slot)
            if staged is None or staged.shape != o.shape or staged.dtype != o.dtype:
                staged = self.staging[slot] = torch.empty_like(o, memory_format=torch.contiguous_format)
            staged.copy_(o)
            self.kept.append(staged)
            key = (staged.data_ptr(), key[1])
            if key not in self.shared and not self._export(key, pieces, fds):
                raise Failure("runtime_error", "unshareable_output",
                              "the runner's GPU memory cannot be shared with the judge (expandable segments off?)")
            return staged
        return o

    def _export(self, key: tuple[int, int], pieces: list, fds: list) -> bool:
        at, end = key[0], key[0] + key[1]
        while at < end:
            known = next(((b, s) for b, s in self.pieces if b <= at < b + s), None)
            if known is None:
                page = device_memory.page_of(at)
                fd = device_memory.export_page(at) if page else None
                if fd is None:
                    return False
                pieces.append({"id": len(self.pieces), "base": page[0], "size": page[1]})
                fds.append(fd)
                self.pieces.append(page)
                known = page
            at = known[0] + known[1]
        self.shared.add(key)
        return True

    def _monitored(self, args, profile: bool):
        op_monitor = monitors.TorchOpMonitor(self.low_precision)
        census = monitors.Census()
        tripwire = monitors.Tripwire(self.task.Model)
        before = [a.clone() if isinstance(a, torch.Tensor) else None for a in args]
        self.calls.reset()
        if self.cuda:
            _poison_free_memory(self.device, [before])
            # The fill and the clones are the runner's work: finished before the profiler starts, they
            # are never counted as library time of the candidate's call.
            torch.cuda.synchronize(self.device)
        prof = None
        if profile:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
            prof.__enter__()
        try:
            with tripwire, op_monitor:
                out = self.model(*args)
            if self.cuda:
                torch.cuda.synchronize(self.device)
        finally:
            if prof is not None:
                prof.__exit__(None, None, None)
        signals = {"torch_ops": op_monitor.compute_ops, "precision_drops": op_monitor.precision_drops,
                   "escapes": census.escapes(), "reference_called": tripwire.called,
                   "patched": self.snapshot.changes() if self.snapshot else [],
                   "flags_changed": self.snapshot.flag_changes() if self.snapshot else []}
        if prof is not None:
            launches, coverage, busy_ms, kernels, seen = _profile_summary(prof, self.kernel_names, self.library_kernels)
            signals.update(launches=launches, coverage=coverage, gpu_busy_ms=busy_ms, profile=kernels, kernels_seen=seen)
        elif not self.cuda:
            signals["launches"] = self.calls.calls
        signals.update(_after_call(outputs.flatten(out), args, before))
        return out, signals

    def coverage(self, req):
        """Calls forward on input set 0 for a while, so that the trusted side's sampler sees where a
        call's host time goes (on a GPU each call is waited for: queued calls would outlast the while)."""
        args = self._arguments(0, req.get("values") or [None] * len(self.input_views[0]))
        calls, start = 0, _perf_counter()
        with torch.no_grad():
            while _perf_counter() - start < float(req["seconds"]) or calls < 2:
                self.model(*args)
                if self.cuda:
                    torch.cuda.synchronize(self.device)
                calls += 1
        return {"ok": True, "calls": calls}

    def perturb(self, req, watchers: unobserved.Watchers, spikes: list | None = None):
        """Moves the model's floating state in place between calls, as the judge moves its reference's
        with the same key (model_state.perturb): state derived from the weights and kept goes stale.
        The tensors are the ones taken at load; a descriptor, where one comes, holds the int32 bit
        patterns of the only values to move. Nothing the candidate installed may watch it happen
        (unobserved.py): the checks come before any of the move runs."""
        fds = req.get("fds") or []
        problems = watchers.problems(self.state)
        patched = self.snapshot.changes() if self.snapshot else []
        if patched:
            problems.append(("monkey_patch", f"the candidate changed {', '.join(patched[:5])}"))
        if problems:
            for fd in fds:
                os.close(fd)
            raise Failure("rejected", problems[0][0], "before the judge moved the model's state: "
                          + "; ".join(message for _, message in problems))
        with watchers.quiet():
            positional = req.get("positional")
            loads = []
            for fd in fds[:3]:
                with os.fdopen(fd, "rb") as f:
                    loads.append(f.read())
            for fd in fds[3:]:
                os.close(fd)
            values = loads.pop() if positional is not None and loads else None
            sets = [torch.frombuffer(bytearray(data), dtype=torch.int32) if data else torch.empty(0, dtype=torch.int32)
                    for data in loads[:2]]
            only = sets[0] if sets else None
            held = sets[-1] if sets else None
            stage_at = req.get("stage_at")
            if isinstance(stage_at, int) and only is not None and spikes is not None:
                # Worked out now, made by the next call before its set stage_at (model_state.spike_plan),
                # with the function taken now, after the checks that nothing watches it.
                plan = model_state.spike_plan(self.state, only, held)
                spikes[:] = [(stage_at, functools.partial(model_state.apply_spikes, plan))]
                moved = plan
            elif req.get("assign"):
                self.state = model_state.assign_moved(self.model, self.state, int(req["key"]), bool(req.get("rounding")),
                                                      only, held)
                moved = self.state
            else:
                state = [(n, t) for n, t in self.state if type(t) is torch.nn.Parameter] if req.get("parameters") else self.state
                moved = model_state.perturb(state, int(req["key"]), bool(req.get("rounding")), only, held)
            if values is not None:
                model_state.load_positional(self.state, positional, values)
            if self.cuda:
                torch.cuda.synchronize(self.device)
        return {"ok": True, "moved": len(moved)}


def _after_call(outs, args, before) -> dict:
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


def _profile_summary(prof, names, library_names=frozenset()):
    """(custom launches, time coverage, GPU busy ms, kernels by GPU time, every kernel's full name) of
    one profiled call. A kernel is the candidate's own when its identifier is one of its kernels' names
    and its full name is none of library_names: the kernels the task's reference ran, whose names a
    candidate could otherwise declare for a library's kernels replayed from a graph."""
    custom, total, custom_t = 0, 0.0, 0.0
    spans, by_name = [], {}
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        dt = getattr(ev, "device_time", None)
        dt = ev.cuda_time if dt is None else dt
        total += dt
        spans.append((ev.time_range.start, ev.time_range.end))
        mine = _kernel_identifier(ev.name) in names and ev.name not in library_names
        if mine:
            custom += 1
            custom_t += dt
        k = by_name.setdefault(ev.name, {"name": ev.name[:160], "calls": 0, "total_us": 0.0, "custom": mine})
        k["calls"] += 1
        k["total_us"] += dt
    kernels = sorted(by_name.values(), key=lambda k: -k["total_us"])[:PROFILE_KERNELS]
    seen = sorted(by_name)[:PROFILE_NAMES]
    return custom, (custom_t / total if total > 0 else 0.0), _union_ms(spans), kernels, seen


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
    """Fills free allocator blocks of the inputs' size with NaN, so an output never written reads
    as NaN rather than as whatever an earlier call left there."""
    nbytes = max(sum(x.numel() * x.element_size() for row in like for x in row if isinstance(x, torch.Tensor)),
                 1 << 20) * 3 // 2
    junk = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(float("nan"))
    del junk


OPS = ("load", "call", "coverage", "perturb", "state")


def serve(control_fd: int, buffer_fd: int, inputs_fd: int, device: str) -> int:
    os.dup2(2, 1)  # whatever the candidate prints goes to the log, never anywhere else
    sys.stdout = sys.stderr
    refuse = unobserved.refuse_watchers()  # first: no candidate code may add a watcher before it
    channel = Channel.from_fd(control_fd)
    runner = Runner(channel, buffer_fd, inputs_fd, device, refuse)
    watchers = runner.watchers  # this frame's: the runner's attribute is where a candidate would swap it
    spikes: list = []  # a move worked out ahead for the next call to make (Runner.perturb's stage_at)
    mark = None  # the process's state once the model was built (process_state), in this frame as watchers are
    while True:
        try:
            req = channel.receive()
        except Exception:
            return 0
        op = req.get("op")
        if op == "exit":
            return 0
        fds: list[int] = []
        try:
            if op not in OPS:
                raise Failure("runtime_error", "protocol", f"unknown op {op!r}")
            # The class's methods: an instance attribute is the candidate's.
            if op == "perturb":
                reply = Runner.perturb(runner, req, watchers, spikes)
            elif op == "call":
                reply = Runner.call(runner, req, spikes)
            elif op == "state":
                if mark is None:
                    raise Failure("runtime_error", "protocol", "state before load")
                # A deep look (the judge's draw) also reads the pool and aten's dispatch tables: each
                # costs 100-450 ms on a loaded 2-core host, too much for every look.
                deep = bool(req.get("dispatch"))
                now = process_state.Mark(process_state.pool_threads() if deep and not runner.cuda else 1)
                patched = runner.snapshot.changes() if runner.snapshot else []
                if deep:
                    patched += [f"aten dispatch of {op}" for op in process_state.dispatch_changes()[:4]]
                reply = {"ok": True, "changes": mark.changes(now) + [
                    {"what": p, "was": "as imported", "now": "changed", "precision": False} for p in patched]}
                mark = now
            else:
                reply = getattr(Runner, op)(runner, req)
            if isinstance(reply, tuple):
                reply, fds = reply
            if op == "load" and reply.get("ok"):
                mark = process_state.Mark(1 if runner.cuda else process_state.pool_threads())
        except Failure as f:
            reply = f.reply
        except BaseException as e:  # noqa: BLE001 - the runner reports, the trusted side decides
            reply = {"ok": False, "class": "runtime_error", "reason": error_reason(e),
                     "message": trim_log(f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")}
        channel.send(reply, fds)
        for fd in fds:
            os.close(fd)
