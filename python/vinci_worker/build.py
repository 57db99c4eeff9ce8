"""The build step: static checks, then importing the candidate so its extensions compile.

It runs in a disposable process per candidate (a child forked from a build server), many in
parallel, before the candidate reaches a device worker; the extension cache it fills is what the
worker then loads without compiling.
"""
from __future__ import annotations

import json
import os
import sys
import time

from . import static_check
from .logs import trim_log


def build(candidate: str, task: str, cache_dir: str, policy: dict, scale: float = 1.0) -> dict:
    with open(candidate, encoding="utf-8", errors="replace") as f:
        source = f.read()
    task_source = ""
    if task:
        try:
            with open(task, encoding="utf-8", errors="replace") as f:
                task_source = f.read()
        except OSError:
            pass
    report = static_check.check_source(source, task_source, policy)
    static = {"kernel_names": report.kernel_names, "extension_functions": report.extension_functions,
              "uses_triton": report.uses_triton, "findings": report.warnings()}
    if any(f.reason == "no_model_new" for f in report.findings) and not any(
            f.reason == "syntax_error" for f in report.findings):
        return {"static": static, "ok": False, "class": "compile_error", "reason": "no_model_new",
                "message": "the candidate defines no class ModelNew"}
    verdict = report.verdict()
    if verdict is not None:
        cls = "compile_error" if verdict.reason == "syntax_error" else "rejected"
        where = f"line {verdict.line}: " if verdict.line else ""
        return {"static": static, "ok": False, "class": cls, "reason": verdict.reason,
                "message": f"{where}{verdict.message}"}
    from . import loader  # torch is imported only for candidates that pass the static checks

    cache = loader.ExtensionCache(os.path.join(cache_dir, "ext"), loader.toolchain_id())
    cache.install()
    t0 = time.perf_counter()
    try:
        module = loader.import_file(candidate, "vinci_candidate_build")
    except loader.BuildError as e:
        return {"static": static, "ok": False, "class": "compile_error", "reason": "build_failed",
                "message": trim_log(str(e)), "seconds": time.perf_counter() - t0}
    except SyntaxError as e:
        return {"static": static, "ok": False, "class": "compile_error", "reason": "syntax_error",
                "message": f"{e.msg} (line {e.lineno})"}
    except BaseException as e:  # SystemExit included: the module's code is the candidate's
        return {"static": static, "ok": False, "class": "compile_error", "reason": "import_failed",
                "message": f"importing the candidate raised {type(e).__name__}: {trim_log(str(e))}",
                "seconds": time.perf_counter() - t0}
    _construct(module, task, scale)
    return {"static": static, "ok": True, "seconds": time.perf_counter() - t0, "built": cache.built,
            "loaded": cache.loaded}


def _construct(module, task: str, scale: float) -> None:
    """Builds ModelNew once on the CPU, so extensions compiled in __init__ are cached too.

    Failures are left for the worker to report on the real device (a candidate may need a GPU to
    construct at all).
    """
    cls = getattr(module, "ModelNew", None)
    if not isinstance(cls, type) or not task:
        return
    try:
        from . import loader

        task_module, _ = loader.load_task(task, scale, "vinci_task_build")
        cls(*task_module.get_init_inputs())
    except BaseException:  # noqa: BLE001 - the worker classifies what really happens
        pass


REPORT = ".vinci-build-report.json"


def serve(cache_dir: str) -> int:
    """Answers build requests (JSON lines on stdin), one forked child per candidate.

    Importing torch costs seconds (tens of seconds on a small CPU), more than building a candidate
    whose extension is cached, so this process imports it once and forks: each child starts with
    torch loaded, runs one candidate's build in that candidate's scratch directory and its own
    process group, and exits. The candidate's code never runs in this process. A request is
    {"candidate", "task", "policy", "scale", "scratch", "log"}; the answers are {"child": pid} at
    once, then {"report": <build()'s result or null>, "status": "exit N" | "signal N"}.
    """
    from . import loader  # noqa: F401 - torch and the cache, imported before the first fork
    import signal

    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    proto.write(json.dumps({"ok": True, "pid": os.getpid()}) + "\n")
    proto.flush()
    for line in iter(sys.stdin.readline, ""):
        req = json.loads(line)
        report_path = os.path.join(req["scratch"], REPORT)
        pid = os.fork()
        if pid == 0:
            _build_child(req, cache_dir, report_path, proto.fileno())  # never returns
        proto.write(json.dumps({"child": pid}) + "\n")
        proto.flush()
        _, status = os.waitpid(pid, 0)
        try:
            os.killpg(pid, signal.SIGKILL)  # whatever the candidate left running
        except OSError:
            pass
        report = None
        try:
            with open(report_path, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, ValueError):
            pass
        how = f"exit {os.waitstatus_to_exitcode(status)}" if os.WIFEXITED(status) else f"signal {os.WTERMSIG(status)}"
        proto.write(json.dumps({"report": report, "status": how}) + "\n")
        proto.flush()
    return 0


def _build_child(req: dict, cache_dir: str, report_path: str, proto_fd: int) -> None:
    code = 1
    try:
        os.close(proto_fd)  # the candidate must not be able to answer for the server
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the server
        os.setpgid(0, 0)
        os.chdir(req["scratch"])
        os.environ["HOME"] = req["scratch"]
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        result = build(req["candidate"], req["task"], cache_dir, req.get("policy") or {}, req.get("scale", 1.0))
        tmp = report_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f)
        os.replace(tmp, report_path)
        code = 0
    except BaseException:  # noqa: BLE001 - the server reports a child without a report
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)
