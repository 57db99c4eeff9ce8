"""Loading problem files and candidates, and the content-addressed extension cache.

Extensions are cached by the content of their load_inline call (sources, functions, flags) plus
the target arch, the compiler and torch, not by the candidate file: two candidates that carry
the same kernel source build it once, and the long-lived worker imports the built library
directly instead of re-running ninja.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import inspect
import json
import os
import subprocess
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
    """A candidate extension that failed to compile."""


def toolchain_id() -> str:
    """What a compiled extension depends on besides its source."""
    nvcc = ""
    if cpp_extension.CUDA_HOME:
        try:
            nvcc = subprocess.run([os.path.join(cpp_extension.CUDA_HOME, "bin", "nvcc"), "--version"],
                                  capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[-1]
        except (OSError, subprocess.SubprocessError, IndexError):
            nvcc = "no-nvcc"
    cxx = os.environ.get("CXX", "c++")
    try:
        cc = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        cc = cxx
    return f"torch={torch.__version__};cuda={torch.version.cuda};nvcc={nvcc};cxx={cc};" \
           f"arch={os.environ.get('TORCH_CUDA_ARCH_LIST', '')}"


class ExtensionCache:
    """Replaces torch.utils.cpp_extension.load_inline with a content-addressed, locked cache."""

    def __init__(self, root: str, toolchain: str, wrap=None):
        self.root = root
        self.toolchain = toolchain
        self.wrap = wrap            # called on every loaded module (the worker counts calls through it)
        self.built: list[str] = []  # keys compiled by this process
        self.loaded: list[str] = []

    def install(self) -> None:
        cpp_extension.load_inline = self.load_inline

    def key(self, arguments: dict) -> str:
        material = {k: v for k, v in arguments.items() if k not in ("build_directory", "verbose")}
        blob = json.dumps(material, sort_keys=True, default=str) + self.toolchain
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def load_inline(self, *args, **kwargs):
        bound = _load_inline_signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        extra = arguments.pop("kwargs", None) or {}
        arguments.update(extra)
        key = self.key(arguments)
        name = arguments["name"]
        build_dir = os.path.join(self.root, key)
        os.makedirs(build_dir, exist_ok=True)
        with open(os.path.join(self.root, key + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            library = os.path.join(build_dir, f"{name}.so")
            failure = os.path.join(build_dir, "FAILED")
            if os.path.exists(failure):
                with open(failure) as f:
                    raise BuildError(f.read())
            if os.path.exists(library) and arguments.get("is_python_module", True):
                module = _import_library(name, library)
            else:
                arguments["build_directory"] = build_dir
                arguments["verbose"] = False
                # A fresh process-wide version counter per name, so the library keeps its plain
                # name (name.so) whatever else this process loaded before.
                cpp_extension.JIT_EXTENSION_VERSIONER.entries.pop(name, None)
                try:
                    module = _original_load_inline(**arguments)
                except Exception as e:  # the compiler's output is in the message
                    text = str(e)
                    _atomic_write(failure, text)
                    raise BuildError(text) from None
                self.built.append(key)
        self.loaded.append(key)
        return self.wrap(module) if self.wrap and isinstance(module, types.ModuleType) else module


def _atomic_write(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _import_library(name: str, path: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
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


def apply_scale(module: types.ModuleType, scale: float) -> dict:
    """Shrinks the size constants a task lists in SCALABLE; returns what changed."""
    spec = getattr(module, "SCALABLE", None)
    if scale == 1.0 or not spec:
        return {}
    minimums = spec if isinstance(spec, dict) else {name: 1 for name in spec}
    changed = {}
    for name, minimum in minimums.items():
        value = getattr(module, name, None)
        if not isinstance(value, int) or isinstance(value, bool):
            raise TaskError("bad_scalable", f"SCALABLE names {name!r}, which is not an integer constant of the file")
        new = max(int(minimum), int(round(value * scale)))
        setattr(module, name, new)
        changed[name] = [value, new]
    return changed


def load_task(path: str, scale: float, module_name: str) -> tuple[types.ModuleType, dict]:
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
    return module, apply_scale(module, scale)
