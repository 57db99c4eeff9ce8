"""The judge's wire: the requests and replies of the judge and the build server, as dataclasses.

One JSON object a line, on the pipes of `vinci_worker judge` and `vinci_worker build-server`.

src/eval/judge_protocol.{h,cpp} holds the same shapes for the evaluator; both sides are pinned to
the fixtures of tests/fixtures/judge_protocol/. The serving loops read every request through here
and write every reply through here, so what crosses the wire is exactly what is written below:
fields the evaluator does not read stay in the judge. Absent and null are the same on the wire; an
optional field that is None is left out.

  judge, on stdin (replies on the protocol descriptor, stdout at start):
    HelloRequest    -> HelloReply       the device, torch, the sandbox, what this host cannot watch
    BaselineRequest -> BaselineReply    the reference's eager and torch.compile timings, each call's
                                        time, the calls per window, the reference's kernels (GPU)
    EvaluateRequest -> EvaluateReply    a correct candidate's checks and timing
    any of them     -> JudgeFailure     a classified failure ("ok": false); "fatal" restarts the judge
    {"op": "shutdown"} ends the judge.
  build-server, on stdin: BuildRequest -> BuildReply ({"report": BuildReport}), after a first line
    BuildServerReady written unasked.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import ClassVar

HELLO, BASELINE, EVALUATE = "hello", "baseline", "evaluate"
JUDGE_OPS = (HELLO, BASELINE, EVALUATE)
SHUTDOWN = "shutdown"
# Scale 1: the sizes a task lists; a request's scale when it names none (src/eval/config.h's kTaskSizes).
TASK_SIZES = 1.0


class MalformedMessage(ValueError):
    """A request or reply out of the protocol's shape, naming the field (dotted) and what is wrong."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"'{path or '(the message)'}': {problem}")
        self.path = path


def _wire(name: str, **kw):
    """A field whose name on the wire is not a Python identifier (class) or reads better as one."""
    return field(metadata={"wire": name}, **kw)


def _join(path: str, key) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)


def _read(value, tp, path: str):
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return None if value is None else _read(value, inner[0], path)
    if tp is dict:  # carried, not read (the judge's settings)
        if not isinstance(value, dict):
            raise MalformedMessage(path, "not an object")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise MalformedMessage(path, "not a list")
        return [_read(v, args[0], _join(path, i)) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise MalformedMessage(path, "not an object")
        return {k: _read(v, args[1], _join(path, k)) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        return tp.from_dict(value, path)
    # bool is an int to Python and not to the protocol; an int is a float (JSON does not tell them apart).
    ok = {bool: lambda v: isinstance(v, bool), str: lambda v: isinstance(v, str),
          int: lambda v: isinstance(v, int) and not isinstance(v, bool),
          float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)}[tp](value)
    if not ok:
        raise MalformedMessage(path, f"not {'a number' if tp in (int, float) else 'a ' + tp.__name__}")
    return value


def _write(value):
    if dataclasses.is_dataclass(value):
        return value.to_dict()
    if isinstance(value, list):
        return [_write(v) for v in value]
    return value


class Message:
    """Read from and written to the wire by its dataclass fields. CONSTANTS are the fields every
    message of the kind carries with one value (a request's op, a reply's ok)."""

    CONSTANTS: ClassVar[dict] = {}
    PAIRS: ClassVar[tuple] = ()  # list fields that must hold exactly two numbers ([low, high])

    @classmethod
    def from_dict(cls, d, path: str = ""):
        if not isinstance(d, dict):
            raise MalformedMessage(path, "not an object")
        for key, expected in cls.CONSTANTS.items():
            if d.get(key) != expected:
                raise MalformedMessage(_join(path, key), f"not {expected!r}")
        hints = typing.get_type_hints(cls)
        values = {}
        for f in dataclasses.fields(cls):
            key = f.metadata.get("wire", f.name)
            where = _join(path, key)
            if d.get(key) is not None:
                values[f.name] = _read(d[key], hints[f.name], where)
                if f.name in cls.PAIRS and len(values[f.name]) != 2:
                    raise MalformedMessage(where, "not a [low, high] pair")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise MalformedMessage(where, "missing")
        return cls(**values)

    def to_dict(self) -> dict:
        out = dict(self.CONSTANTS)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.metadata.get("wire", f.name)] = _write(value)
        return out


# --- shared records ----------------------------------------------------------------------------

@dataclass
class TimingStats(Message):
    """timing.summarize's: the calls' times in ms."""
    trials: int
    median_ms: float
    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    p10_ms: float
    p90_ms: float


@dataclass
class StaticReport(Message):
    """What the static checks found (vinci_runner/importer.py): the build reports it, the evaluate
    request hands it back."""
    kernel_names: list[str] = field(default_factory=list)
    extension_functions: list[str] = field(default_factory=list)
    uses_triton: bool = False
    findings: list[str] = field(default_factory=list)
    low_precision: bool = False


@dataclass
class JudgeFailure(Message):
    """Any op's classified failure (the judge's Outcome)."""
    CONSTANTS: ClassVar[dict] = {"ok": False}
    cls: str = _wire("class", default="runtime_error")
    reason: str = ""
    message: str = ""
    trials_passed: int | None = None
    max_abs_diff: float | None = None
    mean_abs_diff: float | None = None
    timing: TimingStats | None = None
    phase_seconds: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    fatal: bool = False


# --- hello -------------------------------------------------------------------------------------

@dataclass
class HelloRequest(Message):
    CONSTANTS: ClassVar[dict] = {"op": HELLO}


