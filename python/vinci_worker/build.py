"""The build step's trusted side: one sandboxed import per candidate, its compiles served.

The build step's trusted side: one sandboxed import per candidate, its compiles served from the
extension cache, a verdict only for what went wrong before a device ever sees the candidate.

Requests on stdin, one JSON object a line, each answered on stdout with its report; the shapes are
protocol.py's (BuildRequest, BuildReply), through which serve() reads and writes them. With
static_only the import stops after the static checks (CPU evaluation, where the candidate's runner
imports it). The candidate's code never runs in this process.
"""
from __future__ import annotations

import json
import os
import sys
import time

from vinci_runner.channel import ChannelClosed, ChannelTimeout, ProtocolError

from . import protocol
from .build_limits import BuildLimits
from .extensions import CompileService
from .sandbox import CANDIDATE_DIR, TASK_DIR, Launcher, describe_exit


def build(req: dict, launcher: Launcher, compiler: CompileService) -> dict:
    """The import runs without the GPU on a GPU host: its candidate code (module level and ModelNew's
    __init__) runs beside other candidates' timed windows and the reference's baselines, which a
    kernel of its own would slow (red-team round 36's helper contexts did it from inside a runner)."""
    t0 = time.monotonic()
    candidate, task = req["candidate"], req.get("task", "")
    inner_candidate = f"{CANDIDATE_DIR}/{os.path.basename(candidate)}"
    inner_task = f"{TASK_DIR}/{os.path.basename(task)}" if task else ""
    mounts = [(candidate, inner_candidate)] + ([(task, inner_task)] if task else [])
    built_before = len(compiler.built)
    try:
        with open(candidate, encoding="utf-8", errors="replace") as f:
            source = f.read()
    except OSError:
        source = ""  # a file the judge cannot read writes nothing, so builds nothing
    with compiler.writing(source):
        report = _import(req, launcher, compiler, inner_candidate, inner_task, mounts)
    if launcher.cuda and not report["ok"] and str(report.get("reason", "")).startswith("import_"):
        # The candidate's own code raised, died or hung, and may have needed the GPU this import
        # lacks: its runner imports it again on the device and says what really happens. A compile
        # failure or a static finding stands.
        report = {"static": report["static"], "ok": True}
    report["seconds"] = time.monotonic() - t0
    report["built"] = compiler.built[built_before:]
    return report


def _import(req: dict, launcher: Launcher, compiler: CompileService, inner_candidate: str, inner_task: str,
            mounts: list) -> dict:
    """The candidate imported in a sandbox of its own, its builds asked of compiler: the import's report."""
    proc = launcher.spawn(["import", "--control", "{control}", "--candidate", inner_candidate, "--task", inner_task,
                           "--scale", str(req.get("scale", protocol.TASK_SIZES)), "--policy", json.dumps(req.get("policy") or {})] +
                          (["--static-only"] if req.get("static_only") else []),
                          read_only_as=mounts, gpu=False,
                          cpu_seconds=int(req.get("cpu_seconds", 0)), address_space=int(req.get("address_space", 0)))
    report: dict = {"static": {}, "ok": False}
    timeout = float(req.get("import_timeout", 120))
    try:
        first = proc.ask(None, timeout)
        if first.get("op") != "static":
            raise ProtocolError("the first message was not the static report")
        report["static"] = first.get("static") or {}
        if first.get("failure"):
            report.update(first["failure"])
        elif req.get("static_only"):
            report["ok"] = True
        else:
            started = proc.ask(None, timeout)
            if started.get("op") != "importing":
                raise ProtocolError("expected the import to start")
            done = proc.ask(None, timeout, compiler=compiler)
            if done.get("op") != "imported":
                raise ProtocolError(f"unexpected message {str(done)[:200]}")
            report["ok"] = bool(done.get("ok"))
            if not report["ok"]:
                report.update({k: done.get(k, "") for k in ("class", "reason", "message")})
    except ChannelTimeout:
        report.update({"class": "timeout", "reason": "import_timeout",
                       "message": f"importing the candidate took longer than {timeout:.0f} s (compiles not counted)"})
    except ChannelClosed:
        cls, reason, words = describe_exit(proc.exit_status())
        report.update({"class": "compile_error" if reason == "exited" else cls, "reason": f"import_{reason}",
                       "message": f"the import {words}\n{proc.log.last_lines()}"})
    except ProtocolError as e:
        report.update({"class": "rejected", "reason": "protocol_violation", "message": f"the import process: {e}"})
    finally:
        proc.close()
        proc.log.save(req.get("log"))
    return report


def serve(cache_dir: str, sandbox_binary: str, cuda: bool, compile_timeout: float, limits: dict,
          build_limits: BuildLimits) -> int:
    os.nice(10)  # builds yield the cores to the judges, whose timing checks read wall clocks
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    launcher = Launcher(sandbox_binary, os.path.join(cache_dir, "scratch", f"build-{os.getpid()}"), cuda, limits)
    compiler = CompileService(launcher, os.path.join(cache_dir, "ext"), compile_timeout, build_limits)
    ready = protocol.BuildServerReady(pid=os.getpid(), sandbox=launcher.description)
    proto.write(json.dumps(ready.to_dict()) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = protocol.BuildRequest.from_dict(json.loads(line)).to_dict()
        except ValueError as e:  # not JSON, or a protocol.MalformedMessage
            report = {"ok": False, "class": "runtime_error", "reason": "protocol",
                      "message": f"a request out of protocol: {e}"}
        else:
            try:
                report = build(req, launcher, compiler)
            except Exception as e:  # a bug here must be reported, not kill the step silently
                report = {"ok": False, "class": "runtime_error", "reason": "build_error",
                          "message": f"{type(e).__name__}: {e}"}
        reply = protocol.BuildReply(protocol.BuildReport.from_dict(report))
        proto.write(json.dumps(reply.to_dict()) + "\n")
    return 0
