"""CUDA sources built first without their torch/extension.h includes (python/vinci_runner/compile.py).

Two parts. The rewrite and the retry rule, against hand-written cases. Then whole builds through
`python -m vinci_runner compile` and torch's real load_inline, with stand-in compilers that log
what they were given: a stand-in nvcc that fails a source using a name only torch/extension.h
would declare when that include is gone, and a stand-in g++ that compiles nothing but links a real
Python module of the name it is asked for. They check what a real nvcc would cost too much CI time
to show:
- a source that needs the full header still builds, as written, into NAME.so, which imports
  under the candidate's name (torch would otherwise call the second build NAME_v1);
- main.cpp is compiled once either way (ninja keeps it across the retry);
- only the second build's errors are reported when both fail;
- --as-written skips the lean build.

    python3 tests/eval/lean_cuda_headers_test.py REPO_ROOT
"""
import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import types

REPO = sys.argv[1]
sys.path.insert(0, f"{REPO}/python")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check_equal, failures, finish  # noqa: E402
SCRATCH = tempfile.mkdtemp(prefix="vinci-lean-cuda-test-")
CUDA_HOME = os.path.join(SCRATCH, "cuda")
os.makedirs(os.path.join(CUDA_HOME, "include"))
os.makedirs(os.path.join(CUDA_HOME, "bin"))
LOG = os.path.join(SCRATCH, "compilers.log")

from vinci_runner.compile import RETRY_NOTE, build, lean_arguments, worth_retrying  # noqa: E402


# --- the rewrite ---
FULL = "#include <torch/extension.h>\n#include <cuda_runtime.h>\n__global__ void k() {}\n"
check_equal("angle brackets", lean_arguments({"cuda_sources": FULL})["cuda_sources"],
            "\n#include <cuda_runtime.h>\n__global__ void k() {}\n")
check_equal("quotes and spaces", lean_arguments({"cuda_sources": '  # include "torch/extension.h"  // all\nint x;'}),
            {"cuda_sources": "\nint x;"})
check_equal("a list of sources", lean_arguments({"cuda_sources": ["int a;", FULL]})["cuda_sources"],
            ["int a;", "\n#include <cuda_runtime.h>\n__global__ void k() {}\n"])
check_equal("nothing to take out", lean_arguments({"cuda_sources": "#include <torch/types.h>\nint x;"}), None)
check_equal("a commented-out include", lean_arguments({"cuda_sources": "// #include <torch/extension.h>\n"}), None)
check_equal("another header of that name", lean_arguments({"cuda_sources": "#include <my/torch/extension.h>\n"}), None)
check_equal("C++ sources are left alone", lean_arguments({"cpp_sources": FULL}), None)
check_equal("sources not text", lean_arguments({"cuda_sources": [FULL, 3]}), None)
untouched = {"name": "m", "cpp_sources": FULL, "cuda_sources": FULL, "extra_cflags": ["-O3"]}
lean = lean_arguments(untouched)
check_equal("everything else is kept", {k: v for k, v in lean.items() if k != "cuda_sources"},
            {"name": "m", "cpp_sources": FULL, "extra_cflags": ["-O3"]})
check_equal("the caller's arguments are not changed", untouched["cuda_sources"], FULL)

# --- when a failed lean build is retried ---
check_equal("main.cpp failed", worth_retrying("ninja: build stopped\nFAILED: main.o \ng++ ..."), False)
check_equal("main.cpp failed, ninja 1.12", worth_retrying("FAILED: [code=1] main.o \n"), False)
check_equal("the .cu failed", worth_retrying("FAILED: cuda.cuda.o \n/usr/local/cuda/bin/nvcc ..."), True)
check_equal("both failed", worth_retrying("FAILED: main.o \nFAILED: cuda.cuda.o \n"), True)
check_equal("the link failed", worth_retrying("FAILED: m.so \n"), True)
check_equal("the module did not load", worth_retrying("undefined symbol: _ZN2at6Tensor4fooEv"), True)


