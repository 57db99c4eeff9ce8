"""The judge's timing: a candidate's timed windows, the reference's beside them, and the speedups.

The windows a candidate is timed in, the reference timed beside it, the check windows among them,
the openings, the speedups and their intervals, the profiled call on a GPU, as a part of Judge
(judge.py)."""
from __future__ import annotations

import math
import statistics
import time

from . import runner_signals
from .judge_state import Loaded, ReferenceFailed, TaskState, movable
from .openings import Openings
from .outcome import Outcome
from .timing import speedup_interval, summarize
from .trusted_sampling import CLAIM_LADDER, counted_rounds, extra_windows, kind_windows, slower_draws

# A timing whose kernels kept the GPU busy for under this share of the timed window is flagged
# launch_bound. The window starts on an idle GPU (nothing may overlap it), so the rest of it the GPU
# waited for the host: Python and launch work, whose speed differs from process to process by up to
# 3x (docs/learning.md), so such a speedup compares host work more than kernels. The busy time is
# the profiled first call's, a claim: the flag informs the user and the policy, and decides nothing.
LAUNCH_BOUND_BUSY_SHARE = 0.5


# The share of timed windows preceded by a window of out-of-distribution inputs, untimed and opened.
OOD_WINDOW_SHARE = 0.1


# The share of timed windows preceded by a move of the model's state and a window like the timed ones,
# untimed and opened (a moved window), and the fewest moved windows a timing holds (more are run
# after the timed windows where chance left fewer). Red-team round 51 told the trials (monitored)
# from every other call by a native probe, and kept a Linear's column sums from its first unmonitored
# call on: the state stopped moving once the trials ended, so 8_MatmulRowSum scored 5.46x for a
# cache that a user's load_state_dict leaves 340 off. A move can come before any window now.
MOVED_WINDOW_SHARE = 0.1
MOVED_WINDOWS_MIN = 2


# A profiled call whose kernels alone kept the GPU busy longer than this multiple of the median timed
# call, plus the slack, ran other work than the timed calls (red-team round 13: its own kernel, 6.10 ms,
# under the profiler and the monitors; cuBLAS, 3.44 ms a call, in the timed windows). The busy time is a
# claim and may only reject; a candidate that switches to a library when unwatched gains at most this
# factor over its own kernel without being caught. Honest kernels keep the GPU busy for less than the
# call the judge times (its launches and the window's drain add to it): docs/benchmarks.md gives their
# ratios on an H200.
PROFILED_BUSY_MARGIN = 1.25


PROFILED_BUSY_SLACK_MS = 0.02

# The watched calls timed from outside (red-team round 38). The trials run under the monitors and the
# profiled call under the profiler, so a candidate can tell them from timed calls and run a slow own
# kernel there and a library in the timed windows; round 38 also shrank the profiled call's busy time
# (the claim above) by replacing the profiler's event list, and a naive SGEMM at 0.122x scored 0.909x.
# The judge times every trial window itself, and the fastest trial (one call a window, monitored,
# drained) is held to WATCHED_MARGIN times the median timed call plus what the same window costs the
# reference beyond its own median timed call (the window's fixed cost, the monitors' clones and
# comparisons of the inputs; the reference is timed so beside the candidate, in its trusted runner),
# plus WATCHED_SLACK_MS. The margin and the slack cover what the monitors cost the candidate's own
# ops beyond the reference's: on an H200 two honest solutions' fastest trials took 1.44x and 1.10x
# the bound 1.5 * (median) + (the reference's cost) + 0.5 ms (8_MatmulRowSum: 4.90 ms beside a
# 0.65 ms median and the reference's 1.87 ms), which the bound now leaves 1.4x room above. A
# candidate that runs its own kernel only when watched gains at most this bound over it (round 38's
# 29.9 ms trials beside 3.71 ms timed calls are 2.1x over it); to gain more it must run the library
# natively (no torch op for the monitors) in one trial or more, where only the profiled call's kernel
# names (a claim) could tell. The fastest trial, not their median, because a first call may hold a
# JIT compile or a library's start.
WATCHED_MARGIN = 2.0
WATCHED_SLACK_MS = 2.0
REFERENCE_WATCHED_WINDOWS = 3


