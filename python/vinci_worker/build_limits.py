"""What a candidate's extension build may ask for and what it may use.

What a candidate's extension build may ask for and what it may use, decided on the trusted side
(extensions.py) before and while the build runs.

The flags are an allow-list, not a list of the dangerous ones. A compiler's command line can run
programs: gcc runs what -wrapper, -B, -specs= and -fplugin= name and reads more options from a
response file (@file), nvcc runs the host compiler -ccbin names, and -Xcompiler, -Xlinker and -Wl,
pass the same through to the next tool. torch then writes the flags unquoted into a ninja file whose
commands /bin/sh runs, so a space, a ';' or a '$' in a flag is a command of its own. Every release of
gcc, binutils and nvcc adds options, so a list of the dangerous ones is never finished; the flags
honest extensions use (optimisation, code generation, defines, warnings, include and library
folders, a few of nvcc's and ptxas's) are few and regular. Every flag must match a pattern here;
anything else is refused before a build starts, with one line naming the flag and why.

A candidate's library must hold only code compiled from its sources: on the CPU, whose code a sample
fell in is decided by the library's bytes (mapped_code.py). So a source may not #embed a file's bytes
(C23, in any spelling), and an -l library that some folder the linker searches holds only as a static
archive is refused: its code would be linked into the library. What the assembler is given is
vinci-as-guard's to check, inside the build's sandbox (no .incbin, no macros that could build one).

The resources are bounded for the build's whole process tree (the sandboxed python, ninja, the
compiler drivers, cc1plus, as, ld, nvcc, cicc, ptxas): rlimits stop any one process (address space,
CPU time, the size of a file it writes); the trusted side watches the tree (its resident memory, each
process's CPU time, the wall clock) and kills it past a limit, naming the limit. The build works in
its sandbox's private size-bounded tmpfs, and only the finished library comes back.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import os
import re
import signal
import time
from collections.abc import Sequence

from . import process_tree
from .sandbox import Sandboxed

POLL_S = 0.05
# The rlimit stops a process this long after the trusted side should have: the watcher, which can
# name the limit, gets there first, and the rlimit holds should the watcher fall behind.
CPU_SLACK_S = 5
_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICK = os.sysconf("SC_CLK_TCK")


@dataclasses.dataclass(frozen=True)
class BuildLimits:
    memory_bytes: int = 8 << 30  # resident memory of the whole build process tree
    address_space_bytes: int = 16 << 30  # RLIMIT_AS per process (not where builds see a GPU: CUDA maps huge ranges)
    cpu_seconds: int = 600  # CPU time per process
    scratch_bytes: int = 4 << 30  # the private tmpfs the build works in (and its /tmp, another as large)
    output_bytes: int = 512 << 20  # the library, and any one file the build writes (RLIMIT_FSIZE)


# --- the allow-list ---

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DEFINE = _NAME + r"(=[A-Za-z0-9_.+-]*)?"
_PATH = r"[A-Za-z0-9_./][A-Za-z0-9_.+/-]*"  # never starts with '-': it is an option's value
_WORD = r"[A-Za-z0-9_.+-]+"
# A library folder is absolute: the linker resolves a relative one from the build folder, where the
# static-archive check cannot follow it (red-team round 55 linked NumPy's libnpymath.a through
# -L../../.., its code then counted as the candidate's own).
_FOLDER = r"/[A-Za-z0-9_.+/-]*"
_RELATIVE_FOLDER = ("names a library folder by a relative path, which the linker resolves from the build folder: "
                    "give it as an absolute path")
_STD = r"(c|gnu)\+\+(98|03|0x|11|1y|14|1z|17|2a|20|2b|23|2c|26)"
_CODE = r"(sm|compute)_[0-9]+[af]?"
_F_FLAGS = ("align-functions", "align-jumps", "align-labels", "align-loops", "associative-math",
            "asynchronous-unwind-tables", "builtin", "common", "cx-limited-range", "data-sections",
            "devirtualize", "diagnostics-color", "exceptions", "excess-precision", "expensive-optimizations",
            "ext-numeric-literals", "fast-math", "finite-math-only", "float-store", "fp-contract",
            "function-sections", "gcse", "gcse-after-reload", "inline", "inline-functions", "inline-limit",
            "inline-small-functions", "ipa-cp-clone", "ipa-pta", "ivopts", "loop-interchange",
            "loop-unroll-and-jam", "math-errno", "max-errors", "merge-all-constants", "modulo-sched",
            "move-loop-invariants", "omit-frame-pointer", "openmp", "openmp-simd", "peel-loops", "permissive",
            "PIC", "pic", "PIE", "pie", "plt", "predictive-commoning", "prefetch-loop-arrays",
            "reciprocal-math", "rename-registers", "rounding-math", "rtti", "sched-pressure", "schedule-insns",
            "schedule-insns2", "semantic-interposition", "signed-char", "signed-zeros", "simd-cost-model",
            "split-loops", "stack-protector", "stack-protector-strong", "strict-aliasing", "strict-overflow",
            "threadsafe-statics", "tracer", "trapping-math", "tree-loop-distribution", "tree-loop-vectorize",
            "tree-partial-pre", "tree-slp-vectorize", "tree-vectorize", "unroll-all-loops", "unroll-loops",
            "unsafe-math-optimizations", "unsigned-char", "unwind-tables", "variable-expansion-in-unroller",
            "vect-cost-model", "version-loops-for-strides", "visibility", "visibility-inlines-hidden", "web",
            "wrapv")
# One word of the host compiler's command line (g++, or nvcc's host compiler through -Xcompiler).
_HOST = re.compile("|".join([
    r"-O[0-3sgz]?|-Ofast", rf"-D{_DEFINE}", rf"-U{_NAME}", rf"-I{_PATH}", rf"-isystem{_PATH}", rf"-std={_STD}",
    r"-g[0-3]?|-ggdb[0-3]?|-gdwarf(-[2-5])?", r"-w|-pthread|-pedantic(-errors)?",
    rf"-f(no-)?({'|'.join(_F_FLAGS)})(={_WORD})?",
    r"-m(no-)?(?!llvm)[a-z0-9][a-z0-9_.+-]*(=[A-Za-z0-9_.+-]+)?",
    r"-W(no-)?[a-z][a-z0-9+-]+(=[a-z0-9_+-]+)?",  # two letters at least and no comma: never -Wl, -Wa, -Wp,
]))
_LINK = re.compile(rf"-l{_WORD}|-L{_FOLDER}|-pthread|-fopenmp|-O[0-3]|"
                   rf"-Wl,(--as-needed|--no-as-needed|-O[0-3]|--gc-sections|-rpath,{_PATH}|-rpath={_PATH})")
_PTXAS = re.compile(r"-v|--verbose|-O[0-3]|--?maxrregcount=[0-9]{1,4}|--warn-on-spills|-warn-spills|"
                    r"--warn-on-local-memory-usage|-warn-lmem-usage|--?allow-expensive-optimizations(=(true|false))?|"
                    r"-dlcm=(ca|cg)|--def-load-cache=(ca|cg|cs|lu|cv)|-dscm=(wb|cg|cs|wt)|"
                    r"--def-store-cache=(wb|cg|cs|wt)|--?suppress-stack-size-warning|--?fmad=(true|false)")
_NVCC = re.compile("|".join([
    r"-O[0-3]", rf"-D{_DEFINE}", rf"-U{_NAME}", rf"-I{_PATH}", r"--?use_fast_math", r"-lineinfo|--generate-line-info",
    r"--?expt-relaxed-constexpr", r"--?expt-extended-lambda|--?extended-lambda", r"-res-usage|--resource-usage",
    r"-g|-G|--device-debug|-w|--disable-warnings|--?restrict", r"-W(no-)?[a-z][a-z0-9+-]+",
]))
_SHELL_SAFE = re.compile(r"[A-Za-z0-9_.,+=/\[\]-]*")
_DANGEROUS = (  # (how a flag starts, why it is refused), for a refusal that says more than "not allowed"
    ("@", "reads a command line from a file (a response file)"),
    ("--options-file", "reads a command line from a file (a response file)"),
    ("-optf", "reads a command line from a file (a response file)"),
    ("-wrapper", "runs a program around every compiler pass"), ("-fplugin", "loads a compiler plugin"),
    ("-B", "names a folder the compiler driver runs its programs from"),
    ("-specs", "names a spec file, which can run programs"), ("--specs", "names a spec file, which can run programs"),
    ("-ccbin", "names the host compiler nvcc runs"), ("--compiler-bindir", "names the host compiler nvcc runs"),
    ("-Wl,", "passes options to the linker"), ("-Xlinker", "passes options to the linker"),
    ("--linker-options", "passes options to the linker"), ("-Xnvlink", "passes options to nvlink"),
    ("-Wa,", "passes options to the assembler"), ("-Xassembler", "passes options to the assembler"),
    ("-Wp,", "passes options to the preprocessor"), ("-Xpreprocessor", "passes options to the preprocessor"),
    ("-Xclang", "passes options to clang's front end"), ("-mllvm", "passes options to LLVM"),
    ("-o", "names an output path"), ("--output", "names an output path"),
    ("-fdump", "writes compiler dumps"), ("-save-temps", "keeps the intermediate files"),
    ("--keep", "keeps the intermediate files"), ("--run", "runs the built program"),
)


def _why(flag: str) -> str:
    for start, why in _DANGEROUS:
        if flag.startswith(start):
            return why
    if flag.startswith("-L") and len(flag) > 2 and re.fullmatch(_PATH, flag[2:]):
        return _RELATIVE_FOLDER
    if not _SHELL_SAFE.fullmatch(flag):
        bad = next(c for c in flag if not _SHELL_SAFE.fullmatch(c))
        return (f"contains {bad!r}: torch writes flags unquoted into a ninja file that /bin/sh runs, so only "
                "letters, digits and _.,+=/[]- may appear")
    return "is not on the allow-list (optimisation, code generation, defines, warnings, include and library flags)"


def _bad_value(value: str) -> str:
    return _why(value) if not _SHELL_SAFE.fullmatch(value) else "is not a value this option takes"


def _matching(pattern: str):
    expression = re.compile(pattern)
    return lambda value: None if expression.fullmatch(value) else f"{value!r} {_bad_value(value)}"


def _each(pattern: re.Pattern, tool: str):
    """A comma-separated list of options passed on to another tool, each checked by pattern."""
    def check(value: str) -> str | None:
        for inner in value.split(","):
            if not pattern.fullmatch(inner):
                return f"{inner!r} {_why(inner)} (passed on to {tool})"
        return None
    return check


_HOST_VALUED = {"-D": _matching(_DEFINE), "-U": _matching(_NAME), "-I": _matching(_PATH), "-isystem": _matching(_PATH)}
_LINK_VALUED = {"-l": _matching(_WORD),
                "-L": lambda v: None if re.fullmatch(_FOLDER, v) else
                f"{v!r} {_RELATIVE_FOLDER if re.fullmatch(_PATH, v) else _bad_value(v)}"}
_NVCC_VALUED = {name: check for names, check in (
        (("-arch", "--gpu-architecture"), _matching(rf"{_CODE}|lto_[0-9]+[af]?|native|all|all-major")),
        (("-code", "--gpu-code"), _matching(rf"{_CODE}(,{_CODE})*")),
        (("-gencode", "--generate-code"),
         _matching(rf"arch=compute_[0-9]+[af]?,code=({_CODE}|\[{_CODE}(,{_CODE})*\])")),
        (("-maxrregcount", "--maxrregcount", "-t", "--threads"), _matching(r"[0-9]{1,4}")),
        (("-std", "--std"), _matching(_STD)),
        (("-ftz", "--ftz", "-prec-div", "--prec-div", "-prec-sqrt", "--prec-sqrt", "-fmad", "--fmad"),
         _matching(r"true|false")),
        (("-default-stream", "--default-stream"), _matching(r"legacy|null|per-thread")),
        (("-diag-suppress", "--diag-suppress"), _matching(r"[0-9]+(,[0-9]+)*")),
        (("-D", "--define-macro"), _matching(_DEFINE)),
        (("-U", "--undefine-macro"), _matching(_NAME)),
        (("-I", "--include-path"), _matching(_PATH)),
        (("-Xptxas", "--ptxas-options"), _each(_PTXAS, "ptxas")),
        (("-Xcompiler", "--compiler-options"), _each(_HOST, "the host compiler"))) for name in names}


def _flag_refusal(flags: list[str], single: re.Pattern, valued: dict) -> str | None:
    """Why the first refused flag of one list is refused, naming it; None when all are allowed. An
    option that takes a value comes as one word (-arch=sm_90) or two (-arch sm_90)."""
    i = 0
    while i < len(flags):
        flag = flags[i].strip()  # as torch does before it joins them
        if single.fullmatch(flag):
            i += 1
            continue
        if flag in valued:
            if i + 1 == len(flags):
                return f"{flag}: needs a value after it"
            name, value, shown = flag, flags[i + 1].strip(), f"{flag} {flags[i + 1].strip()}"
            i += 2
        else:
            name, eq, value = flag.partition("=")
            if not (eq and name in valued):
                return f"{flag}: {_why(flag)}"
            shown = flag
            i += 1
        why = valued[name](value)
        if why:
            return f"{shown}: {why}"
    return None


_FLAG_LISTS = {  # argument -> (one-word pattern, options that take a value)
    "extra_cflags": (_HOST, _HOST_VALUED),
    "extra_cuda_cflags": (_NVCC, _NVCC_VALUED),
    "extra_ldflags": (_LINK, _LINK_VALUED),
}
MAX_FLAGS = 64
MAX_FLAG_CHARS = 256


# --- the arguments ---

def _is_text_or_texts(value, optional: bool) -> bool:
    if value is None:
        return optional
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))


def _is_functions(value) -> bool:
    if value is None or isinstance(value, str):
        return True
    if isinstance(value, list):
        return all(isinstance(f, str) for f in value)
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


_TYPES = {  # load_inline's arguments as the runner's loader sends them (build_directory, verbose and
    # keep_intermediates are the build's own), and whether a value has the right type
    "name": lambda v: isinstance(v, str) and v.isascii() and v.isidentifier() and len(v) <= 100,
    "cpp_sources": lambda v: _is_text_or_texts(v, optional=False),
    "cuda_sources": lambda v: _is_text_or_texts(v, optional=True),
    "sycl_sources": lambda v: not v,
    "functions": _is_functions,
    "extra_cflags": lambda v: _is_text_or_texts(v, optional=True) and not isinstance(v, str),
    "extra_cuda_cflags": lambda v: _is_text_or_texts(v, optional=True) and not isinstance(v, str),
    "extra_sycl_cflags": lambda v: not v,
    "extra_ldflags": lambda v: _is_text_or_texts(v, optional=True) and not isinstance(v, str),
    "extra_include_paths": lambda v: _is_text_or_texts(v, optional=True) and not isinstance(v, str),
    "with_cuda": lambda v: v is None or isinstance(v, bool),
    "with_sycl": lambda v: not v,
    "is_python_module": lambda v: isinstance(v, bool),
    "with_pytorch_error_handling": lambda v: isinstance(v, bool),
    "use_pch": lambda v: isinstance(v, bool),
    "no_implicit_headers": lambda v: isinstance(v, bool),
}


def _type_refusal(arguments) -> str | None:
    if not isinstance(arguments, dict):
        return "load_inline's arguments are not a mapping"
    for key, value in arguments.items():
        if key not in _TYPES:
            return f"load_inline has no argument {str(key)[:80]!r} that a build accepts"
        if not _TYPES[key](value):
            return f"load_inline's {key} has the wrong type or value: {str(value)[:80]!r}"
    if not isinstance(arguments.get("name"), str):
        return "load_inline needs a name that is a Python identifier"
    if "cpp_sources" not in arguments:
        return "load_inline needs cpp_sources"
    # torch pastes the names and docstrings into main.cpp's module block unescaped: a quote there
    # ends the string and the rest is code (red-team round 40 carried 488 KB of ATen's kernel so).
    functions = arguments.get("functions") or []
    docs = functions if isinstance(functions, dict) else {name: "" for name in
                                                          ([functions] if isinstance(functions, str) else functions)}
    for name, doc in docs.items():
        if not _IDENTIFIER.fullmatch(str(name)):
            return f"load_inline's functions: {str(name)[:80]!r} is not a C++ identifier"
        if not isinstance(doc, str) or _UNSAFE_DOC.search(doc):
            return (f"load_inline's functions: the docstring of {name} holds a quote, a backslash or a line break, "
                    "which torch would paste into the module's source as code")
    return None


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
_UNSAFE_DOC = re.compile(r'["\\\r\n?]')


_CONTINUATION = re.compile(r"\\[ \t\f\v]*\r?\n")
_DIRECTIVE_SIGN = re.compile(r"#|%:")
_BLANKS = re.compile(r"\s*")
_COMMENT_END = re.compile(r"\*/")
_EMBED = re.compile(r"embed\b")
_HAS_EMBED = re.compile(r"__has_embed\b")


def _as_compiled(text: str) -> str:
    """text as the preprocessor reads it: trigraphs replaced, continued lines joined."""
    return _CONTINUATION.sub("", text.replace("??=", "#").replace("??/", "\\"))


def _embed_at(text: str) -> int | None:
    """Where an #embed directive may start in text (continued lines joined, trigraphs replaced), or None.
    Every '#' and '%:' is taken for code, whatever a string around it would make it, and followed past
    blanks and comments (each ends at the first */ after its start) to the word after them: a false find
    in a string costs an honest source nothing it needs, and no string can hide a directive. Linear: a
    place one walk passed is not walked again."""
    closes = [m.start() for m in _COMMENT_END.finditer(text)]
    ends: dict[int, int] = {}  # a place a walk passed -> where its blanks and comments run out
    for sign in _DIRECTIVE_SIGN.finditer(text):
        i, passed = sign.end(), []
        while i not in ends:
            passed.append(i)
            j = _BLANKS.match(text, i).end()
            if not text.startswith("/*", j):
                ends[j] = i = j
                break
            k = bisect.bisect_left(closes, j + 2)
            i = closes[k] + 2 if k < len(closes) else len(text)
        for p in passed:
            ends[p] = ends[i]
        if _EMBED.match(text, ends[i]):
            return sign.start()
    return None


def _source_texts(arguments: dict):
    """(argument, text) for every text load_inline writes into a source file: the sources, and the
    function names and docstrings torch pastes into main.cpp unescaped."""
    for key in ("cpp_sources", "cuda_sources"):
        value = arguments.get(key) or []
        for text in [value] if isinstance(value, str) else value:
            yield key, text
    functions = arguments.get("functions") or []
    for name in [functions] if isinstance(functions, str) else functions:
        yield "functions", name
        if isinstance(functions, dict):
            yield "functions", functions[name]


def _source_refusal(arguments: dict) -> str | None:
    """Why a source is refused: it #embeds a file's bytes, or asks whether it could (__has_embed), in
    any spelling the preprocessor reads as one (trigraphs, continued lines, comments, the %: digraph)."""
    for key, text in _source_texts(arguments):
        spelled = _as_compiled(text)
        at = _embed_at(spelled)
        if at is None:
            found = _HAS_EMBED.search(spelled)
            at = found.start() if found else None
        if at is not None:
            shown = " ".join(spelled[at:at + 40].split())
            return (f"{key}: {shown!r}: #embed puts a file's bytes into the library, which must hold only code "
                    "compiled from the sources")
    return None


# At most this many characters of a build's sources may sit on lines that the candidate's file does not
# write, with its flags that are no literal of the file (below): room for a few formatted lines (an
# f-string's block size, a joined list of names, a -D of a size),
# none for a source made at import. Red-team round 39 read ATen's kernel headers at import (514 KB,
# pasted in as source text, its kernel then counted as the candidate's own: 1.13x where honest loops
# score 0.14x) and, from NumPy's OpenBLAS, a GEMM micro-kernel's 10.7 KB of machine code, emitted as
# `.byte` lines into an executable section (0.80x against 0.046x). What a build compiles must be what
# the file says.
UNWRITTEN_SOURCE_CHARS = 2048
# A source is charged this many characters for each piece it is made of beyond the first: a piece is a
# run of consecutive logical lines copied from one string literal of the file, in that literal's order.
# What a source says lies in its lines and in how its pieces are chained, and a test of each line
# alone or of its neighbours charges nothing for the chaining: round 40 passed a line test with a
# dictionary of every character and character pair (1.17x on ATen's log-softmax), and round 43 passed
# a test of runs of 3 lines with two order-3 de Bruijn sequences over 16 line kinds, which hold every
# run of 3 that a table of bytes written two lines a byte can have: 0 unwritten characters for 10.7 KB
# of OpenBLAS's SGEMM kernel (0.752x where the suite's loops score 0.045x), about 21,000 pieces. An
# honest source is one literal, or a few joined, with a formatted line here and there. A budget of
# UNWRITTEN_SOURCE_CHARS lets a build chain about 128 pieces, a few hundred bytes' worth of choices.
# Lines are compared as the compiler reads them: continued lines joined, whitespace collapsed.
PIECE_CHARS = 16


def _logical_lines(text: str) -> list[str]:
    """text's lines as the compiler reads them (_as_compiled), each with its whitespace collapsed, blank
    ones left out."""
    return [c for c in (" ".join(line.split()) for line in _as_compiled(text).splitlines()) if c]


class _LiteralLines:
    """Every run of consecutive logical lines of the file's literals, as a suffix automaton over their
    lines: the longest run a source's lines continue from a place is found in time linear in it."""

    def __init__(self, literals: list[list[str]]):
        self.ids: dict[str, int] = {}
        self.next: list[dict[int, int]] = [{}]
        self.link, self.length = [-1], [0]
        for k, lines in enumerate(literals):
            last = 0
            for line in lines:
                last = self._extend(last, self.ids.setdefault(line, len(self.ids)))
            last = self._extend(last, -1 - k)  # a separator no source line matches

    def _extend(self, last: int, c: int) -> int:
        cur = len(self.next)
        self.next.append({})
        self.length.append(self.length[last] + 1)
        self.link.append(0)
        p = last
        while p != -1 and c not in self.next[p]:
            self.next[p][c] = cur
            p = self.link[p]
        if p != -1:
            q = self.next[p][c]
            if self.length[p] + 1 == self.length[q]:
                self.link[cur] = q
            else:
                clone = len(self.next)
                self.next.append(dict(self.next[q]))
                self.length.append(self.length[p] + 1)
                self.link.append(self.link[q])
                while p != -1 and self.next[p].get(c) == q:
                    self.next[p][c] = clone
                    p = self.link[p]
                self.link[q] = self.link[cur] = clone
        return cur

    def pieces(self, lines: list[str]) -> tuple[int, int, str | None]:
        """(pieces, characters on lines no literal holds, the first such line) of a text's logical lines,
        each piece the longest run of them that one literal holds from where the last one ended."""
        pieces = unwritten = i = 0
        first = None
        while i < len(lines):
            state, k = 0, 0
            while i + k < len(lines):
                nxt = self.next[state].get(self.ids.get(lines[i + k], -(1 << 62)))
                if nxt is None:
                    break
                state, k = nxt, k + 1
            if k == 0:
                unwritten += len(lines[i])
                first = first or lines[i]
                i += 1
            else:
                pieces += 1
                i += k
        return pieces, unwritten, first


