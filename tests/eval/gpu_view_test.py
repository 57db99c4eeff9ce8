"""What of the GPU a sandbox sees on a GPU host (python/vinci_worker/build.py, sandbox.py):
- the build step's import runs without the GPU, since its candidate code runs beside other
  candidates' timed windows and the reference's baselines: the launcher's command for
  spawn(gpu=False) binds no device node (no --gpu) and makes no device visible (CUDA_VISIBLE_DEVICES
  empty); a plain spawn there keeps both;
- a judge's runners get its own GPU's node alone (--gpu-node; gpu_node_of finds it by the GPU's
  UUID in the driver's information files, here a folder written like /proc/driver/nvidia/gpus), so
  no kernel of theirs reaches another judge's GPU on a multi-GPU host;
- an import that raised, died or hung there is not the candidate's verdict on a GPU host (it may have
  needed the GPU): the build passes it on to its runner; on a CPU host it stands, and a compile
  failure stands everywhere.
CI has no GPU: the launcher's process start is recorded instead of made, and the import is a stub.

    python3 tests/eval/gpu_view_test.py REPO_ROOT SANDBOX_BINARY
"""
import contextlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, failures  # noqa: E402
from vinci_runner.channel import ChannelClosed  # noqa: E402
from vinci_worker import build, sandbox  # noqa: E402

started = []


class Recorded:
    """What subprocess.Popen would have started."""

    def __init__(self, argv, **_):
        started.append(argv)
        self.pid = 0


def command(launcher: sandbox.Launcher, **kwargs) -> list[str]:
    started.clear()
    launcher.spawn(["import", "--control", "{control}"], **kwargs)
    return started[-1]


def env_of(argv: list[str]) -> dict:
    return dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--env")


work = tempfile.mkdtemp(prefix="build-import-gpu-")
gpu_host = sandbox.Launcher(sys.argv[2], work, True, {})
real_popen = subprocess.Popen
subprocess.Popen = Recorded
try:
    blind = command(gpu_host, gpu=False)
    plain = command(gpu_host)
    gpu_host.gpu_nodes, gpu_host.gpu_uuid = ["nvidia1"], "GPU-77aa0c1a-51f3-4c2d-9a7e-0123456789cd"
    own = command(gpu_host)
    blind_own = command(gpu_host, gpu=False)
finally:
    subprocess.Popen = real_popen
check("--gpu-node" not in plain, f"a launcher told no node restricts none: {plain}")
check([own[i + 1] for i, a in enumerate(own) if a == "--gpu-node"] == ["nvidia1"] and "--gpu" in own,
      f"a judge's runner gets its GPU's node alone: {own}")
# In a view of one GPU the judge's CUDA index (CUDA_VISIBLE_DEVICES=1 on a two-GPU H200 host) names no
# device, and the runner had no GPU: it is told the GPU by its UUID.
check(env_of(own).get("CUDA_VISIBLE_DEVICES") == "GPU-77aa0c1a-51f3-4c2d-9a7e-0123456789cd",
      f"the runner's device in a view of one GPU: {env_of(own).get('CUDA_VISIBLE_DEVICES')}")
check("--gpu" not in blind_own and "--gpu-node" not in blind_own, f"the build's import gets no node: {blind_own}")

driver = tempfile.mkdtemp(prefix="gpu-driver-")
for bus, uuid, minor in (("0000:18:00.0", "GPU-8e2b0c1a-51f3-4c2d-9a7e-0123456789ab", 0),
                         ("0000:2a:00.0", "GPU-77aa0c1a-51f3-4c2d-9a7e-0123456789cd", 1)):
    os.makedirs(os.path.join(driver, bus))
    with open(os.path.join(driver, bus, "information"), "w") as f:
        f.write(f"Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nGPU UUID: \t {uuid}\nVideo BIOS: \t ??.??.??.??.??\n"
                f"Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDevice Minor: \t {minor}\n")
# torch's UUID prints without the GPU- prefix.
check(sandbox.gpu_node_of("77aa0c1a-51f3-4c2d-9a7e-0123456789cd", driver) == "nvidia1",
      f"the second GPU's node: {sandbox.gpu_node_of('77aa0c1a-51f3-4c2d-9a7e-0123456789cd', driver)}")
check(sandbox.gpu_node_of("GPU-8E2B0C1A-51F3-4C2D-9A7E-0123456789AB", driver) == "nvidia0", "the first, spelled otherwise")
check(sandbox.gpu_node_of("00000000-0000-0000-0000-000000000000", driver) is None, "a GPU the driver does not name")
check(sandbox.gpu_node_of("77aa0c1a", os.path.join(driver, "missing")) is None, "no driver folder")


class Log:
    def save(self, _):
        pass

    def last_lines(self):
        return "(the import's log)"


class Import:
    """A sandboxed import that sends its static report, then the given end."""

    def __init__(self, end):
        self.end, self.asked, self.log = end, 0, Log()

    def ask(self, message, timeout, compiler=None):
        self.asked += 1
        if self.asked == 1:
            return {"op": "static", "static": {}, "failure": None}
        if self.asked == 2:
            return {"op": "importing"}
        if isinstance(self.end, BaseException):
            raise self.end
        return self.end

    def exit_status(self):
        return 1

    def close(self):
        pass


class Launcher:
    def __init__(self, cuda, end):
        self.cuda, self.end, self.gpu = cuda, end, "unasked"

    def spawn(self, args, **kwargs):
        self.gpu = kwargs.get("gpu", "unasked")
        return Import(self.end)


class Compiler:
    built: list = []

    @staticmethod
    def writing(candidate_source):
        return contextlib.nullcontext()


def built(cuda: bool, end) -> tuple[dict, object]:
    launcher = Launcher(cuda, end)
    report = build.build({"candidate": "/x/c.py", "task": "/x/t.py"}, launcher, Compiler())
    return report, launcher.gpu


raised = {"op": "imported", "ok": False, "class": "compile_error", "reason": "import_failed", "message": "no GPU"}
compile_failed = {"op": "imported", "ok": False, "class": "compile_error", "reason": "build_failed", "message": "nvcc"}
report, asked = built(True, raised)
check(asked is False, f"the build step asked its import for the GPU: gpu={asked}")
check(report["ok"] is True, f"a GPU host's import that raised is left to the runner: {report}")
report, _ = built(True, ChannelClosed("the import died"))
check(report["ok"] is True, f"a GPU host's import that died is left to the runner: {report}")
report, _ = built(True, compile_failed)
check(report["ok"] is False and report["reason"] == "build_failed", f"a compile failure stands on a GPU host: {report}")
report, _ = built(False, raised)
check(report["ok"] is False and report["reason"] == "import_failed", f"a CPU host's import failure stands: {report}")
report, _ = built(False, ChannelClosed("the import died"))
check(report["ok"] is False and report["reason"] == "import_exited", f"a CPU host's dead import stands: {report}")

for f in failures:
    print("FAILED:", f)
print(f"{'FAIL' if failures else 'ok'}: what of the GPU a sandbox sees")
sys.exit(1 if failures else 0)
