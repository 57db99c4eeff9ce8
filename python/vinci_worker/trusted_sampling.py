"""The trusted sampler's part of the judge: whose code a candidate's calls ran, and what follows

vinci-cpu-sampler, outside the sandbox, samples the runner; each sample's mapping is the candidate's
own compiled code, a library's, or glue (mapped_code.py). The Judge (judge.py) takes these methods as
a mixin: they use its launcher, device, sampler binary and runner helpers (_ask, _accept,
_signal_policy).

On the CPU the samples of the timed windows themselves decide, counted only in the windows the speed
is made of (kind_windows, claimed_windows), with more windows where they are few (extra_windows); a share they leave
unmeasured is a rejection under --torch-ops forbid. Where the timed windows cannot be watched, a phase
of coverage calls of the sampler's own may only reject. On a GPU the sampler looks for host code of GPU math libraries.
"""
from __future__ import annotations

import json
import math
import os
import select
import statistics
import struct
import subprocess
import time
from typing import TYPE_CHECKING

from vinci_runner import inputs as inputs_mod

from .library_symbols import LibrarySymbols
from .mapped_code import MappedCode
from .outcome import Outcome

if TYPE_CHECKING:
    from .judge_state import Loaded, TaskState

# At most this share of a reference call's eager time may be library code's CPU time in a candidate's
# call. The share of own code alone can be padded (busywork in its own library beside BLAS doing
# the work passed at 0.39x where honest loops score 0.05x); a library's CPU time per call cannot.
LIBRARY_EAGER_SHARE = 0.5
# ... and only where library code is also more than this share of the compiled code's CPU time in the
# call. An honest slow kernel's glue (allocations, libm) is a few percent of its call yet can exceed
# half of a fast eager call (1_Matmul's loops: 0.36 ms of 0.56 ms eager, in a clean-clone CI run); a
# library doing the task costs about the eager call, so hiding it below this share takes four times
# as much busywork and leaves at most about 0.2x.
LIBRARY_CALL_SHARE = 0.2
# Code outside torch, the C++ runtime, glue and the candidate's own (mapped_code.RUNTIME_LIBRARIES: a
# BLAS, NumPy, anonymous or copied code), and code inside torch's own library that is none of its glue
# functions (MKL, XNNPACK, Sleef and the other libraries linked in, ATen's kernels: library_symbols.py),
# run no part of an own kernel's call: beyond a couple of samples, at most this share of the
# reference's eager call a timed call, whatever its share of the compiled code's time. Red-team round
# 31 ran OpenBLAS on 45% of a matmul's rows and its own loops on the rest: its library time stayed
# under both bounds above (7% of the compiled code's, under half the eager call)
# while its loops' slowness made the share, and it scored 0.099x where honest loops score 0.045x (with
# MKL's sgemm_ from torch's library, 0.15-0.24x); round 32 ran XNNPACK's GEMM, which torch's library
# also exports, for all of a mixture of experts beside spin (1.04-1.25x against 0.185x). The honest
# CPU solutions run none there; torch's glue, under a second judge's load, took up to 0.44 of an eager
# call, which is why its glue functions are held only to the bounds above.
FOREIGN_EAGER_SHARE = 0.05
FOREIGN_GLUE_SAMPLES = 2
# What _count_samples counts of a sampler's answer (beside foreign_names, the foreign CPU time by file).
SAMPLE_COUNTS = ("own", "library", "own_ns", "library_ns", "unseen_ns", "foreign", "foreign_ns")


_symbols: dict[tuple, LibrarySymbols | None] = {}


