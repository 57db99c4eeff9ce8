"""The judge's correctness checks: trials, plain trials, and each call's outputs against the reference.

The trials on the task's inputs and out-of-distribution ones, the plain trials, and every
comparison of a call's outputs with the reference (compare.py), as a part of Judge (judge.py)
that reads its task states and runners."""
from __future__ import annotations

import math
import os

import torch

from vinci_runner import inputs as inputs_mod
from vinci_runner import model_state

from . import compare, runner_signals, shapes
from .call_form import JUDGES_OWN, CallForm
from .call_window import WindowError
from .judge_state import WINDOW_CLASSES, Loaded, ReferenceFailed, TaskState, flat, movable, perturb_state, reset_state
from .outcome import Outcome


MOVED_VALUES_SENT = 1 << 26
# The values a spike moves (_spike_state): one in SPIKED_VALUES_PER of the state's distinct values, from
# SPIKED_VALUES_MIN to SPIKED_VALUES_MAX (each a few elements, so that the stores between two calls take
# microseconds on any state).
SPIKED_VALUES_PER = 64
SPIKED_VALUES_MIN = 4
SPIKED_VALUES_MAX = 256


# The plain trials' intra-op threads on the CPU, each count in turn, one a call: more than the CI
# machine's 2 cores, so that at::parallel_for and OpenMP split every range worth splitting into several
# chunks and a data race between two of them can show, and powers of two and others, as users' core
# counts are (red-team round 52: a cumsum that combined its chunks' totals by a Blelloch scan, right
# for 1, 2 and 4 threads, was 24 off on 3, `correct` when the plain trials always had 4; round 53: a
# ReLU wrong on 2 threads and on threads numbered 8 or more, `correct` on 3 to 8). Ten counts for the
# plain runner's eleven calls then; now every count from 2 to 16, which its sixteen calls beside the
# one-thread call meet every evaluation.
PLAIN_THREADS = tuple(range(2, 17))
# ... and each of the plain runner's last calls (strided inputs, a user's modes) again on one thread:
# red-team round 60's ReLU was wrong on one thread in a user's modes or on strided inputs, which only
# this runner makes, on 2-16 threads, and on 10, 11, 13, 14 or 15 threads, which no runner used.

# The layouts that read wrongly as dense (not offset, which is contiguous): the model's state is
# re-laid in one of them (model_state.relay), and an input strided alone is laid out in one.
STATE_LAYOUTS = ("transposed", "padded")

# The plain trials' unmonitored calls (_plain_trials), each between two moves of the model's state.
UNWATCHED_PLAIN_CALLS = 3

# The plain runner's last calls' inputs, as the labels describe them (inputs.strided_copy).
STRIDED_VIEWS = {"transposed": "a transposed or every-other-element view",
                 "padded": f"rows 3 elements longer than the row and every outer dimension one index longer, "
                           f"from one element past a {inputs_mod.MISALIGNED_BY}-byte boundary",
                 "offset": f"contiguous, from one element past a {inputs_mod.MISALIGNED_BY}-byte boundary"}


# The share of looks at a candidate's process (_state_left) that are deep: they read aten's dispatch
# tables and the OpenMP pool's floating-point environment too (100-450 ms each on a loaded 2-core host:
# at a quarter of the looks and the pool at every one, the CI's reference solutions took 2.4 times longer).
DISPATCH_LOOK_SHARE = 0.1


