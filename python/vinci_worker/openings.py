"""Which timed calls the judge opens, decided after each call has ended and committed.

A fixed random subset of all the calls the judge might time (10 of 100) leaves a slow candidate,
whose timing stops at its budget after a few calls, with few of them opened: a cache wrong on half
its calls then passed with probability 1/8. Here each call is opened with the chance that spreads
the openings still owed over the calls still expected: the calls left, or as many of this
candidate's calls as fit the time left in the budget, whichever is fewer. A candidate that is slow
gets every call opened; a fast one gets `want` openings spread over its calls; and timing may not
stop at its budget before `want` calls are opened, so changing speed midway only moves where the
openings fall. No candidate can tell before a call ends whether it will be opened.

Every window once the openings owed are spent, and every window beyond the `calls` planned, is
opened with probability EXTRA_SHARE: a candidate that has counted its openings done, or forced them
early by spending the budget's wall time asleep, still has every window it is timed in checked at
that rate. Red-team round 23 forced all ten
into the first windows by sleeping, and timing then stopped early at the budget; the sampler's extra
windows were numbered below `calls`, owed nothing and so were never opened, and empty outputs in 90
of 110 windows made a 0.125x ReLU 2.96x. Cheap in k windows, a candidate now passes with probability
0.9^k: k = 50, enough to move a median of 100, leaves 0.5%.

Windows run past the planned ones while the trusted sampler has too few samples make the speed with
them (judge.py: a median of the planned windows alone, against which the extra ones' samples were
judged, left 93% of an honest candidate's extra windows uncounted when the host's load rose between
the two), and are opened more often early on (open_extra): red-team round 26 was cheap in fifteen
extra windows opened at 10% each, which outvoted ten planned ones."""
from __future__ import annotations

import math
import random


EXTRA_SHARE = 0.1


class Openings:
    def __init__(self, rng: random.Random, want: int, calls: int, budget_s: float):
        self.rng = rng
        self.want = min(want, calls)
        self.calls = calls
        self.budget_s = budget_s
        self.opened = 0

    def open_call(self, i: int, elapsed_s: float) -> bool:
        """Whether timed call i (0-based), which ended `elapsed_s` into timing, is opened."""
        owed = self.want - self.opened
        if i >= self.calls or owed <= 0:
            opened = self.rng.random() < EXTRA_SHARE
            self.opened += opened
            return opened
        left = self.calls - i  # this call and the ones after it
        per_call = elapsed_s / (i + 1)
        if per_call > 0:
            left = min(left, max(1, math.ceil((self.budget_s - elapsed_s) / per_call) + 1))
        if self.rng.random() < owed / left:
            self.opened += 1
            return True
        return False

    def open_extra(self, i: int) -> bool:
        """Whether window i (0-based, counting the planned ones), run past the planned windows for the
        trusted sampler, is opened: with probability want/(i + 1), at least EXTRA_SHARE. These windows
        make the speed with the planned ones, so a candidate cheap in them must be cheap in half of
        all windows to move the median; the likeliest to stay unopened are the last k, and those
        pass with about (1 - k/N)^want, under 2^-want for k = N/2."""
        opened = self.rng.random() < max(EXTRA_SHARE, min(1.0, self.want / (i + 1)))
        self.opened += opened
        return opened

    def satisfied(self) -> bool:
        return self.opened >= self.want
