"""The build step's sandboxed side: static checks of a candidate's source, then its import.

The build step's sandboxed side: the static checks of a candidate's source, then its import, so
that every extension it loads is compiled (by the trusted side) before a device runner needs it.
With static_only (CPU evaluation) it stops after the checks: there the candidate's own runner
imports it, and a candidate the checks reject never costs a runner's torch import.

The static report is the first message, sent before any of the candidate's code runs, so the
trusted side can take it at its word; everything after the import is the candidate's claim.
"""
from __future__ import annotations

import os
import sys
import time

from . import static_check
from .channel import Channel
from .logs import trim_log


def static_report(source: str, task_source: str, policy: dict) -> tuple[dict, dict | None]:
    """The static checks' report on a candidate's source and the failure they decide, if any."""
    report = static_check.check_source(source, task_source, policy)
    static = {"kernel_names": report.kernel_names, "extension_functions": report.extension_functions,
              "uses_triton": report.uses_triton, "findings": report.warnings(),
              "low_precision": static_check.is_low_precision_task(task_source)}
    verdict = report.verdict()
    failure = None
    if any(f.reason == "no_model_new" for f in report.findings) and not any(
            f.reason == "syntax_error" for f in report.findings):
        failure = {"class": "compile_error", "reason": "no_model_new", "message": "the candidate defines no class ModelNew"}
    elif verdict is not None:
        where = f"line {verdict.line}: " if verdict.line else ""
        failure = {"class": "compile_error" if verdict.reason == "syntax_error" else "rejected",
                   "reason": verdict.reason, "message": f"{where}{verdict.message}"}
    return static, failure


def run(channel: Channel, candidate: str, task: str, scale: float, policy: dict, static_only: bool = False) -> int:
    with open(candidate, encoding="utf-8", errors="replace") as f:
        source = f.read()
    task_source = ""
    if task:
        try:
            with open(task, encoding="utf-8", errors="replace") as f:
                task_source = f.read()
        except OSError:
            pass
    static, failure = static_report(source, task_source, policy)
    channel.send({"op": "static", "static": static, "failure": failure})
    if failure or static_only:
        return 0

    from . import loader  # torch is imported only for candidates that pass the static checks

    def compile_remote(arguments: dict) -> dict:
        channel.send({"op": "compile", "args": arguments})
        return channel.receive()  # the library comes as a descriptor (loader.install_compile_hook)

    loader.install_compile_hook(compile_remote)
    channel.send({"op": "importing"})
    t0 = time.perf_counter()
    try:
        module = loader.import_file(candidate, loader.candidate_module_name(candidate))
    except loader.BuildError as e:
        channel.send({"op": "imported", "ok": False, "class": "compile_error", "reason": e.reason,
                      "message": trim_log(str(e)), "seconds": time.perf_counter() - t0})
        return 0
    except SyntaxError as e:
        channel.send({"op": "imported", "ok": False, "class": "compile_error", "reason": "syntax_error",
                      "message": f"{e.msg} (line {e.lineno})"})
        return 0
    except BaseException as e:  # SystemExit included: the module's code is the candidate's
        channel.send({"op": "imported", "ok": False, "class": "compile_error", "reason": "import_failed",
                      "message": f"importing the candidate raised {type(e).__name__}: {trim_log(str(e))}",
                      "seconds": time.perf_counter() - t0})
        return 0
    _construct(loader, module, task, scale)
    channel.send({"op": "imported", "ok": True, "seconds": time.perf_counter() - t0})
    return 0


def _construct(loader, module, task: str, scale: float) -> None:
    """Builds ModelNew once on the CPU, so extensions compiled in __init__ are cached too. Failures
    are left for the runner to report on the real device (a candidate may need a GPU to construct)."""
    cls = getattr(module, "ModelNew", None)
    if not isinstance(cls, type) or not task:
        return
    try:
        task_module, _ = loader.load_task(task, scale, "vinci_task_build")
        cls(*task_module.get_init_inputs())
    except BaseException:  # noqa: BLE001 - the runner classifies what really happens
        pass


def main(control_fd: int, candidate: str, task: str, scale: float, policy: dict, static_only: bool = False) -> int:
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return run(Channel.from_fd(control_fd), candidate, task, scale, policy, static_only)
