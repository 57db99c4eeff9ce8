#!/usr/bin/env python3
"""The learning run's stages, written once: benchmarks/learning_gpu.sh runs them on a GPU at full size
and tests/cli/learning_pipeline_test.py on the CPU at toy size, through vinci's own commands: a
curriculum, a tokenizer and a model from nothing, SFT data from the procedural teacher, SFT, then
co-evolution RL on the training tasks, and bench-model on the held-out tasks for four models: SFT
and RL, each with skills picked from a library and without. benchmarks/learning_report.py turns the
four summaries into docs/learning.json's table.

The run is longer than one job may be, so it goes in stages, each skipped once done, and a job does
what its time allows: sft-data and bench-model resume where a killed job left off, and train rl stops
at --deadline with final/ saved. A job ends by packing the state into OUT/state.tgz.part-* of 15 MiB
(no caches but the evaluation results, no model snapshot a later stage no longer starts from); the
next job gets them back as STATE_IN, on this machine or another. While the RL stage is unfinished
(RL_CONTINUE=1 after a deadline, or RL_STOP_AFTER), the state carries its newest checkpoint, the
optimizer's state, the step, the task cursor and the library's snapshots with it, so the next job's
`train rl --resume` writes the steps the uninterrupted run would have, bit for bit.

    learning_run.py VINCI STATE_DIR OUT_DIR

Settings come from the environment (learning_gpu.sh's; defaults in brackets): BUDGET (seconds this
job may spend [540]), STATE_IN (a folder of state.tgz.part-*), DEVICE [cuda], SEED [0], ELEMENTWISE
[12], ROWWISE [12], HELDOUT [0.33], SHAPE_ROWS and SHAPE_COLS (the curriculum's --rows and --cols),
SCALE [1], TRIALS [20], TORCH_OPS [forbid]; the model: MODEL_CONFIG (a JSON file [the 6-layer
Qwen2 of docs/learning.md]), VOCAB [4096], DTYPE [bfloat16]; sft-data: SAMPLES [2], TURNS [2],
MAX_TASKS [0: all], FIRST_TURNS [0], EVALUATED [1; 0: first turns only, no evaluation]; SFT:
SFT_EPOCHS [40], SFT_LR [1e-3], SFT_BATCH_TOKENS [32768], SFT_ROW_TOKENS [8192]; RL: RL_STEPS [4],
RL_TASKS [4], RL_SAMPLES [1], RL_TURNS [2; 1 when EVALUATED=0], RL_TEMPERATURE [1.0], RL_LR [3e-5],
RL_PARALLEL [8], RL_CONTINUE [0; 1: a run its deadline stops goes on in the next job],
RL_STOP_AFTER [0; N: this job's RL ends after step N, to go on in the next], RL_DIR [rl], RL_MODEL
[sft-run/final], CUR [cur]; MAX_NEW_TOKENS [1024] and SELECTION_MAX_NEW_TOKENS [256] (RL and the
benches), RL_CONFIG_EXTRA (TOML appended to the RL run's config, e.g. a [reward] table), BENCHES
[all: the benches this job may run, e.g. "sft_no_skills"], LAST_STAGE [bench-rl: the last of setup,
sftdata, sft, bench-sft, rl and bench-rl this job runs]. With several GPUs, RL's
evaluation uses them all and the two benches of a model run at once.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACK_RESERVE_S = 45  # what packing the state takes at most, kept back from every stage
PART_BYTES = 15 << 20
STAGES = ("setup", "sftdata", "sft", "bench-sft", "rl", "bench-rl")  # LAST_STAGE names one
# A Qwen2 of about 6M parameters (docs/learning.md): what one GPU session trains and evaluates.
DEFAULT_MODEL = {"model_type": "qwen2", "hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 6,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 8192,
                 "tie_word_embeddings": True, "rope_theta": 100000.0}


def setting(name: str, default: str) -> str:
    value = os.environ.get(name, "")
    return value if value != "" else default


class LearningRun:
    def __init__(self, vinci: str, state: pathlib.Path, out: pathlib.Path):
        self.vinci, self.s, self.out = vinci, state, out
        self.t0 = time.monotonic()
        self.budget = float(setting("BUDGET", "540"))
        self.device = setting("DEVICE", "cuda")
        self.seed = setting("SEED", "0")
        self.rl_dir = setting("RL_DIR", "rl")
        self.cur = setting("CUR", "cur")
        self.eval_args = ["--device", self.device, "--no-compile-baseline", "--trials", setting("TRIALS", "20"),
                          "--time-budget", "1", "--scale", setting("SCALE", "1"),
                          "--torch-ops", setting("TORCH_OPS", "forbid")]
        self.model_device = "cuda" if self.device.startswith("cuda") else "cpu"
        self.gpus = self._gpus()

    # --- time and stages
    def left(self) -> float:
        return self.budget - (time.monotonic() - self.t0)

    def done(self, stage: str) -> bool:
        return (self.s / f"done.{stage}").exists()

    def mark(self, stage: str) -> None:
        (self.s / f"done.{stage}").touch()
        print(f"stage {stage} done at {time.monotonic() - self.t0:.0f} s", flush=True)

    def run(self, args: list, log: pathlib.Path | None = None, append: bool = False, bounded: bool = True,
            env: dict | None = None) -> int:
        """A command with what is left of the job, less the packing's reserve: 124 when none is left or
        it ran out. Its output goes to log (stdout and stderr), else through."""
        timeout = self.left() - PACK_RESERVE_S if bounded else None
        if timeout is not None and timeout <= 20:
            return 124
        sink = open(log, "a" if append else "w") if log else None
        try:
            return subprocess.run([str(a) for a in args], stdout=sink, stderr=subprocess.STDOUT if sink else None,
                                  timeout=timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            return 124
        finally:
            if sink:
                sink.close()

    def must(self, args: list, log: pathlib.Path | None = None) -> None:
        if self.run(args, log, bounded=False) != 0:
            tail = log.read_text()[-2000:] if log and log.exists() else ""
            sys.exit(f"learning_run: {' '.join(map(str, args[:3]))} failed{': ' + tail if tail else ''}")

    @staticmethod
    def _gpus() -> int:
        try:
            listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            return 0
        return sum(1 for line in listing.splitlines() if line.startswith("GPU"))

    # --- the state carried between jobs
    def unpack(self, state_in: str) -> None:
        parts = sorted(pathlib.Path(state_in).glob("state.tgz.part-*")) if state_in else []
        if not parts:
            return
        reader = subprocess.Popen(["cat", *map(str, parts)], stdout=subprocess.PIPE)
        try:
            with tarfile.open(fileobj=reader.stdout, mode="r|gz") as tar:
                tar.extractall(self.s, filter="data")
        except (tarfile.TarError, OSError) as e:
            sys.exit(f"learning_run: the carried state in {state_in} does not unpack: {e}")
        finally:
            reader.wait()

    def _rl_unfinished_checkpoint(self) -> str | None:
        """The RL run's newest checkpoint (relative to the state), while the run is not done."""
        latest = self.s / self.rl_dir / "checkpoints" / "latest"
        if self.done(self.rl_dir) or not latest.exists():
            return None
        return f"{self.rl_dir}/checkpoints/{latest.read_text().strip()}"

    def pack(self) -> None:
        """The state the next job needs, as OUT/state.tgz.part-*: no evaluation scratch, extension
        builds or candidates, no SFT checkpoints, no teacher folder; of the models only those a later
        stage starts from (run 6's model was packed out after its benches, and run 7 had to start from
        run 5's); and the RL run's newest checkpoint while it is unfinished."""
        for old in self.out.glob("state.tgz.part-*"):
            old.unlink()
        rl_model = setting("RL_MODEL", "sft-run/final")
        excluded = {"cache/logs", "cache/scratch", "cache/ext", "cache/candidates", "teach", "sft-all.jsonl"}
        if self.done("sft"):
            excluded.add("model0")
        if self.done("rl"):
            excluded.add("sft-run/final")
        if self.done(self.rl_dir) and rl_model != "sft-run/final":
            excluded.add(rl_model)
        keep_checkpoint = self._rl_unfinished_checkpoint()

        def wanted(info: tarfile.TarInfo):
            name = info.name.removeprefix("./")
            if any(name == e or name.startswith(e + "/") for e in excluded):
                return None
            parts = name.split("/")
            if len(parts) >= 2 and parts[1] == "checkpoints":
                kept = keep_checkpoint and parts[0] == self.rl_dir and \
                    (len(parts) == 2 or parts[2] == "latest" or "/".join(parts[:3]) == keep_checkpoint)
                return info if kept else None
            return info

        writer = subprocess.Popen(["split", "-b", str(PART_BYTES), "-", str(self.out / "state.tgz.part-")],
                                  stdin=subprocess.PIPE)
        with tarfile.open(fileobj=writer.stdin, mode="w|gz") as tar:
            tar.add(self.s, arcname=".", filter=wanted)
        writer.stdin.close()
        if writer.wait() != 0:
            sys.exit("learning_run: splitting the state failed")

    # --- the stages
    def curriculum(self, folder: str, log: str) -> None:
        rows, cols = setting("SHAPE_ROWS", ""), setting("SHAPE_COLS", "")
        self.must([self.vinci, "curriculum", "--out", self.s / folder, "--seed", self.seed,
                   "--elementwise", setting("ELEMENTWISE", "12"), "--rowwise", setting("ROWWISE", "12"),
                   "--heldout-share", setting("HELDOUT", "0.33"), *(["--rows", rows] if rows else []),
                   *(["--cols", cols] if cols else [])], self.s / log)

    def setup(self) -> None:
        if not self.done("setup"):
            for name in ("cur", "teach", "tok", "model0", "skills.db"):
                shutil.rmtree(self.s / name, ignore_errors=True) if (self.s / name).is_dir() else \
                    (self.s / name).unlink(missing_ok=True)
            self.curriculum("cur", "curriculum.log")
            # The tokenizer learns from the task files (prompts quote them), the training tasks'
            # solutions (never the held-out ones'), the prompts and the skills.
            self.must([self.vinci, "teach", "--curriculum", self.s / "cur", "--out", self.s / "teach", "--split",
                       "train"], self.s / "teach.log")
            self.must([sys.executable, ROOT / "scripts/train_tokenizer.py", "--corpus", self.s / "cur",
                       self.s / "teach", ROOT / "prompts", ROOT / "skills", "--vocab-size", setting("VOCAB", "4096"),
                       "--out", self.s / "tok"], self.s / "tokenizer.log")
            config = setting("MODEL_CONFIG", "")
            (self.s / "config.json").write_text(pathlib.Path(config).read_text() if config else
                                                json.dumps(DEFAULT_MODEL))
            self.must([self.vinci, "init-model", "--config", self.s / "config.json", "--tokenizer", self.s / "tok",
                       "--out", self.s / "model0", "--seed", self.seed, "--dtype", setting("DTYPE", "bfloat16")],
                      self.s / "init-model.log")
            for library in ("seed", "curriculum"):
                self.must([self.vinci, "skills", "--db", self.s / "skills.db", "import",
                           ROOT / "skills" / f"{library}.jsonl"], self.s / "skills-import.log")
            self.mark("setup")
        if not (self.s / self.cur / "curriculum.jsonl").exists():
            self.curriculum(self.cur, f"{self.cur}.log")

    def sft_data(self) -> None:
        if self.done("sftdata"):
            return
        evaluated = setting("EVALUATED", "1") != "0"
        resume = evaluated and (self.s / "sft" / "episodes.jsonl").exists()
        if not resume:
            shutil.rmtree(self.s / "sft", ignore_errors=True)
        rc = self.run([self.vinci, "sft-data", "--curriculum", self.s / "cur", "--out", self.s / "sft",
                       "--turns", setting("TURNS", "2"), "--schemes", "1", "--samples", setting("SAMPLES", "2"),
                       "--max-tasks", setting("MAX_TASKS", "0"), "--first-turns", setting("FIRST_TURNS", "0"),
                       *([] if evaluated else ["--only-first-turns"]), "--seed", self.seed, *self.eval_args,
                       *(["--resume"] if resume else [])], self.s / "sft-data.log", append=True)
        if rc == 0:
            self.mark("sftdata")

    def sft(self) -> None:
        if not self.done("sftdata") or self.done("sft") or self.left() <= 150:
            return
        shutil.rmtree(self.s / "sft-run", ignore_errors=True)
        data = self.s / "sft-all.jsonl"
        data.write_text("".join((self.s / "sft" / f).read_text() for f in ("sft.jsonl", "first_turns.jsonl")
                                if (self.s / "sft" / f).exists()))
        rc = self.run([self.vinci, "train", "sft", "--data", data, "--model", self.s / "model0", "--out",
                       self.s / "sft-run", "--device", self.model_device, "--lora-rank", "0", "--epochs",
                       setting("SFT_EPOCHS", "40"), "--lr", setting("SFT_LR", "1e-3"), "--warmup-steps", "20",
                       "--batch-tokens", setting("SFT_BATCH_TOKENS", "32768"), "--row-tokens",
                       setting("SFT_ROW_TOKENS", "8192"), "--max-sequence-tokens", setting("SFT_ROW_TOKENS", "8192"),
                       "--no-filter", "--seed", self.seed], self.s / "sft.log")
        if rc == 0:
            self.mark("sft")

    def bench(self, name: str, model: pathlib.Path, libraries: list, gpu: int | None) -> subprocess.Popen | None:
        """bench-model of a model, greedy, one answer per held-out task; with libraries, skills from them."""
        benches = setting("BENCHES", "").split()
        if self.done(f"bench-{name}") or (benches and name not in benches):
            return None
        timeout = self.left() - PACK_RESERVE_S
        if timeout <= 20:
            return None
        out = self.s / f"bench-{name}"
        env = dict(os.environ, **({"CUDA_VISIBLE_DEVICES": str(gpu)} if gpu is not None else {}))
        args = [self.vinci, "bench-model", "--model", model, "--model-device", self.model_device, "--tasks",
                self.s / self.cur / "heldout", "--out", out, "--temperature", "0", "--max-new-tokens",
                setting("MAX_NEW_TOKENS", "1024"), "--selection-max-new-tokens",
                setting("SELECTION_MAX_NEW_TOKENS", "256"), "--seed", self.seed, *self.eval_args,
                *[a for library in libraries for a in ("--library", library)],
                *(["--resume"] if (out / "run.json").exists() else [])]
        # timeout(1) ends it with the job's time, as the other stages' limits do
        return subprocess.Popen(["timeout", str(int(timeout)), *map(str, args)],
                                stdout=open(self.s / f"bench-{name}.txt", "w"),
                                stderr=open(self.s / f"bench-{name}.log", "w"), env=env)

    def bench_both(self, name: str, model: pathlib.Path, libraries: list) -> None:
        """The model with skills from the libraries, then NAME_no_skills without; with several GPUs
        both at once, each timing on a GPU of its own."""
        both = self.gpus > 1
        running = []
        for bench_name, libs, gpu in ((name, libraries, 0), (f"{name}_no_skills", [], 1)):
            proc = self.bench(bench_name, model, libs, gpu if both else None)
            if proc is not None:
                running.append((bench_name, proc))
            if not both:
                self._finish(running)
        self._finish(running)

    def _finish(self, running: list) -> None:
        while running:
            bench_name, proc = running.pop(0)
            if proc.wait() == 0:
                self.mark(f"bench-{bench_name}")

    def rl(self) -> None:
        rl = self.s / self.rl_dir
        unfinished = not self.done(self.rl_dir) and (rl / "checkpoints" / "latest").exists()
        if not self.done("bench-sft_no_skills") or self.done(self.rl_dir) or self.left() <= 300:
            return
        if not unfinished:
            evaluated = setting("EVALUATED", "1") != "0"
            # Run 3 found a model taught first turns only writes no kernel at all after feedback (82 of 96).
            (self.s / f"{self.rl_dir}.toml").write_text(f"""[run]
steps = {setting("RL_STEPS", "4")}
tasks_per_step = {setting("RL_TASKS", "4")}
parallel_tasks = {setting("RL_PARALLEL", "8")}
seed = {self.seed}
checkpoint_every = 1000
[agents]
schemes = 1
samples = {setting("RL_SAMPLES", "1")}
turns = {setting("RL_TURNS", "2" if evaluated else "1")}
temperature = {setting("RL_TEMPERATURE", "1.0")}
max_new_tokens = {setting("MAX_NEW_TOKENS", "1024")}
selection_max_new_tokens = {setting("SELECTION_MAX_NEW_TOKENS", "256")}
summary_max_new_tokens = {setting("MAX_NEW_TOKENS", "1024")}
verify_repeats = 1
[model]
training = "full"
[optimizer]
lr = {setting("RL_LR", "3e-5")}
{setting("RL_CONFIG_EXTRA", "")}""")
            shutil.rmtree(rl, ignore_errors=True)
            for f in (f"{self.rl_dir}.txt", f"{self.rl_dir}.log"):
                (self.s / f).unlink(missing_ok=True)
        # A killed run leaves no final/: --deadline starts no step that the slowest one so far would
        # carry past it, and leaves 30 s for final/ before the state is packed.
        stop_after = int(setting("RL_STOP_AFTER", "0"))
        args = [self.vinci, "train", "rl", "--config", self.s / f"{self.rl_dir}.toml", "--model",
                self.s / setting("RL_MODEL", "sft-run/final"), "--model-device", self.model_device, "--tasks",
                self.s / self.cur / "train", "--out", rl, "--skills", self.s / "skills.db", "--deadline",
                str(int(self.left() - 75)), *self.eval_args, *(["--resume"] if unfinished else []),
                *(["--steps", str(stop_after)] if stop_after else [])]
        with open(self.s / f"{self.rl_dir}.txt", "a") as txt, open(self.s / f"{self.rl_dir}.log", "a") as log:
            timeout = self.left() - PACK_RESERVE_S
            try:
                rc = subprocess.run([str(a) for a in args], stdout=txt, stderr=log, timeout=max(timeout, 1)).returncode
            except subprocess.TimeoutExpired:
                rc = 124
        # 0: every step of the run (or of RL_STOP_AFTER, which goes on in the next job); 3: the deadline
        # stopped it after the steps it finished, final/ saved: they are the run, unless RL_CONTINUE asks
        # the next job to go on.
        finished = rc == 0 and not stop_after or rc == 3 and setting("RL_CONTINUE", "0") == "0"
        if finished and (rl / "final").is_dir():
            self.mark(self.rl_dir)
        lines = (self.s / f"{self.rl_dir}.txt").read_text().splitlines()
        print(lines[-1] if lines else f"train rl exited {rc}", flush=True)
        self.must([self.vinci, "skills", "--db", self.s / "skills.db", "export", "-o",
                   self.s / f"{self.rl_dir}-library.jsonl"])

    def report(self) -> None:
        gpu_txt = self.out / "gpu.txt"
        if not gpu_txt.exists():
            gpu_txt.write_text(f"{self.device}\n")
        with open(self.out / "report.md", "w") as report:
            subprocess.run([sys.executable, ROOT / "benchmarks/learning_report.py", self.s, gpu_txt,
                            self.out / "learning.json", self.rl_dir], stdout=report, check=False)
        for metrics in (self.s / "sft-run/metrics.jsonl", self.s / self.rl_dir / "metrics.jsonl"):
            if metrics.exists() and metrics.stat().st_size > 0:
                self.run([self.vinci, "plot", metrics, "--out", self.out / f"{metrics.parent.name}_metrics.svg"],
                         log=pathlib.Path(os.devnull), bounded=False)

    def main(self) -> int:
        last = setting("LAST_STAGE", STAGES[-1])
        if last not in STAGES:
            sys.exit(f"learning_run: LAST_STAGE={last} is not a stage ({', '.join(STAGES)})")
        runs = STAGES[:STAGES.index(last) + 1]
        self.s.mkdir(parents=True, exist_ok=True)
        self.out.mkdir(parents=True, exist_ok=True)
        self.unpack(setting("STATE_IN", ""))
        os.environ["VINCI_CACHE"] = str(self.s / "cache")
        self.setup()
        if "sftdata" in runs:
            self.sft_data()
        if "sft" in runs:
            self.sft()
        if "bench-sft" in runs and self.done("sft"):
            self.bench_both("sft", self.s / "sft-run/final",
                            [ROOT / "skills/seed.jsonl", ROOT / "skills/curriculum.jsonl"])
        if "rl" in runs:
            self.rl()
        if "bench-rl" in runs and self.done(self.rl_dir):
            self.bench_both(self.rl_dir, self.s / self.rl_dir / "final", [self.s / f"{self.rl_dir}-library.jsonl"])
        self.report()
        self.pack()
        print(" ".join(sorted(p.name for p in self.s.glob("done.*"))))
        print((self.out / "report.md").read_text())
        print(f"job: {time.monotonic() - self.t0:.0f} s")
        return 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    sys.exit(LearningRun(sys.argv[1], pathlib.Path(sys.argv[2]).resolve(), pathlib.Path(sys.argv[3]).resolve()).main())
