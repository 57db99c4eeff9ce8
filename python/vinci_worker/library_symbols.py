"""The function a sample's offset in torch's library fell in, and whether it is glue or computes.

Torch's CPU library carries other libraries' compute inside it: MKL (`sgemm_`, `mkl_*`), oneDNN,
XNNPACK (`xnn_*`), NNPACK, QNNPACK, fbgemm, Sleef, and ATen's own kernels. Some it exports, so a
candidate can call them with no other library in sight, and a sample there lies in torch's file,
beside the dispatch, allocation and checks that an own kernel's call runs there as glue. Red-team
round 31 ran MKL's `sgemm_` on 45% of a matmul's rows beside its own loops (0.15-0.24x, where the
loops score 0.05x); round 32 ran XNNPACK's GEMM for all of a mixture of experts beside spin (1.04-1.25x
against 0.185x). A sample is glue only where the function it fell in (the file's full symbol table,
which torch ships, else its exported symbols) is one of torch's, c10's or the C++ library's, and no
ATen kernel. ATen's kernel files are compiled once for each CPU capability: a kernel's name carries
the capability's namespace, or is found at several places (a static function's copies), or, where
the compiler's clones and inlining made the copy a host runs unique (red-team round 34: the AVX2 body
of a whole-tensor max, Half softmax, the optimizers' math), its code is AVX's: torch's glue is built
for the baseline x86-64 and uses no VEX or EVEX instruction.
"""
from __future__ import annotations

import array
import bisect
import mmap
import re
import struct
import subprocess
import tempfile

# Functions of torch's C++ namespaces (at, c10, torch, caffe2) and the C++ library's (std, __gnu_cxx),
# mangled, whatever their qualifiers (const, reference, a local entity's enclosing function, a thunk).
GLUE_FUNCTION = re.compile(r"^_Z(?:Z|T[hv][n0-9_]*?_|L)?N?[KRVO]*(?:2at|3c10|5torch|6caffe2|9__gnu_cxx|St)|^_ZSt")
# ... less ATen's kernels: compiled for each CPU capability, in a namespace named after it, and less the
# C++ library's wrappers of another library's code (a std::function of oneDNN's or fbgemm's lambda).
CAPABILITY_KERNEL = re.compile(r"(?:4AVX2|6AVX512|7DEFAULT|7ZVECTOR|6SVE256|6SVE128|4NEON|5VSX)")
# c10 holds torch's core bookkeeping (TensorImpl, dispatch keys, scalar types, the allocator) and no
# kernels: the clones its inline functions leave in every translation unit that uses them
# (`set_sizes_and_strides.isra.0`, `computeDispatchKey.isra.0.cold`, dozens each in libtorch_cpu) are
# not a capability kernel's copies. Taken for kernels, 4 samples of them in an own kernel's
# `torch::empty` rejected the honest file of a CI run (session 34).
C10_FUNCTION = re.compile(r"^_ZN[KRVO]*3c10")
FOREIGN_NAMESPACE = re.compile(r"(?:4dnnl|6fbgemm|7zendnn|4xnnp|5qnnp|4nnp_|5sleef|5Sleef|3mkl|9pytorch_q)")

_PT_LOAD, _SHT_SYMTAB, _SHT_DYNSYM = 1, 2, 11
_STT_FUNC, _STT_GNU_IFUNC = 2, 10


# Code the linker makes, which no symbol names: calls out through the procedure linkage table, and the
# library's start and end (named after their sections, in brackets).
LINKER_SECTIONS = (".plt", ".plt.got", ".plt.sec", ".init", ".fini")


# Mnemonics beginning with v that are no AVX instruction (VMX's), and AMX's, which are.
NOT_AVX = frozenset(("verr", "verw", "vmcall", "vmlaunch", "vmresume", "vmxoff", "vmxon", "vmread", "vmwrite",
                     "vmptrld", "vmptrst", "vmclear", "vmfunc", "vmrun", "vmload", "vmsave", "vmmcall"))
AMX = re.compile(r"^(?:tdp|tile|ldtilecfg|sttilecfg)")
# The longest function read whole to look for vector extensions; longer ones are read this far.
MAX_FUNCTION_BYTES = 1 << 20
INSTRUCTION_LINE = re.compile(r"^\s*[0-9a-f]+:\t(\S+)(?:\s+(\S+))?")


def uses_vector_extensions(code: bytes) -> bool:
    """Whether x86-64 machine code holds a VEX- or EVEX-encoded instruction (AVX, AVX2, AVX-512, FMA) or
    an AMX one. GNU objdump decodes it: binutils comes with every compiler a build needs."""
    if not code:
        return False
    with tempfile.NamedTemporaryFile(prefix="vinci-code-", suffix=".bin") as f:
        f.write(code)
        f.flush()
        listing = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "--no-show-raw-insn", f.name],
                                 capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        match = INSTRUCTION_LINE.match(line)
        if match is None:
            continue
        mnemonic, after = match.group(1), match.group(2) or ""
        if mnemonic in ("{vex}", "{vex3}", "{evex}"):
            return True
        if mnemonic in ("lock", "rep", "repz", "repnz", "repe", "repne", "notrack", "bnd", "data16", "addr32"):
            mnemonic = after
        if (mnemonic.startswith("v") and mnemonic not in NOT_AVX) or AMX.match(mnemonic):
            return True
    return False


