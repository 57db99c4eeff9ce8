"""The judge's choice of timed calls to open (python/vinci_worker/openings.py), driven the way
judge._measure drives it: calls of a given duration, timing stopped at its budget once enough calls
are opened. Each case is seeded, so the counts are fixed; the bounds are the sampling arithmetic's.

    python3 tests/eval/openings_test.py REPO_ROOT
"""
import random
import sys
from math import comb

sys.path.insert(0, f"{sys.argv[1]}/python")
from vinci_worker.openings import Openings  # noqa: E402

CALLS, WANT, MIN_TRIALS, BUDGET = 100, 10, 10, 20.0


def timing_run(seed, seconds_per_call):
    """The indices timed and the set opened, for a candidate whose call i takes seconds_per_call(i)."""
    rng = random.Random(seed)
    openings = Openings(rng, WANT, CALLS, BUDGET)
    elapsed, opened, timed = 0.0, set(), 0
    for i in range(CALLS):
        elapsed += seconds_per_call(i)
        timed += 1
        if openings.open_call(i, elapsed):
            opened.add(i)
        if i + 1 >= MIN_TRIALS and elapsed > BUDGET and openings.satisfied():
            break
    assert len(opened) == openings.opened
    return timed, opened


def check(name, ok, detail):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    return ok


def main():
    results = []
    # A slow candidate (2.5 s a call) is timed over its 10 minimum calls, and every one is opened:
    # under the old fixed sample of 10 of 100, only the 3 the stop rule waited for were.
    runs = [timing_run(s, lambda i: 2.5) for s in range(200)]
    results.append(check("slow: every call opened", all(t == 10 and len(o) == 10 for t, o in runs),
                         f"timed/opened of the first run: {runs[0][0]}/{len(runs[0][1])}"))

    # A fast candidate (10 ms) runs all 100 calls inside the budget: 10 openings owed, every position
    # equally likely among them (sequential sampling without replacement), then each later window at
    # EXTRA_SHARE. Each position is opened in at least its 10% of 4000 runs (400, sd 19; 300 is over 5
    # sd below), and in at most 10% + 10% (800; 900 is over 5 sd above); about 0.8 extra a run.
    counts = [0] * CALLS
    exact, extra = True, 0
    for s in range(4000):
        timed, opened = timing_run(s, lambda i: 0.01)
        exact &= timed == CALLS and len(opened) >= WANT
        extra += len(opened) - WANT
        for i in opened:
            counts[i] += 1
    results.append(check("fast: at least 10 of 100 opened", exact and 0.3 < extra / 4000 < 1.5,
                         f"all 4000 runs timed 100 calls and opened 10, {extra / 4000:.2f} more a run"))
    results.append(check("fast: every position opened at least its share", 300 <= min(counts) and max(counts) <= 900,
                         f"per-position counts {min(counts)}..{max(counts)} of 4000 (400 to 800 expected)"))

    # A cheat fast and wrong on its first 50 calls, then slow and right (2 s a call), so that the
    # budget ends timing soon after: it passes only if none of its wrong calls is opened. Openings
    # are owed until 10 are done, so about half of them fall among the first 50 calls:
    # P(pass) is about C(50,10)/C(100,10) = 0.06%; allow 1% over 5000 runs.
    passed = sum(not any(i < 50 for i in timing_run(s, lambda i: 0.05 if i < 50 else 2.0)[1]) for s in range(5000))
    bound = comb(50, 10) / comb(100, 10)
    results.append(check("fast-then-slow cheat caught", passed / 5000 < 0.01,
                         f"passed {passed} of 5000 (sampling bound {bound:.2%})"))

    # A cheat wrong on half of its calls at random, 0.5 s a call (40 calls fit the budget): it
    # passes when every opened call is a right one, (1/2)^10 = 0.1%; the old rule allowed 1/8.
    rng = random.Random(7)
    passed = 0
    for s in range(5000):
        wrong = {i for i in range(CALLS) if rng.random() < 0.5}
        passed += not (timing_run(s, lambda i: 0.5)[1] & wrong)
    results.append(check("half-wrong cheat caught", passed / 5000 < 0.005, f"passed {passed} of 5000 (expected 0.1%)"))
    # Windows past the planned calls (more timing for the sampler) are opened at EXTRA_SHARE even with
    # nothing owed: a cheat that counted its 10 openings done (or forced them into its first calls by
    # sleeping the budget away) and is wrong on every one of 80 extra windows passes with 0.9^80.
    from vinci_worker.openings import EXTRA_SHARE
    rng = random.Random(11)
    passed = 0
    for _ in range(5000):
        o = Openings(rng, WANT, CALLS, BUDGET)
        o.opened = WANT  # every owed opening spent
        passed += not any(o.open_call(CALLS + k, 100.0) for k in range(80))
    results.append(check("extra windows opened regardless", EXTRA_SHARE == 0.1 and passed / 5000 < 0.002,
                         f"passed {passed} of 5000 (expected {0.9 ** 80:.2e})"))
    # Red-team round 23: openings forced into the first 10 windows by sleeping the wall-clock budget
    # away, timing stopped there, and the sampler's 100 extra windows numbered 10..109 (below the
    # planned calls) were cheap and wrong; with nothing owed they were never opened (2.96x against an
    # honest 0.125x). Now each is opened at EXTRA_SHARE: P(pass) = 0.9^100 = 2.7e-5.
    passed = 0
    for s in range(5000):
        o = Openings(random.Random(s), WANT, CALLS, BUDGET)
        forced = [o.open_call(i, 2.2 * (i + 1)) for i in range(10)]
        passed += all(forced) and not any(o.open_call(10 + k, 22.0 + 0.01 * k) for k in range(100))
    results.append(check("openings forced early, then cheap windows", passed / 5000 < 0.002,
                         f"passed {passed} of 5000 (expected {0.9 ** 100:.1e})"))
    # Windows the sampler needs past the planned ones make the speed with them (judge._time), so a cheat
    # cheap in them must be cheap in half of all N windows; the last half are the least often opened
    # (open_extra: want/(i + 1), at least EXTRA_SHARE), and stay unopened with a probability of
    # prod(1 - 10/(i + 1)) over i in [N/2, N), 1/C(N, 10)-like: under 2^-10 for every N. Round 26's
    # fifteen cheap windows after ten planned ones (N = 25): (15! 10!)/25! = 3e-7, where 0.9^15 = 21%.
    for total in (25, 40, 100, 400):
        bound = 1.0
        for i in range(total // 2, total):
            bound *= 1 - max(EXTRA_SHARE, min(1.0, WANT / (i + 1)))
        rng = random.Random(total)
        passed = 0
        for _ in range(20000):
            o = Openings(rng, WANT, CALLS, BUDGET)
            o.opened = WANT
            passed += not any(o.open_extra(i) for i in range(total // 2, total))
        results.append(check(f"cheap in the later half of {total} windows, 10 planned", bound < 2 ** -10 and
                             passed / 20000 < 2 ** -9, f"passed {passed} of 20000 (expected {bound:.1e})"))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
