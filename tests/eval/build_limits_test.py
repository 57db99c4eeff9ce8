"""Extension builds are bounded and run only the toolchain (python/vinci_worker/build_limits.py,
extensions.py, python/vinci_runner/compile.py).

Two parts. First the allow-list of load_inline's flags and the arguments' types, against
hand-written cases, building nothing: the honest flags of the repository's solutions, corpora and
skills pass; flags that run a program, load a plugin, read a response file or name an output are
refused, as one word, as two, after '=', and smuggled through -Xcompiler, -Xptxas and -Wl,. A source
that #embeds, in any spelling, is refused, and an -l library that a folder holds only as a static
archive (the library must hold only code compiled from the sources).

Then, where a vinci-sandbox binary is given (or found in the build tree), bubblewrap runs and torch
imports, real sandboxed builds through CompileService with small limits: a memory bomb (#include of
/dev/zero), an output-size bomb (a 300 MiB initialised array), a disk bomb (the same array in a
48 MiB tmpfs), a CPU-time bomb (constexpr loops) and a wall-clock one. Each must end with its reason
in bounded time, leave no process and nothing large on disk; a failure is cached after its retry,
under the limits it met only. Then a library whose constructor would exit the build builds (it is
never loaded there), and a small extension builds, with its library the only file that came back.
A source whose inline asm .incbin's a host library is refused by vinci-as-guard, the build's
assembler (red team round 4 put OpenBLAS into its own library so); #embed and a static archive are
refused before a build. The small library, delivered as the judge delivers it (a sealed memfd),
cannot be written, truncated or grown, and loads in place as the runner loads it.

    python3 tests/eval/build_limits_test.py REPO_ROOT [VINCI_SANDBOX]
"""
import errno
import fcntl
import importlib.util
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

REPO = sys.argv[1]
sys.path.insert(0, f"{REPO}/python")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check_equal, failures, finish  # noqa: E402

from vinci_worker import build_failures  # noqa: E402
from vinci_worker.build_limits import (BuildLimits, failure_reason, refusal, unwritten_source,  # noqa: E402
                                        written_text)
from vinci_worker.precompiled_headers import COMMON_FLAG  # noqa: E402
from vinci_runner.logs import trim_log  # noqa: E402


def arguments(**extra):
    return {"name": "m", "cpp_sources": "int f();", "functions": None, **extra}


# --- the allow-list: allowed ---
# Every flag of tasks/solutions, tests/hacks, tests/threats, tests/adversarial, skills/ and python/
# (extra_cflags -O2; extra_cuda_cflags -O2, -O3, -Xptxas -v; extra_ldflags -lcublas), the precompiled
# header's common options, and what KernelBench-style answers use.
ALLOWED = {
    "extra_cflags": [["-O2"], ["-O3", "-march=native", "-mtune=native", "-ffast-math", "-funroll-loops", "-fopenmp"],
                     ["-O0"], ["-Os"], ["-Ofast"], ["-g"], ["-w"], ["-Wall", "-Wextra", "-Wno-unused-variable"],
                     ["-DNDEBUG"], ["-std=c++17"], ["-std=c++20"], ["-DBLOCK=256", "-D", "TILE=16", "-UNDEBUG"],
                     ["-mavx2", "-mfma", "-mavx512f", "-mno-red-zone", "-mprefer-vector-width=512"],
                     ["-fPIC", "-fno-math-errno", "-fvisibility=hidden", "-fopenmp-simd", "-fno-strict-aliasing"],
                     ["-pthread", "-I/usr/include", "-I", "/usr/include", "-isystem", "/usr/include"],
                     ["-Werror=return-type", "-Wframe-larger-than=4096"], [" -O3 "], []],
    "extra_cuda_cflags": [["-O2"], ["-O3"], ["-Xptxas", "-v"], ["--use_fast_math"], ["-use_fast_math"],
                          ["-lineinfo"], ["-Xptxas=-v,-O3", "--ptxas-options=--maxrregcount=64"],
                          ["-arch=sm_90a"], ["-arch", "sm_80"], ["--gpu-architecture=compute_90"],
                          ["-gencode=arch=compute_90,code=sm_90"],
                          ["-gencode", "arch=compute_90a,code=[sm_90a,compute_90a]"],
                          ["-maxrregcount=64"], ["--maxrregcount", "128"], ["--expt-relaxed-constexpr"],
                          ["--extended-lambda", "--expt-extended-lambda"], ["-res-usage"], ["-ftz=true"],
                          ["-prec-div=false", "-prec-sqrt=false", "-fmad=true"], ["-t", "4"], ["--threads=2"],
                          ["-Xcompiler", "-fopenmp"], ["-Xcompiler=-O3,-march=native", "--compiler-options", "-Wall"],
                          ["-DNDEBUG", "-U__CUDA_NO_HALF_OPERATORS__", "-std=c++17", "--std", "c++17"],
                          ["-Wno-deprecated-gpu-targets", "--default-stream", "per-thread"]],
    "extra_ldflags": [["-lcublas"], ["-lcublasLt", "-lcudart", "-lgomp", "-lstdc++"], ["-L/usr/local/cuda/lib64"],
                      ["-L", "/usr/lib", "-l", "m"], ["-fopenmp", "-pthread"],
                      ["-Wl,--as-needed", "-Wl,-O1", "-Wl,-rpath,/usr/local/cuda/lib64"]],
    "extra_include_paths": [["/usr/local/cuda/include"], ["include", "./third_party/x-1.0"]],
}
for key, lists in ALLOWED.items():
    for flags in lists:
        check_equal(f"{key}={flags} allowed", refusal(arguments(**{key: flags})), None)