def glue_function(name: str | None) -> bool:
    if name is not None and name.startswith("[") and name[1:-1] in LINKER_SECTIONS:
        return True
    return (name is not None and GLUE_FUNCTION.match(name) is not None and CAPABILITY_KERNEL.search(name) is None
            and FOREIGN_NAMESPACE.search(name) is None)


class LibrarySymbols:
    """A library file's functions (its full symbol table where it has one, else its exported ones), by
    the file offsets of their code."""

    @classmethod
    def of_file(cls, path: str) -> "LibrarySymbols":
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return cls(data, path)

    def __init__(self, data, path: str):
        self._path = path
        self._vector: dict[int, bool] = {}  # by function's index: whether its code is AVX's
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError("not a little-endian 64-bit ELF file")
        phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
        # Each loaded segment's (virtual address, file offset, size): a symbol's value is an address.
        loads = []
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
            if p_type == _PT_LOAD:
                loads.append((p_vaddr, p_offset, p_filesz))
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        tables = [s for s in sections if s[1] == _SHT_SYMTAB] or [s for s in sections if s[1] == _SHT_DYNSYM]
        found: list[tuple[int, int, int, int]] = []  # (file offset, size, name's offset, its table's strings)
        for _, _, _, _, sh_offset, sh_size, sh_link, _, _, sh_entsize in tables:
            if sh_entsize != 24:
                continue
            strings = sections[sh_link][4]
            for st_name, st_info, _, st_shndx, st_value, st_size in struct.iter_unpack(
                    "<IBBHQQ", data[sh_offset:sh_offset + sh_size]):
                if st_info & 0xF not in (_STT_FUNC, _STT_GNU_IFUNC) or st_shndx == 0 or st_value == 0:
                    continue
                for vaddr, off, size in loads:
                    if vaddr <= st_value < vaddr + size:
                        found.append((st_value - vaddr + off, st_size, st_name, strings))
                        break
        names_at = sections[struct.unpack_from("<H", data, 0x3E)[0]][4]  # the section names' table
        for sh_name, sh_type, _, sh_addr, sh_offset, sh_size, *_ in sections:
            name = bytes(data[names_at + sh_name:data.find(b"\0", names_at + sh_name)]).decode("ascii", "replace")
            if name in LINKER_SECTIONS and sh_size > 0:
                found.append((sh_offset, sh_size, -1, name))
        found.sort(key=lambda f: (f[0], f[2] < 0))  # a section last, so it names its start, not _init
        self._offsets = array.array("Q", (f[0] for f in found))
        self._ends = array.array("Q", (f[0] + max(f[1], 1) for f in found))
        self._names = []
        self._duplicated: set[str] = set()
        for _, _, st_name, strings in found:
            if st_name < 0:  # a linker section: strings holds its name
                self._names.append(f"[{strings}]")
                continue
            at = strings + st_name
            self._names.append(bytes(data[at:data.find(b"\0", at)]).decode("utf-8", "replace"))
        # A static function under one name at several places is one file's code compiled more than once:
        # ATen's kernel files are, once for each CPU capability, and their anonymous namespaces carry no
        # capability's name (red-team round 33 ran cpublas's portable gemm_core_ this way).
        seen: set[str] = set()
        for name in self._names:
            (self._duplicated if name in seen else seen).add(name)

    def __len__(self) -> int:
        return len(self._offsets)

    def functions(self) -> list[tuple[int, str]]:
        """Every function's (file offset, name), by offset."""
        return list(zip(self._offsets, self._names))

    def _index_at(self, offset: int) -> int | None:
        i = bisect.bisect_right(self._offsets, offset) - 1
        if i < 0:
            return None
        # A function without a size in the table is taken to reach the next one.
        return i if self._ends[i] - self._offsets[i] <= 1 or offset < self._ends[i] else None

    def _end(self, i: int) -> int:
        if self._ends[i] - self._offsets[i] > 1:
            return self._ends[i]
        return self._offsets[i + 1] if i + 1 < len(self._offsets) else self._offsets[i] + 1

    def _vector_code(self, i: int) -> bool:
        if i not in self._vector:
            start = self._offsets[i]
            with open(self._path, "rb") as f:
                f.seek(start)
                code = f.read(min(self._end(i) - start, MAX_FUNCTION_BYTES))
            self._vector[i] = uses_vector_extensions(code)
        return self._vector[i]

    def function_at(self, offset: int) -> str | None:
        """The function whose code holds a file offset, or None where none does."""
        i = self._index_at(offset)
        return None if i is None else self._names[i]

    def glue_at(self, offset: int) -> tuple[str | None, bool]:
        """The function whose code holds a file offset, and whether it is glue: a glue function's
        (glue_function), the only function of its name in the library (but for c10's inline clones,
        C10_FUNCTION), and built for no CPU capability (no AVX instruction in its code; a linker
        section's stubs hold none)."""
        i = self._index_at(offset)
        if i is None:
            return None, False
        name = self._names[i]
        if not glue_function(name) or (name in self._duplicated and not C10_FUNCTION.match(name)):
            return name, False
        return name, name.startswith("[") or not self._vector_code(i)
