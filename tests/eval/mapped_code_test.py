"""Whose code a sample fell in (python/vinci_worker/mapped_code.py), on a real process: a child that
maps a host library where the host keeps it, copies of it in its scratch folder (one renamed away
after it was mapped, another file linked at its old path, another mapped executable by hand where
no loader would map its code), a delivered file that is no ELF mapped executable, and a memfd named
like libc. The judge's libraries are mapped from memfds sealed against writes, as it delivers them,
and from a plain file and an unsealed memfd too. Each mapping is described the way vinci-cpu-sampler
describes it (from the child's /proc/PID/maps), and the expected kinds follow from the rules by hand:
a name is believed only for the host's own file, own code only by the mapping's bytes in a
write-sealed file (or as the very memfd the judge sealed and sent, by its identity: a judge that may
not open map_files has nothing else) and only where a loader maps the file's code, and never on a
private copy of a page.

    python3 tests/eval/mapped_code_test.py REPO_ROOT
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, f"{sys.argv[1]}/python")
from vinci_worker.mapped_code import MappedCode, executable_segments, glue_library  # noqa: E402
from vinci_worker.sandbox import sealed_copy  # noqa: E402

HOST_LIBRARY = next(p for p in ("/lib/x86_64-linux-gnu/libbz2.so.1.0", "/usr/lib/x86_64-linux-gnu/libbz2.so.1.0",
                                "/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1")
                    if os.path.exists(p))

# The child maps what it is told, says "ready", and sleeps until killed.
CHILD = r"""
import ctypes, fcntl, mmap, os, sys, time
host, copy, renamed, linked_from, memfd_source, by_hand, code_offset, code_size, blob, sent = sys.argv[1:11]
code_offset, code_size = int(code_offset), int(code_size)
def memfd(path, name, seals):
    fd = os.memfd_create(name, os.MFD_ALLOW_SEALING)
    os.write(fd, open(path, "rb").read())
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return f"/proc/self/fd/{fd}"
def sealed(path):
    return memfd(path, os.path.basename(path), fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK |
                 fcntl.F_SEAL_SEAL)
by_hand, blob = sealed(by_hand), sealed(blob)
keep = [ctypes.CDLL(host), ctypes.CDLL(sealed(copy)), ctypes.CDLL(copy), ctypes.CDLL(memfd(copy, "libloose.so", 0))]
def map_exec(path, offset, length):
    with open(path, "rb") as f:
        keep.append(mmap.mmap(f.fileno(), length, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC,
                              offset=offset))
map_exec(by_hand, 0, os.path.getsize(by_hand))
map_exec(by_hand, code_offset, code_size + mmap.PAGESIZE)
map_exec(by_hand, code_offset, code_size)
map_exec(blob, 0, os.path.getsize(blob))
fd = os.memfd_create("x/libc.so.6", 0)
os.write(fd, open(memfd_source, "rb").read())
keep.append(ctypes.CDLL(f"/proc/self/fd/{fd}"))
keep.append(ctypes.CDLL(renamed))
keep.append(ctypes.CDLL(f"/proc/self/fd/{sent}"))
os.rename(renamed, renamed + ".away")
os.link(linked_from, renamed)
print("ready", flush=True)
time.sleep(60)
"""


def executable_mappings(pid: int) -> list[dict]:
    """The child's executable mappings, as vinci-cpu-sampler names them."""
    out = []
    for line in open(f"/proc/{pid}/maps"):
        fields = line.split(maxsplit=5)
        if len(fields) < 5 or "x" not in fields[1]:
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        major, minor = (int(x, 16) for x in fields[3].split(":"))
        path = fields[5].strip() if len(fields) > 5 else "[anonymous]"
        out.append({"pid": pid, "low": low, "high": high, "offset": int(fields[2], 16), "dev_major": major,
                    "dev_minor": minor, "inode": int(fields[4]), "path": path, "private_copy": False,
                    "samples": 1, "cpu_ns": 1000})
    return out


