"""The plain runner's calls as Correctness._plain_trials makes them, recorded by hand-written stubs in
place of the runner (issue 18): every count of PLAIN_THREADS met each evaluation, and each last call
(a strided layout, a user's mode) made twice, on a count of the cycle and on one thread, on one draw
of values, the second negated where the timed kind is signed, a refusal excusing its own call alone;
and a first call drawn among a user's starts. Red-team round 60's ReLU, wrong on one thread in a
user's modes or on non-contiguous inputs, escaped one evaluation in six while a single last call,
drawn, ran on one thread; round 63's skipped the one-thread call by refusing its partner, or fixed its
answer at a first call that was always in eval mode under no_grad on several threads.

    python3 tests/eval/plain_calls_test.py REPO_ROOT
"""
import contextlib
import random
import sys
import types

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")

from vinci_runner import inputs  # noqa: E402
from vinci_runner import model_state  # noqa: E402
from vinci_worker import correctness  # noqa: E402
from vinci_worker.call_form import JUDGES_OWN  # noqa: E402
from vinci_worker.correctness import PLAIN_THREADS, Correctness  # noqa: E402
from vinci_worker.outcome import Outcome  # noqa: E402
from checks import check, finish  # noqa: E402

correctness.reset_state = lambda task: None  # the stub task holds no reference model


class Recorder(Correctness):
    """Correctness with the runner replaced: each call's threads, kind, seed, layout and mode kept."""

    def __init__(self, seed: int, timed_kind: str, cuda: bool = False, reads_training_flag: bool = False,
                 refuse_on_threads: bool = False, tensor_inputs: int = 1):
        self.rng = random.Random(seed)
        self.cuda = cuda
        self.compiler = None
        # tensor_inputs tensors, then a scalar and a one-element tensor, which no layout changes
        specs = [{"kind": "tensor", "shape": [200, 3]} for _ in range(tensor_inputs)] + \
                [{"kind": "value", "value": 2}, {"kind": "tensor", "shape": [1]}]
        self.task = types.SimpleNamespace(scaled={"N": [4096, 200]}, reads_training_flag=reads_training_flag,
                                          timed_kind=timed_kind, input_specs=specs)
        self.calls = []
        self.refuse_on_threads = refuse_on_threads  # raise as a kernel refusing a call on several threads

    def _rounding(self, cfg):
        return True

    def _task(self, req, cfg):
        return self.task

    @contextlib.contextmanager
    def _candidate_loaded(self, req, task, cfg, sets=1, log=None):
        yield types.SimpleNamespace()

    def _trials(self, cfg):
        return [None] * 12

    def _trial(self, loaded, task, cfg, t, seed, kind, label, warnings, skipped):
        self.calls.append({"threads": cfg["threads"], "kind": kind, "seed": seed, "strided": None, "mode": None,
                           "last": False, "first": False, "strided_inputs": None, "strided_state": None})

    def _any_move(self, loaded, task, cfg, label):
        return ""

    def _unwatched(self, loaded, task, cfg, kind, label, cls="incorrect", form=JUDGES_OWN, seed=None):
        first = "first call" in label
        last = not first and form != JUDGES_OWN
        request = form.request()  # what the runner would be sent
        self.calls.append({"threads": cfg["threads"], "kind": kind, "seed": seed, "strided": request.get("strided"),
                           "mode": request.get("mode"), "last": last, "first": first,
                           "strided_inputs": request.get("strided_inputs"),
                           "strided_state": request.get("strided_state")})
        if self.refuse_on_threads and cfg["threads"] > 1 and last:
            raise Outcome("runtime_error", "forward_raised", f"{label}: forward raised RuntimeError")


for seed in range(40):
    for timed in ("signed", "offset"):
        judge = Recorder(seed, timed)
        judge._plain_trials({}, {"strict_layout": True})
        last = [c for c in judge.calls if c["last"]]
        conditions = [("strided", layout) for layout in inputs.STRIDED_LAYOUTS] + \
                     [("mode", mode) for mode in model_state.CALL_MODES]
        check(len(last) == 2 * len(conditions) + 2, f"seed {seed}: two calls a layout or mode, and two on re-laid "
                                                    f"state, got {len(last)}")
        relaid = [c for c in last if c["strided_state"]]
        check(len(relaid) == 2 and relaid == last[-2:] and relaid[0]["strided_state"] in correctness.STATE_LAYOUTS
              and relaid[0]["strided_state"] == relaid[1]["strided_state"] and relaid[0]["strided"] is None,
              f"seed {seed}: the last two calls on the model's state re-laid in one layout, inputs dense: {relaid}")
        check(all(c["strided_inputs"] is None for c in last), f"seed {seed}: one tensor input: all of them strided")
        for field, value in conditions:
            pair = [c for c in last if c[field] == value]
            threads = sorted(c["threads"] for c in pair)
            check(len(pair) == 2 and threads[0] == 1 and threads[1] in PLAIN_THREADS,
                  f"seed {seed}, {value}: once on one thread and once on a count of the cycle, got {threads}")
            if len(pair) == 2:
                first, second = pair
                check(first["seed"] is not None and first["seed"] == second["seed"],
                      f"seed {seed}, {value}: both calls draw the same values")
                want = inputs.mirrored(timed) if timed == "signed" else timed
                check(first["kind"] == timed and second["kind"] == want,
                      f"seed {seed}, {value}: {timed} then {want}, got {first['kind']} then {second['kind']}")
        firsts = [c for c in judge.calls if c["first"]]
        check(judge.calls[0]["first"] and judge.calls[1]["first"] and len(firsts) == 2,
              f"seed {seed}: two first calls (a fresh process's, the plain runner's) before any other")
        if len(firsts) == 2:
            features = [(c["threads"] == 1, c["mode"] in ("train", "train_grad"), c["mode"] in ("grad", "train_grad"))
                        for c in firsts]
            check(all(a != b for a, b in zip(*features)),
                  f"seed {seed}: the two starts opposite in threads, training and gradients: {features}")
        met = {c["threads"] for c in judge.calls}
        check(met == set(PLAIN_THREADS) | {1}, f"seed {seed}: every count from 1 to 16 met, got {sorted(met)}")
        check(all(c["threads"] == 1 for c in judge.calls if c["last"] and c["threads"] not in PLAIN_THREADS),
              f"seed {seed}: no count outside the cycle but one")

