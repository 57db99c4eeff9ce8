"""The plain trials' second shape: a task's scaled sizes grown toward the file's own.

Below --scale 1 every call of the trials and the timing has one shape, which is not the task's, and
a kernel right at that shape alone passed: red-team round 51's softmax summed the first 4,096
columns of each row, `correct` at 0.146x on 1,638 columns and 7.08 off (relatively) on the file's
32,768. The plain trials' runner builds its model and draws its inputs at another shape: every size
that was scaled down grows by a factor of its own, none past the file's value, the factors' product
about GROWTH (the most extra work the plain trials may cost, a matmul's FLOPs included). Half of
log(GROWTH) is shared evenly, so each of k sizes grows at least GROWTH^(1/2k) (2.83x alone, 1.68x
of two, 1.41x of three); the other half is split at random (a uniform split in log space), so that
a kernel cannot know which size grew most. A hard-coded size, or a bound between the judged size
and that least factor times it, fails there every time; a bound further out fails on the draws
that pass it; a bound beyond GROWTH times the judged size is left to a run at --scale 1.
"""
from __future__ import annotations

import math
import random

GROWTH = 8.0


def grown_sizes(changed: dict, rng: random.Random, growth: float = GROWTH) -> dict:
    """changed: {name: [the file's value, the scaled one]} (loader.apply_scale). Returns {name: size}
    for each size scaled below the file's value, grown; {} when none was."""
    room = {name: (int(file), int(scaled)) for name, (file, scaled) in changed.items() if 0 < scaled < file}
    if not room:
        return {}
    weights = {name: rng.expovariate(1.0) for name in room}  # a uniform split (Dirichlet(1))
    total = sum(weights.values()) or 1.0
    sizes = {}
    for name, (file, scaled) in room.items():
        factor = math.exp(math.log(growth) * (0.5 / len(room) + 0.5 * weights[name] / total))
        sizes[name] = min(file, max(scaled + 1, int(round(scaled * factor))))
    return sizes
