"""The judge's wire on the Python side (python/vinci_worker/protocol.py), pinned to the fixtures the
C++ side reads too (tests/fixtures/judge_protocol/, tests/eval/judge_protocol_test.cpp): each fixture
read into its message and written back is the same JSON; a judge's raw reply is shaped to the wire
(fields the evaluator does not read left out, None left out); messages out of shape are refused with
the field named.

    python3 tests/eval/judge_protocol_test.py REPO_ROOT
"""
import copy
import json
import pathlib
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from checks import check, finish  # noqa: E402
from vinci_worker import protocol  # noqa: E402

FIXTURES = pathlib.Path(sys.argv[1]) / "tests" / "fixtures" / "judge_protocol"
MESSAGES = {
    "hello_request": protocol.HelloRequest, "hello_reply": protocol.HelloReply,
    "build_request": protocol.BuildRequest, "build_reply": protocol.BuildReply,
    "build_failure_reply": protocol.BuildReply,
    "baseline_request": protocol.BaselineRequest, "baseline_reply": protocol.BaselineReply,
    "evaluate_request": protocol.EvaluateRequest, "evaluate_reply": protocol.EvaluateReply,
    "evaluate_failure_reply": protocol.JudgeFailure,
}


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def refused(cls, message, field: str) -> bool:
    try:
        cls.from_dict(message)
    except protocol.MalformedMessage as e:
        return str(e).startswith(f"'{field}': ")
    return False


# Every fixture is one of the messages above, and each reads and writes back unchanged.
check(sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(MESSAGES), "a fixture without its message")
for name, cls in MESSAGES.items():
    wire = fixture(name)
    try:
        again = cls.from_dict(wire).to_dict()
        check(again == wire, f"{name} round trip: {json.dumps(again)}")
    except protocol.MalformedMessage as e:
        check(False, f"{name} refused: {e}")

# The judge's dispatch: a request gets its defaults; a reply keeps only the wire's fields.
op, req = protocol.judge_request({"op": "evaluate", "path": "/t.py", "candidate": "/c.py"})
check(op == "evaluate" and req["static"]["kernel_names"] == [] and req["eager_times"] == [] and
      req["calls_per_window"] == 1, f"evaluate request defaults: {req}")
raw = copy.deepcopy(fixture("evaluate_reply"))
raw.update(times=[0.02, 0.021], roofline_floor_ms=0.004, gpu_busy_ms=None, coverage=None)
raw["external"].update(check_windows=3, gpu_busy_ratio=0.9)
shaped = protocol.judge_reply("evaluate", raw)
expected = fixture("evaluate_reply")
del expected["coverage"]
check(shaped == expected, f"a judge's evaluate reply shaped: {json.dumps(shaped)}")
raw_baseline = dict(fixture("baseline_reply"), compile=None, compile_times=None)
shaped = protocol.judge_reply("baseline", raw_baseline)
check("compile" not in shaped and shaped["compile_times"] == [], f"a baseline without compile: {shaped}")
failure = protocol.judge_reply("evaluate", {"ok": False, "class": "timeout", "reason": "run_timeout", "message": "m",
                                            "signals": {}})
check(failure == {"ok": False, "class": "timeout", "reason": "run_timeout", "message": "m", "phase_seconds": {},
                  "warnings": [], "fatal": False}, f"a failure shaped: {failure}")

# Out of shape, with the field named.
try:
    protocol.judge_request({"op": "time_travel"})
    check(False, "an unknown op was taken")
except protocol.MalformedMessage as e:
    check(str(e) == "'op': unknown op 'time_travel'", str(e))
bent = [
    (protocol.EvaluateRequest, dict(fixture("evaluate_request"), candidate=None), "candidate"),
    (protocol.EvaluateRequest, dict(fixture("evaluate_request"), op="baseline"), "op"),
    (protocol.EvaluateRequest, dict(fixture("evaluate_request"), calls_per_window=True), "calls_per_window"),
    (protocol.BaselineRequest, dict(fixture("baseline_request"), config=[1]), "config"),
    (protocol.BuildRequest, dict(fixture("build_request"), policy={"torch_ops": 3}), "policy.torch_ops"),
    (protocol.HelloReply, {k: v for k, v in fixture("hello_reply").items() if k != "sandbox"}, "sandbox"),
    (protocol.BaselineReply, dict(fixture("baseline_reply"), eager_times=[0.1, "slow"]), "eager_times[1]"),
    (protocol.BaselineReply, dict(fixture("baseline_reply"), eager={"trials": 5}), "eager.median_ms"),
    (protocol.EvaluateReply, dict(fixture("evaluate_reply"), timing=None), "timing"),
    (protocol.EvaluateReply, dict(fixture("evaluate_reply"), speedup_eager_interval=[1.0]), "speedup_eager_interval"),
    (protocol.EvaluateReply, dict(fixture("evaluate_reply"), profile=[{"name": "k", "calls": "1", "total_us": 2.0}]),
     "profile[0].calls"),
    (protocol.EvaluateReply, dict(fixture("evaluate_reply"), ok=False), "ok"),
    (protocol.JudgeFailure, dict(fixture("evaluate_failure_reply"), phase_seconds={"load": "3 s"}),
     "phase_seconds.load"),
    (protocol.BuildReply, {"report": dict(fixture("build_reply")["report"], static={"findings": "none"})},
     "report.static.findings"),
]
for cls, message, field in bent:
    check(refused(cls, message, field), f"{cls.__name__} with a bent '{field}' was not refused by name")

sys.exit(finish("judge protocol: every fixture round-trips; bent messages are named"))