def helper_mapping_kind(code: MappedCode, own: dict, other_bytes: bytes, code_offset: int) -> str:
    """The kind of a sample in this process (a stand-in for a helper the runner forked) at the very
    addresses where the child maps the judge's library (own), where this process maps a memfd of
    other_bytes from code_offset; "unmapped" when those addresses are taken here."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    fd = os.memfd_create("libhelper.so", 0)
    try:
        os.write(fd, other_bytes)
        length = own["high"] - own["low"]
        prot_read_exec, map_shared_fixed_noreplace = 0x1 | 0x4, 0x01 | 0x100000
        at = libc.mmap(own["low"], length, prot_read_exec, map_shared_fixed_noreplace, fd, code_offset)
        if at != own["low"]:
            return "unmapped"
        try:
            st = os.fstat(fd)
            return code.kind(dict(own, pid=os.getpid(), path="/memfd:libhelper.so (deleted)",
                                  dev_major=os.major(st.st_dev), dev_minor=os.minor(st.st_dev), inode=st.st_ino))
        finally:
            libc.munmap(ctypes.c_void_p(own["low"]), length)
    finally:
        os.close(fd)


def as_mapped(path: str) -> str:
    """The path /proc/PID/maps gives a memfd the child named after path's file."""
    return f"/memfd:{os.path.basename(path)} (deleted)"


def sha256(path: str) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + str(detail) if detail else ''}")
    return ok


