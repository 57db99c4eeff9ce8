"""The long-lived evaluation worker: one per device, JSON lines over pipes.

Requests (one JSON object a line on stdin) and replies (one a line on the protocol fd):
  {"op": "hello"}                                   -> device, torch, arch, bandwidth
  {"op": "load_task", "path", "scale"}              -> ok | invalid_task
  {"op": "baseline", "path", "scale", "config"}     -> eager and torch.compile timings
  {"op": "load_candidate", "path", "static"}        -> ok | compile_error | runtime_error | rejected
  {"op": "check", "config"}                         -> correct | incorrect | rejected | runtime_error
  {"op": "time", "config"}                          -> timings, coverage, launches | rejected
  {"op": "unload"}                                  -> ok (fatal when the process is no longer clean)
Every reply has "ok"; a failure carries "class", "reason" and "message"; "fatal": true asks the
pool to restart this worker because its state can no longer be trusted.
"""
from __future__ import annotations

import gc
import json
import math
import os
import re
import sys
import time
import traceback

import torch

from .logs import trim_log
from . import compare, loader, monitors, sandbox, timing


class Outcome(Exception):
    """Ends a request early with a classified result."""

    def __init__(self, cls: str, reason: str, message: str, fatal: bool = False, **extra):
        super().__init__(message)
        self.reply = {"ok": False, "class": cls, "reason": reason, "message": message, "fatal": fatal, **extra}


PROFILE_KERNELS = 8  # kernels a time reply lists, by GPU time

DEFAULTS = {
    "seed": 42, "correctness_trials": 5,
    "tolerances": {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2],
                   "float64": [1e-7, 1e-7]},
    "torch_ops": "forbid", "allow_precision_drop": False,
    "timing": {"trials": 100, "min_trials": 10, "warmup": 5, "warmup_ms": 25.0, "budget_s": 20.0},
    "flush_bytes": 0, "side_stream_ratio": 0.5, "roofline_margin": 0.85, "cpu_seconds": 600,
    "compile_baseline": True,
}


def merged(cfg: dict | None) -> dict:
    out = json.loads(json.dumps(DEFAULTS))
    for k, v in (cfg or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k].update(v)
        else:
            out[k] = v
    return out


def _kernel_identifier(name: str) -> str:
    name = re.sub(r"^void\s+", "", name.strip())
    name = name.split("(", 1)[0]
    depth, plain = 0, []
    for ch in name:
        depth += ch == "<"
        if depth == 0:
            plain.append(ch)
        depth -= ch == ">"
    return "".join(plain).split("::")[-1].strip()


