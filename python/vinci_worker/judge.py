"""The judge: one per device, long-lived, and it never imports a candidate's code.

For each candidate it starts a sandboxed runner (python/vinci_runner) that imports the candidate
and answers calls; the judge picks every call's seed, computes the reference itself on the same
inputs, compares, and times:
  correctness  the task's own inputs (5 seeds) and out-of-distribution ones (signed, offset, scaled,
               specials; compared where the reference is finite); half-precision tasks also against
               an fp64 reference. Every output is delivered through shared memory and checked here.
  timing       each timed call gets fresh inputs; the runner claims the call's time (CUDA events or
               the CPU clock) and commits to the output's bytes; a random hidden subset is opened and
               checked; the claims must agree with the judge's own wall clock of the same calls,
               minus the overhead a trusted runner (the task's Model, never a candidate) shows for
               everything but the forward.
Baselines are timed by that trusted reference runner. A runner's messages are claims: failures it
reports about itself are accepted, successes only once checked.

Requests on stdin, one JSON object a line; replies on the protocol descriptor (stdout at start):
  {"op": "hello"}                                           -> device, torch, bandwidth, sandbox
  {"op": "baseline", "path", "scale", "config"}             -> eager and torch.compile timings
  {"op": "evaluate", "path", "scale", "candidate", "static", "config", "log", "eager_ms"}
                                                            -> the result's fields
"""
from __future__ import annotations

import copy
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass

import torch

from vinci_runner import inputs as inputs_mod
from vinci_runner import loader, outputs
from vinci_runner.channel import ChannelClosed, ChannelTimeout, ProtocolError, finite
from vinci_runner.logs import trim_log
from vinci_runner.static_check import is_low_precision_task
from vinci_runner.timing import measure_bandwidth, summarize

from . import compare, process_tree
from .extensions import CompileService
from .openings import Openings
from .sandbox import Launcher, Sandboxed, describe_exit

DEFAULTS = {
    "protocol": "vinci", "seed": 42, "correctness_trials": 5, "ood_trials": True, "precision_gate": True,
    "numerics": {"allow_tf32_matmul": False, "allow_tf32_cudnn": False},
    "tolerances": {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2],
                   "float64": [1e-7, 1e-7]},
    "torch_ops": "forbid", "allow_precision_drop": False, "min_coverage": 0.5,
    "timing": {"trials": 100, "min_trials": 10, "warmup": 5, "warmup_ms": 25.0, "budget_s": 20.0, "open_calls": 10,
               "verify_abs_ms": -1.0, "verify_rel": 0.25, "charge_ms": -1.0},
    "flush_bytes": 0, "side_stream_ratio": 0.5, "roofline_margin": 0.7, "cpu_seconds": 600,
    "compile_baseline": True, "import_timeout_s": 120, "run_timeout_s": 300, "compile_timeout_s": 900,
    "baseline_timeout_s": 1200, "file_size_limit": 64 << 20, "cpu_memory_limit": 0, "scratch_bytes": 1 << 30,
}
RUNNER_CLASSES = {"compile_error", "runtime_error", "incorrect", "rejected", "timeout"}
VERIFY_ABS_MS = {"cuda": 0.02, "cpu": 0.25}  # the wall clock's noise floor per call, by device
# Unclaimed time the judge charges to the candidate instead of refusing its claim. On a GPU a fixed
# 0.25 ms: on the H100 an honest 0.08 ms CUDA add showed 0.08-0.17 ms of host time per call that its
# CUDA events do not see (not yet explained), while every hiding cheat of the corpora left 0.7-1.6 ms.
CHARGE_MS_CUDA = 0.25
# On the CPU the unclaimed time is the difference of two measurements of the same harness work (the
# inputs read, the outputs copied and hashed: 1-8 ms a call at CI sizes) in two processes, the
# candidate's and the trusted runner's. Under memory traffic beside them the two drift apart as a
# whole: a 2-core machine copying 512 MB arrays beside a run showed one process's harness work 30%
# dearer than the other's for a whole measurement, with the sign flipping between measurements; a CI
# run beside other evaluators left 4.2 and 6.1 ms of two honest ReLU-sized kernels unclaimed (their
# harness work is about 4.5 ms). So up to one overhead's worth is charged, not refused: a hiding
# cheat gains nothing by it (it is timed by the judge's figure), and the corpora's CPU cheats hide
# several times more.
CHARGE_OVERHEAD_SHARE_CPU = 1.0
MESSAGE_CAP = 4000
# A timing whose kernels kept the GPU busy for under this share of the timed window is flagged
# launch_bound. The window starts on an idle GPU (nothing may overlap it), so the rest of it the GPU
# waited for the host: Python and launch work, whose speed differs from process to process by up to
# 3x (docs/learning.md), so such a speedup compares host work more than kernels. The busy time is
# the profiled first call's, a claim: the flag informs the user and the policy, and decides nothing.
LAUNCH_BOUND_BUSY_SHARE = 0.5


