"""The judge: one per device, long-lived, and it never imports a candidate's code.

For each candidate it starts a sandboxed runner (python/vinci_runner) that imports the candidate
and answers calls. The judge picks every call's seed, makes its inputs and writes them where the
runner reads them, times the call from outside, reads the outputs in place while the runner is
frozen, computes the reference itself and compares (call_window.py says how a call is watched):
  correctness  the task's own inputs (5 seeds) and out-of-distribution ones (signed, offset, scaled,
               specials; compared where the reference is finite), each output also against the fp64
               reference by its error's norm (compare.py); half-precision tasks' precision too
  timing       windows of fresh inputs, each timed by the judge; a random hidden subset of the
               calls is read and checked after the fact; a window may hold several calls when one
               call is short beside what a window costs (the same count for the baseline)
Baselines are timed by a trusted reference runner through the very same windows. Nothing a
runner says is a measurement: a failure it reports about itself is accepted, nothing better.

Requests on stdin, one JSON object a line (hello, baseline, evaluate, shutdown); replies on the
protocol descriptor (stdout at start). Their shapes are protocol.py's, through which serve() reads
every request and writes every reply.
"""
from __future__ import annotations

import copy
import contextlib
import json
import os
import random
import sys
import time
import traceback
from collections import OrderedDict

import torch

from vinci_runner import inputs as inputs_mod
from vinci_runner import loader, model_state, outputs
from vinci_runner.channel import ChannelClosed, ChannelTimeout, ProtocolError, finite
from vinci_runner.logs import trim_log
from vinci_runner.static_check import is_low_precision_task

from . import compare, gpu_drain, heap, protocol
from .build_limits import BuildLimits
from .call_form import JUDGES_OWN, CallForm
from .call_window import CallWindow, Flush, WindowError, cache_bytes
from .correctness import Correctness
from .extensions import CompileService
from .judge_state import WINDOW_CLASSES, Loaded, TaskState, flat, keep_pristine, reset_state
from .outcome import Outcome
from .sandbox import Launcher, Sandboxed, describe_exit, gpu_node_of
from .timed_windows import Timing, flag_launch_bound, require_timed_work_as_profiled
from .timing import measure_bandwidth, summarize
from .trusted_sampling import TrustedSampling
from .zygote import Zygote, ZygoteError

DEFAULTS = {
    "protocol": "vinci", "seed": 42, "correctness_trials": 5, "ood_trials": True, "precision_gate": True,
    "relative_error": True, "strict_layout": True,
    "numerics": {"allow_tf32_matmul": False, "allow_tf32_cudnn": False},
    "tolerances": {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2],
                   "float64": [1e-7, 1e-7]},
    "torch_ops": "forbid", "allow_precision_drop": False, "min_coverage": 0.5,
    "timing": {"trials": 100, "min_trials": 10, "warmup": 5, "warmup_ms": 25.0, "budget_s": 20.0, "open_calls": 10,
               "window_ms": 10.0, "max_calls_per_window": 64, "window_bytes": 1 << 30},
    "flush_bytes": 0, "roofline_margin": 0.7, "cpu_seconds": 600,
    "compile_baseline": True, "import_timeout_s": 120, "run_timeout_s": 300, "compile_timeout_s": 900,
    "compile_memory_bytes": BuildLimits.memory_bytes, "compile_cpu_seconds": BuildLimits.cpu_seconds,
    "compile_disk_bytes": BuildLimits.scratch_bytes, "compile_output_bytes": BuildLimits.output_bytes,
    "baseline_timeout_s": 1200, "file_size_limit": 64 << 20, "cpu_memory_limit": 0, "scratch_bytes": 1 << 30,
}
RUNNER_CLASSES = {"compile_error", "runtime_error", "incorrect", "rejected", "timeout"}
# The kinds a task's calls are timed on, in order of preference (Judge._timed_kind): signed values
# first, where a dot product cancels and narrowed operands show, then kinds of one sign.
TIMED_KINDS = ("signed", "offset", "scaled", "negative")


def merged(cfg: dict | None) -> dict:
    out = json.loads(json.dumps(DEFAULTS))
    for k, v in (cfg or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k].update(v)
        else:
            out[k] = v
    return out


