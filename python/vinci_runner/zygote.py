"""python -m vinci_runner zygote: runners forked from one sandboxed interpreter that has torch imported.

A runner's start-up is mostly the import of torch (about 2.5 s of CPU on the 2-core CI machine,
most of a rejected candidate's cost). The zygote pays it once: it runs in a sandbox of its own
(vinci-sandbox --zygote: the runners' view of the filesystem, no network) and imports the runner's
modules, and for each runner the judge asks for it forks, and the fork gets a sandbox of its own
before any candidate code exists:

  zygote ─ fork ─> keeper: a user, mount, pid, network, IPC and UTS namespace of its own; it waits
                   for the namespace's end and writes the exit status to the judge's status pipe
             └ fork ─> init (pid 1 there): a private tmpfs over the scratch folder, /tmp and
                       /dev/shm, /dev read-only; it reaps orphans and ends with the runner, which
                       takes everything left in the namespace along
                 └ fork ─> runner: its rlimits, its descriptors and no other; it names itself to the
                           judge by one byte whose sender the kernel reports (SCM_CREDENTIALS), waits
                           until the judge has moved it into the sandbox's cgroups (vinci-sandbox
                           --adopt), drops every capability, installs the whole seccomp filter (the
                           zygote's own leaves out unshare and mount) and serves as runner.py does.

No candidate ever runs in the zygote, the keeper or init; all three are not dumpable, outside the
runner's pid namespace, and out of reach of its signals (pidfd_send_signal is filtered). Runners are
forked one at a time, when needed, so no two candidates are alive beside the same zygote, and
nothing one runner writes is seen by the next: each gets fresh tmpfs mounts and namespaces.
"""
from __future__ import annotations

import ctypes
import gc
import os
import signal
import sys

from .channel import Channel, ChannelClosed

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 1, 2, 4, 8, 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME = 0x4000, 1 << 18, 1 << 21
PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 4, 22, 24, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL, SECCOMP_MODE_FILTER = 4, 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522
# statvfs's f_flag bits and the mount flags they stand for: a bind remount must keep the locked ones.
_KEPT_FLAGS = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME, 4096: MS_RELATIME}


RUNNER_FILTER = "vinci-runner-seccomp"  # src/core/sandbox.h, kRunnerFilterName


class SetupError(Exception):
    pass


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise SetupError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(source.encode() if source else None, target.encode(), fstype.encode() if fstype else None,
                       flags, data.encode() if data else None), f"mount {target}")


def _prctl(option: int, arg: int = 0) -> int:
    return _libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _install_filter(program: bytes) -> None:
    count = len(program) // ctypes.sizeof(_SockFilter)
    if count == 0 or count * ctypes.sizeof(_SockFilter) != len(program):
        raise SetupError(f"the runners' seccomp program is {len(program)} bytes, not whole instructions")
    instructions = (_SockFilter * count).from_buffer_copy(program)
    fprog = _SockFprog(count, instructions)
    _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
    _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), "seccomp")


def _drop_capabilities() -> None:
    """Every capability the runner's new user namespace gave it, from every set."""
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() == 22:  # EINVAL: past the last capability
            break
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")


def _keep_only(fds: list[int]) -> None:
    for fd in os.listdir("/proc/self/fd"):
        n = int(fd)
        if n > 2 and n not in fds:
            try:
                os.close(n)
            except OSError:
                pass


def _exit_code(raw: int) -> int:
    code = os.waitstatus_to_exitcode(raw)
    return 128 - code if code < 0 else code


def _forked(body, log_fd: int, what: str) -> int:
    """Forks a child that runs body() and exits with its code; an exception is written to log_fd as
    the reason it failed (status 125). The child never returns into its parent's code."""
    pid = os.fork()
    if pid:
        return pid
    code = 125
    try:
        code = body()
    except BaseException as e:  # noqa: BLE001 - the log says why; the exit status says it failed
        try:
            os.write(log_fd, f"vinci zygote: {what}: {e}\n".encode())
        except OSError:
            pass
    finally:
        os._exit(code)