for flag in ("-O", "-O0", "-O3", "-Os", "-Og", "-Ofast", "-march=native", "-mtune=native", "-ffast-math",
             "-funroll-loops", "-fopenmp", "-g", "-DNDEBUG", "-w", "-Wall", "-Wextra", "-std=c++17", "-std=c++20"):
    check_equal(f"{flag}: a common option of the precompiled header",
                (bool(COMMON_FLAG.fullmatch(flag)), refusal(arguments(extra_cflags=[flag]))), (True, None))
check_equal("load_inline's defaults, as the loader sends them",
            refusal({"name": "m", "cpp_sources": "x", "cuda_sources": None, "sycl_sources": None, "functions": ["f"],
                     "extra_cflags": None, "extra_cuda_cflags": None, "extra_sycl_cflags": None, "extra_ldflags": None,
                     "extra_include_paths": None, "with_cuda": None, "with_sycl": None, "is_python_module": True,
                     "with_pytorch_error_handling": True, "use_pch": False, "no_implicit_headers": False}), None)
check_equal("functions as a dict", refusal(arguments(functions={"f": "doc"}, cuda_sources=["a", "b"])), None)

# --- the allow-list: refused, (argument, flags) -> the start of the one line that names it ---
REFUSED = [
    ("extra_cflags", ["-wrapper", "/bin/sh"], "extra_cflags: -wrapper: runs a program"),
    ("extra_cflags", ["-O3", "-wrapper,/tmp/x"], "extra_cflags: -wrapper,/tmp/x: runs a program"),
    ("extra_cflags", ["-fplugin=/tmp/p.so"], "extra_cflags: -fplugin=/tmp/p.so: loads a compiler plugin"),
    ("extra_cflags", ["-fplugin-arg-p-x=1"], "extra_cflags: -fplugin-arg-p-x=1: loads a compiler plugin"),
    ("extra_cflags", ["-B/tmp"], "extra_cflags: -B/tmp: names a folder"),
    ("extra_cflags", ["-B", "/tmp"], "extra_cflags: -B: names a folder"),
    ("extra_cflags", ["-specs=/tmp/s"], "extra_cflags: -specs=/tmp/s: names a spec file"),
    ("extra_cflags", ["--specs", "/tmp/s"], "extra_cflags: --specs: names a spec file"),
    ("extra_cflags", ["@/tmp/flags"], "extra_cflags: @/tmp/flags: reads a command line from a file"),
    ("extra_cflags", ["-o", "/tmp/x"], "extra_cflags: -o: names an output path"),
    ("extra_cflags", ["-Wl,-plugin,/tmp/p.so"], "extra_cflags: -Wl,-plugin,/tmp/p.so: passes options to the linker"),
    ("extra_cflags", ["-Wa,--x"], "extra_cflags: -Wa,--x: passes options to the assembler"),
    ("extra_cflags", ["-Wp,-x"], "extra_cflags: -Wp,-x: passes options to the preprocessor"),
    ("extra_cflags", ["-Xlinker", "-x"], "extra_cflags: -Xlinker: passes options to the linker"),
    ("extra_cflags", ["-fdump-tree-all"], "extra_cflags: -fdump-tree-all: writes compiler dumps"),
    ("extra_cflags", ["-save-temps"], "extra_cflags: -save-temps: keeps the intermediate files"),
    ("extra_cflags", ["-fconstexpr-ops-limit=99999999999"], "extra_cflags: -fconstexpr-ops-limit=9999"),
    ("extra_cflags", ["-fmodule-mapper=|sh"], "extra_cflags: -fmodule-mapper=|sh: contains '|'"),
    ("extra_cflags", ["-fmodules-ts"], "extra_cflags: -fmodules-ts: is not on"),
    ("extra_cflags", ["-include", "/etc/passwd"], "extra_cflags: -include: is not on"),
    ("extra_cflags", ["-x", "c"], "extra_cflags: -x: is not on"),
    ("extra_cflags", ["-mllvm", "-x"], "extra_cflags: -mllvm: passes options to LLVM"),
    ("extra_cflags", ["-O3;touch /tmp/x"], "extra_cflags: -O3;touch /tmp/x: contains ';': torch writes flags"),
    ("extra_cflags", ["-DX=$(id)"], "extra_cflags: -DX=$(id): contains '$'"),
    ("extra_cflags", ["-O3 -wrapper /bin/sh"], "extra_cflags: -O3 -wrapper /bin/sh: contains ' '"),
    ("extra_cflags", ["-DX=`id`"], "extra_cflags: -DX=`id`: contains '`'"),
    ("extra_cflags", ["-D", "X;id"], "extra_cflags: -D X;id: 'X;id' contains ';'"),
    ("extra_cflags", ["-I", "-wrapper"], "extra_cflags: -I -wrapper: '-wrapper' is not a value"),
    ("extra_cflags", ["-D"], "extra_cflags: -D: needs a value after it"),
    ("extra_cuda_cflags", ["-ccbin", "/tmp/cc"], "extra_cuda_cflags: -ccbin: names the host compiler nvcc runs"),
    ("extra_cuda_cflags", ["-ccbin=/tmp/cc"], "extra_cuda_cflags: -ccbin=/tmp/cc: names the host compiler"),
    ("extra_cuda_cflags", ["--compiler-bindir=/tmp"], "extra_cuda_cflags: --compiler-bindir=/tmp: names the host"),
    ("extra_cuda_cflags", ["-Xcompiler", "-wrapper,/tmp/x"],
     "extra_cuda_cflags: -Xcompiler -wrapper,/tmp/x: '-wrapper' runs a program around every compiler pass "
     "(passed on to the host compiler)"),
    ("extra_cuda_cflags", ["-Xcompiler=-O3,-fplugin=/tmp/p.so"],
     "extra_cuda_cflags: -Xcompiler=-O3,-fplugin=/tmp/p.so: '-fplugin=/tmp/p.so' loads a compiler plugin"),
    ("extra_cuda_cflags", ["--compiler-options", "-B/tmp"], "extra_cuda_cflags: --compiler-options -B/tmp: '-B/tmp'"),
    ("extra_cuda_cflags", ["-Xcompiler", "-Wl,-plugin=/tmp/p.so"],
     "extra_cuda_cflags: -Xcompiler -Wl,-plugin=/tmp/p.so: '-Wl' is not on"),
    ("extra_cuda_cflags", ["-Xptxas", "-v,--output-file=/tmp/x"],
     "extra_cuda_cflags: -Xptxas -v,--output-file=/tmp/x: '--output-file=/tmp/x' names an output path"),
    ("extra_cuda_cflags", ["-Xlinker", "--x"], "extra_cuda_cflags: -Xlinker: passes options to the linker"),
    ("extra_cuda_cflags", ["-Xnvlink", "x"], "extra_cuda_cflags: -Xnvlink: passes options to nvlink"),
    ("extra_cuda_cflags", ["--options-file", "/tmp/f"], "extra_cuda_cflags: --options-file: reads a command line"),
    ("extra_cuda_cflags", ["-optf=/tmp/f"], "extra_cuda_cflags: -optf=/tmp/f: reads a command line from a file"),
    ("extra_cuda_cflags", ["--run"], "extra_cuda_cflags: --run: runs the built program"),
    ("extra_cuda_cflags", ["--keep-dir", "/tmp"], "extra_cuda_cflags: --keep-dir: keeps the intermediate files"),
    ("extra_cuda_cflags", ["-o=/tmp/x"], "extra_cuda_cflags: -o=/tmp/x: names an output path"),
    ("extra_cuda_cflags", ["-arch=sm_90;id"], "extra_cuda_cflags: -arch=sm_90;id: 'sm_90;id' contains ';'"),
    ("extra_cuda_cflags", ["-t", "4;id"], "extra_cuda_cflags: -t 4;id: '4;id' contains ';'"),
    ("extra_cuda_cflags", ["-fopenmp"], "extra_cuda_cflags: -fopenmp: is not on"),
    ("extra_ldflags", ["-Wl,-plugin=/tmp/p.so"], "extra_ldflags: -Wl,-plugin=/tmp/p.so: passes options to the linker"),
    ("extra_ldflags", ["-Wl,-rpath,/x,-plugin,/tmp/p.so"], "extra_ldflags: -Wl,-rpath,/x,-plugin,/tmp/p.so: passes"),
    ("extra_ldflags", ["-Wl,--wrap=malloc"], "extra_ldflags: -Wl,--wrap=malloc: passes options to the linker"),
    ("extra_ldflags", ["-fuse-ld=/tmp/ld"], "extra_ldflags: -fuse-ld=/tmp/ld: is not on"),
    ("extra_ldflags", ["-T", "/tmp/script.ld"], "extra_ldflags: -T: is not on"),
    ("extra_ldflags", ["-o", "/tmp/x.so"], "extra_ldflags: -o: names an output path"),
    # Round 55: NumPy's libnpymath.a linked through a relative folder the archive check could not follow.
    ("extra_ldflags", ["-L../../usr/lib/python3/dist-packages/numpy/_core/lib", "-lnpymath"],
     "extra_ldflags: -L../../usr/lib/python3/dist-packages/numpy/_core/lib: names a library folder by a relative"),
    ("extra_ldflags", ["-L", "lib", "-lnpymath"], "extra_ldflags: -L lib: 'lib' names a library folder by a relative"),
    ("extra_include_paths", ["/usr/include;id"], "extra_include_paths: '/usr/include;id' contains ';'"),
    ("extra_include_paths", ["-wrapper"], "extra_include_paths: '-wrapper' is not on"),
]
for key, flags, line in REFUSED:
    got = refusal(arguments(**{key: flags}))
    check_equal(f"{key}={flags} refused", (got or ("", ""))[0], "forbidden_flag")
    if got and not got[1].startswith(line):
        failures.append(f"{key}={flags}: the line {got[1]!r} does not start with {line!r}")