def computing_part(entry: dict) -> tuple[int, int, list[str]]:
    """The samples, their CPU time, and the functions they fell in, of a sampled entry of torch's
    library that fell in no glue function (library_symbols.py: another library's compute linked into
    torch, or an ATen kernel), by the offsets the sampler gives. A library whose symbols cannot be read,
    or an entry without offsets, counts whole."""
    offsets = entry.get("offsets")
    key = (entry.get("dev_major"), entry.get("dev_minor"), entry.get("inode"))
    if key not in _symbols:
        try:
            _symbols[key] = LibrarySymbols.of_file(str(entry.get("path")))
        except (OSError, ValueError, struct.error):
            _symbols[key] = None
    symbols = _symbols[key]
    if symbols is None or not isinstance(offsets, list):
        return entry["samples"], entry["cpu_ns"], []
    n = ns = 0
    functions: dict[str, int] = {}
    for item in offsets:
        if not (isinstance(item, list) and len(item) == 3 and all(isinstance(x, int) for x in item)):
            continue
        try:
            function, glue = symbols.glue_at(item[0])
        except (OSError, subprocess.SubprocessError):  # its code unreadable or undecoded: it counts
            function, glue = symbols.function_at(item[0]), False
        if glue:
            continue
        n += item[1]
        ns += item[2]
        name = function or "no function"
        functions[name] = functions.get(name, 0) + item[2]
    return n, ns, sorted(functions, key=lambda name: -functions[name])


def own_share(counts: dict) -> float:
    """The share of the sampled CPU time in the candidate's own code. Time a thread ran while the
    sampler had none of its events armed (perf_sampler.h: the sampler lagged) may have been anything,
    so it counts against the candidate."""
    own_ns = counts.get("own_ns", 0)
    return own_ns / max(own_ns + counts.get("library_ns", 0) + counts.get("unseen_ns", 0), 1)



def claimed_windows(watched: list[tuple[int, int, float, int]], median_ms: float) -> tuple[list[tuple[int, int]], int]:
    """Of the timed windows a sampler watched, each (start ns, end ns, time a call, calls), the spans of
    those slower a call than median_ms (the median of every timed window so far), whose samples do not
    count, and the calls of the others. The speed is the median window's, so the shares of own and
    library code are taken over the windows at or below it: red-team round 25 ran BLAS alone in three
    windows of four and spun its own code in the fourth until its share over every window was 0.9, and
    scored 0.81x where its honest loops score 0.05x. Busywork that counts must now be in the windows
    the speed is made of, and slow them."""
    slow = [(start, end) for start, end, ms, _ in watched if ms > median_ms]
    return slow, sum(calls for _, _, ms, calls in watched if ms <= median_ms)


def slower_draws(medians: dict[str, float]) -> str:
    """The draws kind whose median call is slower: the one the speed is made of (timed_windows)."""
    return max(medians, key=medians.__getitem__)


def kind_windows(watched: list[tuple[int, int, float, int, str]], medians: dict[str, float]) \
        -> dict[str, tuple[list[tuple[int, int]], int]]:
    """Of timed windows watched, each (start ns, end ns, time a call, calls, draws kind), for each draws
    kind of medians: the spans whose samples do not count for it (every window of another kind, and
    claimed_windows' of its own) and the calls of the rest. One sampling is tallied once per kind
    (vinci-cpu-sampler's sets of spans), and each kind is judged on its own windows' samples alone.
    Red-team round 56 ran its own table kernel on the biased draws and ATen's tanh natively on the
    plain ones, which made the speed: every plain window sat above the median of all windows, so only
    own code was counted, and library speed scored 0.95x where its own code's honest speed is 0.17x.
    Round 57 padded its table so that the biased kind stayed the slower one, the speed, and ran ATen's
    GELU natively on the faster plain kind, which was never judged: 0.47-0.51x where honest own code
    scores 0.16x. Both kinds are judged now (timed_windows._time)."""
    tallies = {}
    for kind, median_ms in medians.items():
        others = [(start, end) for start, end, _, _, draws in watched if draws != kind]
        slow, calls = claimed_windows([w[:4] for w in watched if w[4] == kind], median_ms)
        tallies[kind] = (others + slow, calls)
    return tallies