def main():
    scratch = tempfile.mkdtemp(prefix="mapped-code-")
    copy = os.path.join(scratch, "libcopy.so")
    renamed = os.path.join(scratch, "libgomp_rotated.so")
    delivered = os.path.join(scratch, "libown.so")
    by_hand = os.path.join(scratch, "libmapped.so")
    blob = os.path.join(scratch, "blob.bin")
    shutil.copy(HOST_LIBRARY, copy)
    shutil.copy(HOST_LIBRARY, by_hand)
    with open(blob, "wb") as g:
        g.write(os.urandom(3 * os.sysconf("SC_PAGE_SIZE")))
    fd = os.open(copy, os.O_RDONLY)
    try:
        segments = executable_segments(fd)
    finally:
        os.close(fd)
    if len(segments) != 1:
        print(f"FAIL {HOST_LIBRARY} should have one executable segment, not {segments}")
        return 1
    code_offset, code_size = segments[0]
    # The "judge-built" library and the one rotated away: the host library with bytes appended
    # (still loadable, other contents).
    host_bytes = open(HOST_LIBRARY, "rb").read()
    memfd_source = os.path.join(scratch, "memfd_source")
    for path, tail in ((delivered, b"\0"), (renamed, b"\0\0"), (memfd_source, b"\0\0\0")):
        with open(path, "wb") as g:
            g.write(host_bytes + tail)
    # A library as the judge sends it: a memfd it sealed itself and keeps a descriptor of.
    sent = sealed_copy(copy)
    st = os.fstat(sent)
    sent_fds = {(os.major(st.st_dev), os.minor(st.st_dev), st.st_ino): sent}
    child = subprocess.Popen([sys.executable, "-c", CHILD, HOST_LIBRARY, copy, renamed, delivered, memfd_source,
                              by_hand, str(code_offset), str(code_size), blob, str(sent)], stdout=subprocess.PIPE,
                             text=True, pass_fds=[sent])
    results = []
    try:
        if child.stdout.readline().strip() != "ready":
            print("FAIL the child did not start")
            return 1
        entries = executable_mappings(child.pid)
        delivered_hashes = {sha256(delivered): os.path.getsize(delivered), sha256(copy): os.path.getsize(copy),
                            sha256(blob): os.path.getsize(blob)}

        def kinds(path_test, *, cuda=False, own=delivered_hashes):
            code = MappedCode(scratch, own, cuda, os.path.realpath(sys.executable), {})
            return {code.kind(e) for e in entries if path_test(e["path"])}

        host_real = os.path.realpath(HOST_LIBRARY)
        results.append(check("the host's own library is believed by name (CPU: library)",
                             kinds(lambda p: p == host_real) == {"library"}, kinds(lambda p: p == host_real)))
        results.append(check("... and on a GPU it is not a math library: glue",
                             kinds(lambda p: p == host_real, cuda=True) == {"glue"}))
        libc_kinds = kinds(lambda p: os.path.basename(p).startswith("libc.so") and not p.startswith("/memfd:"))
        results.append(check("the host's libc is glue", libc_kinds == {"glue"}, libc_kinds))
        results.append(check("the interpreter is glue", kinds(lambda p: p == os.path.realpath(sys.executable))
                             in ({"glue"}, set())))
        results.append(check("a copy whose bytes the judge sent, in a sealed memfd, is own",
                             kinds(lambda p: p == as_mapped(copy)) == {"own"}))
        sent_path = f"/memfd:{os.path.basename(copy)} (deleted)"
        sent_entries = [e for e in entries if (e["dev_major"], e["dev_minor"], e["inode"]) in sent_fds]
        by_identity = MappedCode(scratch, {}, False, os.path.realpath(sys.executable), {}, sent_fds)
        results.append(check("the very memfd the judge sealed and sent is own by its identity, with no hash to match "
                             "(a judge that may not open map_files)",
                             bool(sent_entries) and {by_identity.kind(e) for e in sent_entries} == {"own"},
                             [e["path"] for e in sent_entries]))
        results.append(check("... but not at another offset than its code's",
                             {by_identity.kind(dict(e, offset=e["offset"] + os.sysconf("SC_PAGE_SIZE")))
                              for e in sent_entries} == {"library"}))
        twins = [e for e in entries if e["path"] == sent_path and e not in sent_entries]
        results.append(check("... and another sealed memfd of the same bytes and name, not the one sent, is not own "
                             "by identity", bool(twins) and {by_identity.kind(e) for e in twins} == {"library"}))
        results.append(check("the same copy, not sent, is library",
                             kinds(lambda p: p == as_mapped(copy), own={}) == {"library"}))
        results.append(check("the judge's bytes in a file, which could be rewritten under a cached hash, are library",
                             kinds(lambda p: p == copy) == {"library"}))
        results.append(check("... and in a memfd not sealed",
                             kinds(lambda p: p == as_mapped("libloose.so")) == {"library"}))
        loaded = [e for e in entries if e["path"] == as_mapped(copy) and e not in sent_entries]
        results.append(check("the loader maps the copy's code where its executable segment says",
                             [(e["offset"], e["high"] - e["low"]) for e in loaded] == [(code_offset, code_size)],
                             [(e["offset"], e["high"] - e["low"]) for e in loaded]))
        code = MappedCode(scratch, delivered_hashes, False, os.path.realpath(sys.executable), {})
        results.append(check("a helper process's code at the addresses where the runner maps the judge's library "
                             "is the helper's mapping's (red-team round 25)",
                             bool(loaded) and helper_mapping_kind(code, loaded[0], host_bytes + b"\0\0\0\0",
                                                                  code_offset) == "library"))
        results.append(check("a sample whose device and inode are not the file at its address is not own",
                             bool(loaded) and code.kind(dict(loaded[0], inode=loaded[0]["inode"] + 1)) == "library"))
        results.append(check("a sample that names no process is not own",
                             {code.kind({k: v for k, v in e.items() if k != "pid"}) for e in loaded} == {"library"}))
        copied = [dict(e, private_copy=True) for e in loaded]
        results.append(check("a private copy of a page of the judge's own library is not own (CPU: library)",
                             bool(copied) and {code.kind(e) for e in copied} == {"library"}))
        gpu = MappedCode(scratch, delivered_hashes, True, os.path.realpath(sys.executable), {})
        results.append(check("... and glue on a GPU", {gpu.kind(e) for e in copied} == {"glue"}))
        host_copied = [dict(e, private_copy=True) for e in entries if e["path"] == host_real]
        results.append(check("a private copy of a page of a host library is no host code: library",
                             bool(host_copied) and {code.kind(e) for e in host_copied} == {"library"}))
        results.append(check("... and on a GPU a written page of a math library is still the library's",
                             bool(host_copied) and gpu.kind(dict(host_copied[0], path="/usr/lib/libcublasLt.so.13"))
                             == "library"))
        results.append(check("a sample in the kernel (a system call) is glue",
                             code.kind({"path": "[kernel]", "inode": 0, "private_copy": False}) == "glue"
                             and gpu.kind({"path": "[kernel]", "inode": 0, "private_copy": False}) == "glue"))
        results.append(check("an entry that does not say it is no private copy is not own",
                             {code.kind({k: v for k, v in e.items() if k != "private_copy"}) for e in loaded}
                             == {"library"}))
        by_layout = {(e["offset"], e["high"] - e["low"]): code.kind(e) for e in entries
                     if e["path"] == as_mapped(by_hand)}
        page = os.sysconf("SC_PAGE_SIZE")
        results.append(check("the judge's library mapped executable from its start is not own",
                             by_layout.get((0, -(-os.path.getsize(by_hand) // page) * page)) == "library",
                             by_layout))
        results.append(check("... nor from its code's offset past the code's extent",
                             by_layout.get((code_offset, code_size + page)) == "library", by_layout))
        results.append(check("... but its code mapped where a loader maps it is own",
                             by_layout.get((code_offset, code_size)) == "own", by_layout))
        blobs = kinds(lambda p: p == as_mapped(blob))
        results.append(check("a delivered file that is no ELF, mapped executable, is not own", blobs == {"library"},
                             blobs))
        memfd = kinds(lambda p: p.startswith("/memfd:x/libc.so.6"))
        results.append(check("a memfd named libc.so.6 is library, not glue", memfd == {"library"}, memfd))
        results.append(check("... and glue on a GPU (its host code only launches)",
                             kinds(lambda p: p.startswith("/memfd:x/libc.so.6"), cuda=True) == {"glue"}))
        # A math library copied under another name (a scratch file, a memfd) is large: on a GPU its code
        # is a library's by size, where a launcher module's few pages stay glue.
        small = [e for e in entries if e["path"] == copy]
        large = [dict(e, high=e["low"] + (8 << 20)) for e in small]
        results.append(check("on a GPU, foreign code the size of a launcher is glue, the size of a math library is "
                             "library", bool(small) and {gpu.kind(e) for e in small} == {"glue"} and
                             {gpu.kind(e) for e in large} == {"library"} and
                             gpu.kind({"path": "[anonymous]", "inode": 0, "private_copy": False, "low": 0,
                                       "high": 5 << 20}) == "library",
                             [gpu.kind(e) for e in small + large]))
        # The mapping renamed away keeps its dentry's new name; a sample taken before the rename names
        # the old path, where a link to the judge's own library now lies.
        stale = [dict(e, path=renamed) for e in entries if e["path"] == renamed + ".away"]
        results.append(check("a path handed to the judge's own library after the sample is not own",
                             bool(stale) and {code.kind(e) for e in stale} == {"library"},
                             [code.kind(e) for e in stale]))
        vdso = [e for e in entries if e["path"] == "[vdso]"]
        results.append(check("the vdso is glue", {code.kind(e) for e in vdso} <= {"glue"}))
        results.append(check("a path the kernel never names ([vdso] with an inode) is not glue",
                             code.kind({"path": "[vdso]", "inode": 5, "low": 0, "high": 1}) == "library"))
        results.append(check("anonymous code is library", code.kind({"path": "[anonymous]", "inode": 0}) == "library"))
        # Torch's and the C++ runtime's libraries are where an own kernel's call runs glue; any other
        # library code is foreign (red-team round 31: OpenBLAS on part of the work).
        def file_entry(path: str, **extra) -> dict:
            st = os.stat(path)
            return dict({"pid": child.pid, "path": path, "dev_major": os.major(st.st_dev),
                         "dev_minor": os.minor(st.st_dev), "inode": st.st_ino, "private_copy": False}, **extra)
        import torch
        libtorch = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
        results.append(check("torch's own library, the host's file, is a runtime library",
                             code.runtime_library(file_entry(os.path.realpath(libtorch)))))
        results.append(check("... but not a page of it copied", not code.runtime_library(
            file_entry(os.path.realpath(libtorch), private_copy=True))))
        results.append(check("another host library is foreign", bool(entries) and not any(
            code.runtime_library(e) for e in entries if e["path"] == host_real)))
        named_like_torch = os.path.join(scratch, "libtorch_cpu.so")
        shutil.copy(HOST_LIBRARY, named_like_torch)
        results.append(check("a file named like torch's in the runner's scratch is foreign",
                             not code.runtime_library(file_entry(named_like_torch))))
        results.append(check("anonymous code is foreign", not code.runtime_library({"path": "[anonymous]", "inode": 0,
                                                                                    "private_copy": False})))
        libc = next(e["path"] for e in entries if os.path.basename(e["path"]).startswith("libc.so")
                    and not e["path"].startswith("/memfd:"))
        disguised = [dict(e, path=libc) for e in entries if e["path"].startswith("/memfd:x/libc.so.6")]
        results.append(check("libc's name over other bytes is not believed",
                             bool(disguised) and {code.kind(e) for e in disguised} == {"library"}))
        # Glue libraries are named whole (red-team round 35): a host library whose name only begins
        # like one (DPDK's librte_*, dlib's libdlib) is a library like any other.
        glue_names = ("libc.so.6", "libc-2.31.so", "libm.so.6", "ld-linux-x86-64.so.2", "libpthread.so.0", "libdl.so.2",
                      "librt.so.1", "libpython3.11.so.1.0", "libtorch_python.so", "libc10.so", "libgomp.so.1",
                      "libgomp-a34b3233.so.1", "libcufile.so.0")
        other_names = ("librte_eal.so.23", "libdlib.so.19", "libc10_cuda.so", "libmvec.so.1", "libcblas.so.3",
                       "libpython_blas.so", "libm.so.6.evil", "libcufile_rdma.so.1", "libcufft.so.12")
        results.append(check("glue libraries by their whole names", all(map(glue_library, glue_names)) and
                             not any(map(glue_library, other_names)),
                             str([n for n in glue_names if not glue_library(n)] +
                                 [n for n in other_names if glue_library(n)])))
    finally:
        child.kill()
        child.wait()
        os.close(sent)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