@dataclasses.dataclass(frozen=True)
class WrittenText:
    """What a candidate's file writes in its string literals (f-strings' literal parts too): the runs of
    their logical lines, and every literal whole, stripped."""
    lines: _LiteralLines = dataclasses.field(default_factory=lambda: _LiteralLines([]))
    literals: frozenset = frozenset()


def written_text(candidate_source: str) -> WrittenText:
    """What candidate_source writes; nothing for a file that does not parse, whatever the parser raises
    (a file nested too deep raises RecursionError or MemoryError, red-team round 46): its builds'
    sources are then all unwritten text."""
    try:
        tree = ast.parse(candidate_source)
    except Exception:
        return WrittenText()
    texts, literals = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            literals.add(node.value.strip())
            texts.append(_logical_lines(node.value))
    return WrittenText(_LiteralLines(texts), frozenset(literals))


def _flag_words(arguments: dict):
    """(argument, word) for every word of load_inline's flag lists and include paths."""
    for key in (*_FLAG_LISTS, "extra_include_paths"):
        for word in arguments.get(key) or []:
            yield key, word


def unwritten_chars(arguments: dict, written: WrittenText) -> tuple[int, tuple[str, str] | None]:
    """The characters a build's sources and flags are charged for what the candidate's file does not
    write (lines no literal holds, PIECE_CHARS a piece beyond each source's first, flags and include
    paths that are no literal), and the first such text by its argument."""
    unwritten, first = 0, None
    for key, text in _source_texts(arguments):
        if key == "functions":  # identifiers and plain docstrings (_type_refusal)
            continue
        pieces, chars, line = written.lines.pieces(_logical_lines(text))
        unwritten += chars + PIECE_CHARS * max(0, pieces - 1)
        if first is None and (line is not None or pieces > 1):
            first = (key, line if line is not None else f"{pieces} pieces of the file's literals")
    for key, word in _flag_words(arguments):
        if word.strip() not in written.literals:
            unwritten += len(word)
            first = first or (key, word)
    return unwritten, first