class Correctness:
    """Judge's correctness checks (a mixin: self is the Judge)."""

    def _expected(self, task: TaskState, args: list, exact_too: bool) -> tuple[list, list | None]:
        """The reference's outputs for a call's inputs, and with exact_too the fp64 reference's."""
        try:
            with torch.no_grad():
                expected = flat(task.ref(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args]))
                exact = None
                if exact_too and task.ref64 is not None:
                    wide = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
                    exact = flat(task.ref64(*wide))
        except Exception as e:
            raise ReferenceFailed(f"{type(e).__name__}: {e}") from None
        return expected, exact

    def _sensitivity(self, task: TaskState, args: list, exact: list) -> list:
        """How far the task's reference moves per element when its floating inputs move by one ulp
        (compare.sensitivity): asked only of an out-of-distribution call that failed the plain
        comparison, so an honest kernel's other rounding of an ill-conditioned output is not the
        reason it fails. The draws are the judge's, from its own generator. Each element also gets
        compare.rounding_slack's allowance for rounding inside the computation (the reference on |x|)."""
        generator = torch.Generator().manual_seed(self.rng.getrandbits(62))
        moved = []
        try:
            with torch.no_grad():
                for _ in range(compare.SENSITIVITY_DRAWS):
                    wide = [compare.ulp_moved(a, generator) if isinstance(a, torch.Tensor) and a.is_floating_point()
                            else a.clone() if isinstance(a, torch.Tensor) else a for a in args]
                    moved.append(flat(task.ref(*wide)))
        except Exception as e:
            raise ReferenceFailed(f"{type(e).__name__}: {e}") from None
        local = compare.sensitivity(moved, exact)
        try:
            with torch.no_grad():
                magnitudes = flat(task.ref(*[a.abs() if isinstance(a, torch.Tensor) and a.is_floating_point()
                                             else a.clone() if isinstance(a, torch.Tensor) else a for a in args]))
        except Exception:  # noqa: BLE001 - a reference that refuses |x| leaves the moved inputs' slack alone
            return local
        floating = [t for t in args if isinstance(t, torch.Tensor) and t.is_floating_point()]
        outputs = [t.numel() for t in exact if isinstance(t, torch.Tensor) and t.is_floating_point()]
        # The most roundings one output can carry: the inputs' elements per output (a reduction's), or
        # along the longest input dimension (a scan's: output j of a running sum carries j of them;
        # red-team round 52's honest fp32 cumsum was 2.2e-3 off on an edges draw of 3,572 columns,
        # where torch's CPU cumsum sums in double).
        longest = max((max(t.shape, default=1) for t in floating), default=1)
        fan_in = max(sum(t.numel() for t in floating) / max(1, sum(outputs)), longest)
        return compare.rounding_slack(local, magnitudes, fan_in)

    def _read(self, loaded: Loaded, reply: dict, k: int, label: str) -> list:
        try:
            return loaded.window.read(reply["outputs"][k], k)
        except WindowError as e:
            raise Outcome(WINDOW_CLASSES.get(e.reason, "runtime_error"), e.reason, f"{label}: {e}") from None

    def _inputs_untouched(self, loaded: Loaded, k: int, args: list, label: str) -> None:
        """The judge's own look at call k's inputs after the window: the runner's monitors report a
        change only during the trials, and only as the runner's claim."""
        changed = loaded.window.changed_input(k, args)
        if changed is not None:
            raise Outcome("rejected", "mutated_inputs", f"{label}: input {changed} no longer holds what the judge "
                          "wrote there: forward wrote into its inputs")

    def _judge_outputs(self, task: TaskState, cfg, got: list, args: list, kind: str, label: str,
                       cls: str, extra: dict | None = None) -> dict:
        """Compares a call's outputs with the reference on its inputs; raises Outcome(cls, ...) when
        they differ. Returns the comparison."""
        ood = kind != "task"
        gate = task.low_precision and cfg["precision_gate"]
        exact_needed = ood or gate or cfg["relative_error"]
        expected, exact = self._expected(task, args, exact_too=exact_needed)
        result = compare.compare(got, expected, cfg["tolerances"], finite_only=ood, exact=exact if ood else None)
        if result["ok"] and cfg["relative_error"] and exact is not None:
            result = compare.relative_error(got, exact, expected, cfg["tolerances"]) or result
        if not result["ok"] and ood and exact is not None:
            local = self._sensitivity(task, args, exact)
            result = compare.compare(got, expected, cfg["tolerances"], finite_only=True, exact=exact, local=local)
            if result["ok"] and cfg["relative_error"]:
                result = compare.relative_error(got, exact, expected, cfg["tolerances"], local) or result
        reason_prefix = "" if cls == "incorrect" else "timed_output"
        if not result["ok"]:
            if reason_prefix:
                raise Outcome(cls, reason_prefix, f"{label} (checked at random after it ended) is wrong: "
                              f"{result['message']}; the correctness trials passed, so the output depends on "
                              "being watched, on earlier calls (a cache), or on work deferred past the call")
            raise Outcome(cls, result["reason"], f"{label}: {result['message']}", max_abs_diff=result["max_abs_diff"],
                          mean_abs_diff=result["mean_abs_diff"], **(extra or {}))
        if exact is not None and gate:
            loss = compare.precision(got, exact, expected)
            if loss:
                if reason_prefix:
                    raise Outcome(cls, reason_prefix, f"{label} lost precision that the correctness trials kept")
                raise Outcome(cls, "precision_loss", f"{label}: {loss['message']}", **(extra or {}))
        return result

    # --- correctness -----------------------------------------------------------------------------
    @staticmethod
    def _ood_kinds(cfg) -> tuple[str, ...]:
        """The out-of-distribution kinds a candidate is checked on."""
        return inputs_mod.OUT_OF_DISTRIBUTION if cfg["ood_trials"] else ()

    @staticmethod
    def _rounding(cfg) -> bool:
        """Whether every input is drawn rounding-biased (inputs.py): under the vinci protocol, unless
        narrowed operands are allowed (--allow-precision-drop), which the bias exists to expose. Every
        draw, not a kind of its own: round 14 recognised a rounding kind by its bits and narrowed
        the operands of every other call."""
        return bool(cfg["ood_trials"]) and not cfg["allow_precision_drop"] and not cfg.get("plain_draws")

    def _trials(self, cfg) -> list[tuple[int, str]]:
        trials = [(cfg["seed"] + 1009 * t, "task") for t in range(int(cfg["correctness_trials"]))]
        trials += [(cfg["seed"] + 7919 * (j + 1), kind) for j, kind in enumerate(self._ood_kinds(cfg))]
        return trials

    def _move_state(self, loaded: Loaded, task: TaskState, cfg, label: str, part: int | None = None,
                    assign: bool = False) -> str:
        """Moves the candidate's model state and the reference's alike, between calls, as a new
        checkpoint loaded into both would (model_state.perturb; the key is the judge's, fresh each
        time): state derived from the weights and kept across calls is then stale (red-team round 44:
        a Linear's column sums cached in __init__, correct at 1.45x its honest speed). With part (an
        index into the reference's movable tensors), only that tensor's values move, wherever the
        candidate holds them: a cache keyed on part of the state (round 45: the weight's version, not
        the bias's) goes stale too. Under the vinci protocol; KernelBench's keeps the state as built.
        With assign (a whole move), the runner puts the moved values into new tensors in the old ones'
        places, as load_state_dict(..., assign=True) does: a kernel that reads the Parameter objects it
        took in __init__ reads stale values (round 47). Returns what the next call's label adds, so that
        a kernel failing there is told why ("" where nothing moved)."""
        tensors = movable(task) if cfg["ood_trials"] else []
        if not tensors:
            return ""  # no state of the reference's to move
        # A lone move of a model's one tensor still differs from a whole move: a parameter's moves the
        # candidate's parameters alone, and half of them only some of its values (below).
        picked = [t for _, t in tensors] if part is None else [tensors[part % len(tensors)][1]]
        key, rounding = self.rng.getrandbits(62), self._rounding(cfg)
        only = None
        # Only the reference's values move, wherever the candidate holds them: a table of its own
        # (a cos/sin cache the reference computes in forward) stays as it made it. Past 2^26 values
        # of state (256 MB to send) a whole move moves all of the candidate's floating state instead,
        # and no tensor moves alone.
        if sum(t.numel() for _, t in tensors) <= MOVED_VALUES_SENT:
            only = model_state.value_set(picked, on_device=True)
            # What a tensor of the candidate's must mostly hold to move (model_state.HELD_SHARE): the
            # whole state's values, so that a flat parameter packing the bias beside the weight moves
            # on a lone move of the bias, a small share of it (red-team round 53: an honest flat
            # parameter was incorrect after one, the bias 0.6% of it).
            held = only
            if part is not None:
                # Values the rest of the state also holds stay, or a move of the bias alone would
                # move the weight's elements of equal value (a rounding-biased fp32 draw has 2^15
                # values a binade, so a Linear's weight shares values with its bias) and a cache
                # keyed on the weight alone would see it move.
                # (A model of one tensor has no others: an empty set on the CPU, so moved to the values'
                # device, or a lone move of a CUDA model's one tensor failed the judge.)
                others = model_state.value_set([t for t in (t for _, t in tensors) if t is not picked[0]],
                                               on_device=True).to(only.device)
                held = torch.unique(torch.cat([only, others]))
                only = only[~torch.isin(only, others)]
                # Every other lone move changes some of the tensor's values, not all of them, as an
                # edit of a few rows or a sparse update would: from one value to an eighth of them,
                # log-uniformly, so that a cache keyed on a sample of the values (red-team round 47: 16
                # weights and the bias, rebuilt when their hash changed) misses the smaller moves.
                if self.rng.random() < 0.5 and only.numel() >= 8:
                    count = max(1, int(math.exp(self.rng.random() * math.log(only.numel() / 8))))
                    draw = torch.Generator(device="cpu").manual_seed(self.rng.getrandbits(62))
                    only = only[torch.randperm(only.numel(), generator=draw)[:count].to(only.device)]
                if only.numel() == 0:
                    return ""
            only = only.cpu()
            sent = [only.numpy().tobytes()] + ([held.cpu().numpy().tobytes()] if part is not None else [])
        elif part is not None:
            return ""
        else:
            sent = []
        perturb_state(task, key, rounding, only)
        positional = None
        if part is None and only is not None:
            # A whole move also writes the reference's moved values, position by position, into each
            # tensor of the candidate's that has a tensor's name and shape of the reference's, as a
            # user's load_state_dict of the reference's checkpoint does (a no-op for an honest kernel,
            # which holds those values there already). The value-keyed move alone maps a value to one
            # value wherever it sits, so any rearrangement of a tensor's own storage survived it:
            # red-team round 52 kept a Linear's weight transposed in the weight's own storage, correct
            # at its honest speed and 2.4 off after a user's load_state_dict.
            positional = [{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
                          for n, t in tensors]
            sent.append(b"".join(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes() for _, t in tensors))
        # A lone move of a parameter moves the candidate's parameters alone, as an optimizer's step does:
        # a copy of the weight kept in a buffer (round 47: persistent, so round 46's checkpoint rule
        # moved it) goes stale. A buffer's move (running statistics) moves whatever holds its values.
        parameters = part is not None and isinstance(picked[0], torch.nn.Parameter)
        request = {"op": "perturb", "key": key, "rounding": rounding, "parameters": parameters,
                   "assign": assign and part is None}
        if positional is not None:
            request["positional"] = positional
        self._ask_move(loaded, cfg, label, request, sent)
        if assign and part is None:
            return (", after the model's parameters were replaced by new ones holding new values (as a "
                    "checkpoint load with assign=True does; state kept from earlier calls must follow)")
        return (", after the model's parameters changed in place (as a checkpoint load or a training step "
                "changes them; state kept from earlier calls must follow)")

    def _ask_move(self, loaded: Loaded, cfg, label: str, request: dict, sent: list[bytes]) -> None:
        """The runner's move (Runner.perturb), with sent's value sets as descriptors, its runner thawed."""
        fds = []
        for payload in sent:
            fd = os.memfd_create("vinci-values")
            fds.append(fd)
            data = memoryview(payload)
            while data:
                data = data[os.write(fd, data):]
            os.lseek(fd, 0, os.SEEK_SET)
        window = loaded.window
        window.gate.freeze()
        window.thaw()
        try:
            reply = self._ask(loaded.runner, request, cfg["run_timeout_s"], "run_timeout", fds=fds)
        finally:
            for fd in fds:
                os.close(fd)
        window.gate.freeze()
        self._accept(reply, "moving the model's state", label)

    def _spike_state(self, loaded: Loaded, task: TaskState, cfg, label: str, stage_at: int) -> str:
        """Some of the reference's values, wherever either model holds them, multiplied in place by
        model_state.SPIKE_FACTOR: in the reference's now, and in the candidate's by its next window, between
        its calls stage_at - 1 and stage_at, an index store that leaves no gap a candidate could time.
        Red-team round 62 kept a Linear's column sums while calls came within 300 us of each other (and
        the weight's data pointer stayed), correct in every window the judge ran, since every other move
        comes between windows, after milliseconds; wrong after a user's in-place update and a call."""
        tensors = movable(task) if cfg["ood_trials"] else []
        if not tensors or sum(t.numel() for _, t in tensors) > MOVED_VALUES_SENT:
            return ""
        held = model_state.value_set([t for _, t in tensors])
        # Values a spike keeps in range in every floating dtype (fp16's largest is 65,504), and not zero.
        values = held.view(torch.float32)
        fit = held[(values.abs() > 0) & (values.abs() < 64)]
        if fit.numel() == 0:
            return ""
        # A share of them drawn, enough to move a reduction's output past any tolerance: each value is held
        # by one element or a few, and one element's spike is lost in a long sum.
        count = min(fit.numel(), max(SPIKED_VALUES_MIN, min(SPIKED_VALUES_MAX, fit.numel() // SPIKED_VALUES_PER)))
        draw = torch.Generator(device="cpu").manual_seed(self.rng.getrandbits(62))
        only = torch.sort(fit[torch.randperm(fit.numel(), generator=draw)[:count]]).values
        perturb_state(task, 0, False, only, factor=model_state.SPIKE_FACTOR)
        self._ask_move(loaded, cfg, label, {"op": "perturb", "key": 0, "rounding": False, "stage_at": stage_at},
                       [only.numpy().tobytes(), held.numpy().tobytes()])
        return (f", after {count} of the model's values were multiplied by {model_state.SPIKE_FACTOR:g} in place "
                f"between calls {stage_at - 1} and {stage_at} of the window, with no pause (as an optimizer's "
                "step right before a call does; state kept from earlier calls must follow)")

    def _check(self, loaded: Loaded, task: TaskState, cfg) -> dict:
        worst, mean_sum, counted, warnings, skipped = 0.0, 0.0, 0, [], []
        first, watched_ms = {}, []
        trials = self._trials(cfg)
        # All of the state after the first trial, then one tensor alone after each later one, in an
        # order the judge draws: every tensor of a model of up to 10 moves alone, and a cache formed
        # at any call of the trials but the last is stale by the next.
        order = list(range(len(movable(task)))) if cfg["ood_trials"] else []
        self.rng.shuffle(order)
        moved = ""
        for t, (seed, kind) in enumerate(trials):
            label = f"trial {t}" + ("" if kind == "task" else f" ({kind} inputs)") + moved
            signals, result, ms = self._trial(loaded, task, cfg, t, seed, kind, label, warnings, skipped,
                                              profile=t == 0 and not self.cuda)
            watched_ms.append(ms)
            if t == 0:
                first = {"signals": signals}
            if result is not None:
                worst = max(worst, result["max_abs_diff"])
                mean_sum += result["mean_abs_diff"]
                counted += 1
            if t + 1 < len(trials):
                part = order[(t - 1) % len(order)] if t > 0 and order else None
                # The first move, of all the state, puts it in new tensors, as a load with assign=True.
                moved = self._move_state(loaded, task, cfg, f"after trial {t}", part, assign=t == 0)
        signals = dict(first.get("signals", {}))
        if cfg["torch_ops"] != "allow" and not self._samples_timed_windows(loaded):
            share, note = self._host_coverage(loaded, task, cfg)
            if note:
                warnings.append(note)
            if not self.cuda:
                # As over the timed windows (_timed_coverage): under forbid a share left unmeasured is
                # never a pass. A CPU host without a freezer cgroup passed one with a note, so a
                # candidate that kept its samples in compiled code few (asleep on the CPU clock) ran
                # any library unweighed.
                if share is None and cfg["torch_ops"] == "forbid":
                    raise Outcome("rejected", "library_compute",
                                  f"coverage calls: own code's share unmeasured ({note or 'no samples'}); under "
                                  "--torch-ops forbid an unmeasured share is never a pass")
                signals["coverage"] = share
                self._signal_policy({"coverage": share}, task, cfg, "coverage")
            else:
                self._gpu_coverage_rule(share, cfg)
        return {"trials": len(trials), "trials_passed": len(trials), "max_abs_diff": worst,
                "mean_abs_diff": mean_sum / max(counted, 1), "warnings": sorted(set(warnings)),
                "skipped_trials": skipped, "custom_launches": int(signals.get("launches") or 0),
                "coverage": signals.get("coverage"), "profile": signals.get("profile") or [],
                "gpu_busy_ms": signals.get("gpu_busy_ms"), "watched_ms": watched_ms}

    def _trial(self, loaded: Loaded, task: TaskState, cfg, t: int, seed: int, kind: str, label: str,
               warnings: list, skipped: list, profile=False) -> tuple[dict, dict | None, float]:
        """One monitored call on (seed, kind)'s inputs, its signals held to the policy and its outputs
        to the reference; raises Outcome(incorrect, ...) when they differ. Returns its signals, the
        comparison (None where an out-of-distribution draw made the reference itself fail) and the
        window's milliseconds."""
        try:
            reply, ms, args_of = self._window(loaded, task, cfg, [(seed, kind)], label, monitor=True, profile=profile)
        except Outcome as o:
            o.reply["trials_passed"] = t
            raise
        signals = reply.get("signals", {})
        problem = runner_signals.malformed(signals)
        if problem:
            raise Outcome("rejected", "protocol_violation", f"{label}: the runner's reply: {problem}")
        self._signal_policy(signals, task, cfg, label)
        if signals.get("torch_ops"):
            warnings.append(f"torch ops in forward: {sorted(signals['torch_ops'])}")
        got = self._read(loaded, reply, 0, label)
        self._inputs_untouched(loaded, 0, args_of[0], label)
        try:
            result = self._judge_outputs(task, cfg, got, args_of[0], kind, label, "incorrect", {"trials_passed": t})
            self._state_left(loaded, task, cfg, label)
            return signals, result, ms
        except ReferenceFailed as e:
            if kind == "task":
                raise Outcome("invalid_task", "reference_failed", f"{label}: the reference forward raised {e}") \
                    from None
            skipped.append(f"{label}: the reference raised {e}"[:200])
            return signals, None, ms
        except Outcome as o:
            o.reply.setdefault("trials_passed", t)
            raise

    def _plain_trials(self, req, cfg) -> list[str]:
        """The candidate in a runner of its own whose draws are all plain: its model built and every
        input drawn without the rounding bias, one call of each kind, each held to a reference built
        the same way. The bias (inputs.py) moves every value the judge draws into a recognisable
        pattern, which 12 loads tell from any user's tensor: red-team round 21's ReLU was exact on
        every biased draw and returned its input unchanged on anything else, correct at the honest
        speed. A fresh process has seen no biased draw to remember, and these draws are what a user's
        data looks like, so a kernel right only on the judge's values fails here. Narrowing on plain
        draws still passes the bounds where its errors average out, as it would on any plain random
        draw, and gains nothing on the clock: half the timed windows stay biased, and the speed is the
        slower kind's (timed_windows). On the CPU this runner
        also computes with intra-op threads (PLAIN_THREADS), as a user's process does, where every other
        runner has one (red-team round 50: a ReLU whose at::parallel_for chunks indexed from 0, and a
        cumsum whose chunks carried nothing over, were exact on one thread and 4.7 and 107 off on two).

        Below --scale 1 its shape is another (shapes.py: round 51's softmax summed a row's first 4,096
        columns). And among its monitored trials run UNWATCHED_PLAIN_CALLS calls as the timed ones are
        made, unmonitored, each between two moves of the model's state: round 51 told a monitored call
        from the others by a native probe of the dispatch-mode stack, and on the unmonitored calls
        alone returned plain values unchanged (a ReLU at 0.056x) or kept a Linear's column sums from
        its first one on (8_MatmulRowSum at 5.46x), since those calls only ever met the judge's
        biased values, one thread and state that no longer moved."""
        if not self._rounding(cfg):
            return []  # every draw is plain already
        sizes = shapes.grown_sizes(self._task(req, cfg).scaled or {}, self.rng)
        # Every count of PLAIN_THREADS in turn, in an order drawn anew, one a call (the runner sets it
        # before each call): each evaluation computes on every count from 2 to 16, and on one thread
        # in each of its last calls' second call.
        counts = [1] if self.cuda else self.rng.sample(PLAIN_THREADS, len(PLAIN_THREADS))
        # The process starts as a user's does (red-team round 63): every runner's first call was in eval
        # mode under no_grad, and this one's on 2-16 threads, so a ReLU that fixed its answer at its first
        # call (wrong for good where gradients were recorded then, or where that call was on one thread
        # and its values plain) was right in every call the judge made. Two starts, this runner's and a
        # fresh process's (_first_call), opposite in each of one thread or several, gradients recorded
        # or not, training mode or not: a kernel that keys on any one of them is wrong in one of the two.
        (first_threads, first_mode), fresh_start = self._user_starts(self._task(req, cfg))
        refused = self._first_call(req, cfg, *fresh_start)
        plain = {**cfg, "plain_draws": True, "threads": first_threads, "sizes": sizes}
        task = self._task(req, plain)
        reset_state(task)
        shape = f", at sizes {', '.join(f'{k}={v}' for k, v in sorted(sizes.items()))}" if sizes else ""
        made = 0

        def next_call(threads: int | None = None) -> tuple[dict, str]:
            nonlocal made
            if threads is None:
                threads, made = counts[made % len(counts)], made + 1
            return {**plain, "threads": threads}, shape + ("" if self.cuda else f", on {threads} intra-op threads")

        with self._candidate_loaded(req, task, plain) as loaded:
            warnings, skipped = [], []
            self._start(loaded, task, plain, first_mode, "the plain runner's first call", shape, refused)
            passed = len(self._trials(cfg))  # the biased trials before them
            unwatched = set(self.rng.sample(range(len(inputs_mod.KINDS)), UNWATCHED_PLAIN_CALLS))
            moved = ""
            for t, kind in enumerate(inputs_mod.KINDS):
                at, where = next_call()
                self._trial(loaded, task, at, passed + t, self.rng.getrandbits(62), kind,
                            f"plain trial {t} ({kind} inputs, drawn as a user's are, without the judge's rounding "
                            f"bias{where}){moved}", warnings, skipped)
                moved = self._any_move(loaded, task, plain, f"after plain trial {t}")
                if t in unwatched:
                    other = self.rng.choice(inputs_mod.KINDS)
                    at, where = next_call()
                    self._unwatched(loaded, task, at, other,
                                    f"the unmonitored plain call after trial {t} ({other} inputs, drawn as a user's "
                                    f"are{where}, made as a timed call is){moved}")
                    moved = self._any_move(loaded, task, plain, f"after the unmonitored plain call {t}")
            last = self._layout_calls(task) if cfg["strict_layout"] else []
            # A reference that reads its training flag gives no outputs for training mode to be held to.
            last += [(model_state.MODE_VIEWS[mode], "", CallForm(mode=mode)) for mode in model_state.CALL_MODES
                     if "train" not in mode or not task.reads_training_flag]
            if cfg["strict_layout"]:
                # Last of all: the state stays re-laid for whatever call would follow. Never merely offset
                # (contiguous), so that a kernel reading a weight as dense reads it wrongly: transposed (a
                # tied, transposed weight), or padded (a slice of a larger one, also misaligned).
                layout = self.rng.choice(STATE_LAYOUTS)
                last.append((f"with the model's parameters and buffers laid out as {STRIDED_VIEWS[layout]}", "",
                             CallForm(strided_state=layout)))
            for what, view, form in last:
                calls = [next_call(), next_call(None if self.cuda else 1)]
                self._last_call(loaded, task, calls, what, view, form, moved, refused)
                moved = ""
            return refused

    def _layout_calls(self, task: TaskState) -> list[tuple[str, str, CallForm]]:
        """The plain runner's calls on strided inputs: every layout of inputs.STRIDED_LAYOUTS with all
        inputs strided, in a drawn order, then, with two or more tensor inputs, each input strided alone,
        the others dense, transposed or padded (drawn; never merely offset, which is contiguous and reads
        as dense). Red-team round 65's RMSNorm chose its path by its first input's layout and read the
        residual as dense: right whenever the two were laid out alike, as every call had them, and right
        too where the residual alone was offset."""
        tensors = [i for i, spec in enumerate(task.input_specs)
                   if spec.get("kind") == "tensor" and math.prod(spec.get("shape") or [1]) >= 2]
        layouts = list(inputs_mod.STRIDED_LAYOUTS)
        self.rng.shuffle(layouts)
        calls = [(f"on {layout} inputs", STRIDED_VIEWS[layout], CallForm(strided=layout)) for layout in layouts]
        for i in tensors if len(tensors) >= 2 else []:
            layout = self.rng.choice(STATE_LAYOUTS)
            calls.append((f"on {layout} inputs, input {i} alone, the others dense", STRIDED_VIEWS[layout],
                          CallForm(strided=layout, strided_inputs=(i,))))
        return calls

    def _user_starts(self, task: TaskState) -> tuple[tuple[int, str | None], tuple[int, str | None]]:
        """Two first calls, (threads, mode), opposite in each of: one thread or a count of the cycle,
        gradients recorded or not, training mode or not (never where the reference reads its training
        flag); each feature drawn for the first. On a GPU both on the runner's one thread."""
        one, grad, train = self.rng.random() < 0.5, self.rng.random() < 0.5, self.rng.random() < 0.5
        trainable = not task.reads_training_flag
        modes = {(False, False): None, (True, False): "train", (False, True): "grad", (True, True): "train_grad"}

        def start(one_thread: bool, training: bool, recording: bool) -> tuple[int, str | None]:
            threads = 1 if self.cuda or one_thread else self.rng.choice(PLAIN_THREADS)
            return threads, modes[(training and trainable, recording)]

        return start(one, train, grad), start(not one, not train, not grad)

    def _start(self, loaded: Loaded, task: TaskState, cfg, mode: str | None, what: str, shape: str,
               refused: list) -> None:
        """A process's first call, on the timed kind's dense plain values, as a user's first may be."""
        threads = "" if self.cuda else f", on {cfg['threads']} intra-op threads"
        label = (f"{what} ({task.timed_kind} inputs, drawn as a user's are, "
                 f"{model_state.MODE_VIEWS.get(mode, 'in eval mode under no_grad')}{shape}{threads}, "
                 "as a user's first call may be)")
        if mode is None:  # the judge's own mode, which no kernel may refuse
            self._unwatched(loaded, task, cfg, task.timed_kind, label)
        else:
            self._refusable(loaded, task, cfg, task.timed_kind, label, refused, CallForm(mode=mode))

    def _first_call(self, req, cfg, threads: int, mode: str | None) -> list[str]:
        """One call, the first, of a fresh process of the candidate's at the judged shape (plain draws)."""
        start = {**cfg, "plain_draws": True, "threads": threads}
        task = self._task(req, start)
        reset_state(task)
        refused: list[str] = []
        with self._candidate_loaded(req, task, start) as loaded:
            self._start(loaded, task, start, mode, "a fresh process's first call", "", refused)
        return refused

    def _last_call(self, loaded: Loaded, task: TaskState, calls: list[tuple[dict, str]], what: str, view: str,
                   form: CallForm, moved: str, refused: list) -> None:
        """One of the plain runner's last calls, made as a user's may be and held to the reference: on
        inputs laid out as a user's views may be (strided: transposed, padded rows, or contiguous from a
        misaligned start; inputs.strided_copy), or in a user's mode (model_state.CALL_MODES: training
        mode, gradients recorded). Red-team round 52's ReLU read data_ptr without its strides, 4.2 off
        on x.t(), and round 56's read the storage's base, peeled a misaligned head wrongly or checked
        stride(-1) alone, each correct since every other call passes dense inputs at an aligned start;
        round 59's were wrong with gradients on or in training mode, which no other call is made in. A
        kernel may refuse such a call (its forward raises: a check of is_contiguous, of the grad
        mode), as KernelBench's contract allows; answering wrongly is the hole. Last, so that a failure
        inside the kernel's context ends nothing the judge still needs.

        calls: (config, where) of each of its calls, the first on a thread count of the cycle and the
        second on one thread (_plain_trials), so that every layout and mode meets one thread: round 60's
        ReLU, wrong on one thread in a user's modes or on non-contiguous inputs, escaped when the one
        one-thread call was drawn on the misaligned layout, which is contiguous (session 44's CI, one
        evaluation in six). Both calls draw the same values, the second negated where the timed kind is
        signed (inputs.mirrored): a misaligned head peeled wrongly into zeros is right on a ReLU's
        non-positive inputs and escaped one CI run of inputs__relu_wrong_head_when_misaligned (all 7
        head inputs at most 0); negated, each nonzero value is positive in one of the two. A refusal
        excuses its own call alone and is noted in refused: red-team round 63's ReLU raised on several
        threads with gradients recorded, which skipped its one-thread partner, where it was half off."""
        # The timed calls' kind (signed wherever the reference is finite): values that vary as much as
        # their size, so a permutation of them is no answer (offset inputs, 1,000 plus a little,
        # passed a transposed read within the tolerance). Only signed values keep a finite reference
        # negated; another kind is drawn again as it is.
        kind = task.timed_kind
        kinds = (kind, inputs_mod.mirrored(kind) if kind == "signed" else kind)
        seed = self.rng.getrandbits(62)
        for i, ((cfg, where), drawn) in enumerate(zip(calls, kinds)):
            label = f"the plain call {what} ({drawn} inputs{', ' + view if view else ''}{where}){moved if i == 0 else ''}"
            self._refusable(loaded, task, cfg, drawn, label, refused, form, seed=seed)

    def _refusable(self, loaded: Loaded, task: TaskState, cfg, kind: str, label: str, refused: list,
                   form: CallForm = JUDGES_OWN, seed: int | None = None) -> None:
        """An unmonitored call a kernel may refuse by raising, as a user would see it (noted in refused)."""
        try:
            self._unwatched(loaded, task, cfg, kind, label, form=form, seed=seed)
        except Outcome as o:
            if o.reply["class"] == "runtime_error" and "forward raised" in o.reply["message"]:
                refused.append(f"refused {label}: forward raised")
                return
            raise

    def _any_move(self, loaded: Loaded, task: TaskState, cfg, label: str) -> str:
        """One move of the model's state of a kind drawn at random: all of it in place, all of it into
        new tensors (assign), or one tensor alone (_move_state)."""
        draw = self.rng.random()
        if draw < 1 / 3:
            return self._move_state(loaded, task, cfg, label)
        if draw < 2 / 3:
            return self._move_state(loaded, task, cfg, label, assign=True)
        return self._move_state(loaded, task, cfg, label, self.rng.getrandbits(16))

    def _unwatched(self, loaded: Loaded, task: TaskState, cfg, kind: str, label: str, cls: str = "incorrect",
                   form: CallForm = JUDGES_OWN, seed: int | None = None) -> None:
        """One call made as a timed call is (no monitors, no profiler), untimed, its outputs held to
        the reference; raises Outcome(cls, ...) when they differ. seed: its inputs' draw, else a new one."""
        seed = self.rng.getrandbits(62) if seed is None else seed
        reply, _, args_of = self._window(loaded, task, cfg, [(seed, kind)], label, form=form)
        got = self._read(loaded, reply, 0, label)
        self._inputs_untouched(loaded, 0, args_of[0], label)
        try:
            self._judge_outputs(task, cfg, got, args_of[0], kind, label, cls)
        except ReferenceFailed as e:
            if kind == "task":
                raise Outcome("invalid_task", "reference_failed", f"{label}: the reference raised {e}") from None
        self._state_left(loaded, task, cfg, label)

    def _state_left(self, loaded: Loaded, task: TaskState, cfg, label: str) -> None:
        """What the candidate's calls left changed in its process for the caller's later code since its
        load or the last look (the runner's op "state": process_state), asked while no call runs; raises
        Outcome(rejected, process_state), or precision_drop for a precision switch where precision may not
        drop. Red-team round 66's exact ReLUs left CPU autocast on (a user's next nn.Linear returned
        bfloat16) or reseeded torch's generator on every call (a user's dropout masks repeated)."""
        if not loaded.candidate:
            return
        window = loaded.window
        window.gate.freeze()
        window.thaw()
        try:
            # Deep on each runner's first look (a kernel registered as the extension loaded, a pool left
            # changed by the first call) and on a drawn share of the rest.
            dispatch = not loaded.looked or self.rng.random() < DISPATCH_LOOK_SHARE
            loaded.looked = True
            reply = self._ask(loaded.runner, {"op": "state", "dispatch": dispatch}, cfg["run_timeout_s"],
                              "run_timeout")
        finally:
            window.gate.freeze()
        self._accept(reply, "reading the process's state", label)
        changes = reply.get("changes")
        if not isinstance(changes, list) or not all(
                isinstance(c, dict) and all(isinstance(c.get(k), str) for k in ("what", "was", "now"))
                and isinstance(c.get("precision"), bool) for c in changes):
            raise Outcome("rejected", "protocol_violation", f"{label}: the runner's state reply is malformed")
        precision_may_drop = cfg["allow_precision_drop"] or task.low_precision
        counted = [c for c in changes if not (c["precision"] and precision_may_drop)]
        if counted:
            reason = "process_state" if any(not c["precision"] for c in counted) else "precision_drop"
            left = "; ".join(f"{c['what']}: {c['was']} -> {c['now']}"[:200] for c in counted[:4])
            raise Outcome("rejected", reason, f"after {label}: the candidate's calls left its process changed for "
                          f"the caller's later code: {left}")