class Worker:
    def __init__(self, device: str, cache_dir: str, scratch: str):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda:
            torch.cuda.set_device(self.device)
        # References run in true fp32: cuDNN's TF32 default would make the reference itself the
        # least accurate party.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        self.cache_dir = cache_dir
        self.scratch = scratch
        self.calls = monitors.ExtensionCalls()
        self.extensions = loader.ExtensionCache(os.path.join(cache_dir, "ext"), loader.toolchain_id(),
                                                wrap=self.calls.wrap_module)
        self.extensions.install()
        self._warm_up_monitors()
        self.tasks: dict = {}
        self.inputs: dict = {}
        self.candidate = None
        self.snapshot = None
        self.timer = None
        self.bandwidth_gbps = 0.0
        self.network = "unknown"

    def _warm_up_monitors(self):
        """Runs the monitors once before any snapshot: their first use lazily rebinds torch
        attributes (entering a dispatch mode replaces torch.manual_seed), which must not read as a
        candidate's patch."""
        x = torch.ones(4, device=self.device)
        with monitors.TorchOpMonitor(False), torch.no_grad():
            (x + 1).sum()
        if self.cuda:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
                (x * 2).sum()
            torch.cuda.synchronize(self.device)

    # --- requests -------------------------------------------------------------------------
    def hello(self, _req):
        info = {"ok": True, "device": str(self.device), "torch": torch.__version__,
                "cuda": torch.version.cuda, "pid": os.getpid(), "python": sys.version.split()[0],
                "network": self.network}
        if self.cuda:
            p = torch.cuda.get_device_properties(self.device)
            info.update(device_name=p.name, arch=f"sm_{p.major}{p.minor}", l2_bytes=p.L2_cache_size,
                        sm_count=p.multi_processor_count, memory_bytes=p.total_memory)
            self.bandwidth_gbps = timing.measure_bandwidth(self.device)
            info["bandwidth_gbps"] = self.bandwidth_gbps
        else:
            import platform
            info.update(device_name=f"cpu ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)",
                        arch="cpu", l2_bytes=0)
        return info

    def _task(self, req):
        key = (req["path"], float(req.get("scale", 1.0)))
        if key not in self.tasks:
            name = f"vinci_task_{len(self.tasks)}"
            try:
                module, scaled = loader.load_task(req["path"], key[1], name)
            except loader.TaskError as e:
                raise Outcome("invalid_task", e.reason, str(e)) from None
            self.tasks[key] = (module, scaled)
        return self.tasks[key][0]

    def load_task(self, req):
        module = self._task(req)
        return {"ok": True, "scaled": self.tasks[(req["path"], float(req.get("scale", 1.0)))][1],
                "low_precision": _low_precision(module)}

    def _trial_inputs(self, task, cfg, trial):
        key = (id(task), cfg["seed"], trial, cfg["correctness_trials"])
        if key not in self.inputs:
            try:
                inputs = compare.make_inputs(task, cfg["seed"] + 1009 * trial, trial, cfg["correctness_trials"],
                                             self.device)
            except Exception as e:
                raise Outcome("invalid_task", "get_inputs_failed", f"get_inputs() raised {type(e).__name__}: {e}")
            self.inputs = {k: v for k, v in self.inputs.items() if k[0] == id(task)}
            self.inputs[key] = inputs
        return self.inputs[key]

    def _reference(self, task, cfg):
        torch.manual_seed(cfg["seed"])
        try:
            init = task.get_init_inputs()
            with self.device:  # parameters are created where they live; ModelNew is built the same way
                model = task.Model(*init).to(self.device).eval()
        except Exception as e:
            raise Outcome("invalid_task", "reference_failed", f"building Model failed: {type(e).__name__}: {e}")
        return model, init

    def _timer(self, cfg):
        if self.timer is None:
            flush = cfg["flush_bytes"] or (2 * torch.cuda.get_device_properties(self.device).L2_cache_size
                                           if self.cuda else 32 * 1024 * 1024)
            self.timer = timing.Timer(self.device, flush)
        return self.timer

    def baseline(self, req):
        cfg = merged(req.get("config"))
        task = self._task(req)
        ref, _ = self._reference(task, cfg)
        inputs = self._trial_inputs(task, cfg, 0)
        timer = self._timer(cfg)
        buffers = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            try:
                eager = timer.run(ref, buffers, inputs, cfg["timing"], cfg["timing"]["budget_s"])
            except Exception as e:
                raise Outcome("invalid_task", "reference_failed", f"the reference forward raised {type(e).__name__}: {e}")
            reply = {"ok": True, "eager": eager, "compile": None}
            if cfg["compile_baseline"]:
                try:
                    compiled = torch.compile(ref)
                    reply["compile"] = timer.run(compiled, buffers, inputs, cfg["timing"], cfg["timing"]["budget_s"])
                except Exception as e:
                    reply["compile_error"] = f"{type(e).__name__}: {str(e)[:500]}"
                finally:
                    torch._dynamo.reset()
        return reply

    def load_candidate(self, req):
        self.unload({})
        self.snapshot = monitors.PatchSnapshot()
        static = req.get("static", {})
        census = sandbox.Census(self.scratch)
        name = f"vinci_candidate_{os.path.basename(req['path']).split('.')[0]}"
        t0 = time.perf_counter()
        try:
            with sandbox.CpuBudget(merged(req.get("config"))["cpu_seconds"]):
                module = loader.import_file(req["path"], name)
        except loader.BuildError as e:
            raise Outcome("compile_error", "build_failed", trim_log(str(e)))
        except SyntaxError as e:
            raise Outcome("compile_error", "syntax_error", f"{e.msg} (line {e.lineno})")
        except Exception as e:
            self._check_cuda(e)
            raise Outcome("compile_error", "import_failed", f"importing the candidate raised {type(e).__name__}: "
                          f"{trim_log(str(e))}")
        self._escapes(census)
        if not isinstance(getattr(module, "ModelNew", None), type):
            raise Outcome("compile_error", "no_model_new", "the candidate defines no class ModelNew")
        self.candidate = {"module": module, "name": name, "kernel_names": set(static.get("kernel_names", [])),
                          "load_s": time.perf_counter() - t0}
        return {"ok": True, "load_s": self.candidate["load_s"], "built": list(self.extensions.built)}

    def unload(self, _req):
        fatal = []
        if self.candidate is not None:
            sys.modules.pop(self.candidate["name"], None)
            self.candidate = None
        if self.snapshot is not None:
            fatal = self.snapshot.changes() + self.snapshot.flag_changes()
            self.snapshot = None
        gc.collect()
        if self.cuda:
            torch.cuda.empty_cache()
        return {"ok": True, "fatal": bool(fatal), "dirty": fatal}

    def _build_candidate(self, task, cfg, init):
        cls = self.candidate["module"].ModelNew
        if issubclass(cls, task.Model):
            raise Outcome("rejected", "reference_model", "ModelNew is a subclass of the reference Model")
        torch.manual_seed(cfg["seed"])
        census = sandbox.Census(self.scratch)
        try:
            with sandbox.CpuBudget(cfg["cpu_seconds"]), self.device:
                model = cls(*init).to(self.device).eval()
        except loader.BuildError as e:
            raise Outcome("compile_error", "build_failed", trim_log(str(e)))
        except Exception as e:
            self._check_cuda(e)
            raise Outcome("runtime_error", _error_reason(e), f"ModelNew(*get_init_inputs()) raised "
                          f"{type(e).__name__}: {trim_log(str(e))}")
        self._escapes(census)
        return model

    def _monitored_call(self, model, task, args, cfg, profile: bool):
        """One forward call under every monitor; raises Outcome for the first check that fires."""
        low = _low_precision(task)
        op_monitor = monitors.TorchOpMonitor(low)
        census = sandbox.Census(self.scratch)
        tripwire = _Tripwire(task.Model)
        self.calls.reset()
        prof = None
        try:
            with sandbox.CpuBudget(cfg["cpu_seconds"]), tripwire, torch.no_grad():
                if profile and self.cuda:
                    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
                    prof.__enter__()
                with op_monitor:
                    out = model(*args)
                if self.cuda:
                    torch.cuda.synchronize(self.device)
        except Outcome:
            raise
        except Exception as e:
            self._check_cuda(e)
            raise Outcome("runtime_error", _error_reason(e), f"forward raised {type(e).__name__}: {trim_log(str(e))}")
        finally:
            if prof is not None:
                prof.__exit__(None, None, None)
        changes = self.snapshot.changes() if self.snapshot else []
        if changes:
            raise Outcome("rejected", "monkey_patch", f"the candidate changed {', '.join(changes[:5])}", fatal=True)
        procs, files = census.escapes()
        if procs:
            raise Outcome("rejected", "threads_processes", "; ".join(procs), fatal=True)
        if files:
            raise Outcome("rejected", "file_io", "; ".join(files))
        if tripwire.called:
            raise Outcome("rejected", "reference_model", "forward called the reference Model")
        launches, coverage, busy_ms, kernels = self._launches(prof)
        return out, op_monitor, launches, (coverage, busy_ms, kernels)

    def _launches(self, prof):
        """(custom launches, time coverage, GPU busy ms, kernels by GPU time) of one profiled call;
        CPU: extension calls only."""
        if prof is None:
            return self.calls.calls, None, None, []
        names = self.candidate["kernel_names"]
        custom, total, custom_t = 0, 0.0, 0.0
        spans = []
        by_name = {}
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
        # The agents' profiler summary: where the forward call's GPU time went, longest first.
        kernels = sorted(by_name.values(), key=lambda k: -k["total_us"])[:PROFILE_KERNELS]
        return custom, (custom_t / total if total > 0 else 0.0), _union_ms(spans), kernels

    def _policy_checks(self, op_monitor, launches, cfg):
        if launches == 0:
            what = "no custom CUDA kernel ran" if self.cuda else "no extension function was called"
            raise Outcome("rejected", "kernel_not_launched", f"{what} during forward (a decoy kernel)")
        if op_monitor.compute_ops and cfg["torch_ops"] == "forbid":
            ops = ", ".join(f"aten.{k}×{v}" for k, v in sorted(op_monitor.compute_ops.items()))
            raise Outcome("rejected", "torch_op", f"torch compute ops ran inside forward: {ops}")
        if op_monitor.precision_drops and not cfg["allow_precision_drop"]:
            raise Outcome("rejected", "precision_drop", "; ".join(op_monitor.precision_drops))
        changes = self.snapshot.flag_changes() if self.snapshot else []
        if changes and not cfg["allow_precision_drop"]:
            raise Outcome("rejected", "precision_drop", f"precision flags changed: {', '.join(changes)}", fatal=True)

    def check(self, req):
        if self.candidate is None:
            raise Outcome("runtime_error", "protocol", "check before load_candidate")
        cfg = merged(req.get("config"))
        task = self._task(req)
        ref, init = self._reference(task, cfg)
        model = self._build_candidate(task, cfg, init)
        self.candidate["model"] = model
        self.candidate["ref"] = ref
        trials = cfg["correctness_trials"]
        buffers = None
        previous = None
        worst, mean_sum, warnings = 0.0, 0.0, []
        for trial in range(trials):
            inputs = self._trial_inputs(task, cfg, trial)
            if buffers is None:
                buffers = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            else:  # same storage, new values: a cache keyed on pointers returns stale results
                for b, x in zip(buffers, inputs):
                    if isinstance(b, torch.Tensor):
                        b.copy_(x)
            _poison_free_memory(self.device, inputs)
            out, op_monitor, launches, _ = self._monitored_call(model, task, buffers, cfg, profile=trial == 0)
            for i, (b, x) in enumerate(zip(buffers, inputs)):
                if isinstance(b, torch.Tensor) and not torch.equal(b, x):
                    raise Outcome("rejected", "mutated_inputs", f"input {i} changed during forward")
            self._policy_checks(op_monitor, launches, cfg)
            if op_monitor.compute_ops:
                warnings.append(f"torch ops in forward: {sorted(op_monitor.compute_ops)}")
            ref_args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            with torch.no_grad():
                try:
                    expected = ref(*ref_args)
                except Exception as e:
                    raise Outcome("invalid_task", "reference_failed", f"the reference forward raised {type(e).__name__}: {e}")
            aliased = _aliases(out, buffers)
            if aliased and not _aliases(expected, ref_args):
                raise Outcome("rejected", "output_aliases_input",
                              f"output {aliased[0]} shares memory with input {aliased[1]} while the reference's is "
                              "fresh: nothing was computed into an output of its own")
            if previous is not None and compare.same_values(out, previous[0]) and not compare.same_values(expected, previous[1]):
                raise Outcome("rejected", "stale_output",
                              f"trial {trial}: the output is identical to trial {trial - 1}'s although the inputs "
                              "and the reference output changed (a constant or cached result)")
            result = compare.compare(out, expected, cfg["tolerances"])
            if not result["ok"]:
                raise Outcome("incorrect", result["reason"], f"trial {trial}: {result['message']}",
                              trials_passed=trial, max_abs_diff=result["max_abs_diff"],
                              mean_abs_diff=result["mean_abs_diff"])
            worst = max(worst, result["max_abs_diff"])
            mean_sum += result["mean_abs_diff"]
            previous = (_detach_copy(out), _detach_copy(expected))
            del out, expected
        self.candidate["buffers"] = buffers
        return {"ok": True, "class": "correct", "trials": trials, "trials_passed": trials, "max_abs_diff": worst,
                "mean_abs_diff": mean_sum / trials, "warnings": sorted(set(warnings))}

    def time(self, req):
        cand = self.candidate
        if cand is None or "buffers" not in cand:
            raise Outcome("runtime_error", "protocol", "time before a passing check")
        cfg = merged(req.get("config"))
        task = self._task(req)
        inputs = self._trial_inputs(task, cfg, 0)
        buffers = cand["buffers"]
        timer = self._timer(cfg)
        try:
            with sandbox.CpuBudget(cfg["cpu_seconds"]), torch.no_grad():
                stats = timer.run(cand["model"], buffers, inputs, cfg["timing"], cfg["timing"]["budget_s"])
        except Exception as e:
            self._check_cuda(e)
            raise Outcome("runtime_error", _error_reason(e), f"forward raised while timing: {type(e).__name__}: {e}")
        # The output for the last refreshed inputs must still be right: a candidate that caches on
        # sampled values, or behaves differently once it has been called many times, fails here.
        timer._refresh(buffers, inputs)
        args_ref = [b.clone() if isinstance(b, torch.Tensor) else b for b in buffers]
        out, op_monitor, launches, (coverage, busy_ms, kernels) = self._monitored_call(cand["model"], task, buffers,
                                                                                       cfg, profile=True)
        self._policy_checks(op_monitor, launches, cfg)
        with torch.no_grad():
            expected = cand["ref"](*args_ref)
        result = compare.compare(out, expected, cfg["tolerances"])
        if not result["ok"]:
            raise Outcome("rejected", "stale_output", f"after {stats['trials']} timed calls the output is wrong: "
                          f"{result['message']}")
        if not self.cuda:
            coverage = self._cpu_coverage(cand["model"], buffers)
        reply = {"ok": True, "timing": stats, "custom_launches": launches, "coverage": coverage, "flags": [],
                 "profile": kernels}
        # Kernels serialise on the stream the events are recorded on, so the event time can only be
        # far below the GPU's busy time in forward when the work ran on a stream nobody waited for.
        if self.cuda and busy_ms and stats["median_ms"] < cfg["side_stream_ratio"] * busy_ms:
            raise Outcome("rejected", "side_stream",
                          f"event timing on the current stream ({stats['median_ms']:.3f} ms) is far below the GPU "
                          f"time of the kernels forward launched ({busy_ms:.3f} ms): work runs on a stream the "
                          "caller never waits for")
        reply["gpu_busy_ms"] = busy_ms
        if self.cuda and self.bandwidth_gbps > 0:
            moved = _bytes(inputs) + _bytes(out)
            floor_ms = moved / (self.bandwidth_gbps * 1e9) * 1e3
            reply["roofline_floor_ms"] = floor_ms
            if stats["median_ms"] < cfg["roofline_margin"] * floor_ms:
                reply["flags"].append("beats_roofline")
        return reply

    def _cpu_coverage(self, model, buffers) -> float:
        spent = 0.0
        self.calls.reset()
        with torch.no_grad():
            for _ in range(3):
                a = time.perf_counter()
                model(*buffers)
                spent += time.perf_counter() - a
        return min(1.0, self.calls.seconds / spent) if spent > 0 else 0.0

    # --- helpers --------------------------------------------------------------------------
    def _escapes(self, census):
        procs, files = census.escapes()
        changes = self.snapshot.changes() if self.snapshot else []
        if changes:
            raise Outcome("rejected", "monkey_patch", f"the candidate changed {', '.join(changes[:5])}", fatal=True)
        if procs:
            raise Outcome("rejected", "threads_processes", "; ".join(procs), fatal=True)
        if files:
            raise Outcome("rejected", "file_io", "; ".join(files))

    def _check_cuda(self, error: Exception):
        """A CUDA error poisons the context: report it and have the pool restart this worker."""
        if not self.cuda:
            return
        text = str(error)
        if isinstance(error, torch.OutOfMemoryError):
            return
        try:
            torch.cuda.synchronize(self.device)
            healthy = "CUDA error" not in text and "device-side assert" not in text
        except Exception as e:  # the context is gone
            text = f"{text}; then synchronize raised {e}"
            healthy = False
        if not healthy:
            raise Outcome("runtime_error", "cuda_error", trim_log(text), fatal=True)