# The rungs, as fractions of each kind's median when a sampler round ended, at which a round's samples
# are tallied: counted_rounds takes a round's highest rung at or below the final median. A round was
# once counted only whole, where its median then was at most the final one, and the median of windows
# that settle as a run goes on is as often a little above the final one as below: an honest mean
# reduction kept sampling for 72 s with 2,341 samples in compiled code taken (10 counted windows
# short of 100 at most rounds' ends), and honest files of CI runs were rejected with 7 and 9.
CLAIM_LADDER = (1.0, 0.98, 0.95, 0.9, 0.8)


def counted_rounds(rounds: list[list[tuple[dict[str, float], dict]]], medians: dict[str, float], draws: str) -> dict:
    """The samples that count for the draws kind, of sampler rounds each given as its steps, highest
    first: (a threshold for each kind's calls, its counts by kind over the windows at or below it;
    kind_windows left out the slower). A round gives its first step whose threshold for the kind is at
    most the final median, medians[draws], so that no window slower than the speed counts (red-team
    round 29: one planned window judged against its own median, slow and own, beside library windows
    that made the speed). Each step holds every kind's counts, so the speed's kind turning from one to
    the other, as an honest kernel's equal medians do from round to round, discards none of them. A
    round that failed makes the whole an error."""
    keys = SAMPLE_COUNTS + ("calls",)
    counts: dict = dict(dict.fromkeys(keys, 0), foreign_names={})
    for steps in rounds:
        for threshold, by_kind in steps:
            if by_kind.get("error"):
                return dict(counts, error=by_kind["error"])
            found = by_kind.get(draws)
            if found is None or threshold[draws] > medians[draws]:
                continue
            for key in keys:
                counts[key] += found.get(key, 0)
            for name, ns in found.get("foreign_names", {}).items():
                counts["foreign_names"][name] = counts["foreign_names"].get(name, 0) + ns
            counts["method"] = found.get("method")
            break
    return counts


MAX_EXTRA_WINDOWS = 400


def extra_windows(seen: int, windows: int, enough: int, minimum: int) -> int:
    """How many more timed windows the trusted sampler likely needs to find `enough` more samples that
    count, at the rate so far: `seen` counted samples of the kind with fewest over all `windows` timed
    (so the windows of the other kind, those above the median and rounds left out all lower the rate),
    and a quarter more; at least `minimum`, at most MAX_EXTRA_WINDOWS (all of them when nothing was
    seen yet). The rate was once the last round's alone: a round of five windows that counted nothing
    for one kind asked for all 400, and an honest mean reduction 18 samples short spent the minute on
    them. An honest 0.04 ms add had 24 samples after 10 s of rounds of five windows (session 27), and
    was passed by a phase of coverage calls that a candidate can tell apart."""
    if seen <= 0 or windows <= 0:
        return MAX_EXTRA_WINDOWS
    return max(minimum, min(MAX_EXTRA_WINDOWS, math.ceil(enough * windows / seen * 1.25)))


