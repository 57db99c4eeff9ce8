"""Whose code a sample fell in (python/vinci_worker/mapped_code.py), on a real process: a child that
maps a host library where the host keeps it, copies of it in its scratch folder (one renamed away
after it was mapped, another file linked at its old path), and a memfd named like libc. Each
mapping is described the way vinci-cpu-sampler describes it (from the child's /proc/PID/maps), and
the expected kinds follow from the rules by hand: a name is believed only for the host's own file,
own code only by the mapping's bytes.

    python3 tests/eval/mapped_code_test.py REPO_ROOT
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, f"{sys.argv[1]}/python")
from vinci_worker.mapped_code import MappedCode  # noqa: E402

HOST_LIBRARY = next(p for p in ("/lib/x86_64-linux-gnu/libbz2.so.1.0", "/usr/lib/x86_64-linux-gnu/libbz2.so.1.0",
                                "/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1")
                    if os.path.exists(p))

# The child maps what it is told, says "ready", and sleeps until killed.
CHILD = r"""
import ctypes, os, sys, time
host, copy, renamed, linked_from, memfd_source = sys.argv[1:6]
keep = [ctypes.CDLL(host), ctypes.CDLL(copy)]
fd = os.memfd_create("x/libc.so.6", 0)
os.write(fd, open(memfd_source, "rb").read())
keep.append(ctypes.CDLL(f"/proc/self/fd/{fd}"))
keep.append(ctypes.CDLL(renamed))
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
        out.append({"pid": pid, "low": low, "high": high, "dev_major": major, "dev_minor": minor,
                    "inode": int(fields[4]), "path": path, "samples": 1})
    return out


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
    shutil.copy(HOST_LIBRARY, copy)
    # The "judge-built" library and the one rotated away: the host library with bytes appended
    # (still loadable, other contents).
    host_bytes = open(HOST_LIBRARY, "rb").read()
    memfd_source = os.path.join(scratch, "memfd_source")
    for path, tail in ((delivered, b"\0"), (renamed, b"\0\0"), (memfd_source, b"\0\0\0")):
        with open(path, "wb") as g:
            g.write(host_bytes + tail)
    child = subprocess.Popen([sys.executable, "-c", CHILD, HOST_LIBRARY, copy, renamed, delivered, memfd_source],
                             stdout=subprocess.PIPE, text=True)
    results = []
    try:
        if child.stdout.readline().strip() != "ready":
            print("FAIL the child did not start")
            return 1
        entries = executable_mappings(child.pid)
        delivered_hashes = {sha256(delivered): os.path.getsize(delivered), sha256(copy): os.path.getsize(copy)}

        def kinds(path_test, *, cuda=False, own=delivered_hashes):
            code = MappedCode(child.pid, scratch, own, cuda, os.path.realpath(sys.executable), {})
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
        results.append(check("a copy whose bytes the judge sent is own", kinds(lambda p: p == copy) == {"own"}))
        results.append(check("the same copy, not sent, is library",
                             kinds(lambda p: p == copy, own={}) == {"library"}))
        memfd = kinds(lambda p: p.startswith("/memfd:x/libc.so.6"))
        results.append(check("a memfd named libc.so.6 is library, not glue", memfd == {"library"}, memfd))
        results.append(check("... and glue on a GPU (its host code only launches)",
                             kinds(lambda p: p.startswith("/memfd:"), cuda=True) == {"glue"}))
        # The mapping renamed away keeps its dentry's new name; a sample taken before the rename names
        # the old path, where a link to the judge's own library now lies.
        stale = [dict(e, path=renamed) for e in entries if e["path"] == renamed + ".away"]
        code = MappedCode(child.pid, scratch, delivered_hashes, False, os.path.realpath(sys.executable), {})
        results.append(check("a path handed to the judge's own library after the sample is not own",
                             bool(stale) and {code.kind(e) for e in stale} == {"library"},
                             [code.kind(e) for e in stale]))
        vdso = [e for e in entries if e["path"] == "[vdso]"]
        results.append(check("the vdso is glue", {code.kind(e) for e in vdso} <= {"glue"}))
        results.append(check("a path the kernel never names ([vdso] with an inode) is not glue",
                             code.kind({"path": "[vdso]", "inode": 5, "low": 0, "high": 1}) == "library"))
        results.append(check("anonymous code is library", code.kind({"path": "[anonymous]", "inode": 0}) == "library"))
        libc = next(e["path"] for e in entries if os.path.basename(e["path"]).startswith("libc.so")
                    and not e["path"].startswith("/memfd:"))
        disguised = [dict(e, path=libc) for e in entries if e["path"].startswith("/memfd:")]
        results.append(check("libc's name over other bytes is not believed",
                             bool(disguised) and {code.kind(e) for e in disguised} == {"library"}))
    finally:
        child.kill()
        child.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