def flag_launch_bound(check: dict, timed: dict) -> None:
    share = gpu_busy_share(check.get("gpu_busy_ms"), timed["timing"]["median_ms"])
    if share is not None:
        timed["external"]["gpu_busy_share"] = share
        if share < LAUNCH_BOUND_BUSY_SHARE:
            timed["flags"].append("launch_bound")


def require_timed_work_as_profiled(check: dict, timed: dict) -> None:
    """Rejects a candidate whose profiled call (monitored, its kernels named by its own profiler) kept
    the GPU busy longer than a timed call took: the calls the judge timed did other, lighter work.
    The ratio of busy time to the median timed call goes into the result either way."""
    busy, median = check.get("gpu_busy_ms"), timed["timing"]["median_ms"]
    if gpu_busy_share(busy, median) is None:
        return
    timed["external"]["gpu_busy_ratio"] = busy / median
    if busy > PROFILED_BUSY_MARGIN * median + PROFILED_BUSY_SLACK_MS:
        raise Outcome("rejected", "watched_call_slower",
                      f"the profiled call's kernels alone kept the GPU busy {busy:.4g} ms, more than "
                      f"{PROFILED_BUSY_MARGIN:g}x the median timed call's {median:.4g} ms: the timed calls ran other "
                      "work than the watched ones (a library's kernels while unwatched?)")


def require_watched_calls_as_timed(watched_ms: float, reference_watched_ms: float, median_ms: float,
                                   reference_median_ms: float, external: dict) -> None:
    """Rejects a candidate whose fastest trial (a watched window of one call, timed by the judge) took
    longer than WATCHED_MARGIN times its median timed call plus what such a window costs the reference
    beyond its own median, plus WATCHED_SLACK_MS; records the trial and the bound in external."""
    overhead = max(0.0, reference_watched_ms - reference_median_ms)
    allowed = WATCHED_MARGIN * (median_ms + overhead) + WATCHED_SLACK_MS
    external.update(watched_ms=watched_ms, watched_allowed_ms=allowed)
    if watched_ms > allowed:
        raise Outcome("rejected", "watched_call_slower",
                      f"the fastest monitored trial took {watched_ms:.4g} ms by the judge's clock, more than "
                      f"{WATCHED_MARGIN:g}x the median timed call's {median_ms:.4g} ms and the {overhead:.4g} ms such a "
                      f"window costs the reference, plus {WATCHED_SLACK_MS:g} ms: the timed calls ran other, lighter "
                      "work than the watched ones (a library's kernels while unwatched?)")


def gpu_busy_share(busy_ms, median_ms: float) -> float | None:
    """The share of a median timed call that the forward's kernels kept the GPU busy, at most 1; None
    when the profiled call gave no usable busy time."""
    if not isinstance(busy_ms, (int, float)) or isinstance(busy_ms, bool) or not math.isfinite(busy_ms) or \
            busy_ms < 0 or not median_ms > 0:
        return None
    return min(1.0, busy_ms / median_ms)


def paired_baseline(paired: list[float], req: dict) -> dict:
    """The baselines a candidate's speedups are taken against: the reference's per-call times timed
    beside it, never at a level above the cached ones (their median scaled down to the cached median
    where it is higher), and the cached torch.compile times scaled by the ratio of the paired eager
    median to the cached one where the paired is lower (the two cached baselines were timed back to
    back, so a load that inflated one likely inflated the other).
    The cap: whatever slows the reference beside a candidate raises that candidate's speedup, and
    red-team round 36 did it on a GPU with helper processes whose kernels, queued as the window
    closed, ran through the paired window (3.48x for a kernel at 0.83x). So a paired run may only
    lower the bar, as a claim may only make a result worse; a reference genuinely slower beside the
    candidate (a throttled GPU) costs the candidate that much speedup."""
    cached = req.get("eager_times")
    compiled = req.get("compile_times")
    out = {"eager_times": list(paired)}
    if isinstance(cached, list) and cached:
        cached_median, paired_median = statistics.median(float(x) for x in cached), statistics.median(paired)
        if paired_median > cached_median > 0:
            out["eager_times"] = [x * cached_median / paired_median for x in paired]
        if isinstance(compiled, list) and compiled:
            scale = min(1.0, paired_median / cached_median)
            out["compile_times"] = [float(x) * scale for x in compiled]
    return out