def unwritten_source(arguments: dict, written: WrittenText, spent: int = 0) -> tuple[str | None, int]:
    """Why a build is refused for text that reaches the compiler and that the candidate's file does not
    write: more than UNWRITTEN_SOURCE_CHARS characters (unwritten_chars) in all, with `spent` by the
    file's earlier builds, naming the first (None when it writes them), and this build's characters. Red-team round 41 carried 10.7 KB
    of OpenBLAS's SGEMM kernel, read at import, in 60 -D values (about 256 characters each, within the
    flag rules), decoded by a written source into an array placed in .text: correct at 0.69-0.82x where
    the suite's loops score 0.028x."""
    unwritten, first = unwritten_chars(arguments, written)
    if spent + unwritten <= UNWRITTEN_SOURCE_CHARS:
        return None, unwritten
    return (f"{first[0]}: {spent + unwritten} characters of sources and flags that the candidate's file does not "
            f"write in a string literal (at most {UNWRITTEN_SOURCE_CHARS} for all its builds), e.g. "
            f"{first[1][:80]!r}: what a build compiles must be written in the file, not read or generated at "
            "import"), unwritten


def _static_archive_refusal(flags: list[str], library_dirs: Sequence[str]) -> str | None:
    """Why an -l flag is refused: a folder the linker searches (an -L of the flags' or library_dirs)
    holds that library as a static archive with members and no shared object beside it, so the
    linker could copy its code into the candidate's library. An empty archive (glibc's libpthread.a,
    only the 8-byte magic) adds nothing."""
    names, folders = [], []
    i = 0
    while i < len(flags):
        flag = flags[i].strip()
        for option, into in (("-l", names), ("-L", folders)):
            if flag == option and i + 1 < len(flags):
                into.append(flags[i + 1].strip())
                i += 1
            elif flag.startswith(option) and len(flag) > len(option):
                into.append(flag[len(option):])
        i += 1
    for name in names:
        for folder in folders + list(library_dirs):  # absolute, as the allow-list has them
            archive = os.path.join(folder, f"lib{name}.a")
            if (os.path.isfile(archive) and os.path.getsize(archive) > len(b"!<arch>\n")
                    and not os.path.exists(os.path.join(folder, f"lib{name}.so"))):
                return (f"-l{name}: {archive} is a static archive: its code would be linked into the candidate's "
                        "library, which must hold only code compiled from the sources")
    return None


