"""Whose code a sample of the trusted sampler fell in: the candidate's own, a library's, or glue.

vinci-cpu-sampler names each sample's executable mapping as the kernel saw it while the thread was
stopped: process, address range, device, inode and path. Nothing the candidate chooses decides the
answer. A name is believed only for a host's file: a path outside the places a sandbox can write (it
can neither write nor mount anywhere else) whose file is the one the host has there, by device and
inode or, where an overlay filesystem shows other numbers, by content. Own code is decided by
content: the bytes of the very mapping (read through /proc/PID/map_files of the process the sample
came from, so a path renamed since the sample cannot substitute other bytes, nor another process of
the runner's tree its own mapping at the same addresses, and believed only where the file opened is
the one the sample names by device and inode) are those of a library the judge built and sent this
runner, in a file sealed against writes, or the mapping is the very memfd the judge sealed and sent
(by device and inode: a judge that is not root may not open map_files), and the mapping is where a
loader maps that library's code (an executable PT_LOAD segment's offset, within its extent), not its
data mapped executable. A sample on a private copy of a page (written through a private mapping,
which still names the file) ran no file's bytes. Everything else (a copy of a library under another
name, any other memfd, anonymous code, a private copy) is library on the CPU, where it is the
compute the candidate did not write, and glue on a GPU, where a call's host code only launches.
"""
from __future__ import annotations

import fcntl
import os
import re
import stat
import struct
import sysconfig

from .sandbox import fd_sha256

# GPU math libraries, whose host code a call of an honest kernel never runs.
GPU_LIBRARIES = ("libcublas", "libcudnn", "libcufft", "libcurand", "libcusparse", "libcusolver", "libcutensor",
                 "libnvblas", "libnccl", "libnvjpeg", "libnpp")
# Executable mappings larger than this, of code that is no host file's nor the judge's delivered
# library's, are a library's on a GPU (MappedCode._foreign). Triton's launcher modules are tens of KB
# of code; libcublasLt's is tens of MB.
GPU_FOREIGN_CODE_BYTES = 4 << 20
# Files whose samples say nothing about who computes: the interpreter, libc, the loader, and torch's
# Python bindings and allocator (a call's fixed cost, which a tiny honest kernel pays as much as a cheat);
# and libcufile, GPUDirect Storage's file I/O, which torch's CUDA wheel loads even on the CPU and which
# holds no math to lend: 3 samples of it in an honest ReLU's timed calls rejected it (CI, session 31).
# Named whole, up to ".so" and a version or a wheel's hash: a prefix let any host library whose name
# begins alike go free (red-team round 35: librt* is also DPDK's librte_*, libdl* dlib's libdlib).
GLUE_LIBRARY = re.compile(r"^(?:libpython\d+(?:\.\d+)*[dmu]*|libc|libm|ld-linux(?:-x86-64|-aarch64)?|libpthread"
                          r"|libdl|librt|libtorch_python|libc10|libgomp|libcufile)"
                          r"(?:-(?:[0-9a-f]{8}|\d+(?:\.\d+)*))?\.so(?:\.\d+)*$")
# The interpreter's own extension modules (json, socket, struct, select: the runner's protocol runs
# through them on every call).
STDLIB_EXTENSIONS = os.path.join(sysconfig.get_paths()["platstdlib"], "lib-dynload") + "/"
# Libraries whose code an own kernel's call runs in though they are not glue: torch's (dispatch,
# allocation, argument checks; its ATen kernels are bounded by time, as a whole library) and the C++
# runtime's. Every other library is a foreign one (TrustedSampling._library_time).
RUNTIME_LIBRARIES = ("libtorch", "libc10", "libstdc++", "libgcc_s")
# The kernel's own code: mapped into every process, or where a perf sample found a thread in a system call.
KERNEL_MAPPINGS = ("[vdso]", "[vsyscall]", "[kernel]")


def glue_library(name: str) -> bool:
    """Whether a host library's file name is one of GLUE_LIBRARY's."""
    return GLUE_LIBRARY.match(name) is not None