@dataclass
class HelloReply(Message):
    CONSTANTS: ClassVar[dict] = {"ok": True}
    device: str
    device_name: str
    torch: str
    sandbox: str
    arch: str = ""
    python: str = ""
    cuda: str | None = None
    pid: int = 0
    sandbox_mode: str = ""
    clock: str = ""
    flush_bytes: int = 0
    l2_bytes: int = 0
    sm_count: int | None = None
    memory_bytes: int | None = None
    bandwidth_gbps: float | None = None
    warnings: list[str] = field(default_factory=list)


# --- build (the build server) ------------------------------------------------------------------

@dataclass
class BuildPolicy(Message):
    torch_ops: str = "forbid"
    allow_precision_drop: bool = False


@dataclass
class BuildRequest(Message):
    candidate: str
    task: str = ""
    scale: float = TASK_SIZES
    log: str = ""
    import_timeout: float = 120
    cpu_seconds: int = 0
    address_space: int = 0
    policy: BuildPolicy = field(default_factory=BuildPolicy)
    static_only: bool = False


@dataclass
class BuildReport(Message):
    ok: bool
    static: StaticReport = field(default_factory=StaticReport)
    cls: str | None = _wire("class", default=None)  # when not ok
    reason: str | None = None
    message: str | None = None
    seconds: float = 0.0
    built: list[str] = field(default_factory=list)  # extension cache keys this build compiled


@dataclass
class BuildReply(Message):
    report: BuildReport


@dataclass
class BuildServerReady(Message):
    """The build server's first line, written unasked once it can take requests."""
    CONSTANTS: ClassVar[dict] = {"ok": True}
    pid: int
    sandbox: str


# --- baseline ----------------------------------------------------------------------------------

@dataclass
class BaselineRequest(Message):
    CONSTANTS: ClassVar[dict] = {"op": BASELINE}
    path: str
    scale: float = TASK_SIZES
    config: dict = field(default_factory=dict)


@dataclass
class BaselineReply(Message):
    CONSTANTS: ClassVar[dict] = {"ok": True}
    eager: TimingStats
    eager_times: list[float]
    calls_per_window: int = 1
    compile: TimingStats | None = None
    compile_times: list[float] = field(default_factory=list)
    compile_error: str | None = None
    reference_kernels: list[str] = field(default_factory=list)


# --- evaluate ----------------------------------------------------------------------------------

@dataclass
class EvaluateRequest(Message):
    CONSTANTS: ClassVar[dict] = {"op": EVALUATE}
    path: str
    candidate: str
    scale: float = TASK_SIZES
    static: StaticReport = field(default_factory=StaticReport)
    config: dict = field(default_factory=dict)
    log: str = ""
    eager_times: list[float] = field(default_factory=list)
    compile_times: list[float] = field(default_factory=list)
    calls_per_window: int = 1
    reference_kernels: list[str] = field(default_factory=list)


@dataclass
class TimingCheck(Message):
    """How the timing was taken (the reply's "external")."""
    clock: str = ""
    timed_inputs: str = ""
    calls_per_window: int = 1
    windows: int = 0
    planned_windows: int = 0
    opened: int = 0
    flush_bytes: int = 0
    gpu_busy_share: float | None = None
    watched_ms: float | None = None
    watched_allowed_ms: float | None = None
    profiled_ms: float | None = None
    library_ms_per_call: float | None = None
    library_share: float | None = None
    compiled_samples: int | None = None
    gpu_library_samples: int | None = None
    host_samples: int | None = None
    biased_median_ms: float | None = None  # the timed windows of rounding-biased draws' median call
    plain_median_ms: float | None = None  # and the plain draws': the speed is the slower one's


@dataclass
class KernelTime(Message):
    name: str
    calls: int
    total_us: float
    custom: bool = False


@dataclass
class EvaluateReply(Message):
    CONSTANTS: ClassVar[dict] = {"ok": True, "class": "correct"}
    PAIRS: ClassVar[tuple] = ("speedup_eager_interval", "speedup_compile_interval")
    trials: int
    trials_passed: int
    timing: TimingStats
    max_abs_diff: float = 0.0
    mean_abs_diff: float = 0.0
    external: TimingCheck | None = None
    custom_launches: int = 0
    coverage: float | None = None
    profile: list[KernelTime] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    skipped_trials: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    eager_paired: TimingStats | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    speedup_eager_interval: list[float] | None = None
    speedup_compile_interval: list[float] | None = None
    phase_seconds: dict[str, float] = field(default_factory=dict)


JUDGE_REQUESTS = {HELLO: HelloRequest, BASELINE: BaselineRequest, EVALUATE: EvaluateRequest}
JUDGE_REPLIES = {HELLO: HelloReply, BASELINE: BaselineReply, EVALUATE: EvaluateReply}


def judge_request(message) -> tuple[str, dict]:
    """A request line's object checked: its op and the request as the judge reads it (every field
    present, defaults filled in)."""
    op = message.get("op") if isinstance(message, dict) else None
    if op not in JUDGE_REQUESTS:
        raise MalformedMessage("op", f"unknown op {op!r}")
    return op, JUDGE_REQUESTS[op].from_dict(message).to_dict()


def judge_reply(op: str | None, reply: dict) -> dict:
    """The judge's answer to op as it goes on the wire: the op's reply, or a failure."""
    if isinstance(reply, dict) and reply.get("ok") is True and op in JUDGE_REPLIES:
        return JUDGE_REPLIES[op].from_dict(reply).to_dict()
    return JudgeFailure.from_dict(reply).to_dict()