class _Tripwire:
    """Records calls of the reference Model's forward while the candidate runs."""

    def __init__(self, model_cls):
        self.cls = model_cls
        self.called = False

    def __enter__(self):
        self.original = self.cls.forward
        tripwire = self

        def forward(model_self, *a, **k):
            tripwire.called = True
            return tripwire.original(model_self, *a, **k)
        self.cls.forward = forward
        return self

    def __exit__(self, *exc):
        self.cls.forward = self.original
        return False


def _low_precision(task) -> bool:
    try:
        with open(task.__file__) as f:
            from .static_check import is_low_precision_task
            return is_low_precision_task(f.read())
    except OSError:
        return False


def _aliases(out, inputs):
    """(output index, input index) of the first output whose storage is an input's, else None."""
    storages = {}
    for j, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            storages[x.untyped_storage().data_ptr()] = j
    for i, o in enumerate(compare.flatten(out)):
        if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in storages:
            return i, storages[o.untyped_storage().data_ptr()]
    return None


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
    """Fills the allocator's free blocks with NaN, so an output never written reads as NaN."""
    nbytes = max(_bytes(like), 1 << 20) * 2
    junk = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(float("nan"))
    del junk


def _bytes(obj) -> int:
    return sum(x.numel() * x.element_size() for x in compare.flatten(obj) if isinstance(x, torch.Tensor))


