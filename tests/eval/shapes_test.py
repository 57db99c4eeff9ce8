"""The plain trials' second shape (python/vinci_worker/shapes.py) and the loader's sizes past the scale
(python/vinci_runner/loader.py): every size scaled down grows, none past the file's value, the growth's
product at most GROWTH (rounding aside), nothing at --scale 1; a task loaded with sizes holds them. The
bounds are worked by hand from the task file's constants (4_Softmax: BATCH 16384, DIM 32768).

    python3 tests/eval/shapes_test.py REPO_ROOT
"""
import math
import os
import random
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402

from vinci_runner import loader  # noqa: E402
from vinci_worker import shapes  # noqa: E402


root = sys.argv[1]
module, changed = loader.load_task(f"{root}/tasks/level1/4_Softmax.py", 0.05, "shapes_softmax")
# 16384 * 0.05 = 819.2 and 32768 * 0.05 = 1638.4, rounded.
check(changed == {"BATCH": [16384, 819], "DIM": [32768, 1638]}, f"scale 0.05: {changed}")
grew_dim_past_4096 = 0
for seed in range(200):
    sizes = shapes.grown_sizes(changed, random.Random(seed))
    check(set(sizes) == {"BATCH", "DIM"}, f"seed {seed}: both sizes drawn: {sizes}")
    check(sizes["BATCH"] > 819 and sizes["DIM"] > 1638, f"seed {seed}: every size grows: {sizes}")
    check(sizes["BATCH"] <= 16384 and sizes["DIM"] <= 32768, f"seed {seed}: none past the file's: {sizes}")
    product = sizes["BATCH"] / 819 * sizes["DIM"] / 1638
    # Each size is rounded to an integer (or lifted by one), at most half a unit, so the product of the
    # factors is GROWTH to within (1 + 1/819)(1 + 1/1638) either way, and at least one more than each.
    check(product <= shapes.GROWTH * (1 + 1 / 819) * (1 + 1 / 1638), f"seed {seed}: growth {product:.4f} > 8")
    # Of two sizes each grows at least 8^(1/4) = 1.682: 1638 to 2755 (a bound of 2048 always fails).
    check(sizes["DIM"] >= 2755 and sizes["BATCH"] >= 1377, f"seed {seed}: the least growth, 8^(1/4): {sizes}")
    grew_dim_past_4096 += sizes["DIM"] > 4096
# DIM grows past 4096 (a factor 2.5) when its log share of 8, 1/4 + w/2 with w uniform on [0, 1],
# passes log(2.5)/log(8) = 0.4406: w > 0.381, 62% of draws; 200 draws put it between 48% and 76%
# but for a chance under 1e-4.
check(96 <= grew_dim_past_4096 <= 152, f"DIM past 4096 in {grew_dim_past_4096} of 200 draws, about 124 expected")
check(shapes.grown_sizes({}, random.Random(0)) == {}, "nothing scaled: nothing grows")
check(shapes.grown_sizes({"N": [64, 64]}, random.Random(0)) == {}, "scale 1: nothing grows")
# A size near its file's value stops there: 60 of 64 grows at most to 64.
check(shapes.grown_sizes({"N": [64, 60]}, random.Random(3)) == {"N": 64}, "a lone size capped at the file's")
again, second = loader.load_task(f"{root}/tasks/level1/4_Softmax.py", 0.05, "shapes_softmax_sized",
                                 {"DIM": 5000})
check(again.DIM == 5000 and again.BATCH == 819 and second["DIM"] == [32768, 5000], f"sizes past the scale: {second}")
check(math.prod(a.shape[0] * a.shape[1] for a in again.get_inputs()) == 819 * 5000, "inputs drawn at the sizes")

sys.exit(finish("shapes: ok"))
