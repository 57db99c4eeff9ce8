"""The procedural teacher's Triton solutions run, without a GPU, under Triton's interpreter
(TRITON_INTERPRET=1), against their task's Model on signed inputs (curriculum/teacher.h).

A curriculum of long-row tasks (rows over 16,384 columns, where the teacher loops over a row in
chunks with an online reduction: a running max and rescaled sum for softmax, Welford's running mean
and variance for layer norm) and of short-row tasks (rows of at most 64 values, tiled tens of rows a
program, the row count no multiple of the tile's) and of Linear layers with an epilogue (tiled tl.dot
in fp32, the epilogue on the accumulator or in a second kernel, sizes no multiple of a tile's) is written by `vinci curriculum` at a small size and
taught by `vinci teach`; every strategy the listing calls correct must match the task's Model, and most of the wrong
ones (wrong op, bound off by one) must not, so the comparison can fail.

    python3 tests/curriculum/teacher_interpret_test.py REPO_ROOT VINCI_BINARY
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

os.environ["TRITON_INTERPRET"] = "1"
ROOT, VINCI = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402

import torch  # noqa: E402


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    work = tempfile.mkdtemp(prefix="teacher-interpret-")
    curriculum, taught = os.path.join(work, "cur"), os.path.join(work, "teach")
    subprocess.run([VINCI, "curriculum", "--out", curriculum, "--elementwise", "0", "--rowwise", "0",
                    "--long-rows", "8", "--long-row-counts", "2", "--long-cols", "17000,20000",
                    "--short-rows", "8", "--short-row-counts", "70", "--short-cols", "16,48",
                    "--matmul", "6", "--matmul-rows", "70", "--matmul-cols", "50", "--matmul-inner", "40",
                    "--seed", "3"],
                   check=True, capture_output=True)
    subprocess.run([VINCI, "teach", "--curriculum", curriculum, "--out", taught], check=True, capture_output=True)
    listing = [json.loads(line) for line in open(os.path.join(taught, "teacher.jsonl"))]
    strategies = {r["strategy"] for r in listing}
    check({"looped_c4096_w8", "looped_c2048_w4", "row_tile_w8"} <= strategies, f"the long-row menu: {strategies}")
    check({"rows128_w4", "rows256_w8", "rows32_w4", "rows64_w8", "row_block_w4"} <= strategies,
          f"the short-row menu (16 columns: 128 rows a tile; 48: 32): {strategies}")
    check({"fused_epilogue_t64_w4", "fused_epilogue_t128_w8", "epilogue_kernel"} <= strategies,
          f"the matmul menu: {strategies}")
    wrong_caught = wrong = 0
    for r in listing:
        task = load(os.path.join(curriculum, r["split"], r["id"] + ".py"), "task")
        solution = load(os.path.join(taught, r["file"]), "solution")
        torch.manual_seed(0)
        reference = task.Model(*task.get_init_inputs())
        torch.manual_seed(0)
        candidate = solution.ModelNew(*task.get_init_inputs())
        torch.manual_seed(1)
        inputs = [torch.randn_like(a) * 3 for a in task.get_inputs()]
        with torch.no_grad():
            expected, got = reference(*inputs), candidate(*inputs)
        same = got.shape == expected.shape and torch.allclose(got, expected, rtol=1e-4, atol=1e-4)
        if r["correct"]:
            error = (got - expected).abs().max().item() if got.shape == expected.shape else "shape"
            check(same, f"{r['file']} is listed correct but differs from the Model by {error}")
        else:
            wrong += 1
            wrong_caught += not same
    check(wrong > 0 and wrong_caught * 2 >= wrong,
          f"only {wrong_caught} of {wrong} wrong solutions differ from the Model: the comparison cannot fail")
    return finish(f"ok: {len(listing)} solutions, {wrong_caught} of {wrong} wrong ones caught")


if __name__ == "__main__":
    sys.exit(main())