def _detach_copy(obj):
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in compare.flatten(obj)]


def _error_reason(e: Exception) -> str:
    if isinstance(e, (torch.OutOfMemoryError, MemoryError)) or "can't allocate memory" in str(e):
        return "out_of_memory"
    if "CUDA error" in str(e) or "illegal memory access" in str(e):
        return "cuda_error"
    return "exception"


OPS = ("hello", "load_task", "baseline", "load_candidate", "check", "time", "unload")


def serve(device: str, cache_dir: str) -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a candidate prints goes to the log, never into the protocol
    sys.stdout = sys.stderr
    scratch = os.getcwd()
    network = sandbox.network_fallback_if_needed()
    sandbox.ignore_file_size_signal()
    worker = Worker(device, cache_dir, scratch)
    worker.network = network
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "shutdown":
                break
            if op not in OPS:
                raise Outcome("runtime_error", "protocol", f"unknown op {op!r}")
            reply = getattr(worker, op)(req)
        except Outcome as o:
            reply = o.reply
        except Exception as e:
            if "CUDA error" in str(e) or type(e).__name__ == "AcceleratorError":
                # Raised outside the candidate's own frame (e.g. when the profiler flushes): the
                # context is poisoned all the same.
                reply = {"ok": False, "class": "runtime_error", "reason": "cuda_error",
                         "message": trim_log(f"{type(e).__name__}: {e}"), "fatal": True}
            else:  # a bug in the worker itself: report it, never die silently
                reply = {"ok": False, "class": "runtime_error", "reason": "worker_error",
                         "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}", "fatal": True}
        proto.write(json.dumps(_finite(reply), default=str, allow_nan=False) + "\n")
        if reply.get("fatal"):
            break
    return 0


def _finite(obj):
    """JSON has no NaN or Infinity: non-finite numbers travel as null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
