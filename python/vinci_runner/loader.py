"""Loading problem files and candidates, and the load_inline hook that sends compiles out.

A candidate's `load_inline` call is not compiled where the candidate runs: the hook sends its
arguments (data) to the trusted side, which compiles them in a sandbox of their own, once per
distinct set of arguments, into an extension cache no candidate can write or even see, and answers
with the built library as a sealed memfd, which the hook loads in place, through /proc/self/fd: the
mapping the judge's sampler sees is that memfd, whose bytes nothing can change after the judge hashed
them. A candidate that compiles by other means does so in its own sandbox, for itself.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import inspect
import os
import sys
import types

import torch
import torch.utils.cpp_extension as cpp_extension

_original_load_inline = cpp_extension.load_inline
_load_inline_signature = inspect.signature(_original_load_inline)


class TaskError(Exception):
    """A problem file that cannot serve as a task (reason is an invalid_task reason code)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class BuildError(Exception):
    """A candidate extension that failed to compile; reason is the result's reason code."""

    def __init__(self, message: str, reason: str = "build_failed"):
        super().__init__(message)
        self.reason = reason


def load_inline_arguments(*args, **kwargs) -> dict:
    """The call's arguments, complete and in one canonical shape: what a compile is keyed by."""
    bound = _load_inline_signature.bind(*args, **kwargs)
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    arguments.update(arguments.pop("kwargs", None) or {})
    for transient in ("build_directory", "verbose", "keep_intermediates"):
        arguments.pop(transient, None)
    for k, v in list(arguments.items()):
        if isinstance(v, tuple):
            arguments[k] = list(v)
    return arguments


def _receive_library(reply: dict, name: str) -> str:
    """The path that loads the library the trusted side sent as a sealed memfd: /proc/self/fd/N. The
    descriptor stays open for the process's life, so the path never names another file."""
    fds = reply.get("fds") or []
    if len(fds) != 1:
        for fd in fds:
            os.close(fd)
        raise BuildError(f"the trusted side sent {len(fds)} libraries for {name}", "build_failed")
    return f"/proc/self/fd/{fds[0]}"


def install_compile_hook(compile_remote, wrap=None) -> None:
    """Routes load_inline through compile_remote(arguments) -> {"ok", "log"?, "reason"?} with the
    library as a descriptor; wrap sees every loaded module (the runner counts calls into extensions
    through it)."""

    def load_inline(*args, **kwargs):
        arguments = load_inline_arguments(*args, **kwargs)
        reply = compile_remote(arguments)
        if not reply.get("ok"):
            for fd in reply.get("fds") or []:
                os.close(fd)
            raise BuildError(reply.get("log") or "the extension did not build", str(reply.get("reason") or "build_failed"))
        path = _receive_library(reply, arguments["name"])
        if not arguments.get("is_python_module", True):
            torch.ops.load_library(path)
            return path
        module = _import_library(arguments["name"], path)
        return wrap(module) if wrap else module

    cpp_extension.load_inline = load_inline


def _import_library(name: str, path: str) -> types.ModuleType:
    """Imports an extension module from path, which need not end in a suffix importlib knows."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def import_file(path: str, module_name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # Triton and dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def scalable_minimums(module: types.ModuleType) -> dict:
    """The size constants a task lists in SCALABLE, each with the least value it may be scaled to."""
    spec = getattr(module, "SCALABLE", None) or {}
    return dict(spec) if isinstance(spec, dict) else {name: 1 for name in spec}


def apply_scale(module: types.ModuleType, scale: float, sizes: dict | None = None) -> dict:
    """Multiplies the size constants a task lists in SCALABLE (each at least its minimum), then sets
    the ones sizes names to its values (the judge's second shape); returns what changed, each as
    [the file's value, the new one]."""
    minimums = scalable_minimums(module)
    if (scale == 1.0 and not sizes) or not minimums:
        return {}
    changed = {}
    for name, minimum in minimums.items():
        value = getattr(module, name, None)
        if not isinstance(value, int) or isinstance(value, bool):
            raise TaskError("bad_scalable", f"SCALABLE names {name!r}, which is not an integer constant of the file")
        new = max(int(minimum), int(round(value * scale)))
        if sizes and name in sizes:
            new = max(int(minimum), int(sizes[name]))
        setattr(module, name, new)
        changed[name] = [value, new]
    return changed


def load_task(path: str, scale: float, module_name: str, sizes: dict | None = None) -> tuple[types.ModuleType, dict]:
    try:
        with open(path, "rb") as f:
            source = f.read().decode("utf-8")
        compile(source, path, "exec")
    except SyntaxError as e:
        raise TaskError("task_syntax", f"{path}:{e.lineno}: {e.msg}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TaskError("task_unreadable", f"{path}: {e}") from None
    try:
        module = import_file(path, module_name)
    except Exception as e:
        raise TaskError("task_import_failed", f"{path}: importing raised {type(e).__name__}: {e}") from None
    for symbol in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, symbol):
            raise TaskError("task_missing_symbol", f"{path}: defines no {symbol}")
    if not isinstance(module.Model, type) or not issubclass(module.Model, torch.nn.Module):
        raise TaskError("task_missing_symbol", f"{path}: Model is not an nn.Module subclass")
    return module, apply_scale(module, scale, sizes)


def candidate_module_name(path: str) -> str:
    return f"vinci_candidate_{os.path.basename(path).split('.')[0]}"