# --- build() with a scripted load_inline ---
class Scripted:
    """A cpp_extension whose load_inline answers from a script, keeping torch's real versioner."""

    def __init__(self, *outcomes):
        import torch.utils.cpp_extension as real
        self.JIT_EXTENSION_VERSIONER = type(real.JIT_EXTENSION_VERSIONER)()
        self.outcomes = list(outcomes)
        self.calls = []

    def load_inline(self, **arguments):
        version = self.JIT_EXTENSION_VERSIONER.bump_version_if_changed(
            arguments["name"], [], [arguments["cuda_sources"]], "/b", True, False, True, False)
        self.calls.append((arguments["cuda_sources"], version))
        if not self.outcomes:
            raise AssertionError(f"load_inline called {len(self.calls)} times, more than scripted")
        outcome = self.outcomes.pop(0)
        if outcome != "ok":
            raise RuntimeError(outcome)


ARGS = {"name": "m", "cuda_sources": FULL}
LEAN = lean_arguments(ARGS)["cuda_sources"]
s = Scripted("ok")
build(ARGS, s)
check_equal("lean builds: one build", s.calls, [(LEAN, 0)])
s = Scripted("Error building extension 'm': FAILED: cuda.cuda.o \nerror: identifier torch::nn is undefined", "ok")
build(ARGS, s)
check_equal("lean fails in the .cu: built again as written, as version 0", s.calls, [(LEAN, 0), (FULL, 0)])
s = Scripted("FAILED: main.o \nerror in main.cpp")
try:
    build(ARGS, s)
    failures.append("a main.cpp failure did not raise")
except RuntimeError as e:
    check_equal("main.cpp fails: not retried", (len(s.calls), str(e)), (1, "FAILED: main.o \nerror in main.cpp"))
s = Scripted("FAILED: cuda.cuda.o \nlean error", "FAILED: cuda.cuda.o \nthe source's own error")
try:
    build(ARGS, s)
    failures.append("two failures did not raise")
except RuntimeError as e:
    check_equal("both fail: the error is the second build's", str(e), "FAILED: cuda.cuda.o \nthe source's own error")
s = Scripted("ok")
build({"name": "m", "cuda_sources": "int x;"}, s)
check_equal("nothing to take out: built once as written", s.calls, [("int x;", 0)])

# --- whole builds through torch's load_inline, with stand-in compilers ---
NVCC = os.path.join(CUDA_HOME, "bin", "nvcc")
with open(NVCC, "w") as f:
    f.write(f"""#!/bin/sh
if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
src= out=
while [ $# -gt 0 ]; do
  case "$1" in -c) src=$2; shift ;; -o) out=$2; shift ;; esac
  shift
done
if grep -q "torch/extension.h" "$src"; then kind=full; else kind=lean; fi
echo "nvcc $kind" >> {LOG}
if grep -q BROKEN "$src"; then echo "$src: error: expected a ';'" >&2; exit 1; fi
if [ $kind = lean ] && grep -q NEEDS_FULL "$src"; then
  echo "$src(3): error: identifier \\"NEEDS_FULL\\" is undefined" >&2; exit 1
fi
exec cc -c -x c /dev/null -o "$out"
""")
GXX = os.path.join(SCRATCH, "g++")
PYINC = sysconfig.get_paths()["include"]
with open(GXX, "w") as f:
    f.write(f"""#!/bin/sh
out= shared= compile=
for a in "$@"; do [ "$prev" = -o ] && out=$a; [ "$a" = -shared ] && shared=1; [ "$a" = -c ] && compile=1; prev=$a; done
if [ -z "$shared" ] && [ -z "$compile" ]; then exec g++ "$@"; fi  # torch asking about the compiler
if [ -n "$compile" ]; then echo "g++ $(basename "$out")" >> {LOG}; exec cc -c -x c /dev/null -o "$out"; fi
name=$(basename "$out" .so)
printf '#include <Python.h>\\nstatic struct PyModuleDef d = {{PyModuleDef_HEAD_INIT, "%s", 0, -1, 0}};\\nPyMODINIT_FUNC PyInit_%s(void) {{ return PyModule_Create(&d); }}\\n' "$name" "$name" > "$out.c"
echo "link $name" >> {LOG}
exec cc -shared -fPIC -I{PYINC} "$out.c" -o "$out"
""")
for path in (NVCC, GXX):
    os.chmod(path, 0o755)