# --- what the library is made of: code compiled from the sources ---
EMBEDS = ['#embed "/usr/lib/x86_64-linux-gnu/libblas.so.3"\n', '  #  embed <x>\n', '#/* c */ embed "x"\n',
          '#/*\n*/embed "x"\n', '%:embed "x"\n', '??=embed "x"\n', '#em\\\nbed "x"\n', '#\\  \n embed "x"\n',
          'const char* s = "/*";\n#/**/embed "x"\n', '#if __has_embed("x")\n#endif\n']
for text in EMBEDS:
    check_equal(f"#embed refused: {text!r}", (refusal(arguments(cpp_sources=["int f();", text])) or ("",))[0],
                "forbidden_source")
check_equal("#embed in CUDA sources", (refusal(arguments(cuda_sources=EMBEDS[0])) or ("",))[0], "forbidden_source")
check_equal("#embed pasted into main.cpp by a docstring: a docstring that is code is refused first",
            (refusal(arguments(functions={"f": 'doc");\n#embed "x"\n//'})) or ("",))[0], "bad_arguments")
for text in ("int embed = 1;\n", "#define EMBED 1\n", "# include <embed.h>\n", "#embedding\n", "int embed_dim;\n"):
    check_equal(f"no #embed: {text!r}", refusal(arguments(cpp_sources=text)), None)