def refusal(arguments, library_dirs: Sequence[str] = ()) -> tuple[str, str] | None:
    """(reason, one line) when these load_inline arguments may not be built: "bad_arguments" for a
    wrong shape or type, "forbidden_flag" for a flag off the allow-list or an -l library that is a
    static archive in its -L folders or in library_dirs (toolchain.library_dirs), "forbidden_source"
    for a source that #embeds; None when they may."""
    why = _type_refusal(arguments)
    if why:
        return "bad_arguments", why
    if arguments.get("use_pch"):
        return "forbidden_flag", "use_pch=True: torch would build its own header into torch's folder"
    for key, (single, valued) in _FLAG_LISTS.items():
        flags = arguments.get(key) or []
        if len(flags) > MAX_FLAGS or any(len(f) > MAX_FLAG_CHARS for f in flags):
            return "forbidden_flag", (f"{key}: more than {MAX_FLAGS} flags, or one longer than {MAX_FLAG_CHARS} "
                                      "characters")
        why = _flag_refusal(flags, single, valued)
        if why:
            return "forbidden_flag", f"{key}: {why}"
    for path in arguments.get("extra_include_paths") or []:
        if not re.fullmatch(_PATH, path.strip()) or len(path) > MAX_FLAG_CHARS:
            return "forbidden_flag", f"extra_include_paths: {path!r} {_why('-I' + path)}"
    why = _static_archive_refusal(arguments.get("extra_ldflags") or [], library_dirs)
    if why:
        return "forbidden_flag", f"extra_ldflags: {why}"
    why = _source_refusal(arguments)
    if why:
        return "forbidden_source", why
    return None


