"""The judge's output comparison (python/vinci_worker/compare.py) against the rules written out
element by element in plain Python (math.fsum, no torch), on random outputs with NaN and inf put
in either side, with and without the fp64 reference and per-element slack, finite_only or not, in
chunks of 7 elements and in the default chunks: the unmasked path (everything finite) and the
masked one must give the rule's verdict, reason and differences. Then the second look at an
ill-conditioned output: another rounding of a near-tie softmax fails the plain comparison and
passes with the reference's sensitivity, and a 1%-off one fails both; a sum of signed values beside
large peaks, summed in phases as the suite's CUDA kernel does, fails the plain comparison and passes
with the rounding slack, and the same sums rounded to fp16 fail with it.

    python3 tests/eval/compare_test.py REPO_ROOT
"""
import math
import random
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")
import torch  # noqa: E402

from vinci_worker import compare  # noqa: E402
from checks import check, finish  # noqa: E402


def finite(x: float) -> bool:
    return math.isfinite(x)


def rule_compare(c: list, r: list, e: list | None, atol: float, rtol: float, finite_only: bool,
                 local: list | None = None) -> dict:
    slack = 0.0
    local = local if local is not None and e is not None else [0.0] * len(c)
    if e is not None:
        d = [ri - ei for ri, ei in zip(r, e) if finite(ri) and finite(ei)]
        if d:
            slack = max(8 * math.sqrt(math.fsum(x * x for x in d) / len(d)), 2 * max(abs(x) for x in d))
        r = [ei if finite(ri) else ri for ri, ei in zip(r, e)]
    if any(not finite(ci) and finite(ri) for ci, ri in zip(c, r)):
        return {"ok": False, "reason": "nan_inf"}
    if not finite_only:
        for ci, ri in zip(c, r):
            if not finite(ri) and not (ci == ri or (math.isnan(ci) and math.isnan(ri))):
                return {"ok": False, "reason": "mismatch"}
    diffs = [abs(ci - ri) for ci, ri in zip(c, r) if finite(ri)]
    bad = sum(abs(ci - ri) > atol + slack + rtol * abs(ri) + 2 * li for ci, ri, li in zip(c, r, local) if finite(ri))
    return {"ok": bad == 0, "reason": "mismatch" if bad else None, "max": max(diffs, default=0.0),
            "mean": math.fsum(diffs) / len(diffs) if diffs else 0.0}


def rule_relative(c: list, e: list, r: list, rtol: float) -> bool:
    """Whether relative_error fails the output."""
    keep = [(ci, ei, ri) for ci, ei, ri in zip(c, e, r) if finite(ei) and finite(ri)]
    sq_c = math.fsum((ci - ei) ** 2 for ci, ei, _ in keep)
    sq_r = math.fsum((ri - ei) ** 2 for _, ei, ri in keep)
    sq_e = math.fsum(ei * ei for _, ei, _ in keep)
    if sq_e == 0.0 or not finite(sq_c):
        return False
    return math.sqrt(sq_c / sq_e) > max(rtol, 8 * math.sqrt(sq_r / sq_e))


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def spoil(values: list, rng: random.Random, share: float) -> list:
    return [rng.choice([math.nan, math.inf, -math.inf]) if rng.random() < share else v for v in values]