def _runner(req: dict, fds: dict, program: bytes) -> int:
    import resource

    from .runner import serve

    _prctl(PR_SET_DUMPABLE, 1)  # as any runner: the judge reads its memory
    os.chdir(req["cwd"])
    for name, limit in (("RLIMIT_FSIZE", req.get("file_size")), ("RLIMIT_CPU", req.get("cpu_seconds")),
                        ("RLIMIT_AS", req.get("address_space")), ("RLIMIT_NOFILE", 4096), ("RLIMIT_CORE", 0)):
        if limit is not None and (limit or name == "RLIMIT_CORE"):
            resource.setrlimit(getattr(resource, name), (int(limit), int(limit)))
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fds["log"], 1)
    os.dup2(fds["log"], 2)
    control, buffer, inputs = fds["control"], fds.get("buffer", -1), fds.get("inputs", -1)
    _keep_only([control, buffer, inputs])
    # Its name for the judge is the one the kernel attaches to this byte; then it waits to be moved
    # into the sandbox's cgroups, before anything a candidate sent can run.
    os.write(control, b"h")
    if os.read(control, 1) != b"g":
        return 125
    _drop_capabilities()
    _install_filter(program)
    return serve(control, buffer, inputs, req["device"])


def _init(req: dict, fds: dict, program: bytes) -> int:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Parents first: a scratch folder under /tmp is made again in the fresh /tmp before its own mount.
    for path, size in sorted(req["tmpfs"], key=lambda m: m[0].rstrip("/").count("/")):
        os.makedirs(path, exist_ok=True)
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(size)},mode=1777")
    # /dev is the zygote's, shared by every runner it forks: nothing may be left there for the next.
    flags = os.statvfs("/dev").f_flag
    kept = sum(ms for bit, ms in _KEPT_FLAGS.items() if flags & bit)
    _mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept)
    # Its stderr, not the log's descriptor: the runner keeps only its own once it has them in place.
    runner = _forked(lambda: _runner(req, fds, program), 2, "the runner could not start")
    _keep_only([])
    while True:
        pid, raw = os.wait()
        if pid == runner:
            return _exit_code(raw)


def map_own_ids(uid: int, gid: int) -> None:
    """In a user namespace just unshared: the caller's ids, and only them, as they were outside."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def _keeper(req: dict, fds: dict, program: bytes) -> int:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # A session, and so a scheduler autogroup, of its own: the zygote's is writable through its /proc
    # (round 19 set its nice to 19), and would be every later runner's.
    os.setsid()
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
           "unshare")
    map_own_ids(uid, gid)
    init = _forked(lambda: _init(req, fds, program), fds["log"], "the runner's sandbox could not be made")
    status = fds["status"]
    _keep_only([status])
    _, raw = os.waitpid(init, 0)
    os.write(status, f"{_exit_code(raw)}\n".encode())
    return 0


def _runner_filter() -> bytes:
    """The runners' whole seccomp program, from the memfd vinci-sandbox --zygote left open for it (by
    name: an environment variable would stay in every runner's /proc/self/environ); closed after."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(f"/memfd:{RUNNER_FILTER} "):
            n, program = int(fd), b""
            while chunk := os.pread(n, 1 << 16, len(program)):
                program += chunk
            os.close(n)
            return program
    raise SetupError(f"no memfd {RUNNER_FILTER} among the zygote's descriptors (started without vinci-sandbox --zygote?)")


def serve(control_fd: int, cuda: bool) -> int:
    from . import inputs, runner  # noqa: F401 - imported here once, for every runner forked

    runner.warm_up_interpreter(cuda)
    if len(os.listdir("/proc/self/task")) != 1:
        raise SetupError("the zygote has more than one thread after its imports: forking it is not safe")
    program = _runner_filter()
    _prctl(PR_SET_DUMPABLE, 0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    # The collector then never walks the imported objects in a runner, whose every page it would copy.
    gc.collect()
    gc.freeze()
    channel = Channel.from_fd(control_fd)
    channel.send({"op": "zygote", "ok": True})
    while True:
        try:
            req = channel.receive()
        except (ChannelClosed, OSError):
            return 0
        received = req.pop("fds", [])
        if req.get("op") != "spawn" or len(received) != len(req.get("names", ())):
            for fd in received:
                os.close(fd)
            if req.get("op") == "exit":
                return 0
            channel.send({"ok": False, "message": f"unknown request {req.get('op')!r}"})
            continue
        fds = dict(zip(req["names"], received))
        _forked(lambda: _keeper(req, fds, program), fds["log"], "the runner's keeper failed")
        for fd in received:
            os.close(fd)
        channel.send({"ok": True})


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