class MappedCode:
    """Classifies a runner's sampled mappings. Call it only while the runner is frozen: its mappings
    and files then stay as the samples left them while they are read."""

    def __init__(self, scratch: str, delivered: dict[str, int], cuda: bool, python_binary: str,
                 contents: dict, delivered_fds: dict[tuple, int] | None = None):
        self.writable = tuple(p.rstrip("/") + "/" for p in (scratch, "/tmp", "/dev"))
        self.delivered = delivered
        self.delivered_fds = delivered_fds or {}
        self.cuda = cuda
        self.python_binary = python_binary
        self.contents = contents  # (device, inode, size, mtime) -> sha256, for this judge's life

    def kind(self, entry: dict) -> str:
        """own, library or glue for one entry of the sampler's by_object."""
        path = str(entry.get("path", ""))
        if entry.get("private_copy") is not False:
            # Written code pages of a GPU math library are still its calls, whatever else they now hold.
            if self.cuda and os.path.basename(path).startswith(GPU_LIBRARIES):
                return "library"
            # Otherwise a written page of code that only launches (a host file's, a small module's).
            return "glue" if self.cuda else "library"
        if not path.startswith("/"):
            if path in KERNEL_MAPPINGS and not entry.get("inode"):
                return "glue"
            return self._foreign(entry)  # anonymous or unmapped code
        if self._host_file(entry, path):
            name = os.path.basename(path)
            if self.cuda:
                return "library" if name.startswith(GPU_LIBRARIES) else "glue"
            interpreter = path == self.python_binary or path.startswith(STDLIB_EXTENSIONS)
            return "glue" if interpreter or glue_library(name) else "library"
        if self._delivered(entry, path):
            return "own"
        return self._foreign(entry)

    def runtime_library(self, entry: dict) -> bool:
        """Whether a library entry is torch's or the C++ runtime's host file (RUNTIME_LIBRARIES), the
        libraries an own kernel's call runs glue in (dispatch, allocation, checks). Code in any other
        library, and anonymous or copied code, is no own kernel's: it is computing for the candidate."""
        path = str(entry.get("path", ""))
        return (entry.get("private_copy") is False and path.startswith("/") and
                os.path.basename(path).startswith(RUNTIME_LIBRARIES) and self._host_file(entry, path))

    def _foreign(self, entry: dict) -> str:
        """Code that is no host file's, no delivered library's: every such sample computes for the
        candidate on the CPU. On a GPU a host thread's own code only launches (Triton's launchers are
        compiled in the runner's scratch, tens of KB), so it is glue there unless it is as large as a
        math library: a copy of one under another name (a scratch file, a memfd) would otherwise run its
        host code unnamed."""
        if not self.cuda:
            return "library"
        size = entry.get("high", 0) - entry.get("low", 0) if isinstance(entry.get("high"), int) and \
            isinstance(entry.get("low"), int) else 0
        return "library" if size > GPU_FOREIGN_CODE_BYTES else "glue"

    @staticmethod
    def _process(entry: dict) -> int | None:
        """The process the sample came from: a runner's tree may hold several, each with mappings of its
        own at the same addresses (red-team round 25 mapped OpenBLAS's kernel in a helper process where
        the interpreter maps the judge's library)."""
        pid = entry.get("pid")
        return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None

    def _open_mapping(self, entry: dict, path: str) -> int | None:
        """A descriptor of the very file the sample's mapping holds, or None. Through the sample's
        process's map_files where the judge may open it (root); else through that process's view of
        the path, believed only when device and inode are the sample's."""
        pid = self._process(entry)
        if pid is None:
            return None
        try:
            return os.open(f"/proc/{pid}/map_files/{int(entry['low']):x}-{int(entry['high']):x}",
                           os.O_RDONLY | os.O_CLOEXEC)
        except (OSError, KeyError, TypeError, ValueError):
            pass
        try:
            fd = os.open(f"/proc/{pid}/root{path}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return None
        if _identity(os.fstat(fd)) != _sampled_identity(entry):
            os.close(fd)
            return None
        return fd

    def _content(self, fd: int) -> str:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ""
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in self.contents:
            self.contents[key] = fd_sha256(fd)
        return self.contents[key]

    def _delivered(self, entry: dict, path: str) -> bool:
        """Whether the mapping's bytes are those of a library the judge sent this runner, in a file
        sealed against any change (the memfd it was delivered in)."""
        sent = self.delivered_fds.get(_sampled_identity(entry))
        if sent is not None:  # the very memfd the judge sealed and sent: its bytes are the delivered ones
            return _loads_code(sent, entry)
        fd = self._open_mapping(entry, path)
        if fd is None:
            return False
        try:
            # A memfd is numbered alike in the maps and by fstat; any other file here is not the sample's.
            if _identity(os.fstat(fd)) != _sampled_identity(entry) or not _write_sealed(fd):
                return False
            if os.fstat(fd).st_size not in self.delivered.values() or not _loads_code(fd, entry):
                return False
            return self._content(fd) in self.delivered
        finally:
            os.close(fd)

    def _host_file(self, entry: dict, path: str) -> bool:
        """Whether the mapping is the host's file at path, read-only inside the sandbox."""
        if path.startswith(self.writable) or path.endswith(" (deleted)"):
            return False
        try:
            host = os.stat(path)
        except OSError:
            return False
        if _identity(host) == _sampled_identity(entry):
            return True
        fd = self._open_mapping(entry, path)  # an overlay filesystem numbers a file two ways
        if fd is None:
            # No map_files (the judge is not root): the path lies where the sandbox can neither write
            # nor mount, so the file there is the mapping's if the runner's view of it is the host's.
            pid = self._process(entry)
            try:
                return pid is not None and _identity(os.stat(f"/proc/{pid}/root{path}")) == _identity(host)
            except OSError:
                return False
        try:
            with open(path, "rb") as f:
                return self._content(f.fileno()) == self._content(fd) != ""
        except OSError:
            return False
        finally:
            os.close(fd)


PT_LOAD, PF_X = 1, 1


def executable_segments(fd: int) -> list[tuple[int, int]]:
    """(page-aligned file offset, page-rounded size) of each executable PT_LOAD segment of a
    little-endian ELF64 file: where a loader maps its code. Empty for anything else."""
    page = os.sysconf("SC_PAGE_SIZE")
    header = os.pread(fd, 64, 0)
    if len(header) < 64 or header[:6] != b"\x7fELF\x02\x01":
        return []
    phoff, = struct.unpack_from("<Q", header, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
    if phentsize != 56 or phnum >= 0xFFFF:  # as glibc's loader: Elf64_Phdr's size, and the count in the header
        return []
    table = os.pread(fd, phentsize * phnum, phoff)
    segments = []
    for i in range(len(table) // phentsize):
        p_type, p_flags, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type == PT_LOAD and p_flags & PF_X:
            start = p_offset - p_offset % page
            segments.append((start, -(-(p_offset + p_filesz - start) // page) * page))
    return segments


def _loads_code(fd: int, entry: dict) -> bool:
    """Whether the sampled mapping starts where a loader maps one of the file's executable segments
    and reaches no further."""
    offset, low, high = entry.get("offset"), entry.get("low"), entry.get("high")
    if not all(isinstance(x, int) for x in (offset, low, high)):
        return False
    try:
        segments = executable_segments(fd)
    except OSError:
        return False
    return any(offset == start and 0 < high - low <= size for start, size in segments)


def _write_sealed(fd: int) -> bool:
    """Whether nothing can change the file's bytes any more: a memfd sealed against writes, growth and
    shrinking, as the judge delivers a library (sandbox.sealed_copy). Any other file could be rewritten
    after its hash was cached, which keys by device, inode, size and mtime."""
    needed = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK
    try:
        return fcntl.fcntl(fd, fcntl.F_GET_SEALS) & needed == needed
    except OSError:
        return False


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return os.major(st.st_dev), os.minor(st.st_dev), st.st_ino


def _sampled_identity(entry: dict) -> tuple:
    return entry.get("dev_major"), entry.get("dev_minor"), entry.get("inode")