rng = random.Random(18)
default_chunks = dict(compare.CHUNK)
for chunk in (7, None):
    compare.CHUNK = {"cpu": chunk, "cuda": chunk} if chunk else default_chunks
    for case in range(400):
        n = rng.randint(1, 60)
        r = [rng.gauss(0, rng.choice([1e-5, 1.0, 100.0])) for _ in range(n)]
        c = [v + rng.gauss(0, rng.choice([0.0, 1e-7, 1e-4, 1e-2])) for v in r]
        e = [v + rng.gauss(0, 1e-7) for v in r] if rng.random() < 0.5 else None
        if rng.random() < 0.3:
            c = spoil(c, rng, 0.1)
        if rng.random() < 0.3:
            r = spoil(r, rng, 0.1)
            if rng.random() < 0.5:  # the same non-finite values on both sides
                c = [ri if not finite(ri) else ci for ci, ri in zip(c, r)]
        if e is not None:
            e = [ei if finite(ri) else ri for ei, ri in zip(e, r)]
        atol, rtol = rng.choice([(1e-4, 1e-4), (1e-2, 1e-2), (0.0, 1e-5)])
        finite_only = rng.random() < 0.3
        local = [abs(rng.gauss(0, 1e-3)) for _ in range(n)] if e is not None and rng.random() < 0.5 else None
        tc, tr = torch.tensor(c, dtype=torch.float32), torch.tensor(r, dtype=torch.float32)
        te = torch.tensor(e, dtype=torch.float64) if e is not None else None
        # The rule reads the values the tensors hold (float32, rounded).
        want = rule_compare(tc.double().tolist(), tr.double().tolist(), te.tolist() if te is not None else None,
                            atol, rtol, finite_only, local)
        got = compare.compare([tc], [tr], {"float32": (atol, rtol)}, finite_only=finite_only,
                              exact=[te] if te is not None else None,
                              local=[torch.tensor(local, dtype=torch.float64)] if local is not None else None)
        what = f"chunk {chunk}, case {case}"
        check(got["ok"] == want["ok"] and got.get("reason") == want["reason"],
              f"{what}: compare {got.get('ok')}/{got.get('reason')}, the rule {want['ok']}/{want['reason']}")
        if want["reason"] in (None, "mismatch") and "max" in want and got.get("max_abs_diff") is not None:
            check(close(got["max_abs_diff"], want["max"]) and close(got["mean_abs_diff"], want["mean"]),
                  f"{what}: differences {got['max_abs_diff']}, {got['mean_abs_diff']}; the rule {want['max']}, {want['mean']}")
        if te is not None:
            failed = compare.relative_error([tc], [te], [tr], {"float32": (atol, rtol)}) is not None
            want_failed = rule_relative(tc.double().tolist(), te.tolist(), tr.double().tolist(), rtol)
            check(failed == want_failed, f"{what}: relative_error {failed}, the rule {want_failed}")

# Where the task reference's own error sets relative_error's bound (8x it, above the rtol): a
# candidate 6-10x as far off as the reference, on either side of the bound.
for case in range(200):
    n = rng.randint(2, 60)
    e = [rng.gauss(0, 1) for _ in range(n)]
    r = [v * (1 + rng.gauss(0, 1e-3)) for v in e]
    k = rng.uniform(6, 10)
    c = [ev + k * (rv - ev) * rng.uniform(0.9, 1.1) for ev, rv in zip(e, r)]
    te, tr, tc = (torch.tensor(e, dtype=torch.float64), torch.tensor(r, dtype=torch.float32),
                  torch.tensor(c, dtype=torch.float32))
    failed = compare.relative_error([tc], [te], [tr], {"float32": (1e-4, 1e-4)}) is not None
    want_failed = rule_relative(tc.double().tolist(), e, tr.double().tolist(), 1e-4)
    check(failed == want_failed, f"bound by the reference's error, case {case}: {failed}, the rule {want_failed}")

# By hand: three elements, one 0.02 off where atol + rtol * |r| = 0.01 + 0.01 * 1 = 0.02 allows exactly
# that (not beyond), one 0.03 off: one element beyond, max 0.03, mean (0 + 0.02 + 0.03) / 3.
got = compare.compare([torch.tensor([1.0, 1.02, 2.03], dtype=torch.float64)],
                      [torch.tensor([1.0, 1.0, 2.0], dtype=torch.float64)], {"float64": (0.01, 0.01)})
check(not got["ok"] and got["message"].startswith("1 elements beyond"), f"by hand: {got}")
check(close(got["max_abs_diff"], 0.03) and close(got["mean_abs_diff"], 0.05 / 3), f"by hand, differences: {got}")

