"""Starting sandboxed processes through the vinci-sandbox launcher, and what each may see.

Starting sandboxed processes (candidate runners, build-step imports, compiles) through the
vinci-sandbox launcher, and what each of them may see.

The view is an allow-list: the system's read-only directories (the launcher's), the Python that runs
the worker and its installed packages (never the working directory, $HOME or a folder above them),
python/vinci_runner at /vinci/lib, and per process what its policy names (a candidate and its task
as single files for the build step's import; a compile's headers and staging folder); a private
tmpfs scratch is the only place a candidate can write. The task suite, the worker's own sources,
the extension cache (built libraries reach a runner as descriptors), the result and baseline caches
are not there. The environment is an allow-list too. A process's stdout and stderr come back
through a pipe into a capped log.

Every assembler a compiler in the sandbox would run is vinci-as-guard there (toolchain.py), the real
one bound under ASSEMBLER_ROOT at its own path: a build's library then holds only code compiled from
its sources. A built library reaches a runner as a sealed memfd (sealed_copy): nothing can change its
bytes after the judge hashed them, and the runner maps it in place.
"""
from __future__ import annotations

import fcntl
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from vinci_runner.channel import Channel, ProtocolError, SharedBuffer

from . import toolchain

MAX_COMPILES = 16  # load_inline calls one candidate may have compiled

RUNNER_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "vinci_runner")
LIB = "/vinci/lib"
CANDIDATE_DIR = "/vinci/candidate"
TASK_DIR = "/vinci/task"
ASSEMBLER_ROOT = "/vinci/tools/real"  # where vinci-as-guard finds the assembler it stands in for
ASSEMBLER_GUARD = "vinci-as-guard"  # beside the vinci-sandbox launcher
# A delivered library's seals: its bytes can no longer change, nor its seals.
SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL


class CappedLog:
    """Reads a pipe to its end in a thread, keeping the first and the last `cap` bytes."""

    def __init__(self, fd: int, cap: int = 64 << 10):
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.thread = threading.Thread(target=self._pump, args=(fd,), daemon=True)
        self.thread.start()

    def _pump(self, fd: int) -> None:
        with os.fdopen(fd, "rb", buffering=0) as f:
            while True:
                chunk = f.read(65536)
                if not chunk:
                    return
                room = self.cap - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                self.tail += chunk
                if len(self.tail) > self.cap:
                    self.dropped += len(self.tail) - self.cap
                    del self.tail[:len(self.tail) - self.cap]

    def text(self, wait: float = 1.0) -> str:
        self.thread.join(wait)
        middle = f"\n[... {self.dropped} bytes dropped ...]\n" if self.dropped else ""
        return (bytes(self.head) + middle.encode() + bytes(self.tail)).decode("utf-8", "replace")

    def last_lines(self, n: int = 12) -> str:
        return "\n".join(self.text().splitlines()[-n:])

    def save(self, path: str | None) -> None:
        """Writes the capped text to path (atomically: a reader sees the old log or the new)."""
        if not path:
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(self.text())
        os.replace(tmp, path)