ENV = dict(os.environ, CUDA_HOME=CUDA_HOME, CXX=GXX, TORCH_CUDA_ARCH_LIST="9.0", MAX_JOBS="1",
           PYTHONPATH=f"{REPO}/python", TORCH_EXTENSIONS_DIR=os.path.join(SCRATCH, "ext"))


def compile_(label, cuda_source, *flags):
    """Builds an extension named after label; (exit code, stderr, compiler log lines, library)."""
    open(LOG, "w").close()
    out = os.path.join(SCRATCH, label)
    os.makedirs(out)
    arguments_file = os.path.join(SCRATCH, f"{label}.json")
    with open(arguments_file, "w") as f:
        json.dump({"name": label, "cpp_sources": "int f();", "cuda_sources": cuda_source, "functions": None}, f)
    proc = subprocess.run([sys.executable, "-m", "vinci_runner", "compile", "--arguments", arguments_file,
                           "--out", out, *flags], env=ENV, capture_output=True, text=True, timeout=300)
    with open(LOG) as f:
        log = f.read().split("\n")[:-1]
    library = None
    if os.path.exists(os.path.join(out, "library")):
        with open(os.path.join(out, "library")) as f:
            library = os.path.join(out, f.read())
    return proc.returncode, proc.stderr, log, library


def imports_as(name, path):
    """As the runner imports a built extension (vinci_runner/loader.py): True, or why not."""
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as e:
        return str(e)
    return isinstance(module, types.ModuleType) and module.__name__ == name


rc, err, log, library = compile_("plain", "#include <torch/extension.h>\nint g() { return 1; }\n")
check_equal("plain: exit", rc, 0)
check_equal("plain: compilers", sorted(log), ["g++ main.o", "link plain", "nvcc lean"])
check_equal("plain: library", os.path.basename(library or ""), "plain.so")
check_equal("plain: no retry in the log", RETRY_NOTE in err, False)

rc, err, log, library = compile_("needs_full", "#include <torch/extension.h>\nint g() { return NEEDS_FULL; }\n")
check_equal("needs_full: exit", (rc, err[-600:] if rc else ""), (0, ""))
check_equal("needs_full: lean first, then as written, main.cpp once",
            [line for line in log if line.startswith(("nvcc", "g++"))], ["g++ main.o", "nvcc lean", "nvcc full"])
check_equal("needs_full: library", os.path.basename(library or ""), "needs_full.so")
check_equal("needs_full: the log says it was built again", RETRY_NOTE in err, True)
if library:
    check_equal("needs_full: imports under its name", imports_as("needs_full", library), True)

rc, err, log, library = compile_("broken", "#include <torch/extension.h>\nint g() { return BROKEN }\n")
check_equal("broken: fails", (rc != 0, library), (True, None))
check_equal("broken: reports the build as written", "NEEDS_FULL" not in err and "expected a ';'" in err, True)
check_equal("broken: both builds ran", [line for line in log if line.startswith("nvcc")], ["nvcc lean", "nvcc full"])

rc, err, log, library = compile_("as_written", "#include <torch/extension.h>\nint g() { return 1; }\n", "--as-written")
check_equal("--as-written: nvcc", [line for line in log if line.startswith("nvcc")], ["nvcc full"])
check_equal("--as-written: exit", rc, 0)

sys.exit(finish("lean CUDA headers: rewrite, retry rule and builds through load_inline as expected"))