# relative_error by hand: an error of 1e-3 of the norm fails rtol 1e-4 (the reference has none); it
# passes where that element's reference moves by 6e-4 on inputs one ulp away (2x: 1.2e-3), not where
# another element moves by 4e-4.
e, r, c = (torch.tensor(v, dtype=torch.float64) for v in ([1.0, 0.0], [1.0, 0.0], [1.001, 0.0]))
tol = {"float64": (1e-4, 1e-4)}
check(compare.relative_error([c], [e], [r], tol) is not None, "relative_error by hand: 1e-3 fails without movement")
check(compare.relative_error([c], [e], [r], tol, [torch.tensor([6e-4, 0.0], dtype=torch.float64)]) is None,
      "relative_error by hand: 1e-3 passes a movement of 6e-4")
check(compare.relative_error([c], [e], [r], tol, [torch.tensor([0.0, 4e-4], dtype=torch.float64)]) is not None,
      "relative_error by hand: 1e-3 fails a movement of 4e-4 elsewhere")
# Red-team round 37's concern: one element that flips at a discontinuity (moves by 1.0) must not excuse
# zeros in place of 1,000 values of 1e-3 (their error alone is 0.0316 of the norm).
e = torch.tensor([1.0] + [1e-3] * 1000, dtype=torch.float64)
c = torch.tensor([1.0] + [0.0] * 1000, dtype=torch.float64)
flip = torch.zeros(1001, dtype=torch.float64)
flip[0] = 1.0
check(compare.relative_error([c], [e], [e], tol, [flip]) is not None,
      "relative_error: one element's large movement excuses no other element")

# ulp_moved: every finite value one ulp up, one down, or where it was (bit for bit, so a -0.0 that
# stays is still -0.0), by its neighbours in the dtype, at the edges too (zeros, the largest finite
# value, the smallest normal, subnormals); infinities and NaNs stay.
g = torch.Generator().manual_seed(3)


def bits(t: torch.Tensor) -> list:
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]).tolist()


for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    fi = torch.finfo(dtype)
    edges = [0.0, -0.0, 1.0, -1.0, 3e-3, -7.5, 1e4, fi.max, -fi.max, fi.smallest_normal, -fi.smallest_normal,
             fi.smallest_normal / 4, -fi.smallest_normal / 4]
    x = torch.tensor(edges, dtype=dtype).repeat(60)
    moved = compare.ulp_moved(x, g)
    up = torch.nextafter(x, torch.full_like(x, math.inf))
    down = torch.nextafter(x, torch.full_like(x, -math.inf))
    which = [(m == u) + 2 * (m == d) + 4 * (m == v)
             for m, u, d, v in zip(bits(moved), bits(up), bits(down), bits(x))]
    check(all(w in (1, 2, 4) for w in which), f"ulp_moved, {dtype}: a value is not one of its neighbours or itself")
    for i in range(len(edges)):
        seen = set(which[i::len(edges)])
        check({1, 2, 4} <= seen, f"ulp_moved, {dtype}: not every move of {edges[i]} was drawn: {sorted(seen)}")
    odd = torch.tensor([math.inf, -math.inf, math.nan], dtype=dtype).repeat(20)
    kept = compare.ulp_moved(odd, g)
    check(kept[odd.isinf()].tolist() == [math.inf, -math.inf] * 20 and bool(kept[2::3].isnan().all()),
          f"ulp_moved, {dtype}: an infinity or a NaN moved: {kept[:3].tolist()}")

# sensitivity by hand: the largest |moved - exact| per element, NaN and inf counted as zero.
exact = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
local = compare.sensitivity([[torch.tensor([1.5, 2.0, math.nan])], [torch.tensor([0.75, 2.25, math.inf])]], [exact])
check(local[0].tolist() == [0.5, 0.25, 0.0], f"sensitivity by hand: {local[0].tolist()}")
check(compare.sensitivity([[3]], [3]) == [None], "sensitivity of a non-tensor output is None")


def near_tie_softmax(x: torch.Tensor) -> torch.Tensor:
    # Logits of 2e4-6e4 in steps of 100: ties everywhere, and a one-ulp move of an input moves a
    # logit by about 0.005, so a tied pair's probabilities by about half a percent.
    return torch.softmax(x * 1e4, dim=-1)