# The extra sampled windows end early where the samples' rate so far, kept up to TIMED_SAMPLING_S,
# would reach less than HOPELESS_SHARE of the samples a share is measured from, once they have run
# HOPELESS_AFTER_S: under --torch-ops forbid a share left unmeasured is a rejection, so the rest of the
# minute would only have been spent. A candidate whose calls are nearly all system calls
# (tests/adversarial fill_disk_cpp) ran the whole minute for it. The share and the wait leave room for
# a starved start: the honest ok_add's slowest round recorded, 47 samples in 30 s under a CI's load,
# projects 94, four times the line.
HOPELESS_SHARE = 0.25
HOPELESS_AFTER_S = 15.0


def sampling_hopeless(seen: int, timing_s: float, sampling_s: float, sampling_limit_s: float, enough: int) -> bool:
    """Whether seen samples in timing_s seconds of timed windows (sampling_s of them extra) project, at the
    same rate until sampling_limit_s of extra windows, under HOPELESS_SHARE of enough."""
    if sampling_s < HOPELESS_AFTER_S or timing_s <= 0:
        return False
    projected = seen * (timing_s - sampling_s + sampling_limit_s) / timing_s
    return projected < HOPELESS_SHARE * enough


# GPU: the share of timed windows that a sampled window precedes, and the fewest sampled windows a
# candidate's timing holds (more are run after the timed ones where chance left fewer).
GPU_SAMPLED_WINDOW_SHARE = 0.125
GPU_SAMPLED_WINDOWS_MIN = 6