ARCHIVES = tempfile.mkdtemp(prefix="vinci-build-limits-archives-")
for name, body in (("libblasstatic.a", b"!<arch>\n" + b"x" * 64), ("libempty.a", b"!<arch>\n"),
                   ("libboth.a", b"!<arch>\n" + b"x" * 64), ("libboth.so", b"\x7fELF")):
    with open(os.path.join(ARCHIVES, name), "wb") as f:
        f.write(body)
for flags, dirs, want in ((["-lblasstatic"], [ARCHIVES], "forbidden_flag"),
                          (["-l", "blasstatic"], [ARCHIVES], "forbidden_flag"),
                          ([f"-L{ARCHIVES}", "-lblasstatic"], [], "forbidden_flag"),
                          (["-L", ARCHIVES, "-lblasstatic"], [], "forbidden_flag"),
                          (["-lempty"], [ARCHIVES], ""), (["-lboth"], [ARCHIVES], ""), (["-lblasstatic"], [], "")):
    got = refusal(arguments(extra_ldflags=flags), dirs)
    check_equal(f"extra_ldflags={flags} in {dirs}", (got or ("",))[0], want)
    if got and "libblasstatic.a is a static archive" not in got[1]:
        failures.append(f"a static archive's refusal does not name it: {got[1]!r}")
shutil.rmtree(ARCHIVES)
check_equal("the guard's refusal in a build's log", failure_reason(
          "vinci-as-guard: refused: /tmp/cc1.s holds the assembler directive .incbin (only code ...)", BuildLimits(), True),
          ("forbidden_source", "[the assembler guard refused a source of the build: the library must hold only code "
                               "compiled from the sources (forbidden_source)]"))

check_equal("a header of torch's kernel folders, which builds see empty", failure_reason(
          "In file included from main.cpp:2:\n.../torch/include/c10/util/Half.h:8:10: fatal error: ATen/cpu/vec/vec_half.h: "
          "No such file or directory\ncompilation terminated.", BuildLimits(), True),
          ("forbidden_source", "[ATen/cpu/vec/vec_half.h: torch's kernel implementations are not the extension API, and "
                               "builds do not see them: the library must hold only code compiled from the candidate's own "
                               "sources (forbidden_source)]"))
check_equal("another header that is missing", failure_reason("main.cpp:2:10: fatal error: nothere.h: No such file or directory",
                                                             BuildLimits(), True), ("build_failed", ""))
check_equal("the build's verdict leads its trimmed log", trim_log(
          "main.cpp:9: error: one\n" * 50 + "[ATen/native/x.h: hidden (forbidden_source)]").splitlines()[0],
          "[ATen/native/x.h: hidden (forbidden_source)]")

check_equal("use_pch=True", refusal(arguments(use_pch=True)),
            ("forbidden_flag", "use_pch=True: torch would build its own header into torch's folder"))
check_equal("65 flags", refusal(arguments(extra_cflags=["-O2"] * 65))[0], "forbidden_flag")

# --- the arguments' types ---
for label, args in (("not a mapping", ["m"]), ("no name", {"cpp_sources": "x"}),
                    ("a name that is not an identifier", arguments(name="m; rm")),
                    ("a name of 101 characters", arguments(name="m" * 101)),
                    ("a name not in ASCII", arguments(name="mé")),
                    ("no cpp_sources", {"name": "m"}), ("sources not text", arguments(cpp_sources=["x", 3])),
                    ("flags as one string", arguments(extra_cflags="-O3")),
                    ("a flag that is not text", arguments(extra_cflags=["-O3", 3])),
                    ("with_cuda not a bool", arguments(with_cuda="yes")),
                    ("functions not text", arguments(functions={"f": 1})),
                    ("SYCL sources", arguments(sycl_sources="x")), ("SYCL flags", arguments(extra_sycl_cflags=["-O3"])),
                    ("build_directory", arguments(build_directory="/tmp/x")),
                    ("an argument load_inline lacks", arguments(wrapper="/bin/sh"))):
    check_equal(f"{label}: bad_arguments", (refusal(args) or ("",))[0], "bad_arguments")