plain_failed = second_failed = off_passed = 0
for case in range(300):
    x = (torch.rand(8, 16, generator=g) * 4 + 2).round(decimals=2)
    e, r = near_tie_softmax(x.double()), near_tie_softmax(x)
    honest = near_tie_softmax(compare.ulp_moved(x, g))  # another rounding of the same computation
    moved = [[near_tie_softmax(compare.ulp_moved(x, g))] for _ in range(compare.SENSITIVITY_DRAWS)]
    local = compare.sensitivity(moved, [e])
    tol = {"float32": (1e-4, 1e-4)}
    plain_failed += not compare.compare([honest], [r], tol, finite_only=True, exact=[e])["ok"]
    second_failed += not compare.compare([honest], [r], tol, finite_only=True, exact=[e], local=local)["ok"]
    off_passed += compare.compare([(e * 1.01).float()], [r], tol, finite_only=True, exact=[e], local=local)["ok"]
check(plain_failed >= 5, f"near-tie softmax: only {plain_failed} of 300 honest roundings failed the plain comparison")
check(second_failed == 0, f"near-tie softmax: {second_failed} of 300 honest roundings failed with the sensitivity")
check(off_passed == 0, f"near-tie softmax: {off_passed} of 300 outputs 1% off passed with the sensitivity")

# rounding_slack by hand: sqrt(fan-in) fp32 unit roundoffs of the magnitude, never below the sensitivity.
slack = compare.rounding_slack([torch.tensor([1e-9, 1.0], dtype=torch.float64), None],
                               [torch.tensor([2.0**24, 2.0**24]), torch.tensor([5.0])], 16.0)
check(slack[0].tolist() == [4.0, 4.0] and slack[1] is None, f"rounding slack by hand: {slack}")
check(compare.rounding_slack([torch.zeros(2, dtype=torch.float64)], [torch.tensor([1.0, math.inf])], 1.0)[0].tolist()
      == [2.0**-24, 0.0], "an infinite magnitude allows nothing")

# A sum over 4,096 rows of signed values whose columns each hold a maximum near +200 and a minimum near
# -200 (the edges kind's peaks), summed as the suite's CUDA kernel does: eight phases of strided
# sequential fp32 sums, then the eight added. The outputs cancel to tens while the partial sums hold
# the peaks, so its rounding fails the element-wise rule against fp64 in some draws, and passes with the
# rounding slack (the reference on |x|, fan-in 4,096); the same sums rounded to fp16 fail with it.
def phased_sum(x: torch.Tensor) -> torch.Tensor:
    acc = torch.zeros(8, x.shape[1])
    for i in range(x.shape[0] // 8):
        acc = acc + x[8 * i:8 * i + 8]
    total = torch.zeros(x.shape[1])
    for j in range(8):
        total = total + acc[j]
    return total


tol = {"float32": (1e-4, 1e-4)}
plain_failed = slack_failed = narrow_passed = 0
for draw in range(6):
    g = torch.Generator().manual_seed(draw)
    x = torch.rand(4096, 256, generator=g) * 2 - 1
    x[0] = 200 * (1 + torch.rand(256, generator=g) / 2)
    x[1] = -200 * (1 + torch.rand(256, generator=g) / 2)
    e, r, honest = x.double().sum(0), x.sum(0), phased_sum(x)
    local = compare.rounding_slack([torch.zeros(256, dtype=torch.float64)], [x.abs().sum(0)], x.numel() / 256)
    plain_failed += not compare.compare([honest], [r], tol, finite_only=True, exact=[e])["ok"]
    slack_failed += not compare.compare([honest], [r], tol, finite_only=True, exact=[e], local=local)["ok"]
    narrow_passed += compare.compare([r.half().float()], [r], tol, finite_only=True, exact=[e], local=local)["ok"]
check(plain_failed >= 1, f"phased sums: none of 6 draws failed the element-wise rule (the case is not exercised)")
check(slack_failed == 0, f"phased sums: {slack_failed} of 6 draws failed with the rounding slack")
check(narrow_passed == 0, f"phased sums: {narrow_passed} of 6 fp16-rounded sums passed with the rounding slack")

sys.exit(finish("ok: the comparison against its element-wise rule"))