class Sandboxed:
    """One sandboxed process: its launcher, its control channel, its shared buffers (outputs it
    delivers, inputs it is given), its log."""

    def __init__(self, proc: subprocess.Popen, channel: Channel, buffers: dict[str, SharedBuffer], log: CappedLog,
                 scratch: str, tree: int | None = None, interpreter: int | None = None, owns_scratch: bool = True):
        self.proc = proc  # the launcher: its pid names the sandbox's cgroups, its exit status is the sandbox's
        # The process under which every process of the sandbox is (the launcher, or a zygote's init),
        # and the runner's interpreter where it is known from the start (a zygote's runner).
        self.tree = tree if tree is not None else proc.pid
        self.interpreter = interpreter
        self.channel = channel
        self.buffers = buffers
        self.buffer = buffers.get("buffer")
        self.inputs = buffers.get("inputs")
        self.log = log
        self.scratch = scratch  # the private folder it may write, at this path inside its sandbox
        self.owns_scratch = owns_scratch  # the folder is this sandbox's on the host too (not a zygote's)
        self.compiles = 0
        self.delivered: dict[str, int] = {}  # sha256 -> size of each library sent to it: its own compiled code
        # (major, minor, inode) -> the judge's descriptor of each sealed memfd sent: where the judge may
        # not open a runner's map_files (not root), a sampled mapping is known as one by its identity.
        self.delivered_fds: dict[tuple[int, int, int], int] = {}

    def ask(self, message: dict | None, timeout: float, compiler=None, fds: list[int] = (),
            keep_fds: bool = False) -> dict:
        """Sends message (if any, with fds) and returns the next reply that is not a compile request;
        compile requests are served on the way (by compiler.compile(arguments)), and the time they
        take is not counted against timeout: a compile has a limit of its own. Descriptors a reply
        carries are closed unless keep_fds (then reply["fds"] is the caller's to close)."""
        if message is not None:
            self.channel.send(message, list(fds))
        deadline = time.monotonic() + timeout
        while True:
            reply = self.channel.receive(max(0.0, deadline - time.monotonic()))
            if reply.get("op") != "compile" or compiler is None:
                if not keep_fds:
                    for fd in reply.pop("fds", []):
                        os.close(fd)
                return reply
            for fd in reply.pop("fds", []):
                os.close(fd)
            self.compiles += 1
            if self.compiles > MAX_COMPILES:
                raise ProtocolError(f"more than {MAX_COMPILES} load_inline compiles requested")
            t0 = time.monotonic()
            self._send_build(compiler.compile(reply.get("args")))
            deadline += time.monotonic() - t0

    def _send_build(self, built: dict) -> None:
        """A compile's answer: the library as a sealed memfd (its path in the cache stays unseen), hashed
        after it was sealed: the bytes the judge counts as own are the bytes the runner maps."""
        answer = {k: built[k] for k in ("ok", "log", "reason", "key") if k in built}
        if not built.get("ok"):
            self.channel.send(answer)
            return
        fd = sealed_copy(built["path"])
        try:
            st = os.fstat(fd)
            self.delivered[fd_sha256(fd)] = st.st_size
            self.channel.send(answer, [fd])
        except BaseException:
            os.close(fd)
            raise
        self.delivered_fds[(os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)] = fd

    def exit_status(self, wait: float = 5.0) -> int | None:
        try:
            return self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        """Ends the process and everything it started (the launcher takes the pid namespace along)."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(3)
            except (subprocess.TimeoutExpired, OSError):
                self.proc.kill()
                self.proc.wait()
        self.channel.close()
        for b in self.buffers.values():
            b.close()
        for fd in self.delivered_fds.values():
            os.close(fd)
        self.delivered_fds.clear()
        if self.owns_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


def sealed_copy(path: str) -> int:
    """A memfd holding the file's bytes, sealed against any change (SEALS), at offset 0."""
    fd = os.memfd_create(os.path.basename(path), os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        os.lseek(fd, 0, os.SEEK_SET)
        return fd
    except BaseException:
        os.close(fd)
        raise


def file_sha256(path: str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return fd_sha256(fd)
    finally:
        os.close(fd)


def fd_sha256(fd: int) -> str:
    """The sha256 of an open file's bytes, read from its start (its offset is left alone)."""
    import hashlib
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


def describe_exit(code: int | None) -> tuple[str, str, str]:
    """(class, reason, words) for a sandboxed process that ended on its own."""
    if code is None:
        return "runtime_error", "crashed", "did not exit"
    if code >= 128:
        sig = code - 128
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGXCPU:
            return "timeout", "cpu_time", f"was killed by {name} (its CPU-time limit)"
        if sig == signal.SIGKILL:
            return "runtime_error", "killed", f"was killed by {name} (out of memory, or a limit)"
        return "runtime_error", "crashed", f"was killed by {name}"
    if code == 125:
        return "runtime_error", "sandbox", "could not be sandboxed (vinci-sandbox failed; see the log)"
    return "runtime_error", "exited", f"exited with code {code}"


def _private(path: str) -> bool:
    """A folder whose binding would show the evaluator's working directory or $HOME: the filesystem
    root, $HOME, and any folder that holds either."""
    real = os.path.realpath(path)
    for inside in (os.getcwd(), os.path.expanduser("~")):
        inside = os.path.realpath(inside)
        if real == inside or inside.startswith(real.rstrip("/") + "/") or real == "/":
            return True
    return False


def _installed(path: str, prefixes: set[str]) -> bool:
    """Whether a sys.path entry is part of an installed Python (its standard library or a package
    folder), as opposed to the folder the worker was started from or a PYTHONPATH of the user's."""
    if not path or not os.path.isdir(path) or _private(path):
        return False
    real = os.path.realpath(path)
    if os.path.basename(real) in ("site-packages", "dist-packages"):
        return True
    return any(real == p or real.startswith(p.rstrip("/") + "/") for p in prefixes) and real != os.path.realpath(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def gpu_node_of(uuid: str, driver_root: str = "/proc/driver/nvidia/gpus") -> str | None:
    """The device node (nvidiaN) of the GPU with this UUID, from the driver's information files; None
    where none names it. A CUDA process holds every GPU's node whatever CUDA_VISIBLE_DEVICES says
    (seen on two H200s), so the node is found by the GPU's identity, not by what its judge holds."""
    want = re.sub(r"[^0-9a-f]", "", uuid.lower().removeprefix("gpu-"))
    for info in sorted(glob.glob(os.path.join(driver_root, "*", "information"))):
        try:
            with open(info, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        named = re.search(r"GPU UUID:\s*(\S+)", text)
        minor = re.search(r"Device Minor:\s*(\d+)", text)
        if named and minor and re.sub(r"[^0-9a-f]", "", named.group(1).lower().removeprefix("gpu-")) == want:
            return f"nvidia{minor.group(1)}"
    return None


class Launcher:
    def __init__(self, binary: str, work_root: str, cuda: bool, limits: dict):
        self.binary = binary
        self.cuda = cuda
        # A judge sets its own GPU's node (gpu_node_of): its runners then get that GPU alone on a
        # multi-GPU host. None: every node (builds, and a host whose driver files do not say).
        self.gpu_nodes: list[str] | None = None
        self.gpu_uuid = ""  # with gpu_nodes: the runner's CUDA_VISIBLE_DEVICES (its index in a view of one GPU is 0)
        self.limits = limits
        self.work_root = work_root
        os.makedirs(work_root, exist_ok=True)
        try:
            probe = subprocess.run([binary, "--probe"], capture_output=True, text=True, timeout=60)
            info = json.loads(probe.stdout)
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            raise RuntimeError(f"the sandbox launcher {binary} did not answer --probe: {e}") from None
        self.mode = info["mode"]
        self.description = info["describe"]
        # Per-sandbox cgroups the launcher makes on this host: the CPU clock and the freeze rely on
        # them wherever the host has them, never on whether one happens to exist yet.
        self.cpu_cgroup = bool(info.get("cpu_cgroup"))
        self.freezer_cgroup = bool(info.get("freezer_cgroup"))
        # The interpreter as invoked (a virtualenv's python is a link whose folder holds the
        # environment's tools, ninja among them), and the binary it resolves to.
        self.python = os.path.abspath(sys.executable)
        self.python_binary = os.path.realpath(sys.executable)
        prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        self.site_paths = [os.path.realpath(p) for p in sys.path if _installed(p, prefixes)]
        paths = [*prefixes, os.path.dirname(self.python), os.path.dirname(self.python_binary), *self.site_paths]
        self.python_paths = sorted({os.path.realpath(p) for p in paths})
        self.assembler_guard = os.path.join(os.path.dirname(os.path.abspath(binary)), ASSEMBLER_GUARD)
        if not os.access(self.assembler_guard, os.X_OK):
            raise RuntimeError(f"no {ASSEMBLER_GUARD} beside the sandbox launcher {binary}: builds would be unguarded")
        cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or ""
        if not cuda_home and shutil.which("nvcc"):
            cuda_home = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("nvcc"))))
        self.cuda_home = cuda_home
        # Toolchains installed beside the system (CXX=/opt/gcc/bin/g++, CUDA under /opt, libraries on
        # LD_LIBRARY_PATH) are part of what a build or a run needs to see, read-only.
        for var in ("CXX", "CC", "CUDAHOSTCXX"):
            tool = shutil.which(os.environ.get(var, "")) if os.environ.get(var) else None
            if tool:
                self.python_paths.append(os.path.dirname(os.path.dirname(os.path.realpath(tool))))
        self.python_paths += [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d and os.path.isdir(d)]
        if cuda_home:
            self.python_paths.append(os.path.realpath(cuda_home))
        self.python_paths = sorted({os.path.realpath(p) for p in self.python_paths if not _private(p)})
        path = list(dict.fromkeys([os.path.dirname(self.python), os.path.dirname(self.python_binary),
                                   "/usr/local/bin", "/usr/bin", "/bin"]))
        if cuda_home:
            path.insert(1, os.path.join(cuda_home, "bin"))
        self.path = ":".join(path)  # the sandbox's PATH
        self.assemblers = toolchain.assemblers(self.path)  # each replaced by the guard in every sandbox
        self.unguarded = toolchain.unguarded(self.path)  # compilers that assemble where no guard can see

    def _environment(self, scratch: str) -> dict:
        env = {"PATH": self.path, "HOME": scratch, "TMPDIR": scratch,
               "PYTHONPATH": ":".join([LIB] + self.site_paths), "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONUNBUFFERED": "1", "PYTHONNOUSERSITE": "1",
               # Freed blocks stay in the heap instead of going back to the kernel and faulting in
               # again: the same memory traffic every call, for the candidate and the reference alike.
               "MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
               "TRITON_CACHE_DIR": os.path.join(scratch, "triton"),
               "TORCHINDUCTOR_CACHE_DIR": os.path.join(scratch, "inductor"),
               "TORCH_EXTENSIONS_DIR": os.path.join(scratch, "torch_extensions"),
               "TORCHINDUCTOR_COMPILE_THREADS": "1", "LANG": "C.UTF-8"}
        for k in ("CUDA_VISIBLE_DEVICES", "TORCH_CUDA_ARCH_LIST", "CXX", "CC", "CUDAHOSTCXX", "MAX_JOBS", "LD_LIBRARY_PATH",
                  "NVIDIA_VISIBLE_DEVICES"):
            if k in os.environ:
                env[k] = os.environ[k]
        if self.cuda_home:
            env["CUDA_HOME"] = self.cuda_home
        if self.cuda:
            # The runner's outputs are read by the judge in place: expandable segments make torch's
            # pages shareable allocations (device_memory), for candidates and references alike.
            env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        else:
            env["CUDA_VISIBLE_DEVICES"] = ""
            # The judge times the CPU time of every thread: one thread per runner, and no OpenMP
            # threads spinning after a parallel region on time no call asked for.
            env["OMP_NUM_THREADS"] = "1"
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        return env

    def spawn(self, args: list[str], *, read_only=(), read_only_as=(), read_write=(), buffers: dict | None = None,
              env: dict | None = None, file_size: int = 64 << 20, scratch_bytes: int = 1 << 30,
              cpu_seconds: int = 0, address_space: int = 0, zygote: bool = False, gpu: bool | None = None) -> Sandboxed:
        """Starts `python -m vinci_runner ARGS` in the sandbox with a control socket (its descriptor
        is substituted for {control}) and shared buffers of the sizes named in buffers (each name's
        descriptor for {name}). gpu=False on a GPU host: no device node and no visible device (the
        build step's import, whose candidate code must not reach the GPU others are timed on)."""
        gpu = self.cuda if gpu is None else gpu and self.cuda
        scratch = tempfile.mkdtemp(prefix="sbx-", dir=self.work_root)
        os.chmod(scratch, 0o777)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        shared = {name: SharedBuffer.create(size) for name, size in (buffers or {}).items() if size}
        fds = [theirs.fileno()] + [b.fd for b in shared.values()]
        command = []
        for a in args:
            a = a.replace("{control}", str(theirs.fileno()))
            for name in buffers or {}:
                a = a.replace("{" + name + "}", str(shared[name].fd) if name in shared else "-1")
            command.append(a)
        launcher = [self.binary]
        for p in self.python_paths:
            launcher += ["--ro", p]
        launcher += ["--ro-as", f"{RUNNER_PACKAGE}={LIB}/vinci_runner"]
        for p in read_only:
            launcher += ["--ro", p]
        for src, dst in read_only_as:
            launcher += ["--ro-as", f"{src}={dst}"]
        for assembler in self.assemblers:
            launcher += ["--ro-as", f"{assembler}={ASSEMBLER_ROOT}{assembler}",
                         "--ro-as", f"{self.assembler_guard}={assembler}"]
        for p in read_write:
            launcher += ["--rw", p]
        launcher += ["--tmpfs", f"{scratch}={scratch_bytes}", "--tmpfs", f"/tmp={scratch_bytes}",
                     "--tmpfs", f"/dev/shm={64 << 20}", "--cwd", scratch]
        if gpu:
            launcher.append("--gpu")
            for node in self.gpu_nodes or ():
                launcher += ["--gpu-node", node]
        if zygote:
            launcher.append("--zygote")
        blind = {} if gpu or not self.cuda else {"CUDA_VISIBLE_DEVICES": ""}
        if gpu and self.gpu_nodes and self.gpu_uuid:
            blind = {"CUDA_VISIBLE_DEVICES": self.gpu_uuid}
        for k, v in {**self._environment(scratch), **blind, **(env or {})}.items():
            launcher += ["--env", f"{k}={v}"]
        for fd in fds:
            launcher += ["--keep-fd", str(fd)]
        launcher += ["--fsize", str(file_size), "--max-pids", str(self.limits.get("max_pids", 1024))]
        if cpu_seconds:
            launcher += ["--cpu", str(cpu_seconds)]
        if address_space and not self.cuda:
            launcher += ["--as", str(address_space)]
        launcher += ["--", self.python, "-m", "vinci_runner", *command]
        log_read, log_write = os.pipe()
        try:
            proc = subprocess.Popen(launcher, pass_fds=fds, stdin=subprocess.DEVNULL, stdout=log_write,
                                    stderr=log_write, start_new_session=True)
        finally:
            os.close(log_write)
            theirs.close()
        return Sandboxed(proc, Channel(ours), shared, CappedLog(log_read), scratch)


def wait_for(sandboxed: Sandboxed, seconds: float) -> None:
    """Waits up to `seconds` for a sandboxed process to end by itself."""
    deadline = time.monotonic() + seconds
    while sandboxed.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