# --- what a failed build's log says about the limit it met ---
LIMITS = BuildLimits(memory_bytes=1 << 30, address_space_bytes=4 << 30, cpu_seconds=9, scratch_bytes=48 << 20,
                     output_bytes=64 << 20)
check_equal("as killed by RLIMIT_FSIZE", failure_reason(
          "c++: internal compiler error: File size limit exceeded signal terminated program as", LIMITS, True),
          ("build_output_size", "[a tool of the build ran out of room: it has 67108864 bytes for any one file it writes "
                                "(build_output_size)]"))
check_equal("a full tmpfs", failure_reason("/usr/bin/ld: final link failed: No space left on device", LIMITS, True),
            ("build_disk", "[a tool of the build ran out of room: it has a private tmpfs of 50331648 bytes to work in "
                           "(build_disk)]"))
check_equal("cc1plus at RLIMIT_AS", failure_reason(
          "cc1plus: out of memory allocating 1073741840 bytes after a total of 610304 bytes", LIMITS, True),
          ("build_memory", "[a tool of the build ran out of room: it has 4294967296 bytes of address space per process "
                           "(build_memory)]"))
check_equal("out of memory where no RLIMIT_AS applies", failure_reason("virtual memory exhausted", LIMITS, False)[1],
            "[a tool of the build ran out of room: it has the machine's memory (build_memory)]")
check_equal("a compile error", failure_reason("main.cpp:1:10: error: expected ';'", LIMITS, True), ("build_failed", ""))

# --- real sandboxed builds ---
SANDBOX = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "build", "src", "eval", "vinci-sandbox")
SMALL = ('#include <Python.h>\nstatic PyModuleDef d = {PyModuleDef_HEAD_INIT, "NAME", nullptr, -1, nullptr};\n'
         'PyMODINIT_FUNC PyInit_NAME(void) { return PyModule_Create(&d); }\n')
SPIN = ("constexpr int spin(int seed) {\n  int x = seed;\n  for (int i = 0; i < 1000; ++i)\n"
        "    for (int j = 0; j < 1000; ++j) x = (x + j) & 255;\n  return x;\n}\n" +  # ~1 s of cc1plus each
        "\n".join(f'static_assert(spin({k}) >= 0, "");' for k in range(1000)))
BIG = "__attribute__((used)) static char big[300 << 20] = {1};\n"  # 300 MiB of .data, 1 byte of source


# Sources must be written in the candidate's file (red-team rounds 39-43): a source's logical lines (read
# as the compiler reads them: continued lines joined, whitespace collapsed) are covered by the fewest
# pieces, each a run of lines one string literal of the file holds in that order; lines no literal
# holds count their characters, each piece beyond a source's first PIECE_CHARS (16), flags that are no
# literal their own, and more than UNWRITTEN_SOURCE_CHARS (2,048) over all of a file's builds are refused.
def why(arguments: dict, written, spent: int = 0) -> str:
    return unwritten_source(arguments, written, spent)[0] or ""


FILE = ('K = """\n#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) {\n  return x;\n}\n"""\n'
        'B = 64\nD = f"#define BLOCK {B}"\n')
# A file too deep for Python's parser writes nothing, however the parser fails (red-team round 46:
# RecursionError from 3,000 terms, which the judge did not catch): its sources are all unwritten.
DEEP = written_text("x = " + "+".join(["1"] * 100_000) + "  # '1+1'\n")
check_equal("a file the parser cannot take writes nothing", (DEEP.literals, DEEP.lines.pieces(["1+1"])),
            (frozenset(), written_text("def f(:\n").lines.pieces(["1+1"])))
WRITTEN = written_text(FILE)
check_equal("written: the literal's lines are one piece, whitespace collapsed",
            WRITTEN.lines.pieces(["#include <torch/extension.h>", "torch::Tensor f(torch::Tensor x) {", "return x;", "}"]),
            (1, 0, None))
check_equal("written: every literal whole, stripped, an f-string's parts too", WRITTEN.literals >= {
          "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) {\n  return x;\n}", "#define BLOCK"}, True)
check_equal("written: a file that does not parse writes nothing",
            written_text("def f(:\n").lines.pieces(["}"]) + (written_text("def f(:\n").literals,), (0, 1, "}", frozenset()))
source = "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) {\n    return   x;\n}\n#define BLOCK 64\n"
check_equal("unwritten: the file's own lines, reindented, and one formatted line (16 characters)",
            unwritten_source({"name": "m", "cpp_sources": [source]}, WRITTEN), (None, 16))
