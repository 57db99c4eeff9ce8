"""The build step: static checks, then importing the candidate so its extensions compile.

It runs in a disposable process per candidate, many in parallel, before the candidate reaches a
device worker; the extension cache it fills is what the worker then loads without compiling.
"""
from __future__ import annotations

import json
import os
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


def main(args) -> int:
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    policy = json.loads(args.policy) if args.policy else {}
    result = build(args.candidate, args.task, args.cache, policy, args.scale)
    proto.write(json.dumps(result) + "\n")
    proto.flush()
    return 0