def gpu_busy_share(busy_ms, median_ms: float) -> float | None:
    """The share of a median timed call that the forward's kernels kept the GPU busy, at most 1; None
    when the profiled call gave no usable busy time."""
    if not isinstance(busy_ms, (int, float)) or isinstance(busy_ms, bool) or not math.isfinite(busy_ms) or \
            busy_ms < 0 or not median_ms > 0:
        return None
    return min(1.0, busy_ms / median_ms)


def merged(cfg: dict | None) -> dict:
    out = json.loads(json.dumps(DEFAULTS))
    for k, v in (cfg or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k].update(v)
        else:
            out[k] = v
    return out


class Outcome(Exception):
    """Ends an evaluation with a classified result."""

    def __init__(self, cls: str, reason: str, message: str, **extra):
        super().__init__(message)
        self.reply = {"ok": False, "class": cls, "reason": reason, "message": message[:MESSAGE_CAP], **extra}


class ReferenceFailed(Exception):
    """The reference itself raised on some inputs."""


@dataclass
class TaskState:
    path: str
    scale: float
    module: object
    ref: torch.nn.Module
    ref64: torch.nn.Module | None
    specs: list
    input_specs: list
    source: str
    low_precision: bool
    ref_aliases: bool
    moved_bytes: int


def _flat(out) -> list:
    return [o.detach() if isinstance(o, torch.Tensor) else o for o in outputs.flatten(out)]


def _nbytes(xs) -> int:
    return sum(x.numel() * x.element_size() for x in xs if isinstance(x, torch.Tensor))


def _aliases(out, args) -> bool:
    storages = {x.untyped_storage().data_ptr() for x in args if isinstance(x, torch.Tensor)}
    return any(isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in storages for o in out)