pasted = "".join(f"static const int table_{i} = {i * 7919 % 1000};\n" for i in range(100))  # 3,176 characters
check_equal("unwritten: 100 generated lines are refused, counted with the formatted one (3,176 + 16)",
            why({"name": "m", "cpp_sources": source + pasted}, WRITTEN).startswith("cpp_sources: 3192 characters"), True)
byte_lines = "".join(f'asm(".byte 0x{i % 256:02x}");\n' for i in range(120))  # 120 lines of 18 characters
check_equal("unwritten: .byte lines made at import (2,160 characters)",
            "characters of sources and flags" in why({"name": "m", "cuda_sources": byte_lines}, WRITTEN), True)
check_equal("unwritten: under the bound (113 such lines, 2,034 characters) passes",
            why({"name": "m", "cuda_sources": byte_lines[:113 * 19]}, WRITTEN), "")
check_equal("unwritten: the bound is the file's: a second build of 1,800 after one of 256 is refused",
            why({"name": "m", "cuda_sources": byte_lines[:100 * 19]}, WRITTEN, spent=256).startswith("cuda_sources: 2056"),
            True)
# Round 40's dictionaries: every line the source uses is in the file, but not in the file's order.
words = [f"word_{i:04d} +" for i in range(300)]  # 300 lines of 11 characters, 3,300 in all
DICTIONARY = "W = " + repr("\n".join(words)) + "\n"
shuffled = "\n".join(words[(i * 7) % 300] for i in range(300))
check_equal("unwritten: the file's own lines in its own order pass",
            why({"name": "m", "cpp_sources": "\n".join(words)}, written_text(DICTIONARY)), "")
check_equal("unwritten: the same lines, one a line, reordered: 300 pieces, 299 x 16 = 4,784 characters",
            why({"name": "m", "cpp_sources": shuffled}, written_text(DICTIONARY)).startswith("cpp_sources: 4784 characters"),
            True)
pieces = "P = " + repr("\n".join(f"{c}\\" for c in "abcdefghijklmnopqrstuvwxyz_ ;(){}=+*0123456789")) + "\n"
spelled = "".join(f"{c}\\\n" for c in "int table_0 = 1;\n" * 150)  # a logical line of 2,400 characters
check_equal("unwritten: characters joined by continuations are read as the compiler reads them",
            why({"name": "m", "cpp_sources": spelled}, written_text(pieces)).startswith("cpp_sources: "), True)


def de_bruijn(k: int, n: int) -> list[int]:
    """The order-n de Bruijn sequence over k symbols (every run of n symbols once), made cyclic-free."""
    a, out = [0] * k * n, []

    def walk(t: int, p: int) -> None:
        if t > n:
            if n % p == 0:
                out.extend(a[1:p + 1])
        else:
            a[t] = a[t - p]
            walk(t + 1, p)
            for j in range(a[t - p] + 1, k):
                a[t] = j
                walk(t + 1, t)
    walk(1, 1)
    return out + out[:n - 1]


# Round 43: literals holding every run of 3 of 16 line kinds (an order-3 de Bruijn sequence), so every
# line of a source made of those kinds stood in a written run of 3; the source's order is its content.
COVERING = "C = " + repr("\n".join(f"H{x}+" for x in de_bruijn(16, 3))) + "\n"
drawn = random.Random(0).choices(range(16), k=1200)
check_equal("unwritten: a source chained from runs of 3 of a covering literal is refused by its pieces",
            why({"name": "m", "cpp_sources": "\n".join(f"H{x}+" for x in drawn)}, written_text(COVERING)).startswith(
                "cpp_sources: "), True)
check_equal("unwritten: ... while a stretch of the literal, copied whole, is one piece",
            why({"name": "m", "cpp_sources": "\n".join(f"H{x}+" for x in de_bruijn(16, 3)[100:1300])},
                written_text(COVERING)), "")
# Flags too (red-team round 41: 10.7 KB of a library's machine code in 60 -D values read at import):
# a flag that is no literal of the file counts its characters with the unwritten source lines.
FLAGGED = written_text('F = ["-O3", "-march=native"]\nN = 64\nG = f"-DBLOCK={N}"\n')
check_equal("flags: the file's own literals pass", why(
          {"name": "m", "cpp_sources": "", "extra_cflags": ["-O3", " -march=native"]}, FLAGGED), "")
check_equal("flags: a formatted -D (11 characters) passes within the bound", unwritten_source(
          {"name": "m", "cpp_sources": "", "extra_cflags": ["-O3", "-DBLOCK=64"]}, FLAGGED), (None, 10))
carried = [f"-DVK{i:02d}=0" + "Ab9_" * 62 for i in range(9)]  # 9 flags of 256 characters: 2,304
refused_flags = why({"name": "m", "cpp_sources": "", "extra_cflags": carried}, FLAGGED)
check_equal("flags: -D values made at import are refused (2,304 characters), the first named",
            refused_flags.startswith("extra_cflags: 2304 characters") and "-DVK00=0Ab9_" in refused_flags, True)
check_equal("flags: ... in nvcc's flags, link flags and include paths alike", all(
          why({"name": "m", "cpp_sources": "", key: carried}, FLAGGED).startswith(f"{key}: 2304")
          for key in ("extra_cuda_cflags", "extra_ldflags", "extra_include_paths")), True)