class TrustedSampling:
    # How the trusted sampler (vinci-cpu-sampler, outside the sandbox: perf events, else ptrace) looks
    # at forward. On the CPU it decides the share of compute in the candidate's own code: rounds until
    # 100 samples land in its own code or in libraries. On a GPU a call's host thread only launches and
    # waits, so it looks for host code of GPU math libraries (cuBLAS reached by dlsym spends
    # microseconds of host code a call there, an honest kernel none), which a candidate cannot pause or
    # relabel as it can the profiler in its own process: one short, dense round, a verdict only with 10 samples there.
    TIMED_SAMPLING_HZ = 4000  # while the timed windows run (the interruptions, a few percent, are the candidate's cost)
    # More timed windows for at most this long, to reach COVERAGE["cpu"]["enough"]: a share measured from
    # fewer is a rejection under forbid, so an honest candidate on a loaded host must get there; a
    # candidate that sleeps to stay short spends the wall time and is rejected all the same. The honest
    # ok_add (a 0.04 ms call, a quarter of a sample a window) gets 100 in 5-11 s beside a second judge
    # and a compiler; it stopped at 47 after 30 s in a CI run while the extra windows' samples were
    # judged against the planned windows' median, taken at another load (judge._time).
    TIMED_SAMPLING_S = 60.0
    # On a GPU, windows like the timed ones are sampled too (timed_windows.GPU_SAMPLED_WINDOW_SHARE),
    # through perf alone (the runners are stopped by signals there, which ptrace's stops would
    # disturb, and a candidate could notice stops): a phase of coverage calls of the sampler's own was
    # recognisable, so a candidate ran its own kernel there and in the profiled call, and a math
    # library (dlsym, no torch op for the monitors) in the trials and the timed calls, which nothing
    # held (the gap left by red-team round 38). A library's host code is microseconds a call and an
    # honest kernel's none, so the rate is high and the bound a count.
    GPU_SAMPLING_HZ = 20000
    GPU_LIBRARY_SAMPLES = 2  # this many samples in GPU math libraries over the sampled windows reject
    COVERAGE = {"cpu": {"rounds": 8, "ms": 600, "hz": 500, "seconds": 0.5, "enough": 100},
                "cuda": {"rounds": 1, "ms": 450, "hz": 2000, "seconds": 0.4, "enough": 10}}
    def _host_coverage(self, loaded: Loaded, task: TaskState, cfg) -> tuple[float | None, str]:
        """The share of forward's host CPU time in the candidate's own compiled code, among its time in
        its own code or in libraries (each sample weighs the CPU time its thread ran since its previous
        one); None with a note when the host refuses tracing or the samples are too few to say. On the
        CPU every library but the interpreter, libc and torch's binding and allocator layers counts; on
        a GPU only the math libraries (mapped_code.GPU_LIBRARIES) do. Each round calls forward on
        inputs of its own, drawn afresh: a candidate must not learn to tell these calls by an input
        it has seen."""
        plan = self.COVERAGE["cuda" if self.cuda else "cpu"]
        counts = dict.fromkeys(("own", "library", "own_ns", "library_ns", "unseen_ns"), 0)
        window, runner = loaded.window, loaded.runner
        try:
            for _ in range(plan["rounds"]):
                window.gate.freeze()
                args = inputs_mod.make_inputs(task.module, self.rng.getrandbits(62), "task", self.device,
                                              self._rounding(cfg))
                values = window.write_inputs(0, args)
                window.thaw()
                sampler = self._start_sampler(loaded, cfg, ms=plan["ms"], hz=plan["hz"])
                reply = self._ask(runner, {"op": "coverage", "seconds": plan["seconds"], "values": values},
                                  cfg["run_timeout_s"], "run_timeout")
                answer = self._sampler_answer(sampler, "coverage calls")
                samples = answer[0] if answer else None
                if samples is None:
                    self._unanswered(cfg, "coverage calls")
                    return None, "library sampling unavailable: the sampler did not answer"
                self._accept(reply, "the coverage calls")
                if samples.get("error"):
                    return None, f"library sampling unavailable: {samples['error']}"
                window.gate.freeze()
                found = self._count_samples(samples, loaded)
                for key in counts:
                    counts[key] += found[key]
                own, library = counts["own"], counts["library"]
                share = own_share(counts)
                if (library if self.cuda else own + library) >= plan["enough"]:
                    return share, ""
            if self.cuda:
                return None, ""  # no math library's host code ran: nothing to say
            seen = own + library
            # Too few samples to measure the share, but perhaps enough to bound it: a share whose
            # upper bound (two standard errors at worst) stays under the minimum is rejected all
            # the same; an unbounded one passes with the note.
            if seen >= 10 and share + 1 / math.sqrt(seen) < cfg["min_coverage"]:
                return share, f"CPU coverage from only {seen} samples in compiled code, {library} in libraries"
            return None, f"CPU coverage inconclusive: {seen} samples in compiled code"
        finally:
            window.gate.freeze()

    def _samples_timed_windows(self, loaded: Loaded) -> bool:
        """Whether the trusted sampler watches the timed windows themselves (a CPU host whose sandboxes
        have a freezer cgroup: freezing sends no signal to disturb the tracer), or windows a candidate
        cannot tell from them (a GPU host that lets the judge open perf events on another process: no
        stops at all; VINCI_GPU_SAMPLED_WINDOWS=0 turns that off, for measurements). Elsewhere it
        watches a phase of coverage calls of its own, which a candidate may tell apart from timed calls."""
        if self.cuda:
            return self.perf_sampling and os.environ.get("VINCI_GPU_SAMPLED_WINDOWS", "1") != "0"
        return loaded.window.gate is not None and loaded.window.gate.freezer is not None

    def _perf_allowed(self) -> bool:
        """Whether this host lets the sampler open perf events on a process of the judge's (a child that
        only sleeps): the GPU's timed windows are sampled only so. A runner it later cannot sample
        falls back to the coverage calls (_gpu_library_calls)."""
        child = subprocess.Popen(["sleep", "10"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        try:
            out = subprocess.run([self.sampler, "--pid", str(child.pid), "--ms", "1", "--hz", "100", "--perf-only"],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10).stdout
            answer = json.loads(out.splitlines()[-1])
            return isinstance(answer, dict) and answer.get("lookup") == "perf" and not answer.get("error")
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            return False
        finally:
            child.kill()
            child.wait()

    def _gpu_coverage_rule(self, share: float | None, cfg) -> None:
        """The coverage calls' verdict on a GPU: forward's host code in GPU math libraries, where they ran,
        is at most 1 - min_coverage of its samples in compiled code under --torch-ops forbid."""
        if share is not None and cfg["torch_ops"] == "forbid" and share < cfg["min_coverage"]:
            raise Outcome("rejected", "library_compute",
                          f"the trusted sampler found forward's host code in GPU math libraries: only "
                          f"{100 * share:.1f}% of its samples in compiled code were the candidate's own (at least "
                          f"{100 * cfg['min_coverage']:.0f}% under --torch-ops forbid)")

    def _gpu_library_calls(self, found: dict, loaded: Loaded, task: TaskState, cfg, reply: dict) -> None:
        """The sampled windows' samples on a GPU: GPU_LIBRARY_SAMPLES in a math library's host code are a
        library doing the work (an own kernel's call runs none), a rejection under --torch-ops forbid.
        A sampler that could not watch this runner leaves the coverage calls to say it."""
        external = reply["external"]
        if found.get("error"):
            share, note = self._host_coverage(loaded, task, cfg)
            external["gpu_library_samples"] = None
            reply["warnings"] = sorted(set(reply.get("warnings", [])) | {
                f"the timed calls' kind unsampled ({found['error']}): only coverage calls of the sampler's own, which a "
                "candidate can tell apart, were watched for GPU math libraries"} | ({note} if note else set()))
            self._gpu_coverage_rule(share, cfg)
            return
        external["gpu_library_samples"] = found["library"]
        external["host_samples"] = found.get("total", 0)
        if found["library"] < self.GPU_LIBRARY_SAMPLES:
            return
        names = ", ".join(sorted(found.get("library_names", {}), key=lambda n: -found["library_names"][n])[:3])
        message = (f"timed calls: {found['library']} samples of the runner's host code in windows like the timed ones "
                   f"fell in GPU math libraries "
                   f"({names}); an own kernel's call runs none")
        if cfg["torch_ops"] == "forbid":
            raise Outcome("rejected", "library_compute", message)
        reply["warnings"] = sorted(set(reply.get("warnings", [])) | {message})

    VISIBLE_SAMPLES = ("library sampling by ptrace stops, which a candidate can notice and time its library calls "
                       "against: this host refuses perf events on another process (perf_event_paranoid at most 2)")
    SAMPLER_ATTACH_S = 5.0  # a sampler that has not traced the runner's threads by then counts as failed

    def _start_sampler(self, loaded: Loaded, cfg, ms: int | None = None, hz: int | None = None,
                       perf_only: bool = False) -> subprocess.Popen:
        """A sampler that traces the runner's threads when this returns (calls started before would
        run unweighed). It says "attached" on a line of its own, read here a byte at a time so that its
        answer stays in the pipe for communicate(); one that does not say it in time is killed, and its
        answer is then none."""
        sampler = subprocess.Popen([self.sampler, "--pid", str(loaded.runner.tree), "--ms",
                                    str(ms or int(cfg["run_timeout_s"] * 1000)), "--hz",
                                    str(hz or self.TIMED_SAMPLING_HZ), "--exclusions-on-stdin"] +
                                   (["--perf-only"] if perf_only else []),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        fd, line = sampler.stdout.fileno(), b""
        deadline = time.monotonic() + self.SAMPLER_ATTACH_S
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            byte = os.read(fd, 1) if ready else b""
            if not byte:
                break
            line += byte
        if line != b"attached\n":
            sampler.kill()
            sampler.wait()
        return sampler

    def _stop_sampler(self, sampler: subprocess.Popen, loaded: Loaded, excluded: list[list] | None = None) -> list[dict]:
        """The samples of a sampler that watched timed windows (_count_samples), once for each set of
        untimed spans given (time.monotonic_ns() pairs: the check windows among them, where a candidate
        could pad its own share at no cost to its time), less those taken in its spans. It ends on
        SIGTERM and leaves its threads for the kernel to detach (the runner is frozen: a detach would
        wait for it)."""
        sampler.terminate()
        sets = excluded or [[]]
        answers = self._sampler_answer(sampler, "timed calls", sets)
        if answers is None:
            return [{"error": "the sampler did not answer", "unanswered": True}] * len(sets)
        return [dict(self._count_samples(samples, loaded), error=samples.get("error"), method=samples.get("lookup"),
                     total=samples.get("total", 0)) for samples in answers]

    @staticmethod
    def _discard_sampler(sampler: subprocess.Popen) -> None:
        """Ends a sampler whose samples nobody reads."""
        sampler.terminate()
        try:
            sampler.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            sampler.kill()
            sampler.wait()

    @staticmethod
    def _unanswered(cfg, calls: str) -> None:
        """A sampler this host lets run that did not attach in time or did not answer: what it had to read
        of the runner (its processes, their mappings) is the candidate's to make large. Red-team round 20
        held 12 processes of 65,000 mappings each, with 3.8 KB paths, so the sampler's attach outlasted
        its limit and the library share went unmeasured, which passed: MKL doing a whole matmul was
        correct at 1.0x. Under --torch-ops forbid that is a rejection, as an evaded sampling is."""
        if cfg["torch_ops"] == "forbid":
            raise Outcome("rejected", "library_compute",
                          f"{calls}: the trusted sampler could not watch the runner (it did not attach or answer in "
                          "time); under --torch-ops forbid a sampling the runner prevents is never 'unmeasured'")

    @staticmethod
    def _sampler_answer(sampler: subprocess.Popen, calls: str, excluded: list[list] | None = None) -> list[dict] | None:
        """A sampler's answers (its last lines, one for each set of spans it is not to count, in order);
        None when it did not answer (it is killed). A sampling the candidate evaded (a thread that
        escaped its events) is a rejection, never "unmeasured"."""
        sets = excluded or [[]]
        spans = "--\n".join("".join(f"{a} {b}\n" for a, b in spans) for spans in sets)
        try:
            out, _ = sampler.communicate(input=spans, timeout=30)
            answers = [json.loads(line) for line in out.splitlines()[-len(sets):]]
        except (subprocess.TimeoutExpired, ValueError):
            sampler.kill()
            sampler.wait()
            return None
        if len(answers) != len(sets) or not all(isinstance(a, dict) for a in answers):
            return None
        for samples in answers:
            if samples.get("evaded") is True:
                raise Outcome("rejected", "library_compute",
                              f"{calls}: the trusted sampler lost sight of the runner ({samples.get('error')})")
        return answers

    def _count_samples(self, samples: dict, loaded: Loaded) -> dict:
        """The samples of a sampler's answer in own code and in libraries, and the CPU time they weigh:
        {"own", "library", "own_ns", "library_ns", "unseen_ns"}, the mappings classified while the runner
        is frozen (mapped_code.py); unseen_ns is the time the sampler had no event armed on a thread."""
        assert loaded.window.gate.frozen, "a runner's mappings are classified only while it is frozen"
        code = MappedCode(loaded.runner.scratch, loaded.runner.delivered, self.cuda,
                          self.launcher.python_binary, self.code_contents, loaded.runner.delivered_fds)
        counts: dict = dict(dict.fromkeys(SAMPLE_COUNTS, 0), foreign_names={}, library_names={})
        entries = samples.get("by_object")
        for entry in entries if isinstance(entries, list) else []:
            n = entry.get("samples") if isinstance(entry, dict) else None
            ns = entry.get("cpu_ns") if isinstance(entry, dict) else None
            if not isinstance(n, int) or n <= 0 or not isinstance(ns, int) or ns < 0:
                continue
            kind = code.kind(entry)
            if kind in ("own", "library"):
                counts[kind] += n
                counts[f"{kind}_ns"] += ns
            if kind != "library":
                continue
            name = os.path.basename(str(entry.get("path", ""))) or "[unmapped]"
            if self.cuda:
                counts["library_names"][name] = counts["library_names"].get(name, 0) + n
                continue
            if code.runtime_library(entry):
                if not name.startswith("libtorch"):
                    continue  # the C++ runtime: no compute
                # Other libraries' compute linked into torch's, and ATen's kernels (library_symbols.py).
                n, ns, functions = computing_part(entry)
                name = f"{name}: {', '.join(f[:60] for f in functions[:2]) or 'unnamed code'}"
            if n > 0:
                counts["foreign"] += n
                counts["foreign_ns"] += ns
                counts["foreign_names"][name] = counts["foreign_names"].get(name, 0) + ns
        # Time a thread went unseen (the sampler late to re-arm its events) is charged as library code in
        # the proportion of compiled code in the seen time: a call spent in system calls goes unseen as
        # the sampler lags, and that time is the kernel's (round 11's unseen time once outweighed a
        # containment case's own kernel). What a candidate could hide there is at most that share of the
        # unseen time, itself about 1% of the CPU time on a loaded 2-core host.
        unseen, seen = samples.get("unseen_ns"), samples.get("cpu_ns")
        if isinstance(unseen, int) and unseen > 0 and isinstance(seen, int) and seen > 0:
            counts["unseen_ns"] = unseen * min(1.0, (counts["own_ns"] + counts["library_ns"]) / seen)
        return counts

    def _timed_coverage(self, counts: dict, cfg, reply: dict, check: dict, calls: str = "timed calls") -> None:
        """The share of the timed windows' CPU time in the candidate's own code decides library_compute,
        from `enough` samples in compiled code. Fewer may still reject a share whose upper bound (two
        standard errors at worst) stays under the minimum; they never pass one, and under --torch-ops
        forbid a share they leave unmeasured is a rejection. Red-team round 27 kept its samples few
        (asleep on the CPU clock, and slow in the sampler's extra windows, whose samples then do not
        count), ran MKL beside an equal spin of its own, and passed at 0.20-0.34x on a phase of
        coverage calls (honest loops 0.06x), whose calls it told apart by their inputs and spun in;
        such a phase is no longer asked where the timed windows are watched. A pass on few samples'
        bounds was tried and let the same file through at 0.15x in a CI run: the share of a few dozen
        CPU-time-weighted samples strays far enough from 0.57 one time in a few."""
        seen = counts["own"] + counts["library"]
        share = own_share(counts)
        if counts.get("method") not in (None, "perf"):
            reply["warnings"] = sorted(set(check.get("warnings", []) + [self.VISIBLE_SAMPLES]))
        if not counts.get("error") and seen >= self.COVERAGE["cpu"]["enough"]:
            reply["coverage"] = share
            self._signal_policy({"coverage": share}, None, cfg, calls)
            return
        if not counts.get("error") and seen >= 10 and share + 1 / math.sqrt(seen) < cfg["min_coverage"]:
            reply["coverage"] = share
            self._signal_policy({"coverage": share}, None, cfg, f"{calls} (only {seen} samples in compiled code)")
        why = (f"the trusted sampler failed ({counts['error']})" if counts.get("error") else
               f"{seen} samples in compiled code, {100 * share:.0f}% own; a share is measured from "
               f"{self.COVERAGE['cpu']['enough']}")
        if cfg["torch_ops"] == "forbid":
            raise Outcome("rejected", "library_compute",
                          f"{calls}: own code's share unmeasured ({why}); under --torch-ops forbid an unmeasured "
                          "share is never a pass")
        reply.setdefault("coverage", None)
        reply["warnings"] = sorted(set(reply.get("warnings", check.get("warnings", [])) +
                                       [f"library sampling over the {calls}: unmeasured ({why})"]))

    def _library_time(self, counts: dict, cfg, req: dict, external: dict, calls: str = "timed calls") -> None:
        """Library code's CPU time in a timed call, from the samples of the timed windows, against the
        reference's eager call: under --torch-ops forbid at most LIBRARY_EAGER_SHARE of it, wherever it
        is more than LIBRARY_CALL_SHARE of the compiled code's time."""
        eager = req.get("eager_times")
        if counts.get("error") or counts["own"] + counts["library"] < self.COVERAGE["cpu"]["enough"] or \
                not counts["calls"] or not isinstance(eager, list) or not eager:
            return
        library_ms = counts.get("library_ns", 0) / 1e6 / counts["calls"]
        library_share = counts.get("library_ns", 0) / max(counts.get("library_ns", 0) + counts.get("own_ns", 0), 1)
        eager_ms = statistics.median(float(x) for x in eager)
        external["library_ms_per_call"] = library_ms
        external["library_share"] = library_share
        if cfg["torch_ops"] == "forbid" and library_ms > LIBRARY_EAGER_SHARE * eager_ms and \
                library_share > LIBRARY_CALL_SHARE:
            raise Outcome("rejected", "library_compute",
                          f"{calls}: library code ran {library_ms:.4g} ms of CPU time a call, more than "
                          f"{LIBRARY_EAGER_SHARE:.0%} of the reference's whole eager call ({eager_ms:.4g} ms), and "
                          f"{library_share:.0%} of the compiled code's time (more than {LIBRARY_CALL_SHARE:.0%}): the "
                          "work is a library's, whatever the candidate's own code does beside it")
        foreign_ms = counts.get("foreign_ns", 0) / 1e6 / counts["calls"]
        if cfg["torch_ops"] == "forbid" and counts.get("foreign", 0) > FOREIGN_GLUE_SAMPLES and \
                foreign_ms > FOREIGN_EAGER_SHARE * eager_ms:
            names = sorted(counts.get("foreign_names", {}).items(), key=lambda item: -item[1])[:3]
            raise Outcome("rejected", "library_compute",
                          f"{calls}: a math library, or code no own kernel's call runs in "
                          f"({', '.join(n for n, _ in names)}), ran {foreign_ms:.4g} ms of CPU time a call "
                          f"({counts['foreign']} samples), more than {FOREIGN_EAGER_SHARE:.0%} of the reference's "
                          f"eager call ({eager_ms:.4g} ms): an own kernel does no part of its work in a library")