def timed_kind(module, reference, seed: int, device: torch.device, rounding: bool) -> str:
    """The kind of inputs a task's timed calls draw under the vinci protocol, the reference's and every
    candidate's alike: the first of TIMED_KINDS on which reference(args) is finite everywhere (one draw
    of the task's seed), else the task's own. Red-team round 18 narrowed a matmul's operands with
    stochastic rounding (zero-mean errors, inside the tolerance on values in [0, 1)) and took the exact
    path on any draw a scan of its inputs told apart; on signed values, whose dot products cancel, the
    narrowing fails the relative-error bound, so such a fast path is never the one timed. A kind whose
    reference is not finite would leave the timed calls nothing to be checked against."""
    for kind in TIMED_KINDS:
        try:
            expected = reference(inputs_mod.make_inputs(module, seed + 104729, kind, device, rounding))
        except Exception:  # noqa: BLE001 - a kind the task's inputs or reference refuse is passed over
            continue
        if all(bool(torch.isfinite(e).all()) for e in expected if isinstance(e, torch.Tensor) and e.is_floating_point()):
            return kind
    return "task"


def _nbytes(xs) -> int:
    return sum(x.numel() * x.element_size() for x in xs if isinstance(x, torch.Tensor))


def _aliases(out, args) -> bool:
    storages = {x.untyped_storage().data_ptr() for x in args if isinstance(x, torch.Tensor)}
    return any(isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in storages for o in out)


def _memory_readable() -> str:
    """Why this host will not let the judge read a runner's memory ('' when it will): the runner is
    the judge's descendant, which Yama's ptrace scopes 0 and 1 allow any user and scope 2 only root."""
    try:
        scope = int(open("/proc/sys/kernel/yama/ptrace_scope").read().strip())
    except (OSError, ValueError):
        return ""
    if scope <= 1 or (scope == 2 and os.geteuid() == 0):
        return ""
    return f"Yama ptrace_scope {scope}"