check_equal("flags: counted with the unwritten source lines (1,800 + 256 > 2,048)", why(
          {"name": "m", "cpp_sources": byte_lines[:100 * 19], "extra_cflags": carried[:1]}, FLAGGED).startswith(
              "cpp_sources: 2"), True)
check_equal("functions: a docstring that closes torch's string is refused",
            refusal(arguments(functions={"f": 'x");\n}\nstatic void g() {(void)("'}))[0], "bad_arguments")
check_equal("functions: a name that is no identifier is refused",
            refusal(arguments(functions=["f(); int x"]))[0], "bad_arguments")
check_equal("functions: plain docstrings pass", refusal(arguments(functions={"f": "adds two tensors"})), None)


def sandboxed_builds_possible() -> str:
    """'' when the real builds can run here, else why not."""
    if not os.access(SANDBOX, os.X_OK):
        return f"no sandbox binary at {SANDBOX}"
    if importlib.util.find_spec("torch") is None:
        return "torch is not importable"
    probe = subprocess.run([SANDBOX, "--probe"], capture_output=True, text=True, timeout=60).stdout
    return "" if '"mode":"bwrap"' in probe else f"the sandbox has no private tmpfs here: {probe.strip()}"


def processes_naming(text: str) -> list[str]:
    """Command lines of live processes that mention text (the test's own folder)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(pid) != os.getpid() and text in cmdline:
            found.append(cmdline[:200])
    return found


def bytes_under(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files
               if not os.path.islink(os.path.join(d, f)))


def build(service, label: str, name: str, source: str, bound_s: float) -> dict:
    """One compile through the service; checks it ended within bound_s and left nothing behind."""
    t0 = time.monotonic()
    result = service.compile({"name": name, "cpp_sources": source, "functions": None, "no_implicit_headers": True,
                              "extra_cflags": ["-O1"]})
    seconds = time.monotonic() - t0
    print(f"{label}: {result.get('reason') or 'built'} in {seconds:.1f} s")
    if seconds > bound_s:
        failures.append(f"{label}: took {seconds:.1f} s, more than {bound_s} s")
    check_equal(f"{label}: processes left", processes_naming(ROOT), [])
    left = bytes_under(ROOT)
    if left > (1 << 20) + (os.path.getsize(result["path"]) if result.get("ok") else 0):
        failures.append(f"{label}: {left} bytes left under {ROOT} (the library aside)")
    return result


def expect_failure(service, label, name, source, reason, limit_text, bound_s):
    result = build(service, label, name, source, bound_s)
    check_equal(f"{label}: reason", (result["ok"], result.get("reason")), (False, reason))
    if limit_text not in result.get("log", ""):
        failures.append(f"{label}: the log does not name the limit ({limit_text!r}): {result.get('log', '')[-400:]!r}")


why_not = sandboxed_builds_possible()
if why_not:
    print(f"sandboxed builds skipped: {why_not}")
else:
    from vinci_worker.extensions import CompileService
    from vinci_worker.sandbox import Launcher

    ROOT = tempfile.mkdtemp(prefix="vinci-build-limits-test-")
    launcher = Launcher(SANDBOX, os.path.join(ROOT, "scratch"), False, {"max_pids": 1024})
    # The sandboxed python holds ~0.65 GB with torch imported; an honest small build stays near it.
    TIGHT = BuildLimits(memory_bytes=1536 << 20, cpu_seconds=8, scratch_bytes=48 << 20, output_bytes=64 << 20)
    service = CompileService(launcher, os.path.join(ROOT, "ext"), 120, TIGHT)
    expect_failure(service, "memory bomb", "zero", '#include "/dev/zero"\n', "build_memory",
                   "more than its limit of 1610612736", 60)
    roomy_disk = CompileService(launcher, os.path.join(ROOT, "ext"), 120,
                                BuildLimits(memory_bytes=1536 << 20, cpu_seconds=8, scratch_bytes=1 << 30,
                                            output_bytes=64 << 20))
    expect_failure(roomy_disk, "output-size bomb", "big", BIG, "build_output_size", "67108864 bytes for any one file",
                   60)
    # A failure is trusted after a retry: the second attempt builds again, the third is answered from
    # the record, which names the limits it met.
    expect_failure(roomy_disk, "output-size bomb, retried", "big", BIG, "build_output_size", "67108864", 60)
    t0 = time.monotonic()
    cached = roomy_disk.compile({"name": "big", "cpp_sources": BIG, "functions": None, "no_implicit_headers": True,
                                 "extra_cflags": ["-O1"]})
    check_equal("output-size bomb, third time: cached", (cached["ok"], cached["reason"], time.monotonic() - t0 < 2),
                (False, "build_output_size", True))
    record = os.path.join(ROOT, "ext", cached["key"])
    check_equal("the record names the limits it met", build_failures.read(record)["limits"]["output_bytes"], 64 << 20)
    # The same arguments in a tmpfs smaller than the array: the record, made under other limits, is
    # not trusted, and the build fails on the disk instead.
    disk = CompileService(launcher, os.path.join(ROOT, "ext"), 120,
                          BuildLimits(memory_bytes=1536 << 20, cpu_seconds=8, scratch_bytes=48 << 20,
                                      output_bytes=512 << 20))
    expect_failure(disk, "disk bomb", "big", BIG, "build_disk", "a private tmpfs of 50331648 bytes", 60)
    check_equal("the record restarts under other limits", build_failures.read(record)["attempts"], 1)
    expect_failure(service, "CPU-time bomb", "spin", SPIN, "build_cpu_time", "its limit is 8 s per process", 60)
    slow = CompileService(launcher, os.path.join(ROOT, "ext"), 6,
                          BuildLimits(memory_bytes=1536 << 20, cpu_seconds=100, scratch_bytes=48 << 20))
    expect_failure(slow, "wall-clock bomb", "spin", SPIN, "build_timeout", "longer than its limit of 6 s", 60)

    # A constructor that would end the build: loading the library at build time would fail it.
    unloaded = build(service, "never loaded", "never_loaded",
                     SMALL.replace("NAME", "never_loaded") + '#include <unistd.h>\n'
                     "__attribute__((constructor)) static void at_load() { _exit(3); }\n", 60)
    check_equal("never loaded: built", (unloaded["ok"], unloaded.get("reason")), (True, None))
    # A host file's bytes in the library's own text (the interpreter's, which the sandbox shows), as
    # red team round 4 put OpenBLAS there; the directive is split in two C strings.
    incbin = build(service, "incbin", "incbin", SMALL.replace("NAME", "incbin") +
                   'asm(".pushsection .text.blas,\\"ax\\",@progbits\\n"\n'
                   f'    ".inc" "bin \\"{os.path.realpath(sys.executable)}\\"\\n.popsection\\n");\n', 60)
    check_equal("incbin: refused by the assembler guard", (incbin["ok"], incbin.get("reason")), (False, "forbidden_source"))
    if "holds the assembler directive .incbin" not in incbin.get("log", ""):
        failures.append(f"incbin: the log does not name the directive: {incbin.get('log', '')[-400:]!r}")
    embedded = service.compile({"name": "embedded", "cpp_sources": SMALL.replace("NAME", "embedded") +
                                f'static const char blas[] = {{\n#embed "{sys.executable}"\n}};\n', "functions": None,
                                "no_implicit_headers": True})
    check_equal("#embed: refused before a build", (embedded["ok"], embedded.get("reason")), (False, "forbidden_source"))
    archive_dir = os.path.join(ROOT, "archives")
    os.makedirs(archive_dir)
    with open(os.path.join(archive_dir, "libblasstatic.a"), "wb") as f:
        f.write(b"!<arch>\n" + b"x" * 64)
    archived = service.compile({"name": "archived", "cpp_sources": SMALL.replace("NAME", "archived"), "functions": None,
                                "no_implicit_headers": True, "extra_ldflags": [f"-L{archive_dir}", "-lblasstatic"]})
    check_equal("a static archive: refused before a build", (archived["ok"], archived.get("reason")),
                (False, "forbidden_flag"))
    shutil.rmtree(archive_dir)

    small = build(service, "small extension", "small", SMALL.replace("NAME", "small"), 60)
    check_equal("small extension: built", (small["ok"], small.get("reason")), (True, None))
    if small["ok"]:
        folder = os.path.dirname(small["path"])
        check_equal("small extension: only the library came back",
                    sorted(f if not f.endswith(".so") else "NAME.so" for f in os.listdir(folder)),
                    ["NAME.so", "arguments.json", "build.log", "library"])
        # Delivered as the judge delivers it, and loaded as the runner loads it.
        from vinci_runner import loader
        from vinci_worker.sandbox import SEALS, sealed_copy

        fd = sealed_copy(small["path"])
        check_equal("delivered: sealed", fcntl.fcntl(fd, fcntl.F_GET_SEALS) & SEALS, SEALS)
        writable = os.open(f"/proc/self/fd/{fd}", os.O_RDWR)
        for label, attempt in (("write", lambda: os.write(fd, b"x")), ("pwrite", lambda: os.pwrite(fd, b"x", 0)),
                               ("write through a new descriptor", lambda: os.write(writable, b"x")),
                               ("ftruncate to nothing", lambda: os.ftruncate(fd, 0)),
                               ("ftruncate larger", lambda: os.ftruncate(fd, 1 << 20)),
                               ("a seal removed", lambda: fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_GROW))):
            try:
                attempt()
                failures.append(f"delivered: {label} succeeded")
            except OSError as e:
                check_equal(f"delivered: {label}", errno.errorcode.get(e.errno), "EPERM")
        os.close(writable)
        path = loader._receive_library({"fds": [fd]}, "small")
        module = loader._import_library("small", path)
        check_equal("small extension: loads in place from its memfd", (module.__name__, module.__file__),
                    ("small", f"/proc/self/fd/{fd}"))
        mapped = [line.split(None, 5)[-1].strip() for line in open("/proc/self/maps") if "/memfd:small.so" in line]
        check_equal("small extension: mapped from the memfd", bool(mapped), True)
    shutil.rmtree(ROOT, ignore_errors=True)

sys.exit(finish("build limits: the flag allow-list, and bounded builds that run only the toolchain"))