# --- the resources ---

def _usage(pid: int) -> tuple[int, float]:
    """(resident bytes, CPU seconds) of one process, zeros once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[21]) * _PAGE, (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return 0, 0.0


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def watch(sandboxed: Sandboxed, limits: BuildLimits, timeout_s: float) -> tuple[str, str] | None:
    """Waits for a build to end by itself. When it passes a limit first, kills every process below
    the launcher (which then takes the pid namespace and its cgroup along) and returns (reason, line)."""
    t0 = time.monotonic()
    root = sandboxed.proc.pid
    while sandboxed.proc.poll() is None:
        pids = process_tree.descendants(root)
        usage = [_usage(p) for p in pids]
        resident = sum(u[0] for u in usage)
        cpu = max((u[1] for u in usage), default=0.0)
        elapsed = time.monotonic() - t0
        over = None
        if resident > limits.memory_bytes:
            over = ("build_memory", f"the build's processes held {resident} bytes of memory, more than its limit "
                                    f"of {limits.memory_bytes}")
        elif cpu >= limits.cpu_seconds:
            over = ("build_cpu_time", f"a process of the build used {cpu:.0f} s of CPU, its limit is "
                                      f"{limits.cpu_seconds} s per process")
        elif elapsed > timeout_s:
            over = ("build_timeout", f"the build took longer than its limit of {timeout_s:.0f} s")
        if over:
            _kill(pids[1:])
            return over[0], f"[{over[1]} ({over[0]}); stopped after {elapsed:.1f} s]"
        time.sleep(POLL_S)
    return None


# Folders of torch's headers that hold whole kernels rather than the extension API: ATen's CPU and
# CUDA implementations, its vectorised math, inductor's C++ prelude, FBGEMM. An #include of one
# compiles a library's kernel into the candidate's own library, where every sample of it counts as
# own (red-team round 21: ATen's log_softmax through a namespace alias, correct at 0.95x where the
# honest kernel is 0.14x). torch/extension.h and the CUDA API headers include none of them; every
# build sees each as an empty folder (extensions.py).
KERNEL_HEADER_FOLDERS = ("ATen/native", "ATen/cpu", "torch/csrc/inductor", "fbgemm")
_KERNEL_HEADER = re.compile(r"((?:%s)/[^:\s]*): No such file or directory" %
                            "|".join(re.escape(f) for f in KERNEL_HEADER_FOLDERS))

_LOG_SIGNS = (  # (reason, what the tools print when that limit or a rule of the build stops them)
    ("forbidden_source", re.compile(r"vinci-as-guard: refused")),
    ("forbidden_source", _KERNEL_HEADER),
    ("build_output_size", re.compile(r"File size limit exceeded|File too large")),
    ("build_disk", re.compile(r"No space left on device")),
    ("build_memory", re.compile(r"out of memory allocating|virtual memory exhausted|Cannot allocate memory|"
                                r"std::bad_alloc|MemoryError")),
)


def failure_reason(log: str, limits: BuildLimits, address_space_applied: bool) -> tuple[str, str]:
    """(reason, line) for a build that failed by itself: the assembler guard's refusal or the limit
    its log says a tool met, else "build_failed". The log is the compiler's account of the
    candidate's source, which can print these words too; that only chooses which failure it is
    reported as."""
    for reason, sign in _LOG_SIGNS:
        found = sign.search(log)
        if found:
            break
    else:
        return "build_failed", ""
    if sign is _KERNEL_HEADER:
        return reason, (f"[{found[1]}: torch's kernel implementations are not the extension API, and builds do "
                        "not see them: the library must hold only code compiled from the candidate's own sources "
                        "(forbidden_source)]")
    if reason == "forbidden_source":
        return reason, ("[the assembler guard refused a source of the build: the library must hold only code "
                        "compiled from the sources (forbidden_source)]")
    limit = {"build_output_size": f"{limits.output_bytes} bytes for any one file it writes",
             "build_disk": f"a private tmpfs of {limits.scratch_bytes} bytes to work in",
             "build_memory": (f"{limits.address_space_bytes} bytes of address space per process"
                              if address_space_applied else "the machine's memory")}[reason]
    return reason, f"[a tool of the build ran out of room: it has {limit} ({reason})]"