class Judge(Correctness, Timing, TrustedSampling):
    def __init__(self, device: str, cache_dir: str, sandbox_binary: str, limits: dict):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda:
            torch.cuda.set_device(self.device)
        # Builds and runners work in other directories: a relative cache made every build fail on a
        # missing file, a failure the build cache then kept as the candidate's after its retry.
        cache_dir, sandbox_binary = os.path.abspath(cache_dir), os.path.abspath(sandbox_binary)
        self.cache_dir = cache_dir
        self.launcher = Launcher(sandbox_binary, os.path.join(cache_dir, "scratch", f"judge-{os.getpid()}"),
                                 self.cuda, limits)
        if self.cuda:
            uuid = str(torch.cuda.get_device_properties(self.device).uuid)
            node = gpu_node_of(uuid)
            self.launcher.gpu_nodes = [node] if node else None
            self.launcher.gpu_uuid = uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
        self.compiler = CompileService(self.launcher, os.path.join(cache_dir, "ext"), DEFAULTS["compile_timeout_s"])
        self.tasks: OrderedDict = OrderedDict()
        self.reference: Loaded | None = None
        self.reference_process: Sandboxed | None = None
        self.reference_limits = ""
        self.spares: list[tuple[Sandboxed, str]] = []  # runners started ahead of need, and their limits
        # Candidates' runners are forked by a zygote that imported torch once (zygote.py), where the
        # host lets it make their namespaces; VINCI_RUNNER_ZYGOTE=0 starts each from scratch (measurements).
        # Not for a GPU: CUDA fails (error 304) in a pid namespace whose /proc is its parent's, and the
        # zygote's sandbox cannot mount a /proc of the runner's own (bwrap's /proc has locked submounts):
        # benchmarks/zygote_cuda_probe.py, docs/benchmarks.md.
        use_zygote = (self.launcher.mode == "bwrap" and not self.cuda
                      and os.environ.get("VINCI_RUNNER_ZYGOTE", "1") != "0")
        self.zygote: Zygote | None = Zygote(self.launcher) if use_zygote else None
        self.bandwidth_gbps = 0.0
        self.rng = random.SystemRandom()
        self.code_contents: dict = {}  # sampled files' sha256 by identity (mapped_code.py)
        self.sampler = os.path.join(os.path.dirname(sandbox_binary), "vinci-cpu-sampler")
        self.perf_sampling = self.cuda and self._perf_allowed()  # the GPU's timed windows sampled (trusted_sampling.py)
        self.drain_unavailable = gpu_drain.unavailable() if self.cuda else ""
        self.drain_proven = False  # a trusted runner was drained on this host (see _load)
        self.memory_unreadable = "" if self.cuda else _memory_readable()
        if self.cuda:
            torch.ones(1, device=self.device)  # the context the driver calls below work in
            cache = torch.cuda.get_device_properties(self.device).L2_cache_size
        else:
            cache = cache_bytes()
            # The judge's inputs and comparisons run while its runner is frozen, beside the other
            # slots' judges and runners: intra-op threads there only spin at their barriers, which on
            # the 2-core CI machine with a second judge beside it cost 1.5-2.5x the CPU time of one thread.
            torch.set_num_threads(1)
        self.flushes: dict[int, Flush] = {}
        self.default_flush = 2 * cache
        self.warnings = []
        if self.drain_unavailable:
            self.warnings.append(f"no trusted drain of GPU work ({self.drain_unavailable}): work a candidate queues "
                                 "past a call's end is unseen by the clock")
        if self.memory_unreadable:
            self.warnings.append(f"outputs delivered through the runner's buffer ({self.memory_unreadable}): a "
                                 "candidate may skip that copy")

    def _flush(self, cfg) -> Flush:
        nbytes = int(cfg["flush_bytes"]) or self.default_flush
        if nbytes not in self.flushes:
            self.flushes = {nbytes: Flush(self.device, nbytes)}
        return self.flushes[nbytes]

    # --- requests --------------------------------------------------------------------------
    def hello(self, _req):
        sandbox = self.launcher.description + (", runners forked by a zygote" if self.zygote else "")
        info = {"ok": True, "device": str(self.device), "torch": torch.__version__, "cuda": torch.version.cuda,
                "pid": os.getpid(), "python": sys.version.split()[0], "sandbox": sandbox,
                "sandbox_mode": self.launcher.mode, "flush_bytes": self.default_flush,
                "clock": self._clock_name(), "warnings": self.warnings}
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

    def _clock_name(self) -> str:
        if not self.cuda:
            return "cpu time of the sandbox's processes"
        return "wall, to the end of a drain of the runner's GPU work" if not self.drain_unavailable else \
            "wall, to the runner's reply (no drain)"

    def baseline(self, req):
        cfg = merged(req.get("config"))
        task = self._task(req, cfg)
        tc = cfg["timing"]
        cap = self._window_cap(task, cfg)
        loaded = self._reference_runner(task, cfg, compiled=False, sets=cap)
        per_call, r = self._time_reference(loaded, task, cfg, None, cfg["baseline_timeout_s"])
        result = {"ok": True, "eager": summarize(per_call), "eager_times": per_call, "calls_per_window": r,
                  "compile": None, "compile_times": None}
        if cfg["compile_baseline"]:
            try:
                loaded = self._reference_runner(task, cfg, compiled=True, sets=cap)
                times, _ = self._time_reference(loaded, task, cfg, r, cfg["baseline_timeout_s"])
                result.update(compile=summarize(times), compile_times=times)
            except Outcome as o:
                result["compile_error"] = o.reply["message"][:500]
        if self.cuda:
            result["reference_kernels"] = self._reference_kernels(task, cfg)
        self._release_memory()
        return result

    def _reference_kernels(self, task: TaskState, cfg) -> list[str]:
        """The full names of the kernels the task's reference runs on this GPU, from one profiled call
        in a trusted runner of its own, closed after it (a process that has used CUPTI can never again
        be drained, so the timing's reference runner never profiles). A candidate's kernel of one of
        these names is the library's, whoever compiled it: red-team round 13 replayed cuBLAS from a
        graph captured in __init__ and declared its kernel's name as its own. Empty when the profile
        fails, which only leaves that check out."""
        runner = self._spawn_runner(cfg)
        loaded = None
        try:
            loaded = self._load(runner, task, cfg, 1)
            loaded.window.gate.stop_draining()
            seed, kind = self._trials(cfg)[0]
            reply, _, _ = self._window(loaded, task, cfg, [(seed, kind)], "the reference's profiled call",
                                       monitor=True, profile=True)
            names = reply.get("signals", {}).get("kernels_seen")
            return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
        except Outcome:
            return []
        finally:
            if loaded is not None:
                loaded.window.close()
            runner.close()

    def evaluate(self, req):
        cfg = merged(req.get("config"))
        self.compiler.timeout_s = float(cfg["compile_timeout_s"])
        self.compiler.limits = BuildLimits(memory_bytes=int(cfg["compile_memory_bytes"]),
                                           cpu_seconds=int(cfg["compile_cpu_seconds"]),
                                           scratch_bytes=int(cfg["compile_disk_bytes"]),
                                           output_bytes=int(cfg["compile_output_bytes"]))
        task = self._task(req, cfg)
        reset_state(task)
        r = int(req.get("calls_per_window") or 1)
        r = max(1, min(r, self._window_cap(task, cfg)))
        phases: dict = {}
        try:
            t = time.monotonic()
            with self._candidate_loaded(req, task, cfg, r, log=req.get("log")) as loaded:
                phases["load"] = time.monotonic() - t
                t = time.monotonic()
                check = self._check(loaded, task, cfg)
                phases["check"] = time.monotonic() - t
                t = time.monotonic()
                refused = self._plain_trials(req, cfg)
                if refused:
                    check["warnings"] = sorted(set(check.get("warnings", []) + refused))
                phases["plain"] = time.monotonic() - t
                t = time.monotonic()
                paired = self._reference_runner(task, cfg, compiled=False, sets=r)
                phases["reference"] = time.monotonic() - t
                self._move_state(loaded, task, cfg, "before the timed calls")
                t = time.monotonic()
                timed = self._time(loaded, task, cfg, check, r, req, paired)
                if self.cuda:
                    self._hold_watched_calls(check, timed, paired, task, cfg)
                    check.update(self._profiled_call(loaded, task, cfg))
                    timed["external"]["profiled_ms"] = check.pop("profiled_ms")
                    flag_launch_bound(check, timed)
                    require_timed_work_as_profiled(check, timed)
                phases["time"] = time.monotonic() - t
            check.pop("watched_ms", None)  # the trials' times: held on a GPU, nothing to report
            result = {"ok": True, "class": "correct", **check, **timed}
        except Outcome as o:
            result = o.reply
        result["phase_seconds"] = phases
        result.pop("signals", None)
        if self.warnings:
            result["warnings"] = sorted(set(result.get("warnings", []) + self.warnings))
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
        path, scale = req["path"], float(req.get("scale", protocol.TASK_SIZES))
        wide = cfg["ood_trials"] or cfg["relative_error"]
        sizes = cfg.get("sizes") or None
        key = (path, scale, cfg["seed"], json.dumps(cfg["numerics"], sort_keys=True), cfg["precision_gate"], wide,
               self._rounding(cfg), bool(cfg["ood_trials"]), json.dumps(sizes, sort_keys=True))
        if key in self.tasks:
            self.tasks.move_to_end(key)
            return self.tasks[key]
        while len(self.tasks) >= 6:  # a task's biased and two plain states (_plain_trials), for two tasks
            self.tasks.popitem(last=False)
        try:
            module, scaled = loader.load_task(path, scale, f"vinci_task_{abs(hash(key))}", sizes)
        except loader.TaskError as e:
            raise Outcome("invalid_task", e.reason, str(e)) from None
        inputs_mod.seed_everything(cfg["seed"])
        try:
            with self.device, inputs_mod.rounding_draws(self._rounding(cfg)):
                ref = module.Model(*module.get_init_inputs()).to(self.device).eval()
            constants: dict = {}
            model_state.vary_constants(ref, cfg["seed"], counted=constants)  # as each runner does with its model
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
                          "random or numpy, which the evaluator seeds), so the judge cannot make them again")
        try:
            with torch.no_grad():
                out = flat(ref(*[a.clone() if isinstance(a, torch.Tensor) else a for a in first]))
        except Exception as e:
            raise Outcome("invalid_task", "reference_failed", f"the reference forward raised {type(e).__name__}: {e}") from None
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        low = is_low_precision_task(source) or any(
            isinstance(x, torch.Tensor) and x.dtype in compare.UNIT_ROUNDOFF for x in list(first) + out)
        ref64 = None
        if (low and cfg["precision_gate"]) or wide:
            ref64 = copy.deepcopy(ref).double()
        state = TaskState(path, scale, module, ref, ref64, outputs.specs_of(out), outputs.specs_of(first), source, low,
                          _aliases(out, first), _nbytes(first) + _nbytes(out), scaled=scaled, sizes=sizes,
                          constants=constants, reads_training_flag=model_state.reads_training_flag(ref))
        keep_pristine(state)
        if cfg["ood_trials"]:
            state.timed_kind = timed_kind(module, lambda args: self._expected(state, args, exact_too=False)[0],
                                          cfg["seed"], self.device, self._rounding(cfg))
        self.tasks[key] = state
        return state


    # --- sandboxed runners ---------------------------------------------------------------------
    def _limits(self, cfg) -> dict:
        return {"file_size": int(cfg["file_size_limit"]), "scratch_bytes": int(cfg["scratch_bytes"]),
                "cpu_seconds": int(cfg["cpu_seconds"]) if cfg["cpu_seconds"] else 0,
                "address_space": int(cfg["cpu_memory_limit"])}

    @staticmethod
    def _buffer_size(specs: list) -> int:
        return max(64, sum(s.get("nbytes", 0) + 64 for s in specs))

    def _window_cap(self, task: TaskState, cfg) -> int:
        """The most calls a window may hold: each needs an input set and its outputs alive."""
        tc = cfg["timing"]
        per_call = max(1, task.moved_bytes)
        return max(1, min(int(tc["max_calls_per_window"]), int(tc["window_bytes"]) // per_call))

    def _spawn_runner(self, cfg, **extra) -> Sandboxed:
        """A runner for any task and candidate: both arrive as sources in its load request, so one
        can be started ahead of need, its Python and torch loading while another candidate runs.
        The trusted reference runner (extra binds) is always started by its own launcher."""
        device = "cuda:0" if self.cuda else "cpu"
        buffers = {"buffer": 64, "inputs": 0 if self.cuda else 64}
        if self.zygote is not None and not extra:
            try:
                return self.zygote.spawn(device, buffers, **self._limits(cfg))
            except ZygoteError as e:
                self.zygote.close()
                self.zygote = None
                self.warnings.append(f"runners start without a zygote ({e}): each imports torch itself")
        return self.launcher.spawn(
            ["runner", "--control", "{control}", "--buffer", "{buffer}", "--inputs", "{inputs}", "--device", device],
            buffers=buffers, **self._limits(cfg), **extra)

    # Runners kept started ahead of need where they are launched. A GPU runner takes 5-7 s to start
    # (torch, Triton, a CUDA context) and a candidate takes two in as little as 1-3 s: with two spares,
    # an H200 run of the default GPU set waited 60 s in loads and 46 s in plain trials (session 26).
    SPARES = {"cuda": 4, "cpu": 2}

    def _candidate_process(self, cfg) -> Sandboxed:
        if self.zygote is not None:
            # A fork costs milliseconds, and no two candidates then live beside one zygote.
            return self._spawn_runner(cfg)
        # Launched runners start in seconds: each candidate takes two (its own and its plain trials'),
        # so spares wait started, their Python and torch loading while the candidate before runs.
        key = json.dumps(self._limits(cfg), sort_keys=True)
        runner = None
        while self.spares and runner is None:
            spare, spare_key = self.spares.pop(0)
            if spare_key == key and spare.proc.poll() is None:
                runner = spare
            else:
                spare.close()
        runner = runner or self._spawn_runner(cfg)
        while len(self.spares) < self.SPARES["cuda" if self.cuda else "cpu"]:
            self.spares.append((self._spawn_runner(cfg), key))
        return runner

    @contextlib.contextmanager
    def _candidate_loaded(self, req, task: TaskState, cfg, sets: int = 1, log: str | None = None):
        """A fresh process of the candidate's, the candidate loaded into it through a window of `sets`
        input sets; the window and the process are closed when the block ends, however it ends (and
        the process's log saved to log, where one is given)."""
        runner = self._candidate_process(cfg)
        loaded = None
        try:
            loaded = self._load(runner, task, cfg, sets, req, compiler=self.compiler)
            yield loaded
        finally:
            if loaded is not None:
                loaded.window.close()
            runner.close()
            runner.log.save(log)

    def _load(self, runner: Sandboxed, task: TaskState, cfg, sets: int, req=None, compiled=False,
              compiler=None) -> Loaded:
        """Loads the task (and the candidate, with req) into runner through a new window of `sets`
        input sets."""
        if req is not None and self.cuda and not self.drain_unavailable and not self.drain_proven:
            # Whether this host can drain a runner is learnt on trusted code, never on a candidate's:
            # with baselines from the cache no trusted runner may have been bound yet, and a candidate's
            # runner that cannot be drained would be rejected for the host's failing.
            self._reference_runner(task, cfg, compiled=False, sets=1)
        window = CallWindow(runner, self.device, self.launcher.python_binary, task.input_specs, task.specs, sets,
                            drain=self.cuda and not self.drain_unavailable, flush=self._flush(cfg),
                            deliver_in_place=not self.memory_unreadable)
        window.aliases_allowed = task.ref_aliases
        static = (req or {}).get("static") or {}
        message = {"op": "load", "task_name": os.path.basename(task.path), "task_source": task.source,
                   "scale": task.scale, "specs": task.specs, "input_specs": task.input_specs, "seed": cfg["seed"],
                   "numerics": cfg["numerics"], "kernel_names": static.get("kernel_names", []),
                   "library_kernels": [n for n in (req or {}).get("reference_kernels") or [] if isinstance(n, str)],
                   "low_precision": task.low_precision, "compile": compiled,
                   "protocol": "vinci" if cfg["strict_layout"] else "kernelbench", "rounding": self._rounding(cfg),
                   "threads": int(cfg.get("threads", 1)), "sizes": task.sizes,
                   "constants": model_state.constant_counts_to_wire(task.constants or {})}
        if req is not None:
            with open(req["candidate"], encoding="utf-8", errors="replace") as f:
                message.update(candidate_name=os.path.basename(req["candidate"]), candidate_source=f.read())
        fields, fds = window.load_fields()
        message.update(fields)
        timeout = cfg["baseline_timeout_s"] if req is None else cfg["import_timeout_s"]
        try:
            with compiler.writing(message["candidate_source"] if req is not None else None) if compiler is not None \
                    else contextlib.nullcontext():
                reply = self._ask(runner, message, timeout, "baseline_timeout" if req is None else "import_timeout",
                                  compiler=compiler, fds=fds)
        except Outcome:
            window.close()
            raise
        finally:
            for fd in fds:
                os.close(fd)
        if not reply.get("ok"):
            window.close()
            if req is None:
                raise Outcome("invalid_task", "reference_failed",
                              f"the reference runner could not load the task: {reply.get('message', '')}")
            self._accept(reply, "loading the candidate")
        def bind():
            window.bind(self.launcher.cpu_cgroup, self.launcher.freezer_cgroup)

        try:
            bind()
            self.drain_proven = self.drain_proven or (req is None and window.drain)
        except WindowError as e:
            if req is None and e.reason == "gpu_drain_failed":
                # The trusted runner cannot be drained: this host cannot drain any, so the judge times
                # to the reply from now on and says so in every result.
                self.drain_unavailable = str(e)
                self.warnings.append(f"no trusted drain of GPU work ({e}): work a candidate queues past a call's "
                                     "end is unseen by the clock")
                window.drain = False
                bind()
            else:
                window.close()
                raise Outcome(WINDOW_CLASSES.get(e.reason, "runtime_error"), e.reason, str(e)) from None
        return Loaded(runner, window, candidate=req is not None)

    def _reference_runner(self, task: TaskState, cfg, compiled: bool, sets: int) -> Loaded:
        """The trusted runner: the task's Model through the very windows candidates run in, for the
        baselines. No candidate code ever runs in it."""
        limits = json.dumps(self._limits(cfg), sort_keys=True)
        if self.reference is not None:
            self.reference.window.close()  # thaws it, so that it can take the next load
            self.reference = None
        alive = self.reference_process is not None and self.reference_process.proc.poll() is None
        if not alive or self.reference_limits != limits:
            if self.reference_process is not None:
                self.reference_process.close()
            trusted_cache = os.path.join(self.cache_dir, "trusted")
            os.makedirs(trusted_cache, exist_ok=True)
            self.reference_process = self._spawn_runner(
                cfg, read_write=[trusted_cache], env={"TORCHINDUCTOR_CACHE_DIR": os.path.join(trusted_cache, "inductor"),
                                                     "TRITON_CACHE_DIR": os.path.join(trusted_cache, "triton")})
            self.reference_limits = limits
        self.reference = self._load(self.reference_process, task, cfg, sets, compiled=compiled)
        return self.reference

    def _ask(self, runner: Sandboxed, message: dict | None, timeout: float, timeout_reason: str, compiler=None,
             fds=(), keep_fds=False) -> dict:
        try:
            return runner.ask(message, timeout, compiler=compiler, fds=fds, keep_fds=keep_fds)
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

    # --- one call -------------------------------------------------------------------------------
    def _window(self, loaded: Loaded, task: TaskState, cfg, calls: list[tuple[int, str]], label: str,
                monitor=False, profile=False, form: CallForm = JUDGES_OWN) -> tuple[dict, float, list[list]]:
        """Runs one window of len(calls) calls, each on the inputs of its (seed, kind), made as form
        says (CallForm: strided inputs, re-laid state, a user's mode). Returns the reply, the window's
        milliseconds, and each call's inputs as the judge made them."""
        window = loaded.window
        args_of = []
        values = []
        window.gate.freeze()
        for k, (seed, kind) in enumerate(calls):
            try:
                args = inputs_mod.make_inputs(task.module, seed, kind, self.device, self._rounding(cfg),
                                              plain=bool(cfg.get("plain_draws")))
            except Exception as e:
                raise Outcome("invalid_task", "get_inputs_failed", f"get_inputs() raised {type(e).__name__}: {e}") \
                    from None
            values.append(window.write_inputs(k, args))
            args_of.append(args)
        # The id says nothing of the window's purpose: a label (trial, timed window, check window) sat
        # in Runner.call's frame, where native code reads it (red-team round 45).
        request = {"op": "call", "id": self.rng.getrandbits(31), "sets": list(range(len(calls))), "values": values,
                   "monitor": monitor, "profile": profile}
        request.update(form.request())
        if cfg.get("plain_draws") and not self.cuda:
            request["threads"] = int(cfg.get("threads", 1))  # the plain trials' count for this call
        try:
            reply, ms = window.run(request, cfg["run_timeout_s"], lambda m, t: self._ask(
                loaded.runner, m, t, "run_timeout", keep_fds=True))
        except WindowError as e:
            raise Outcome(WINDOW_CLASSES.get(e.reason, "runtime_error"), e.reason, f"{label}: {e}") from None
        fds = reply.get("fds") or []
        if not reply.get("ok"):
            for fd in fds:
                os.close(fd)
            self._accept(reply, "the call", label)
        try:
            window.take_pieces(reply)
        except WindowError as e:
            raise Outcome(WINDOW_CLASSES.get(e.reason, "runtime_error"), e.reason, f"{label}: {e}") from None
        described = reply.get("outputs")
        if not isinstance(described, list) or len(described) != len(calls):
            raise Outcome("rejected", "protocol_violation", f"{label}: the reply describes "
                          f"{len(described) if isinstance(described, list) else 'no'} calls' outputs, not {len(calls)}")
        return reply, ms, args_of


def serve(device: str, cache_dir: str, sandbox_binary: str, limits: dict) -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    heap.keep_freed_memory()
    judge = Judge(device, cache_dir, sandbox_binary, limits)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            op = None
            try:
                message = json.loads(line)
                if isinstance(message, dict) and message.get("op") == protocol.SHUTDOWN:
                    break
                try:
                    op, req = protocol.judge_request(message)
                except protocol.MalformedMessage as e:
                    raise Outcome("runtime_error", "protocol", f"a request out of protocol: {e}") from None
                reply = getattr(judge, op)(req)
            except Outcome as o:
                reply = o.reply
            except Exception as e:  # a bug in the judge: report it, never die silently
                reply = {"ok": False, "class": "runtime_error", "reason": "worker_error",
                         "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}", "fatal": True}
            try:
                reply = protocol.judge_reply(op, finite(reply))
            except protocol.MalformedMessage as e:
                # The judge's own reply out of shape: a bug, reported as one, but not an end: what went
                # into it may have come from the runner (red-team round 47 ended the judge through a
                # profile entry the signals' check let pass), and this request's answer is the only casualty.
                reply = protocol.judge_reply(None, {"ok": False, "class": "runtime_error", "reason": "worker_error",
                                                    "message": f"the judge's {op} reply is out of protocol: {e}"})
            proto.write(json.dumps(reply, default=str, allow_nan=False) + "\n")
            if reply.get("fatal"):
                break
    finally:
        if judge.reference is not None:
            judge.reference.window.close()
        for process in (judge.reference_process, *(spare for spare, _ in judge.spares), judge.zygote):
            if process is not None:
                process.close()
    return 0