class Judge:
    def __init__(self, device: str, cache_dir: str, sandbox_binary: str, limits: dict):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self._landing = self.device if self.cuda else None  # where delivered outputs are copied to
        if self.cuda:
            torch.cuda.set_device(self.device)
        self.cache_dir = cache_dir
        self.launcher = Launcher(sandbox_binary, os.path.join(cache_dir, "scratch", f"judge-{os.getpid()}"),
                                 self.cuda, limits)
        self.compiler = CompileService(self.launcher, os.path.join(cache_dir, "ext"), DEFAULTS["compile_timeout_s"])
        self.tasks: OrderedDict = OrderedDict()
        self.reference: Sandboxed | None = None
        self.reference_key = None
        self.reference_limits = ""
        self.spare: tuple[Sandboxed, str] | None = None
        self.bandwidth_gbps = 0.0
        self.rng = random.SystemRandom()
        self.sampler = os.path.join(os.path.dirname(sandbox_binary), "vinci-cpu-sampler")

    # --- requests --------------------------------------------------------------------------
    def hello(self, _req):
        info = {"ok": True, "device": str(self.device), "torch": torch.__version__, "cuda": torch.version.cuda,
                "pid": os.getpid(), "python": sys.version.split()[0], "sandbox": self.launcher.description,
                "sandbox_mode": self.launcher.mode}
        if self.cuda:
            p = torch.cuda.get_device_properties(self.device)
            info.update(device_name=p.name, arch=f"sm_{p.major}{p.minor}", l2_bytes=p.L2_cache_size,
                        sm_count=p.multi_processor_count, memory_bytes=p.total_memory)
            self.bandwidth_gbps = measure_bandwidth(self.device)
            info["bandwidth_gbps"] = self.bandwidth_gbps
        else:
            import platform
            info.update(device_name=f"cpu ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)",
                        arch="cpu", l2_bytes=0)
        return info

    def baseline(self, req):
        cfg = merged(req.get("config"))
        task = self._task(req, cfg)
        tc = cfg["timing"]
        ask = {"op": "time", "calls": tc["trials"], "warmup": tc["warmup"], "seed": self.rng.getrandbits(62),
               "budget_s": tc["budget_s"], "min_calls": tc["min_trials"]}
        runner = self._reference_runner(task, cfg, compiled=False)
        reply = self._ask(runner, ask, cfg["baseline_timeout_s"], "baseline_timeout")
        if not reply.get("ok"):
            raise Outcome("invalid_task", "reference_failed", f"timing the reference failed: {reply.get('message', '')}")
        result = {"ok": True, "eager": summarize(reply["times"]), "compile": None}
        if cfg["compile_baseline"]:
            try:
                runner = self._reference_runner(task, cfg, compiled=True)
                reply = self._ask(runner, ask, cfg["baseline_timeout_s"], "baseline_timeout")
                if reply.get("ok"):
                    result["compile"] = summarize(reply["times"])
                else:
                    result["compile_error"] = str(reply.get("message", ""))[:500]
            except Outcome as o:
                result["compile_error"] = o.reply["message"][:500]
        self._release_memory()
        return result

    def evaluate(self, req):
        cfg = merged(req.get("config"))
        self.compiler.timeout_s = float(cfg["compile_timeout_s"])
        task = self._task(req, cfg)
        phases: dict = {}
        runner = self._candidate_runner(task, cfg)
        try:
            t = time.monotonic()
            reply = self._ask(runner, self._load_request(task, cfg, req), cfg["import_timeout_s"], "import_timeout",
                              compiler=self.compiler)
            phases["load"] = time.monotonic() - t
            self._accept(reply, "loading the candidate")
            t = time.monotonic()
            check = self._check(runner, task, cfg)
            phases["check"] = time.monotonic() - t
            t = time.monotonic()
            timed = self._time(runner, task, cfg, check, float(req.get("eager_ms") or 0.0))
            phases["time"] = time.monotonic() - t
            result = {"ok": True, "class": "correct", **check, **timed}
        except Outcome as o:
            result = o.reply
        finally:
            runner.close()
            runner.log.save(req.get("log"))
        result["phase_seconds"] = phases
        result.pop("signals", None)
        self._release_memory()
        return result

    def _release_memory(self) -> None:
        """The judge's reference work leaves cached blocks; the runners on the same GPU need them."""
        if self.cuda:
            torch.cuda.empty_cache()

    # --- the task and its reference ------------------------------------------------------------
    def _numerics(self, cfg) -> None:
        n = cfg["numerics"]
        torch.backends.cuda.matmul.allow_tf32 = bool(n.get("allow_tf32_matmul"))
        torch.backends.cudnn.allow_tf32 = bool(n.get("allow_tf32_cudnn"))
        torch.set_float32_matmul_precision("high" if n.get("allow_tf32_matmul") else "highest")

    def _task(self, req, cfg) -> TaskState:
        self._numerics(cfg)
        path, scale = req["path"], float(req.get("scale", 1.0))
        key = (path, scale, cfg["seed"], json.dumps(cfg["numerics"], sort_keys=True), cfg["precision_gate"])
        if key in self.tasks:
            self.tasks.move_to_end(key)
            return self.tasks[key]
        while len(self.tasks) >= 2:
            self.tasks.popitem(last=False)
        try:
            module, _ = loader.load_task(path, scale, f"vinci_task_{abs(hash(key))}")
        except loader.TaskError as e:
            raise Outcome("invalid_task", e.reason, str(e)) from None
        inputs_mod.seed_everything(cfg["seed"])
        try:
            with self.device:
                ref = module.Model(*module.get_init_inputs()).to(self.device).eval()
        except Exception as e:
            raise Outcome("invalid_task", "reference_failed", f"building Model failed: {type(e).__name__}: {e}") from None
        try:
            first = inputs_mod.make_inputs(module, cfg["seed"], "task", self.device)
            again = inputs_mod.make_inputs(module, cfg["seed"], "task", self.device)
        except Exception as e:
            raise Outcome("invalid_task", "get_inputs_failed", f"get_inputs() raised {type(e).__name__}: {e}") from None
        if any(isinstance(a, torch.Tensor) and not torch.equal(a, b) for a, b in zip(first, again)):
            raise Outcome("invalid_task", "inputs_not_reproducible",
                          f"{path}: get_inputs() gives other values for the same seed (it must draw from torch, "
                          "random or numpy, which the evaluator seeds), so a runner cannot rebuild the inputs")
        try:
            with torch.no_grad():
                out = _flat(ref(*[a.clone() if isinstance(a, torch.Tensor) else a for a in first]))
        except Exception as e:
            raise Outcome("invalid_task", "reference_failed", f"the reference forward raised {type(e).__name__}: {e}") from None
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        low = is_low_precision_task(source) or any(
            isinstance(x, torch.Tensor) and x.dtype in compare.UNIT_ROUNDOFF for x in list(first) + out)
        ref64 = None
        if (low and cfg["precision_gate"]) or cfg["ood_trials"]:
            ref64 = copy.deepcopy(ref).double()
        state = TaskState(path, scale, module, ref, ref64, outputs.specs_of(out), outputs.specs_of(first), source, low,
                          _aliases(out, first), _nbytes(first) + _nbytes(out))
        self.tasks[key] = state
        return state

    def _expected(self, task: TaskState, seed: int, kind: str, exact_too: bool) -> tuple[list, list | None]:
        """The reference's outputs for a call, and with exact_too the fp64 reference's."""
        args = inputs_mod.make_inputs(task.module, seed, kind, self.device)
        try:
            with torch.no_grad():
                expected = _flat(task.ref(*args))
                exact = None
                if exact_too and task.ref64 is not None:
                    wide = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
                    exact = _flat(task.ref64(*wide))
        except Exception as e:
            raise ReferenceFailed(f"{type(e).__name__}: {e}") from None
        return expected, exact

    # --- sandboxed runners ---------------------------------------------------------------------
    def _limits(self, cfg) -> dict:
        return {"file_size": int(cfg["file_size_limit"]), "scratch_bytes": int(cfg["scratch_bytes"]),
                "cpu_seconds": int(cfg["cpu_seconds"]) if cfg["cpu_seconds"] else 0,
                "address_space": int(cfg["cpu_memory_limit"])}

    @staticmethod
    def _buffer_size(specs: list) -> int:
        return max(64, sum(s.get("nbytes", 0) + 64 for s in specs))

    def _spawn_runner(self, cfg, **extra) -> Sandboxed:
        """A runner for any task and candidate: both arrive as sources in its load request, so one
        can be started ahead of need, its Python and torch loading while another candidate runs."""
        return self.launcher.spawn(
            ["runner", "--control", "{control}", "--buffer", "{buffer}", "--inputs", "{inputs}",
             "--device", "cuda:0" if self.cuda else "cpu"],
            buffers={"buffer": 64, "inputs": 0 if self.cuda else 64}, **self._limits(cfg), **extra)

    def _candidate_runner(self, task: TaskState, cfg) -> Sandboxed:
        key = json.dumps(self._limits(cfg), sort_keys=True)
        runner = None
        if self.spare is not None:
            spare, spare_key = self.spare
            if spare_key == key and spare.proc.poll() is None:
                runner = spare
            else:
                spare.close()
        runner = runner or self._spawn_runner(cfg, read_only=[self.compiler.root])
        self.spare = (self._spawn_runner(cfg, read_only=[self.compiler.root]), key)
        self._size_buffers(runner, task)
        if self.cuda and (why := runner.buffer.pin()):  # the outputs it delivers come to the judge's GPU
            print(f"judge: outputs move through pageable memory, slower: {why}", file=sys.stderr, flush=True)
        return runner

    def _size_buffers(self, runner: Sandboxed, task: TaskState) -> None:
        runner.buffer.resize(self._buffer_size(task.specs))
        if runner.inputs is not None:
            runner.inputs.resize(self._buffer_size(task.input_specs))

    def _load_request(self, task: TaskState, cfg, req=None, compiled=False) -> dict:
        flush = cfg["flush_bytes"] or (2 * torch.cuda.get_device_properties(self.device).L2_cache_size
                                       if self.cuda else 8 << 20)
        static = (req or {}).get("static") or {}
        message = {"op": "load", "task_name": os.path.basename(task.path), "task_source": task.source,
                   "scale": task.scale, "specs": task.specs, "input_specs": task.input_specs, "seed": cfg["seed"],
                   "numerics": cfg["numerics"], "flush_bytes": flush, "kernel_names": static.get("kernel_names", []),
                   "low_precision": task.low_precision, "compile": compiled}
        if req is not None:
            with open(req["candidate"], encoding="utf-8", errors="replace") as f:
                message.update(candidate_name=os.path.basename(req["candidate"]), candidate_source=f.read())
        return message

    def _reference_runner(self, task: TaskState, cfg, compiled: bool) -> Sandboxed:
        """The trusted runner: the task's Model through the very harness candidates run in, for the
        baselines and the overhead probes. No candidate code ever runs in it."""
        key = (task.path, task.scale, json.dumps(cfg["numerics"], sort_keys=True), compiled)
        limits = json.dumps(self._limits(cfg), sort_keys=True)
        alive = self.reference is not None and self.reference.proc.poll() is None
        if alive and self.reference_key == key:
            return self.reference
        if not alive or self.reference_limits != limits:  # else the same process loads the new task
            if self.reference is not None:
                self.reference.close()
            trusted_cache = os.path.join(self.cache_dir, "trusted")
            os.makedirs(trusted_cache, exist_ok=True)
            self.reference = self._spawn_runner(
                cfg, read_write=[trusted_cache], env={"TORCHINDUCTOR_CACHE_DIR": os.path.join(trusted_cache, "inductor"),
                                                     "TRITON_CACHE_DIR": os.path.join(trusted_cache, "triton")})
            self.reference_limits = limits
        self._size_buffers(self.reference, task)
        self.reference_key = key
        reply = self._ask(self.reference, self._load_request(task, cfg, compiled=compiled), cfg["baseline_timeout_s"],
                          "baseline_timeout")
        if not reply.get("ok"):
            raise Outcome("invalid_task", "reference_failed",
                          f"the reference runner could not load the task: {reply.get('message', '')}")
        return self.reference

    def _ask(self, runner: Sandboxed, message: dict | None, timeout: float, timeout_reason: str, compiler=None) -> dict:
        try:
            return runner.ask(message, timeout, compiler=compiler)
        except ChannelTimeout:
            what = message.get("op") if message else "a reply"
            raise Outcome("timeout", timeout_reason, f"no answer to '{what}' within {timeout:.0f} s "
                          f"(compiles not counted); the process was stopped\n{runner.log.last_lines()}") from None
        except ChannelClosed:
            cls, reason, words = describe_exit(runner.exit_status())
            what = message.get("op") if message else "its start"
            raise Outcome(cls, reason, f"the sandboxed process {words} during '{what}'\n"
                          f"{trim_log(runner.log.last_lines(20))}") from None
        except ProtocolError as e:
            raise Outcome("rejected", "protocol_violation", f"the runner broke the protocol: {e}") from None

    @staticmethod
    def _accept(reply: dict, doing: str, label: str = "") -> None:
        """Raises the runner's own account of a failure; a runner cannot claim anything better."""
        if reply.get("ok") is True:
            return
        cls = reply.get("class")
        if cls not in RUNNER_CLASSES:
            cls = "runtime_error"
        reason = str(reply.get("reason") or "exception")[:64]
        message = str(reply.get("message") or f"{doing} failed")
        raise Outcome(cls, reason, f"{label}: {message}" if label else message)

    # --- correctness -----------------------------------------------------------------------------
    def _trials(self, cfg) -> list[tuple[int, str]]:
        trials = [(cfg["seed"] + 1009 * t, "task") for t in range(int(cfg["correctness_trials"]))]
        if cfg["ood_trials"]:
            trials += [(cfg["seed"] + 7919 * (j + 1), kind) for j, kind in enumerate(inputs_mod.OUT_OF_DISTRIBUTION)]
        return trials

    def _check(self, runner: Sandboxed, task: TaskState, cfg) -> dict:
        worst, mean_sum, counted, warnings, skipped = 0.0, 0.0, 0, [], []
        first = {}
        trials = self._trials(cfg)
        for t, (seed, kind) in enumerate(trials):
            label = f"trial {t}" + ("" if kind == "task" else f" ({kind} inputs)")
            reply = self._ask(runner, {"op": "call", "id": t, "seed": seed, "kind": kind, "key": 0, "deliver": True,
                                       "monitor": True, "profile": t == 0}, cfg["run_timeout_s"], "run_timeout")
            try:
                self._accept(reply, "the call", label)
            except Outcome as o:
                o.reply["trials_passed"] = t
                raise
            signals = reply.get("signals") if isinstance(reply.get("signals"), dict) else {}
            if t == 0:
                first = {"signals": signals, "ms": reply.get("ms")}
            self._signal_policy(signals, task, cfg, label, first_call=t == 0, ms=reply.get("ms"))
            if signals.get("torch_ops"):
                warnings.append(f"torch ops in forward: {sorted(signals['torch_ops'])}")
            got = outputs.read(runner.buffer, task.specs, reply.get("values") or [None] * len(task.specs), self._landing)
            ood = kind != "task"
            gate = task.low_precision and cfg["precision_gate"]
            try:
                expected, exact = self._expected(task, seed, kind, exact_too=ood or gate)
            except ReferenceFailed as e:
                if kind == "task":
                    raise Outcome("invalid_task", "reference_failed", f"{label}: the reference forward raised {e}") from None
                skipped.append(f"{label}: the reference raised {e}"[:200])
                continue
            result = compare.compare(got, expected, cfg["tolerances"], finite_only=ood, exact=exact if ood else None)
            if not result["ok"]:
                raise Outcome("incorrect", result["reason"], f"{label}: {result['message']}", trials_passed=t,
                              max_abs_diff=result["max_abs_diff"], mean_abs_diff=result["mean_abs_diff"])
            if exact is not None and gate:
                loss = compare.precision(got, exact, expected)
                if loss:
                    raise Outcome("incorrect", "precision_loss", f"{label}: {loss['message']}", trials_passed=t)
            worst = max(worst, result["max_abs_diff"])
            mean_sum += result["mean_abs_diff"]
            counted += 1
        signals = dict(first.get("signals", {}))
        if not self.cuda and cfg["torch_ops"] != "allow":
            signals["coverage"], note = self._cpu_coverage(runner, cfg)
            if note:
                warnings.append(note)
            self._signal_policy({"coverage": signals["coverage"]}, task, cfg, "coverage", first_call=False, ms=None)
        return {"trials": len(trials), "trials_passed": len(trials), "max_abs_diff": worst,
                "mean_abs_diff": mean_sum / max(counted, 1), "warnings": sorted(set(warnings)),
                "skipped_trials": skipped, "custom_launches": int(signals.get("launches") or 0),
                "coverage": signals.get("coverage"), "profile": signals.get("profile") or [],
                "gpu_busy_ms": signals.get("gpu_busy_ms")}

    COVERAGE_SAMPLES = 100  # samples in compiled code a CPU coverage verdict rests on
    COVERAGE_ROUNDS = 8     # rounds of half a second at most to get them (a loaded machine samples less)

    def _cpu_coverage(self, runner: Sandboxed, cfg) -> tuple[float | None, str]:
        """The share of forward's CPU samples in the candidate's own compiled code, among samples in
        its own code or in libraries (the interpreter, libc and torch's binding and allocator layers
        are glue, counted for neither). The samples are the trusted sampler's, taken from outside the
        sandbox, round after round until there are enough; None when the host does not allow tracing
        or even the last round left too few to say, with a note saying which."""
        own = library = 0
        for _ in range(self.COVERAGE_ROUNDS):
            sampler = subprocess.Popen([self.sampler, "--pid", str(runner.proc.pid), "--ms", "600", "--hz", "500"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            time.sleep(0.05)  # attached before the calls start
            reply = self._ask(runner, {"op": "coverage", "seeds": [self.rng.getrandbits(62) for _ in range(4)],
                                       "seconds": 0.5}, cfg["run_timeout_s"], "run_timeout")
            try:
                out, _ = sampler.communicate(timeout=30)
                samples = json.loads(out)
            except (subprocess.TimeoutExpired, ValueError):
                sampler.kill()
                return None, "CPU coverage unavailable: the sampler did not answer"
            self._accept(reply, "the coverage calls")
            if samples.get("error"):
                return None, f"CPU coverage unavailable: {samples['error']}"
            for obj, n in (samples.get("by_object") or {}).items():
                if obj.startswith((self.compiler.root + os.sep, runner.scratch + os.sep)):
                    own += n
                elif not _glue(obj, self.launcher.python_binary):
                    library += n
            if own + library >= self.COVERAGE_SAMPLES:
                return own / (own + library), ""
        return None, f"CPU coverage inconclusive: {own + library} samples in compiled code"

    def _signal_policy(self, s: dict, task: TaskState, cfg, label: str, first_call: bool, ms) -> None:
        """The runner's in-process monitors: early, cheap, and blind-able, so they only ever reject."""
        def reject(reason, message):
            raise Outcome("rejected", reason, f"{label}: {message}")
        if s.get("patched"):
            reject("monkey_patch", f"the candidate changed {', '.join(map(str, s['patched'][:5]))}")
        if s.get("escapes"):
            reject("threads_processes", "; ".join(map(str, s["escapes"])))
        if s.get("reference_called"):
            reject("reference_model", "forward called the reference Model")
        if s.get("mutated_input") is not None:
            reject("mutated_inputs", f"input {s['mutated_input']} changed during forward")
        policy = cfg["torch_ops"]
        if policy != "allow" and "launches" in s and not s["launches"]:
            what = "no custom CUDA kernel ran" if self.cuda else "no extension function was called"
            reject("kernel_not_launched", f"{what} during forward (a decoy kernel)")
        if s.get("torch_ops") and policy == "forbid":
            ops = ", ".join(f"aten.{k}×{v}" for k, v in sorted(s["torch_ops"].items()))
            reject("torch_op", f"torch compute ops ran inside forward: {ops}")
        if not cfg["allow_precision_drop"] and not task.low_precision:
            if s.get("precision_drops"):
                reject("precision_drop", "; ".join(map(str, s["precision_drops"])))
            if s.get("flags_changed"):
                reject("precision_drop", f"precision flags changed: {', '.join(map(str, s['flags_changed']))}")
        if s.get("aliased") and not task.ref_aliases:
            reject("output_aliases_input", f"output {s['aliased'][0]} shares memory with input {s['aliased'][1]} while "
                   "the reference's is fresh: nothing was computed into an output of its own")
        if policy == "forbid" and isinstance(s.get("coverage"), (int, float)) and s["coverage"] < cfg["min_coverage"]:
            reject("library_compute", f"only {100 * s['coverage']:.1f}% of forward's time ran in the candidate's own "
                   f"kernels (at least {100 * cfg['min_coverage']:.0f}% under --torch-ops forbid): the rest is "
                   "library code")
        busy = s.get("gpu_busy_ms")
        if self.cuda and first_call and isinstance(busy, (int, float)) and isinstance(ms, (int, float)) and \
                ms < cfg["side_stream_ratio"] * busy:
            reject("side_stream", f"event timing on the current stream ({ms:.3f} ms) is far below the GPU time of the "
                   f"kernels forward launched ({busy:.3f} ms): work runs on a stream the caller never waits for")

    # --- timing ---------------------------------------------------------------------------------
    def _time(self, runner: Sandboxed, task: TaskState, cfg, check: dict, eager_ms: float) -> dict:
        reference = self._reference_runner(task, cfg, compiled=False)
        attempts = []
        for _ in range(2):  # a noisy machine gets one more measurement before a claim is refused
            measured = self._measure(runner, reference, task, cfg)
            attempts.append(measured)
            if measured["verified"]:
                break
        m = attempts[-1]
        stats = summarize(m["claims"])
        charged = False
        tc = cfg["timing"]
        if tc.get("charge_ms", -1) >= 0:
            limit = tc["charge_ms"]
        else:
            limit = CHARGE_MS_CUDA if self.cuda else CHARGE_OVERHEAD_SHARE_CPU * m["overhead_main_ms"]
        if not m["verified"]:
            if m["hidden_ms"] <= m["allowed_ms"] + limit:
                # A claim the judge cannot corroborate, but by too little to be a hiding cheat's: the
                # candidate is timed by the judge's figure, so hiding that much gains nothing.
                stats = summarize([c + m["hidden_ms"] for c in m["claims"]])
                charged = True
        external = {"clock": m["clock"], "spent_ms": m["spent_ms"], "overhead_ms": m["overhead_ms"],
                    "forward_ms": m["forward_ms"], "hidden_ms": m["hidden_ms"], "allowed_ms": m["allowed_ms"],
                    "hidden_p10_p90_ms": m["hidden_p10_p90_ms"],
                    "opened": m["opened"], "attempts": len(attempts), "charged": charged}
        if not m["verified"] and not charged:
            raise Outcome("rejected", "timing_unverified",
                          f"the runner claimed {stats['median_ms']:.4g} ms per call, but by the judge's {m['clock']} clock "
                          f"a call took {m['spent_ms']:.4g} ms and a trusted runner needs {m['overhead_ms']:.4g} ms for "
                          f"everything but the forward: {m['hidden_ms']:.4g} ms per call went unclaimed (at most "
                          f"{m['allowed_ms']:.4g} ms is noise, and {limit:.4g} ms more would have been charged); measured "
                          f"{len(attempts)} times",
                          timing=stats, external=external)
        reply = {"timing": stats, "external": external, "flags": ["timing_charged"] if charged else []}
        share = gpu_busy_share(check.get("gpu_busy_ms"), stats["median_ms"]) if self.cuda else None
        if share is not None:
            external["gpu_busy_share"] = share
            if share < LAUNCH_BOUND_BUSY_SHARE:
                reply["flags"].append("launch_bound")
        if self.cuda and self.bandwidth_gbps > 0:
            floor_ms = task.moved_bytes / (self.bandwidth_gbps * 1e9) * 1e3
            reply["roofline_floor_ms"] = floor_ms
            margin = cfg["roofline_margin"] * floor_ms
            if stats["median_ms"] < margin:
                if eager_ms and eager_ms < margin:
                    reply["flags"].append("roofline_not_binding")  # the reference beats it too: the task reads less
                else:
                    raise Outcome("rejected", "beats_roofline",
                                  f"{stats['median_ms']:.4g} ms per call would move the task's {task.moved_bytes} bytes "
                                  f"of inputs and outputs faster than {cfg['roofline_margin']:.0%} of the GPU's "
                                  f"{self.bandwidth_gbps:.0f} GB/s allows ({floor_ms:.4g} ms)", timing=stats)
        return reply

    def _measure(self, runner: Sandboxed, reference: Sandboxed, task: TaskState, cfg) -> dict:
        """One timing run. Each timed call is paired with an overhead probe on the trusted runner,
        taken while the candidate's processes are stopped; what the judge measures per call is the
        wall clock on a GPU (the kernels' time is wall time) and, on the CPU, the CPU time the
        kernel charged to the sandbox's processes (immune to a loaded machine's waiting)."""
        tc = cfg["timing"]
        deadline = time.monotonic() + cfg["run_timeout_s"]
        n = int(tc["trials"])
        openings = Openings(self.rng, int(tc["open_calls"]), n, float(tc["budget_s"]))
        claims, spent, overheads = [], [], []
        spent_main, overheads_main = [], []
        cpu = not self.cuda

        interpreters = {}

        def measured(sandboxed: Sandboxed, message: dict, timeout_reason: str) -> tuple[dict, float, float]:
            """The reply, and what the call cost by the judge's clock: wall time on a GPU; on the CPU the
            sandbox's CPU time, and its main thread's (a lower bound on the call's wall time that
            does not shrink with the number of cores)."""
            main = interpreters.setdefault(sandboxed.proc.pid, process_tree.interpreter_of(
                sandboxed.proc.pid, self.launcher.python_binary)) if cpu else None
            c0 = process_tree.cpu_ns(sandboxed.proc.pid) if cpu else 0
            m0 = process_tree.thread_cpu_ns(main) if main else 0
            t0 = time.perf_counter()
            reply = self._ask(sandboxed, message, max(1.0, deadline - time.monotonic()), timeout_reason)
            wall = (time.perf_counter() - t0) * 1000
            if not cpu:
                return reply, wall, wall
            total = (process_tree.cpu_ns(sandboxed.proc.pid) - c0) / 1e6
            return reply, total, ((process_tree.thread_cpu_ns(main) - m0) / 1e6 if main else 0.0)

        def message(op: str, sandboxed: Sandboxed, seed: int, key: int, **extra) -> dict:
            """A call's request; on the CPU its inputs go into the buffer first, made here while the
            candidate is stopped, so neither runner's clock pays for making them."""
            m = {"op": op, "seed": seed, "kind": "task", "key": key, **extra}
            if cpu:
                args = inputs_mod.make_inputs(task.module, seed, "task", self.device)
                with process_tree.Frozen(runner.proc.pid):
                    outputs.write(sandboxed.inputs, task.input_specs, args)
                m.update(from_buffer=True, input_values=[None if isinstance(a, torch.Tensor) else a for a in args])
            return m

        def call(i: int, timed: bool) -> None:
            seed, key = self.rng.getrandbits(62), self.rng.getrandbits(32)
            reply, used, used_main = measured(runner, message("call", runner, seed, key, id=i), "run_timeout")
            self._accept(reply, "a timed call", f"timed call {i}")
            ms = reply.get("ms")
            if reply.get("id") != i or not isinstance(ms, (int, float)) or not math.isfinite(ms) or ms < 0:
                raise Outcome("rejected", "protocol_violation", f"timed call {i}: the reply does not answer it "
                              f"(id {reply.get('id')!r}, ms {ms!r})")
            if timed:
                claims.append(float(ms))
                spent.append(used)
                spent_main.append(used_main)
                if openings.open_call(i, time.monotonic() - start):
                    self._open(runner, task, cfg, i, seed, key, reply)

        def probe() -> None:
            request = message("null", reference, self.rng.getrandbits(62), 0)
            with process_tree.Frozen(runner.proc.pid):
                reply, used, used_main = measured(reference, request, "run_timeout")
            if not reply.get("ok"):
                raise Outcome("runtime_error", "reference_runner", f"the overhead probe failed: {reply.get('message')}")
            overheads.append(used)
            overheads_main.append(used_main)

        t0, done = time.monotonic(), 0
        while done < tc["warmup"] or ((time.monotonic() - t0) * 1000 < tc["warmup_ms"] and done < 100 * tc["warmup"]):
            call(-1 - done, timed=False)
            done += 1
        probe()
        overheads.clear()
        overheads_main.clear()
        start = time.monotonic()
        for i in range(n):
            call(i, timed=True)
            probe()  # right after: a change of load between the two cancels in their difference
            if i + 1 >= tc["min_trials"] and time.monotonic() - start > tc["budget_s"] and openings.satisfied():
                break
        cores = max(1, len(os.sched_getaffinity(0)))
        if cpu:
            # CPU time of threads working in parallel adds up, while the claim is wall time: the
            # sandbox's CPU time over the cores is a lower bound of the wall time, and so is the
            # main thread's CPU time alone, which catches a one-thread cheat however many cores.
            judged = [max((s - o) / cores, sm - om) for s, o, sm, om in zip(spent, overheads, spent_main, overheads_main)]
        else:
            judged = [s - o for s, o in zip(spent, overheads)]
        # Each call's claim against the judge's figure for that same call: a hiccup inside a call
        # (the host preempted mid-launch) lengthens both and cancels, and the claims' long right tail
        # does not pull the judge's median above the claims' median as unpaired medians would.
        claim = statistics.median(claims)
        gaps = sorted(j - c for j, c in zip(judged, claims))
        hidden = statistics.median(gaps)
        forward = claim + hidden
        abs_ms = tc["verify_abs_ms"] if tc["verify_abs_ms"] >= 0 else VERIFY_ABS_MS["cuda" if self.cuda else "cpu"]
        allowed = abs_ms + tc["verify_rel"] * claim
        return {"claims": claims, "spent_ms": statistics.median(spent), "overhead_ms": statistics.median(overheads),
                "overhead_main_ms": statistics.median(overheads_main) if cpu else 0.0,
                "forward_ms": forward, "hidden_ms": hidden, "allowed_ms": allowed, "opened": openings.opened,
                "hidden_p10_p90_ms": [gaps[len(gaps) // 10], gaps[(9 * len(gaps)) // 10]],
                "verified": hidden <= allowed, "clock": "cpu" if cpu else "wall"}

    def _open(self, runner: Sandboxed, task: TaskState, cfg, i: int, seed: int, key: int, call_reply: dict) -> None:
        """Checks timed call i after the fact: its bytes must be the ones it committed to, and right."""
        reply = self._ask(runner, {"op": "open", "id": i}, cfg["run_timeout_s"], "run_timeout")
        self._accept(reply, "opening a call", f"timed call {i}")
        got = outputs.read(runner.buffer, task.specs, call_reply.get("values") or [None] * len(task.specs),
                           self._landing)
        if outputs.commitment(got, key) != call_reply.get("commitment"):
            raise Outcome("rejected", "commitment_mismatch",
                          f"timed call {i}: the output delivered when the judge asked for it is not the output the "
                          "runner committed to when the call ended (it was computed later, or changed)")
        gate = task.low_precision and cfg["precision_gate"]
        try:
            expected, exact = self._expected(task, seed, "task", exact_too=gate)
        except ReferenceFailed as e:
            raise Outcome("invalid_task", "reference_failed", f"timed call {i}: the reference raised {e}") from None
        result = compare.compare(got, expected, cfg["tolerances"])
        if not result["ok"]:
            raise Outcome("rejected", "timed_output", f"timed call {i} (opened at random after it ended) is wrong: "
                          f"{result['message']}; the correctness trials passed, so the output depends on being "
                          "watched, on earlier calls (a cache), or on work deferred past the call")
        if exact is not None and gate and compare.precision(got, exact, expected):
            raise Outcome("rejected", "timed_output", f"timed call {i} lost precision that the correctness trials kept")


def _glue(obj: str, python: str) -> bool:
    """Mapped files whose samples say nothing about who computes: the interpreter, libc, the loader,
    and torch's Python bindings and allocator (a call's fixed cost, which a tiny honest kernel pays
    as much as a cheat)."""
    name = os.path.basename(obj)
    return obj == python or name.startswith(("libpython", "libc.so", "libc-", "libm.so", "libm-", "ld-linux",
                                             "libpthread", "libdl", "librt", "libtorch_python", "libc10.so",
                                             "libgomp")) or obj.startswith("[v")


OPS = ("hello", "baseline", "evaluate")


def serve(device: str, cache_dir: str, sandbox_binary: str, limits: dict) -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    judge = Judge(device, cache_dir, sandbox_binary, limits)
    try:
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
                reply = getattr(judge, op)(req)
            except Outcome as o:
                reply = o.reply
            except Exception as e:  # a bug in the judge: report it, never die silently
                reply = {"ok": False, "class": "runtime_error", "reason": "worker_error",
                         "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}", "fatal": True}
            proto.write(json.dumps(finite(reply), default=str, allow_nan=False) + "\n")
            if reply.get("fatal"):
                break
    finally:
        if judge.reference is not None:
            judge.reference.close()
        if judge.spare is not None:
            judge.spare[0].close()
    return 0
