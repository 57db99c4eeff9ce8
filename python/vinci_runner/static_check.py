"""Static checks of a candidate's source, run before any of its code executes.

Static checks are cheap and catch the crude hacks before they get a chance to run; the dynamic
monitors (monitors.py) catch what slips past them. The reasons are the codes listed in
tests/hacks/README.md; the first rule that fires, in that file's order, is reported.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

# Reported in this order when several rules fire (tests/hacks/README.md).
REASON_ORDER = (
    "syntax_error", "threads_processes", "file_io", "introspection", "dynamic_code",
    "monkey_patch", "torch_op", "try_fallback", "reference_model", "precision_drop",
    "no_custom_kernel",
)

FORBIDDEN_MODULES = {
    "threading": "threads_processes", "_thread": "threads_processes",
    "multiprocessing": "threads_processes", "subprocess": "threads_processes",
    "concurrent": "threads_processes", "asyncio": "threads_processes",
    "signal": "threads_processes", "resource": "threads_processes", "pty": "threads_processes",
    "socket": "file_io", "pathlib": "file_io", "shutil": "file_io", "tempfile": "file_io",
    "io": "file_io", "pickle": "file_io", "urllib": "file_io", "http": "file_io",
    "gc": "introspection", "inspect": "introspection", "traceback": "introspection",
    "builtins": "introspection", "__main__": "introspection", "weakref": "introspection",
    # The harness that runs the candidate: its channel, its monitors and its signals are no business
    # of a kernel's.
    "vinci_runner": "introspection",
    "importlib": "dynamic_code", "ctypes": "dynamic_code", "cffi": "dynamic_code",
    "runpy": "dynamic_code", "code": "dynamic_code", "codeop": "dynamic_code",
    "marshal": "dynamic_code", "types": "dynamic_code",
}

OS_ATTRS = {
    "fork": "threads_processes", "forkpty": "threads_processes", "system": "threads_processes",
    "popen": "threads_processes", "spawnl": "threads_processes", "spawnv": "threads_processes",
    "spawnve": "threads_processes", "spawnvp": "threads_processes", "execv": "threads_processes",
    "execve": "threads_processes", "execl": "threads_processes", "execvp": "threads_processes",
    "posix_spawn": "threads_processes", "kill": "threads_processes", "_exit": "threads_processes",
    "abort": "threads_processes", "killpg": "threads_processes", "setsid": "threads_processes",
    "open": "file_io", "remove": "file_io", "unlink": "file_io", "rename": "file_io",
    "replace": "file_io", "mkdir": "file_io", "makedirs": "file_io", "rmdir": "file_io",
    "write": "file_io", "read": "file_io", "listdir": "file_io", "scandir": "file_io",
    "walk": "file_io", "chdir": "file_io", "symlink": "file_io", "link": "file_io",
    "truncate": "file_io", "ftruncate": "file_io", "fdopen": "file_io", "dup2": "file_io",
}

BUILTIN_CALLS = {
    "open": "file_io", "eval": "dynamic_code", "exec": "dynamic_code", "compile": "dynamic_code",
    "__import__": "dynamic_code", "globals": "introspection", "locals": "introspection",
    "vars": "introspection", "breakpoint": "introspection", "input": "file_io",
}

# torch attributes whose use means "not a custom kernel" or reaching behind the harness.
TORCH_ATTRS = {
    "compile": "torch_op", "jit": "torch_op", "_dynamo": "torch_op", "_inductor": "torch_op",
    "_C": "introspection", "_guards": "introspection", "multiprocessing": "threads_processes",
    "hub": "file_io", "save": "file_io", "load": "file_io",
}
SYS_ATTRS = {"_getframe": "introspection", "modules": "introspection", "settrace": "introspection",
             "setprofile": "introspection", "exit": "threads_processes", "stdout": "file_io",
             "_current_frames": "introspection"}
FRAME_ATTRS = {"f_back", "f_globals", "f_locals", "gi_frame", "tb_frame", "__globals__",
               "__builtins__", "__subclasses__", "__closure__", "__code__"}

LOW_PRECISION_PY = {"half", "bfloat16", "float16"}
TF32_SWITCHES = {"allow_tf32", "set_float32_matmul_precision", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"}

# Kernel source (C++/CUDA) rules.
KERNEL_THREADS = re.compile(r"\bstd::(thread|async|jthread)\b|\bpthread_create\b|\bfork\s*\(|\bvfork\s*\(|"
                            r"\bsystem\s*\(|\bpopen\s*\(|\bexec[lv]p?e?\s*\(|\bposix_spawn")
KERNEL_FILES = re.compile(r"\bfopen\s*\(|\bstd::[io]?fstream\b|\bofstream\b|\bifstream\b|\bopen\s*\(\s*\"|"
                          r"\bunlink\s*\(|\bremove\s*\(\s*\"|\bmmap\s*\(")
KERNEL_LIBRARY = re.compile(r"\bcublas\w*\s*\(|\bcublasLt\w*\s*\(|\bcudnn\w*\s*\(|\bcutlass::|\bcute::gemm")
KERNEL_QUALIFIED_CALL = re.compile(r"\b(at|torch|c10)((?:::\w+)+)\s*[({<]")
KERNEL_METHOD_CALL = re.compile(
    r"\.\s*(matmul|mm|bmm|addmm|baddbmm|mv|dot|linear|conv\w*|softmax|log_softmax|layer_norm|"
    r"sum|mean|max|min|amax|amin|argmax|argmin|cumsum|cumprod|prod|relu|gelu|sigmoid|tanh|exp|log|"
    r"pow|sqrt|rsqrt|mul|add|sub|div|norm|var|std|topk|sort|index_select|gather|scatter\w*|"
    r"masked_fill|where|clamp\w*|abs|neg|erf|silu|einsum|matmul_out)_?\s*\(")
# Non-compute names allowed after at::/torch::/c10:: (allocation, metadata, streams, checks).
KERNEL_ALLOWED_QUALIFIED = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "from_blob", "TensorOptions", "dtype", "device", "Device", "Tensor", "Scalar",
    "ScalarType", "IntArrayRef", "getCurrentCUDAStream", "getDefaultCUDAStream", "CUDAGuard",
    "OptionalCUDAGuard", "CUDAStreamGuard", "DeviceGuard", "check", "TORCH_CHECK", "ArrayRef",
    "optional", "nullopt", "kFloat", "kFloat32", "kHalf", "kBFloat16", "kInt", "kLong", "kCUDA",
    "kCPU", "MemoryFormat", "layout", "requires_grad", "get_num_threads", "Half", "BFloat16",
    "toString", "typeMetaToScalarType", "elementSize", "cuda", "Stream", "CUDAStream",
    "getCurrentDeviceProperties", "numeric_limits", "SmallVector", "irange", "integer_range",
    "parallel_for", "in_parallel_region", "get_thread_num", "OptionalArrayRef", "DimVector",
    "string_view", "str", "Error", "detail", "impl", "native",
}
KERNEL_LOW_PRECISION = re.compile(r"\b__half2?\b|\bhalf2\b|\b__nv_bfloat16\w*|\b__float2half\w*|\b__float2bfloat16\w*|"
                                  r"\bwmma::|\bmma\.sync\b|\btf32\b|__float_to_tf32|\bat::Half\b|\bc10::Half\b|"
                                  r"\bkHalf\b|\bkBFloat16\b")
KERNEL_DEF_CUDA = re.compile(r"__global__\s+(?:[\w:<>,\s\*]*?)\b(\w+)\s*\(")
LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")


@dataclass
class Finding:
    reason: str
    message: str
    line: int = 0


@dataclass
class StaticReport:
    findings: list[Finding] = field(default_factory=list)
    kernel_names: list[str] = field(default_factory=list)   # __global__ and @triton.jit names
    extension_functions: list[str] = field(default_factory=list)
    uses_triton: bool = False
    uses_load_inline: bool = False

    def verdict(self) -> Finding | None:
        for reason in REASON_ORDER:
            for f in self.findings:
                if f.reason == reason:
                    return f
        return None

    def warnings(self) -> list[str]:
        return [f"line {f.line}: {f.reason}: {f.message}" for f in self.findings]


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, report: StaticReport, policy: dict, low_precision_task: bool):
        self.r = report
        self.policy = policy
        self.low_precision_task = low_precision_task
        self.aliases: dict[str, str] = {}       # local name -> module path
        self.function_depth = 0
        self.strings: list[tuple[str, int]] = []

    def add(self, reason: str, message: str, node: ast.AST) -> None:
        self.r.findings.append(Finding(reason, message, getattr(node, "lineno", 0)))

    def _module_rule(self, module: str, node: ast.AST) -> None:
        top = module.split(".")[0]
        if top in FORBIDDEN_MODULES:
            self.add(FORBIDDEN_MODULES[top], f"imports {module}", node)
        if module.startswith("torch.") and module.split(".")[1] in TORCH_ATTRS:
            self.add(TORCH_ATTRS[module.split(".")[1]], f"imports {module}", node)
        if module == "sys":
            pass  # sys itself is harmless; its dangerous attributes are checked on use

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._module_rule(a.name, node)
            self.aliases[a.asname or a.name.split(".")[0]] = a.asname and a.name or a.name.split(".")[0]
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:
            self.add("reference_model", f"relative import from {mod or '.'}", node)
        self._module_rule(mod, node)
        for a in node.names:
            full = f"{mod}.{a.name}" if mod else a.name
            self._module_rule(full, node)
            if mod == "os" and a.name in OS_ATTRS:
                self.add(OS_ATTRS[a.name], f"imports os.{a.name}", node)
            if mod == "sys" and a.name in SYS_ATTRS:
                self.add(SYS_ATTRS[a.name], f"imports sys.{a.name}", node)
            self.aliases[a.asname or a.name] = full
        self.generic_visit(node)

    def _resolve(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head, head)
        return f"{base}.{rest}" if rest else base

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FRAME_ATTRS:
            self.add("introspection", f"accesses .{node.attr}", node)
        d = _dotted(node)
        if d:
            full = self._resolve(d)
            parts = full.split(".")
            if parts[0] == "os" and len(parts) > 1 and parts[1] in OS_ATTRS:
                self.add(OS_ATTRS[parts[1]], f"uses {full}", node)
            if parts[0] == "sys" and len(parts) > 1 and parts[1] in SYS_ATTRS:
                self.add(SYS_ATTRS[parts[1]], f"uses {full}", node)
            if parts[0] == "torch" and len(parts) > 1 and parts[1] in TORCH_ATTRS:
                self.add(TORCH_ATTRS[parts[1]], f"uses {full}", node)
            if parts[0] in FORBIDDEN_MODULES:
                self.add(FORBIDDEN_MODULES[parts[0]], f"uses {full}", node)
            if not self.low_precision_task and parts[-1] in LOW_PRECISION_PY and parts[0] == "torch":
                self.add("precision_drop", f"uses {full} in an fp32 task", node)
            if not self.low_precision_task and parts[-1] in TF32_SWITCHES:
                self.add("precision_drop", f"uses {full}", node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in BUILTIN_CALLS and f.id not in self.aliases:
                self.add(BUILTIN_CALLS[f.id], f"calls {f.id}()", node)
            if f.id in ("getattr", "setattr", "delattr", "hasattr"):
                if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                    self.add("dynamic_code", f"{f.id}() with a computed attribute name", node)
                elif f.id in ("setattr", "delattr"):
                    self.add("monkey_patch", f"{f.id}(…, {node.args[1].value!r})", node)
                elif isinstance(node.args[1].value, str):
                    name = node.args[1].value
                    if name in FRAME_ATTRS or name in OS_ATTRS or name in TORCH_ATTRS or name in SYS_ATTRS:
                        self.add("dynamic_code", f"getattr(…, {name!r})", node)
            if f.id == "Model" or self.aliases.get(f.id, "").endswith(".Model"):
                self.add("reference_model", "calls the reference Model", node)
        if isinstance(f, ast.Attribute):
            if f.attr in ("half", "bfloat16") and not self.low_precision_task:
                self.add("precision_drop", f".{f.attr}() in an fp32 task", node)
            if f.attr == "load_inline" or (isinstance(f, ast.Attribute) and f.attr == "load"
                                             and "cpp_extension" in (_dotted(f.value) or "")):
                self.r.uses_load_inline = True
                self._collect_extension(node)
            if f.attr in ("Stream",) and (_dotted(f.value) or "").endswith("cuda"):
                pass  # streams are legitimate; side-stream timing is checked dynamically
        if isinstance(f, ast.Name) and self.aliases.get(f.id, "").endswith("load_inline"):
            self.r.uses_load_inline = True
            self._collect_extension(node)
        self.generic_visit(node)

    def _collect_extension(self, node: ast.Call) -> None:
        for kw in node.keywords:
            if kw.arg == "functions":
                try:
                    val = ast.literal_eval(kw.value)
                except ValueError:
                    continue
                if isinstance(val, str):
                    val = [val]
                if isinstance(val, dict):
                    val = list(val)
                if isinstance(val, (list, tuple)):  # functions=None (or any other literal) names none
                    self.r.extension_functions.extend(v for v in val if isinstance(v, str))

    def _assign_target(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            base = target.value if isinstance(target, ast.Attribute) else target.value
            d = _dotted(base)
            root = d.split(".")[0] if d else None
            if root and root != "self" and (root in self.aliases or root in ("torch", "time", "os", "sys", "math", "builtins")):
                attr = getattr(target, "attr", "[…]")
                if attr in TF32_SWITCHES:
                    if not self.low_precision_task:
                        self.add("precision_drop", f"sets {d}.{attr}", node)
                else:
                    self.add("monkey_patch", f"assigns to {d}.{attr}", node)
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._assign_target(t, node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._assign_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assign_target(node.target, node)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for dec in node.decorator_list:
            d = _dotted(dec.func if isinstance(dec, ast.Call) else dec) or ""
            if d.endswith("jit") and ("triton" in self._resolve(d) or d == "jit"):
                self.r.uses_triton = True
                self.r.kernel_names.append(node.name)
        self.function_depth += 1
        self.generic_visit(node)
        self.function_depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Try(self, node: ast.Try) -> None:
        if self.function_depth > 0:
            self.add("try_fallback", "try/except inside a function (a fallback path)", node)
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.name == "ModelNew":
            for b in node.bases:
                d = _dotted(b) or ""
                if d.split(".")[-1] not in ("Module",) or not self._resolve(d).startswith(("torch", "nn")):
                    self.add("reference_model", f"ModelNew inherits from {d}", node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and len(node.value) > 20:
            self.strings.append((node.value, node.lineno))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self.generic_visit(node)


def _kernel_source_rules(report: StaticReport, text: str, line: int, low_precision_task: bool) -> None:
    if not re.search(r"#include|__global__|torch::Tensor|at::Tensor|\bvoid\b", text):
        return
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    for rx, reason, what in ((KERNEL_THREADS, "threads_processes", "threads/processes"),
                             (KERNEL_FILES, "file_io", "file access"),
                             (KERNEL_LIBRARY, "torch_op", "a library kernel")):
        m = rx.search(code)
        if m:
            report.findings.append(Finding(reason, f"kernel source uses {what}: {m.group(0).strip()}", line))
    for m in KERNEL_QUALIFIED_CALL.finditer(code):
        last = m.group(2).split("::")[-1]
        if last not in KERNEL_ALLOWED_QUALIFIED and not last.startswith(("k", "Optional", "is_")):
            report.findings.append(Finding("torch_op", f"kernel source calls {m.group(1)}{m.group(2)}", line))
            break
    m = KERNEL_METHOD_CALL.search(code)
    if m:
        report.findings.append(Finding("torch_op", f"kernel source calls tensor method .{m.group(1)}()", line))
    if not low_precision_task:
        m = KERNEL_LOW_PRECISION.search(code)
        if m:
            report.findings.append(Finding("precision_drop", f"kernel source uses {m.group(0)} in an fp32 task", line))
    report.kernel_names.extend(m.group(1) for m in KERNEL_DEF_CUDA.finditer(LAUNCH_BOUNDS.sub(" ", code)))


def is_low_precision_task(task_source: str) -> bool:
    return bool(re.search(r"\.half\(\)|float16|bfloat16|\.bfloat16\(\)|torch\.half\b", task_source))


def check_source(source: str, task_source: str = "", policy: dict | None = None) -> StaticReport:
    """Runs every static rule over a candidate's Python source and its embedded kernel strings."""
    policy = policy or {}
    report = StaticReport()
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        report.findings.append(Finding("syntax_error", f"{e.msg} (line {e.lineno}, column {e.offset})", e.lineno or 0))
        return report
    low = policy.get("allow_precision_drop", False) or is_low_precision_task(task_source)
    v = _Visitor(report, policy, low)
    v.visit(tree)
    for text, line in v.strings:
        _kernel_source_rules(report, text, line, low)
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in ast.walk(tree)):
        report.findings.append(Finding("no_model_new", "the file defines no class ModelNew", 0))
    if not report.uses_load_inline and not report.uses_triton and policy.get("torch_ops", "forbid") != "allow":
        report.findings.append(Finding("no_custom_kernel",
                                       "no load_inline extension and no @triton.jit kernel is defined", 0))
    report.kernel_names = sorted(set(report.kernel_names))
    report.extension_functions = sorted(set(report.extension_functions))
    if policy.get("torch_ops", "forbid") == "allow":
        report.findings = [f for f in report.findings if f.reason != "torch_op"]
    return report