# Several tensor inputs: every layout with all of them strided, then each strided alone once, in a
# layout that reads wrongly as dense (transposed or padded, never offset), a pair of calls each; the
# scalar and the one-element tensor are never chosen.
for inputs_count in (2, 3):
    for seed in range(30):
        judge = Recorder(seed, "signed", tensor_inputs=inputs_count)
        judge._plain_trials({}, {"strict_layout": True})
        laid = [c for c in judge.calls if c["last"] and c["strided"]]
        together = sorted(c["strided"] for c in laid if c["strided_inputs"] is None)
        alone = [c for c in laid if c["strided_inputs"] is not None]
        check(together == sorted(2 * list(inputs.STRIDED_LAYOUTS)),
              f"{inputs_count} inputs, seed {seed}: every layout twice with all inputs: {together}")
        check(sorted(str(c["strided_inputs"]) for c in alone) == sorted(2 * [str([i]) for i in range(inputs_count)])
              and all(c["strided"] in correctness.STATE_LAYOUTS for c in alone),
              f"{inputs_count} inputs, seed {seed}: each input alone twice, transposed or padded: "
              f"{[(c['strided_inputs'], c['strided']) for c in alone]}")

# The first calls over many evaluations: one thread and other counts, each mode and eval under no_grad.
starts = []
for seed in range(200):
    judge = Recorder(seed, "signed")
    judge._plain_trials({}, {"strict_layout": True})
    starts.append((judge.calls[1]["threads"], judge.calls[1]["mode"]))
ones = sum(t == 1 for t, _ in starts)
check(60 <= ones <= 140, f"the first call on one thread about half the time: {ones} of 200")
check({t for t, _ in starts} - {1} <= set(PLAIN_THREADS) and len({t for t, _ in starts}) > 8,
      f"the first call's other counts are the cycle's: {sorted({t for t, _ in starts})}")
check({m for _, m in starts} == {None, "train", "grad", "train_grad"}, f"every start mode drawn: {({m for _, m in starts})}")

# A refusal excuses its own call alone: a kernel raising on several threads still meets one thread.
judge = Recorder(7, "signed", refuse_on_threads=True)
refused = judge._plain_trials({}, {"strict_layout": True})
for field, value in [("strided", layout) for layout in inputs.STRIDED_LAYOUTS] + \
                    [("mode", mode) for mode in model_state.CALL_MODES]:
    check(any(c[field] == value and c["threads"] == 1 for c in judge.calls if c["last"]),
          f"{value}: the one-thread call is made after its partner was refused")
check(len(refused) >= 6 and all(r.startswith("refused ") for r in refused), f"each refusal noted: {refused}")

# A reference that reads its training flag gives no training-mode outputs: gradients alone, still twice,
# and the two starts opposite in gradients alone.
judge = Recorder(3, "signed", reads_training_flag=True)
judge._plain_trials({}, {"strict_layout": True})
modes = [c["mode"] for c in judge.calls if c["mode"] and not c["first"]]
check(modes == [m for m in model_state.CALL_MODES if "train" not in m for _ in range(2)],
      f"a training-flag reference: the modes without training, twice each; got {modes}")
check(sorted(str(c["mode"]) for c in judge.calls if c["first"]) == ["None", "grad"],
      "a training-flag reference: one start in eval under no_grad, the other with gradients")

# On a GPU the thread count is never set: both calls on the runner's one, the second still mirrored.
judge = Recorder(5, "signed", cuda=True)
judge._plain_trials({}, {"strict_layout": True})
check({c["threads"] for c in judge.calls} == {1}, "on a GPU every call keeps one host thread")
check(sum(c["kind"] == inputs.mirrored("signed") for c in judge.calls) == len(inputs.STRIDED_LAYOUTS) +
      len(model_state.CALL_MODES) + 1, "on a GPU each last call is mirrored once")
check([c["first"] for c in judge.calls[:3]] == [True, True, False], "on a GPU the two first calls too")

sys.exit(finish("ok: the plain runner's calls"))
