"""Which builds get a precompiled torch/extension.h, and whether the flags it is precompiled with are
the ones load_inline's own build of main.cpp uses (GCC ignores a header made with other flags, and
the build silently takes the slow path).

The truth for the flags is the build.ninja that torch's load_inline writes for a real call, CPU and
CUDA, read back after its compile fails or succeeds; no compiler needs to finish for that, so the
test runs the same on a machine without nvcc or a GPU.

    python3 tests/eval/precompiled_headers_test.py REPO_ROOT
"""
import os
import shlex
import sys
import tempfile

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check_equal, finish  # noqa: E402
SCRATCH = tempfile.mkdtemp(prefix="vinci-pch-test-")
# torch resolves CUDA_HOME when cpp_extension is imported; a folder of our own makes the CUDA
# flavour's include path the same on every machine, with or without a toolkit.
CUDA_HOME = os.path.join(SCRATCH, "cuda")
os.makedirs(os.path.join(CUDA_HOME, "include"))
os.makedirs(os.path.join(CUDA_HOME, "bin"))
os.environ["CUDA_HOME"] = CUDA_HOME
os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
os.environ["MAX_JOBS"] = "1"
# The ninja file is all this test reads, so the compiler load_inline runs answers its version check
# and compiles nothing (a real compile of torch/extension.h would cost 20 s of CI).
STAND_IN = os.path.join(SCRATCH, "g++")
with open(STAND_IN, "w") as f:
    f.write('#!/bin/sh\n[ "$1" = --version ] && exec g++ --version\nexit 1\n')
os.chmod(STAND_IN, 0o755)
os.environ["CXX"] = STAND_IN

from vinci_runner.precompiled_header import load_inline_flags  # noqa: E402
from vinci_worker.precompiled_headers import PrecompiledHeaders, flavour  # noqa: E402


# Which builds get one, and which flavour.
check_equal("CPU sources", flavour({"cpp_sources": "x", "extra_cflags": ["-O3"]}), "cpu")
check_equal("CUDA sources", flavour({"cpp_sources": "x", "cuda_sources": "y", "extra_cflags": ["-O2"]}), "cuda")
check_equal("with_cuda=True, no .cu", flavour({"cpp_sources": "x", "with_cuda": True}), "cuda")
check_equal("with_cuda=False beside a .cu", flavour({"cpp_sources": "x", "cuda_sources": "y", "with_cuda": False}), "cpu")
check_equal("a candidate's own -D", flavour({"cpp_sources": "x", "extra_cflags": ["-DX=1"]}), None)
check_equal("-include", flavour({"cpp_sources": "x", "extra_cflags": ["-include", "/etc/passwd"]}), None)
check_equal("its own include folder", flavour({"cpp_sources": "x", "extra_include_paths": ["/tmp"]}), None)
check_equal("no implicit headers", flavour({"cpp_sources": "x", "no_implicit_headers": True}), None)
check_equal("flags not a list", flavour({"cpp_sources": "x", "extra_cflags": "-O3"}), None)
check_equal("with_cuda not a bool", flavour({"cpp_sources": "x", "with_cuda": "yes"}), None)
check_equal("extra_cuda_cflags are nvcc's alone", flavour({"cuda_sources": "y", "extra_cuda_cflags": ["-DX"]}), "cuda")


class HeadersBuiltInPlace(PrecompiledHeaders):
    """The real rule of when a header is made, with its sandboxed compile replaced by a file."""

    def __init__(self, root):
        super().__init__(launcher=None, ext_root=root, toolchain="g++", timeout_s=60)
        self.built = []

    def _build(self, flags, kind, key, final):
        self.built.append(flags)
        os.makedirs(os.path.join(final, "torch"))
        open(os.path.join(final, "torch", "extension.h.gch"), "w").close()


# A header is made for the second build of its flag list that asks for one, and then used by every build.
headers = HeadersBuiltInPlace(os.path.join(SCRATCH, "ext"))
os.makedirs(headers.root)
asks = []
for flags in (["-O2"], ["-O3"], ["-O2"], ["-O2"], ["-O3"]):
    with headers.folder({"cpp_sources": "x", "extra_cflags": flags}) as folder:
        asks.append(folder is not None)
check_equal("which builds found a header", asks, [False, False, True, True, True])
check_equal("headers made", headers.built, [["-O2"], ["-O3"]])
with headers.folder({"cpp_sources": "x", "extra_cflags": ["-DX=1"]}) as folder:
    check_equal("a candidate's own flags never get one", folder, None)


def ninja_cflags(build_dir: str) -> list[str]:
    with open(os.path.join(build_dir, "build.ninja"), encoding="utf-8") as f:
        for line in f:
            name, eq, value = line.partition(" = ")
            if eq and name == "cflags":
                return [f for f in shlex.split(value.strip()) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    raise AssertionError(f"no cflags line in {build_dir}/build.ninja")


import torch.utils.cpp_extension as cpp_extension  # noqa: E402

for label, cuda, extra in (("cpu", False, ["-O2"]), ("cuda", True, ["-O3", "-DNDEBUG"])):
    build = os.path.join(SCRATCH, f"real-{label}")
    os.makedirs(build)
    arguments = dict(name=f"probe_{label}", cpp_sources="int f();", extra_cflags=extra, build_directory=build,
                     functions=None, verbose=False)
    if cuda:
        arguments["cuda_sources"] = "int f() { return 1; }"
    try:
        cpp_extension.load_inline(**arguments)
    except Exception:  # noqa: BLE001 - only the ninja file it wrote matters, not whether it built
        pass
    work = os.path.join(SCRATCH, f"ours-{label}")
    os.makedirs(work)
    _, ours = load_inline_flags(extra, cuda, work)
    check_equal(f"{label} flags", ours, ninja_cflags(build))
    cuda_include = f"-isystem {CUDA_HOME}/include"
    joined = " ".join(ours)
    check_equal(f"{label} flags name CUDA's include folder", cuda_include in joined, cuda)

sys.exit(finish("precompiled headers: flavours and flags as load_inline builds them"))