class DrawsPairs:
    """The draws kind of each timed window. Windows 2p and 2p + 1 hold one of each kind, in an order drawn
    for the pair, and the reference's window follows a pair's first: a kind always timed right after the
    reference's window (which leaves the caches cold) was the slower one, and so the speed, for short
    calls (red-team round 61: an honest row sum at 0.058 ms a call on plain draws, 0.048 on biased)."""

    def __init__(self, rng, plain: bool):
        self.rng, self.plain, self.first = rng, plain, {}

    def draws(self, i: int) -> str:
        if not self.plain:
            return "biased"
        first = self.first.setdefault(i // 2, self.rng.choice(("biased", "plain")))
        return first if i % 2 == 0 else ("plain" if first == "biased" else "biased")


def calls_per_window(one_call_ms: float, window_ms: float, cap: int) -> int:
    """Calls a window holds so that a window lasts about window_ms (a call's own time set against
    what every window costs besides it: the thaw, the message and the drain), at most cap."""
    if not one_call_ms > 0 or not window_ms > 0:
        return 1
    return max(1, min(cap, math.ceil(window_ms / one_call_ms)))


class Timing:
    """Judge's timing (a mixin: self is the Judge)."""

    def _profiled_call(self, loaded: Loaded, task: TaskState, cfg) -> dict:
        """One more monitored call, on inputs of the timed calls' kind drawn afresh, under torch's profiler:
        the kernels forward ran, by the candidate's own account (CUPTI in its process), which may only
        reject. It comes after the timing because a process that has used CUPTI can never again be
        drained (cuCheckpointProcessLock: CUDA_ERROR_NOT_SUPPORTED, benchmarks/gpu_drain_probe.py); its
        window is the one not drained (the runner waits for its GPU work before it answers), and it is
        untimed. Its outputs are judged as a trial's. Fresh inputs, because on trial 0's (round 14) a
        candidate replayed that trial's answer, so its kernels were never seen doing the work."""
        label = "the profiled call"
        seed, kind = self.rng.getrandbits(62), task.timed_kind
        loaded.window.gate.stop_draining()
        reply, ms, args_of = self._window(loaded, task, cfg, [(seed, kind)], label, monitor=True, profile=True)
        signals = reply.get("signals", {})
        problem = runner_signals.malformed(signals)
        if problem:
            raise Outcome("rejected", "protocol_violation", f"{label}: the runner's reply: {problem}")
        self._signal_policy(signals, task, cfg, label)
        got = self._read(loaded, reply, 0, label)
        self._inputs_untouched(loaded, 0, args_of[0], label)
        self._judge_outputs(task, cfg, got, args_of[0], kind, label, "incorrect")
        return {"custom_launches": int(signals.get("launches") or 0), "coverage": signals.get("coverage"),
                "profile": signals.get("profile") or [], "gpu_busy_ms": signals.get("gpu_busy_ms"), "profiled_ms": ms}

    def _hold_watched_calls(self, check: dict, timed: dict, paired: Loaded, task: TaskState, cfg) -> None:
        """The watched calls held to the timed ones by the judge's clock (WATCHED_MARGIN): the
        candidate's fastest trial against its median timed call, with the reference's watched windows,
        timed here in its trusted runner while the candidate's is frozen, for what such a window costs.
        The profiled call's time is recorded, not held: its profiler's start costs milliseconds and
        varies, which no bound on it could tell from a slower kernel (on an H200 an honest GELU's took
        19.3 ms beside 8.4 ms trials)."""
        trials = check.pop("watched_ms", None)
        if not trials:
            return  # no trial ran (a configuration without any): nothing watched to hold
        try:
            reference_watched = min(
                self._window(paired, task, cfg, self._fresh(1, task.timed_kind),
                             f"the reference's watched window {i}", monitor=True)[1]
                for i in range(REFERENCE_WATCHED_WINDOWS))
        except Outcome as o:
            raise Outcome("invalid_task", "reference_failed",
                          f"the reference's watched window failed: {o.reply.get('message')}") from None
        require_watched_calls_as_timed(min(trials), reference_watched, timed["timing"]["median_ms"],
                                       timed["eager_paired"]["median_ms"], timed["external"])

    def _signal_policy(self, s: dict, task: TaskState | None, cfg, label: str) -> None:
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
        if not cfg["allow_precision_drop"] and task is not None and not task.low_precision:
            if s.get("precision_drops"):
                reject("precision_drop", "; ".join(map(str, s["precision_drops"])))
            if s.get("flags_changed"):
                reject("precision_drop", f"precision flags changed: {', '.join(map(str, s['flags_changed']))}")
        if s.get("aliased") and task is not None and not task.ref_aliases:
            reject("output_aliases_input", f"output {s['aliased'][0]} shares memory with input {s['aliased'][1]} while "
                   "the reference's is fresh: nothing was computed into an output of its own")
        if policy == "forbid" and isinstance(s.get("coverage"), (int, float)) and s["coverage"] < cfg["min_coverage"]:
            reject("library_compute", f"only {100 * s['coverage']:.1f}% of forward's time ran in the candidate's own "
                   f"kernels (at least {100 * cfg['min_coverage']:.0f}% under --torch-ops forbid): the rest is "
                   "library code")

    # --- timing ---------------------------------------------------------------------------------
    def _time_reference(self, loaded: Loaded, task: TaskState, cfg, r: int | None, timeout: float) \
            -> tuple[list[float], int]:
        """The trusted runner's per-call times, through the candidates' windows. With r None the
        count of calls a window holds is chosen here, from the warm-up's one-call windows."""
        tc = cfg["timing"]
        deadline = time.monotonic() + timeout
        warm = self._warm_up(loaded, task, cfg, r or 1, deadline)
        if r is None:
            r = calls_per_window(statistics.median(warm), float(tc["window_ms"]), loaded.window.sets)
        per_call, start = [], time.monotonic()
        for i in range(int(tc["trials"])):
            _, ms, _ = self._window(loaded, task, cfg, self._fresh(r, task.timed_kind), f"baseline window {i}")
            per_call.append(ms / r)
            if self._timing_done(i, start, tc, deadline):
                break
        return per_call, r

    def _fresh(self, r: int, kind: str) -> list[tuple[int, str]]:
        return [(self.rng.getrandbits(62), kind) for _ in range(r)]

    def _warm_up(self, loaded: Loaded, task: TaskState, cfg, r: int, deadline: float) -> list[float]:
        """Untimed windows until warmup of them and warmup_ms have passed; their per-call times."""
        tc = cfg["timing"]
        times, t0 = [], time.monotonic()
        while len(times) < tc["warmup"] or ((time.monotonic() - t0) * 1000 < tc["warmup_ms"]
                                            and len(times) < 100 * tc["warmup"]):
            _, ms, _ = self._window(loaded, task, cfg, self._fresh(r, task.timed_kind), f"warm-up window {len(times)}")
            times.append(ms / r)
            if time.monotonic() > deadline:
                raise Outcome("timeout", "run_timeout", "the warm-up calls outlasted the run limit")
        return times

    @staticmethod
    def _timing_done(i: int, start: float, tc: dict, deadline: float, openings: Openings | None = None) -> bool:
        if time.monotonic() > deadline:
            return True
        return i + 1 >= tc["min_trials"] and time.monotonic() - start > tc["budget_s"] and \
            (openings is None or openings.satisfied())

    def _time(self, loaded: Loaded, task: TaskState, cfg, check: dict, r: int, req: dict, paired: Loaded) -> dict:
        tc = cfg["timing"]
        deadline = time.monotonic() + cfg["run_timeout_s"]
        base_r = r
        self._warm_up(paired, task, cfg, base_r, deadline)
        # A window holds the baseline's count of calls, or fewer where one call of this candidate
        # alone fills a window: a slow candidate's windows stay as long as the baseline's. Fewer
        # calls a window only add the window's fixed cost to each call's time, never take it away.
        one_call_ms = min(self._window(loaded, task, cfg, self._fresh(1, task.timed_kind), f"one-call warm-up window {i}")[1]
                          for i in range(3))
        r = min(r, calls_per_window(one_call_ms, float(tc["window_ms"]), loaded.window.sets))
        self._warm_up(loaded, task, cfg, r, deadline)
        n = int(tc["trials"])
        openings = Openings(self.rng, int(tc["open_calls"]), n, float(tc["budget_s"]))
        per_call, paired_per_call, start = [], [], time.monotonic()
        sampled = cfg["torch_ops"] != "allow" and self._samples_timed_windows(loaded)
        sampler = self._start_sampler(loaded, cfg) if sampled and not self.cuda else None
        # GPU: the sampled windows' samples (TrustedSampling._gpu_library_calls)
        shadows: dict = {"windows": 0, "library": 0, "total": 0, "library_names": {}, "error": None}

        checks = {"ood": 0, "kinds": set(), "moved": 0}
        movable_state = bool(cfg["ood_trials"] and movable(task))
        untimed: list[tuple[int, int]] = []  # the check windows' spans, whose samples do not count
        watched: list[tuple[int, int, float, int, str]] = []  # the current sampler's timed windows (kind_windows)

        # Every other timed window draws its inputs plain (as the plain trials do: what a user's values
        # look like), the others rounding-biased, and the speed is the slower kind's median. The
        # bias fixes bits 8-15 of every value the judge draws, so a kernel can tell the judge's values
        # from a user's: red-team round 55 looked up GELU, exp and tanh in a table of the biased
        # values' centres and computed every other value exactly, correct everywhere and 1.17x-2.42x
        # where its honest speed is 0.18-0.22x. Biased windows stay, since they expose narrowed
        # operands (inputs.py), which plain draws let pass: a kernel fast on either kind alone is
        # timed at the other's speed.
        plain_cfg = {**cfg, "plain_draws": True} if self._rounding(cfg) else None
        by_draws: dict[str, list[float]] = {"biased": [], "plain": []}

        def draws_medians() -> dict[str, float]:
            return {k: statistics.median(v) for k, v in by_draws.items() if v}

        def opened(reply: dict, calls: list, args_of: list, label: str, cls: str, k: int | None = None,
                   at: dict | None = None) -> None:
            k = self.rng.randrange(len(calls)) if k is None else k
            got = self._read(loaded, reply, k, f"{label}, call {k}")
            self._inputs_untouched(loaded, k, args_of[k], f"{label}, call {k}")
            seed, kind = calls[k]
            try:
                self._judge_outputs(task, at or cfg, got, args_of[k], kind, f"{label}, call {k}", cls)
            except ReferenceFailed as e:
                if kind == "task":
                    raise Outcome("invalid_task", "reference_failed", f"{label}: the reference raised {e}") from None

        def check_window() -> None:
            # Out-of-distribution inputs in a window like the timed ones, untimed and always opened: a
            # candidate that keeps a general kernel for the trials and a narrower one after them (a
            # call counter, inputs assumed in [0, 1)) is found out in the windows it is timed among.
            # The trials passed on such inputs, so a wrong answer here is timed_output, as in an
            # opened timed window.
            # Each kind catches other narrow kernels (only signed and negative draws hold values below
            # zero), so the window holds the kinds least checked so far, and one call of each is opened.
            kinds = sorted(self._ood_kinds(cfg), key=lambda kind: (kind in checks["kinds"], self.rng.random()))
            calls = [(self.rng.getrandbits(62), kinds[j % len(kinds)]) for j in range(r)]
            self.rng.shuffle(calls)
            label = f"check window {checks['ood']}"
            started = time.monotonic_ns()
            reply, _, args_of = self._window(loaded, task, cfg, calls, label)
            self._state_left(loaded, task, cfg, label)  # its samples are the runner's: untimed too
            untimed.append((started, time.monotonic_ns()))
            checks["ood"] += 1
            for kind in sorted({kind for _, kind in calls}):
                k = self.rng.choice([j for j, (_, c) in enumerate(calls) if c == kind])
                opened(reply, calls, args_of, label, "rejected", k)
                checks["kinds"].add(kind)

        def moved_window() -> None:
            # A move of the model's state (of a kind drawn at random), then a window of the timed
            # calls' kind and count, untimed and opened: a cache that a move leaves stale is found
            # in the windows it is timed among. The trials passed after such moves, so a wrong answer
            # is timed_output, as in an opened timed window.
            # And a spike of some values, worked out ahead, between two of the window's calls, with a call
            # after it opened: a cache kept while calls come close together (red-team round 62: a Linear's
            # column sums while calls came within 300 us) meets a move it cannot time.
            label = f"moved window {checks['moved']}"
            started = time.monotonic_ns()
            moved = self._any_move(loaded, task, cfg, f"before {label}")
            stage_at = self.rng.randrange(1, r) if r > 1 else None
            if stage_at is not None:
                moved += self._spike_state(loaded, task, cfg, f"ahead of {label}", stage_at)
            calls = self._fresh(r, task.timed_kind)
            reply, _, args_of = self._window(loaded, task, cfg, calls, label)
            self._state_left(loaded, task, cfg, label)  # its samples are the runner's: untimed too
            untimed.append((started, time.monotonic_ns()))
            checks["moved"] += 1
            opened(reply, calls, args_of, label + moved, "rejected",
                   None if stage_at is None else self.rng.randrange(stage_at, r))

        def sampled_window() -> None:
            # GPU: a window like the timed ones (their kind of inputs, their count of calls) under the
            # trusted sampler, its time unused: sampling at this rate slows a call by up to a third
            # (session 34, H200), so the timed windows stay unsampled, and a candidate cannot tell
            # these apart from them (perf's events are attached while its runner is frozen).
            calls = self._fresh(r, task.timed_kind)
            label = f"sampled window {shadows['windows']}"
            watcher = self._start_sampler(loaded, cfg, hz=self.GPU_SAMPLING_HZ, perf_only=True)
            try:
                reply, _, args_of = self._window(loaded, task, cfg, calls, label)
            except BaseException:
                self._discard_sampler(watcher)
                raise
            found = self._stop_sampler(watcher, loaded)[0]
            shadows["windows"] += 1
            if found.get("unanswered"):
                self._unanswered(cfg, "sampled windows")
            if found.get("error"):
                shadows["error"] = found["error"]
            else:
                shadows["library"] += found["library"]
                shadows["total"] += found.get("total", 0)
                for name, n in found.get("library_names", {}).items():
                    shadows["library_names"][name] = shadows["library_names"].get(name, 0) + n
            opened(reply, calls, args_of, label, "rejected")

        pairs = DrawsPairs(self.rng, plain_cfg is not None)

        def window(i: int, extra: bool = False) -> None:
            if cfg["ood_trials"] and self.rng.random() < OOD_WINDOW_SHARE:
                check_window()
            if movable_state and self.rng.random() < MOVED_WINDOW_SHARE:
                moved_window()
            if sampled and self.cuda and not shadows["error"] and self.rng.random() < GPU_SAMPLED_WINDOW_SHARE:
                sampled_window()
            calls = self._fresh(r, task.timed_kind)
            draws = pairs.draws(i)
            at = plain_cfg if draws == "plain" else cfg
            label = f"timed window {i} ({draws} draws)"
            started = time.monotonic_ns()
            reply, ms, args_of = self._window(loaded, task, at, calls, label)
            if sampler is not None:
                watched.append((started, time.monotonic_ns(), ms / r, r, draws))
            per_call.append(ms / r)
            by_draws[draws].append(ms / r)
            if openings.open_extra(i) if extra else openings.open_call(i, time.monotonic() - start):
                opened(reply, calls, args_of, label, "rejected", at=at)
            if i % 2 == 0:
                paired_window(i)

        def paired_window(i: int) -> None:
            # The reference beside the candidate: a window of the trusted runner's after every other
            # timed window, with the baseline's count of calls, and the speedup its median's. Red-team
            # round 28 streamed memory in a second judge while the first timed a task's baseline,
            # whose cached time (the CPU-time clock counts memory stalls) rose 1.6x, and an own kernel
            # honestly 0.86x scored 1.18x. Load on the host now slows both sides of the ratio alike.
            try:
                _, ms, _ = self._window(paired, task, cfg, self._fresh(base_r, task.timed_kind),
                                        f"paired reference window {i}")
            except Outcome as o:
                raise Outcome("invalid_task", "reference_failed",
                              f"the reference timed beside the candidate failed: {o.reply.get('message')}") from None
            paired_per_call.append(ms / base_r)

        try:
            for i in range(n):
                window(i)
                if self._timing_done(i, start, tc, deadline, openings):
                    break
            # The trusted sampler watched these windows; with too few samples in compiled code (short,
            # Python-heavy calls; a loaded host that starves the sampler), another round of windows
            # runs, as many as the last round's rate says it needs for the samples still missing
            # (extra_windows),
            # for up to TIMED_SAMPLING_S past the planned ones whatever the run's deadline (a share
            # from fewer samples never passes, and each window has its own timeout). They are timed
            # windows like the others and make the speed with them (a median of the planned windows
            # alone was one of another load, and left 93% of an honest ok_add's extra windows
            # uncounted beside a second judge). A round's samples count in its windows at or below the
            # median of all windows when it ended (claimed_windows), and only where that median is
            # at most the final one: then no window slower than the speed counts. Red-team round 29
            # slept past the run's deadline in its first window, so that one planned window, its own
            # loops and spin, was judged against its own median, and ran MKL in the extra windows that
            # made the speed: 0.17x counted from both rounds, where its loops score 0.05x. Cheap extra
            # windows must outvote the planned ones, and the first of them are opened often
            # (Openings.open_extra): red-team round 26 was cheap in fifteen extra windows opened at 10%
            # each, outvoted ten planned ones, and passed in a third of its runs at up to 0.99x
            # (honest 0.2-0.3x).
            planned = len(per_call)
            # each sampler round's steps (counted_rounds): its counts by kind over the windows at or below
            # each rung of CLAIM_LADDER under each kind's median when it ended, the highest rung first
            rounds: list[list[tuple[dict[str, float], dict]]] = []
            sampling_start = time.monotonic()

            def left_out(spans: list) -> tuple:
                return tuple(sorted(untimed + spans))

            while sampled and not self.cuda:
                medians = draws_medians()
                rungs = [{k: ms * f for k, ms in medians.items()} for f in CLAIM_LADDER]
                steps = [kind_windows(watched, rung) for rung in rungs]
                kinds = sorted(medians)
                watched.clear()
                # One sampling tallied once for each distinct set of spans left out (rungs that claim the
                # same windows share a tally).
                sets = {left_out(tallies[k][0]): None for tallies in steps for k in kinds}
                founds = dict(zip(sets, self._stop_sampler(sampler, loaded, [list(spans) for spans in sets])))
                sampler = None
                first = next(iter(founds.values()))
                if first.get("unanswered"):
                    self._unanswered(cfg, "timed calls")
                if first.get("error"):
                    rounds.append([(medians, {"error": first["error"]})])
                    break
                rounds.append([(rung, {k: dict(founds[left_out(tallies[k][0])], calls=tallies[k][1]) for k in kinds})
                               for rung, tallies in zip(rungs, steps)])
                # Every kind is judged (round 57: a library on the faster kind, which is not the speed),
                # so the rounds go on until the kind with the fewest samples that count has enough.
                seen_by_kind = {k: sum(counted_rounds(rounds, medians, k)[c] for c in ("own", "library")) for k in kinds}
                kind = min(kinds, key=lambda k: (seen_by_kind[k], k))
                seen = seen_by_kind[kind]
                if seen >= self.COVERAGE["cpu"]["enough"] or time.monotonic() - sampling_start > self.TIMED_SAMPLING_S:
                    break
                if cfg["torch_ops"] == "forbid" and sampling_hopeless(seen, time.monotonic() - start,
                                                                      time.monotonic() - sampling_start,
                                                                      self.TIMED_SAMPLING_S,
                                                                      self.COVERAGE["cpu"]["enough"]):
                    break
                sampler = self._start_sampler(loaded, cfg)
                for _ in range(extra_windows(seen, len(per_call),
                                             self.COVERAGE["cpu"]["enough"] - seen, int(tc["min_trials"]))):
                    window(len(per_call), extra=True)
                    if time.monotonic() - sampling_start > self.TIMED_SAMPLING_S:
                        break
            while checks["kinds"] != set(self._ood_kinds(cfg)):
                check_window()
            while movable_state and checks["moved"] < MOVED_WINDOWS_MIN:
                moved_window()
            while sampled and self.cuda and not shadows["error"] and shadows["windows"] < GPU_SAMPLED_WINDOWS_MIN:
                sampled_window()
        finally:
            if sampler is not None:
                self._stop_sampler(sampler, loaded)
        medians = draws_medians()
        speed_kind = slower_draws(medians)
        timed = by_draws[speed_kind]
        stats = summarize(timed)
        req = dict(req, **paired_baseline(paired_per_call, req))
        external = {"clock": self._clock_name(), "timed_inputs": task.timed_kind, "calls_per_window": r,
                    "windows": len(per_call), "planned_windows": planned,
                    **{f"{k}_median_ms": ms for k, ms in medians.items()},
                    "opened": openings.opened, "check_windows": checks["ood"], "moved_windows": checks["moved"],
                    "flush_bytes": loaded.window.flush.nbytes}
        reply = {"timing": stats, "external": external, "flags": [], "times": timed,
                 "eager_paired": summarize(paired_per_call)}
        if sampled and self.cuda:
            self._gpu_library_calls(shadows, loaded, task, cfg, reply)
        elif sampled:
            # The speed's kind gives the share and the library time reported; the other kind, judged by
            # the same bounds on its own windows, may only reject or warn (round 57 ran ATen natively
            # on the faster plain draws beside an own table padded to make the biased kind the speed).
            for kind in sorted(medians, key=lambda k: k != speed_kind):
                counts = counted_rounds(rounds, medians, kind)
                calls = f"timed calls ({kind} draws)" if len(medians) > 1 else "timed calls"
                if kind == speed_kind:
                    external["compiled_samples"] = counts["own"] + counts["library"]
                    self._timed_coverage(counts, cfg, reply, check, calls)
                    self._library_time(counts, cfg, req, external, calls)
                    continue
                beside: dict = {"external": {}}
                self._timed_coverage(counts, cfg, beside, check, calls)
                self._library_time(counts, cfg, req, beside["external"], calls)
                if beside.get("warnings"):
                    reply["warnings"] = sorted(set(reply.get("warnings", check.get("warnings", []))) |
                                               set(beside["warnings"]))
        for name in ("eager", "compile"):
            base = req.get(f"{name}_times")
            if isinstance(base, list) and base and stats["median_ms"] > 0:
                reply[f"speedup_{name}"] = statistics.median(float(x) for x in base) / stats["median_ms"]
                interval = speedup_interval([float(x) for x in base], timed)
                if interval:
                    reply[f"speedup_{name}_interval"] = interval
        interval = reply.get("speedup_eager_interval")
        if interval and interval[0] <= 1.0 <= interval[1]:
            reply["flags"].append("speedup_uncertain")
        if self.cuda and self.bandwidth_gbps > 0:
            floor_ms = task.moved_bytes / (self.bandwidth_gbps * 1e9) * 1e3
            reply["roofline_floor_ms"] = floor_ms
            margin = cfg["roofline_margin"] * floor_ms
            eager = req.get("eager_times")
            eager_ms = statistics.median(eager) if isinstance(eager, list) and eager else 0.0
            if stats["median_ms"] < margin:
                if eager_ms and eager_ms < margin:
                    reply["flags"].append("roofline_not_binding")  # the reference beats it too: the task reads less
                else:
                    raise Outcome("rejected", "beats_roofline",
                                  f"{stats['median_ms']:.4g} ms per call would move the task's {task.moved_bytes} bytes "
                                  f"of inputs and outputs faster than {cfg['roofline_margin']:.0%} of the GPU's "
                                  f"{self.bandwidth_gbps:.0f} GB/s allows ({floor_ms:.4g} ms)", timing=stats)
        return reply
