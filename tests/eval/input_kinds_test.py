"""Rounding-biased inputs (python/vinci_runner/inputs.py): fp32 values moved so that fp16, TF32 and
bf16 round every one of them down by nearly half an ulp, and why the judge draws every input so: on
a plain draw, a matmul whose operands were narrowed to fp16 (fp32 accumulation; red-team round 13)
stays within fp32's relative-error bound, on biased inputs it fails it, while fp32 arithmetic passes
both. Every kind of draw is biased, so no call is left whose inputs a kernel could narrow unseen (round
14 recognised a rounding kind by its bits), and so are the parameters a model draws in __init__. The
bit values are worked by hand; the bound is compare.relative_error's.

    python3 tests/eval/input_kinds_test.py REPO_ROOT
"""
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
sys.path.insert(0, f"{sys.argv[1]}/tests/support")
import torch  # noqa: E402

from vinci_runner import inputs  # noqa: E402
from vinci_worker import compare  # noqa: E402
from vinci_worker.judge import DEFAULTS, Judge, merged  # noqa: E402
from checks import check, finish  # noqa: E402

x = torch.tensor([0.0, 1.0, 3.0, -0.5, float("inf"), float("-inf"), 0.99999])
y = inputs._rounding(x)
# 1.0 is 0x3F800000: its low 16 bits become 0x6F00, so 1 + 0x6F00 * 2^-23 = 1.003387451171875.
check(y[1].item() == 1 + 0x6F00 * 2.0**-23, f"1.0 moves to 1 + 0x6F00 ulp: {y[1].item()!r}")
check(y[2].item() == 3 + 0x6F00 * 2.0**-22, f"3.0 moves to 3 + 0x6F00 ulp of [2, 4): {y[2].item()!r}")
check(y[3].item() == -(0.5 + 0x6F00 * 2.0**-24), f"-0.5 keeps its sign: {y[3].item()!r}")
check(y[0].item() == 0.0 and y[4].item() == float("inf") and y[5].item() == float("-inf"), f"0 and inf are kept: {y}")
check(0.99 < y[6].item() < 1.0, f"a value below 1 stays below 1: {y[6].item()!r}")
# fp16 keeps 10 of fp32's 23 mantissa bits: 1 + 0x6F00 * 2^-23 is 0x6F00 / 0x2000 = 3.469 fp16 ulps above 1,
# so it rounds down to 1 + 3 * 2^-10; bf16 keeps 7: 0x6F00 / 0x10000 = 0.434 of its ulp, down to 1.0.
check(y[1].to(torch.float16).item() == 1 + 3 * 2.0**-10, f"fp16 rounds 1.0034 down: {y[1].to(torch.float16).item()!r}")
check(y[1].to(torch.bfloat16).item() == 1.0, f"bf16 rounds 1.0034 down: {y[1].to(torch.bfloat16).item()!r}")
draw = torch.rand(4096, generator=torch.Generator().manual_seed(1))
moved = inputs._rounding(draw)
check(bool((moved.to(torch.float16).float() <= moved).all()), "fp16 rounds every moved value down")
check(bool((moved.to(torch.bfloat16).float() <= moved).all()), "bf16 rounds every moved value down")
check(bool(((moved - draw).abs() <= draw * 2.0**-7).all()), "a value moves by less than a bf16 ulp")


class Task:
    """get_inputs of an fp32 tensor, an fp16 tensor, an integer tensor and a number."""

    @staticmethod
    def get_inputs():
        return [torch.rand(64), torch.rand(8).half(), torch.arange(4), 3]


plain = inputs.make_inputs(Task, 7, "task", torch.device("cpu"))
biased = inputs.make_inputs(Task, 7, "task", torch.device("cpu"), rounding=True)
check(torch.equal(biased[0], inputs._rounding(plain[0])), "the task's fp32 draw is biased")
check(torch.equal(biased[1], inputs._rounding(plain[1])), "the fp16 draw is biased too")
check(torch.equal(biased[2], plain[2]) and biased[3] == 3, "integer and plain inputs are left alone")
# An fp16 value's 3 bits below bf16's last are set to 0b011: 1.0 (0x3C00) becomes 0x3C03 = 1 + 3 * 2^-10,
# which bf16 (7 mantissa bits) rounds down to 1.0; a bf16 value's 4 bits below e4m3's to 0b0111.
half = inputs._rounding(torch.tensor([1.0, 0.0, float("inf")], dtype=torch.float16))
check(half[0].item() == 1 + 3 * 2.0**-10 and half[1].item() == 0.0 and half[2].item() == float("inf"),
      f"fp16 1.0 moves to 1 + 3 * 2^-10, 0 and inf stay: {half.tolist()}")
check(half[0].to(torch.bfloat16).item() == 1.0, "bf16 rounds the moved fp16 value down")
bhalf = inputs._rounding(torch.tensor([1.0], dtype=torch.bfloat16))
check(bhalf.view(torch.int16).item() == 0x3F87, f"bf16 1.0 (0x3F80) moves to 0x3F87: {hex(bhalf.view(torch.int16).item())}")
h = torch.rand(4096, generator=torch.Generator().manual_seed(3)).half()
hm = inputs._rounding(h)
check(bool((hm.to(torch.bfloat16).float() <= hm.float()).all()), "bf16 rounds every moved fp16 value down")
check(bool(((hm.float() - h.float()).abs() <= h.float() * 2.0**-7).all()), "an fp16 value moves by under a bf16 ulp")
# Round 17's a4: an fp16 matmul on bf16 operands (fp32 accumulation) passes the precision gate on a plain
# draw and fails it on biased inputs, where fp16 operands pass both.
g16 = torch.Generator().manual_seed(4)
x16, y16 = torch.rand(64, 1024, generator=g16).half(), torch.rand(1024, 64, generator=g16).half()


def half_verdicts(a, b):
    exact = a.double() @ b.double()
    reference = (a.float() @ b.float()).half()
    narrowed = (a.to(torch.bfloat16).float() @ b.to(torch.bfloat16).float()).half()
    return (compare.precision([reference], [exact], [reference]), compare.precision([narrowed], [exact], [reference]))


ref16, bf16_ops = half_verdicts(x16, y16)
check(ref16 is None and bf16_ops is None, f"on a plain draw bf16 operands pass the precision gate: {bf16_ops}")
ref16, bf16_ops = half_verdicts(inputs._rounding(x16), inputs._rounding(y16))
check(ref16 is None and bf16_ops is not None and bf16_ops["reason"] == "precision_loss",
      f"on biased fp16 inputs bf16 operands fail it: {bf16_ops}")
for kind in inputs.OUT_OF_DISTRIBUTION:
    a = inputs.make_inputs(Task, 7, kind, torch.device("cpu"))[0]
    b = inputs.make_inputs(Task, 7, kind, torch.device("cpu"), rounding=True)[0]
    check(torch.equal(b, inputs._rounding(a)), f"the {kind} draw is biased after its transform")



class Wide:
    """get_inputs of a 200 x 32 matrix and a vector of 1,000."""

    @staticmethod
    def get_inputs():
        return [torch.rand(200, 32), torch.rand(1000)]


# The rows kind: about 1.5% of the rows and at least one of each row kind (7) where there are twice as
# many rows (7 of 200; 7 of the vector's 15 64-value pieces), the rest as drawn, the same for the same seed.
task_draw = inputs.make_inputs(Wide, 9, "task", torch.device("cpu"))
row_draw = inputs.make_inputs(Wide, 9, "rows", torch.device("cpu"))
check(all(torch.equal(a, b) for a, b in zip(row_draw, inputs.make_inputs(Wide, 9, "rows", torch.device("cpu")))),
      "the rows kind is one draw per seed")
changed = (task_draw[0] != row_draw[0]).any(dim=1)
check(int(changed.sum()) == 7, f"7 of the matrix's 200 rows changed: {int(changed.sum())}")
check(int((row_draw[0] == 0).all(dim=1).sum()) == 1 and float(row_draw[0].min()) < -2,
      "a zero row, and one spread over both signs past the draw's magnitude")


class Pair:  # a residual add's two inputs: their sum must meet the zero and shrunk rows too (round 53)
    @staticmethod
    def get_inputs():
        return [torch.rand(50, 64), torch.rand(50, 64)]


x_rows, r_rows = inputs.make_inputs(Pair, 5, "rows", torch.device("cpu"))
summed = x_rows + r_rows
check(int((summed == 0).all(dim=1).sum()) == 1 and float(summed.abs().amax(dim=1).min()) < 1e-3,
      "inputs of one row count get the same rows: their sum has a zero row and a shrunk one")
check(float(row_draw[0].max()) > 2 or float(row_draw[0].min()) < 0, "the changed rows leave [0, 1)")
check(torch.equal(task_draw[0][~changed], row_draw[0][~changed]), "the other rows are the task's draw")
pieces = (task_draw[1][:960] != row_draw[1][:960]).reshape(15, 64).any(dim=1)
check(int(pieces.sum()) == 7 and torch.equal(task_draw[1][960:], row_draw[1][960:]), f"7 pieces of the vector: {pieces.tolist()}")


class Derived(torch.nn.Module):
    """A linear layer's weight and bias, and its weight transposed in __init__ (a derived value)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 8)
        self.transposed = self.linear.weight.detach().t().contiguous()
        self.noise = torch.randn(4)


def built(rounding: bool) -> Derived:
    inputs.seed_everything(5)
    with inputs.rounding_draws(rounding):
        return Derived()


plain_model, biased_model = built(False), built(True)
check(torch.equal(biased_model.linear.weight, inputs._rounding(plain_model.linear.weight.detach())),
      "a parameter drawn in __init__ is biased as an input is")
check(torch.equal(biased_model.linear.bias, inputs._rounding(plain_model.linear.bias.detach())), "its bias too")
check(torch.equal(biased_model.transposed, biased_model.linear.weight.detach().t()),
      "a value derived in __init__ is derived from the biased draw")
check(torch.equal(biased_model.noise, inputs._rounding(plain_model.noise)), "randn draws are biased")
check(torch.equal(built(True).linear.weight, biased_model.linear.weight), "one seed, one model, both sides alike")

g = torch.Generator().manual_seed(2)
a, b = torch.rand(64, 4096, generator=g), torch.rand(4096, 64, generator=g)


def verdicts(a, b):
    exact = a.double() @ b.double()
    reference = a @ b
    fp16_operands = a.half().float() @ b.half().float()
    return (compare.relative_error([reference], [exact], [reference]),
            compare.relative_error([fp16_operands], [exact], [reference]))


fp32, fp16 = verdicts(a, b)
check(fp32 is None and fp16 is None, f"on the task's draw fp16 operands pass the bound, as in round 13: {fp16}")
fp32, fp16 = verdicts(inputs._rounding(a), inputs._rounding(b))
check(fp32 is None, f"fp32 arithmetic passes on rounding inputs: {fp32}")
check(fp16 is not None and fp16["reason"] == "relative_error", f"fp16 operands fail on rounding inputs: {fp16}")

check(Judge._rounding(merged({})) is True, "inputs are biased under the default (vinci) protocol")
check(Judge._rounding(merged({"allow_precision_drop": True})) is False, "not where narrowed operands are allowed")
check(Judge._rounding(merged({"ood_trials": False})) is False, "nor under KernelBench's protocol (the task's own draws)")
check(Judge._ood_kinds(merged({})) == inputs.OUT_OF_DISTRIBUTION and Judge._ood_kinds(merged({"ood_trials": False})) == (),
      "the out-of-distribution kinds")
check(DEFAULTS["ood_trials"] is True, "out-of-distribution trials are on by default")

check(Judge._rounding(merged({"plain_draws": True})) is False, "the plain trials draw without the bias")

# The plain trials' draws (round 22): torch's fp32 rand draws multiples of 2^-24, which every kind keeps;
# scaled by one factor of full mantissa, the values below 0.5 leave that grid as a user's do, while
# zeros, signs, equal entries and integers stay as they were.
class Structured:
    @staticmethod
    def get_inputs():
        x = torch.rand(4096)
        x[:16] = 0.0
        x[16:32] = x[32]
        return [x, torch.arange(4)]


for kind in inputs.KINDS:
    drawn = inputs.make_inputs(Structured, 11, kind, torch.device("cpu"))
    scaled = inputs.make_inputs(Structured, 11, kind, torch.device("cpu"), plain=True)
    small = drawn[0].abs() < 0.5
    on_grid = lambda t, bits=24: (t.double() * 2.0**bits == (t.double() * 2.0**bits).floor())  # noqa: E731
    # (the rows kind's shrunk rows divide by 4096: the 2^-36 grid)
    check(bool(on_grid(drawn[0], 36 if kind == "rows" else 24).all()), f"{kind}: the generator's draw is on the 2^-24 grid")
    # A value of full mantissa in [2^-k-1, 2^-k) falls on the grid with probability 2^-k: half of
    # those in [0.25, 0.5), a quarter below, about a third of a uniform draw's in all. The offset
    # kind holds no value below 0.5.
    if bool((small & (drawn[0] != 0)).any()):
        off = float((~on_grid(scaled[0]))[small & (drawn[0] != 0)].float().mean())
        check(off > 0.55, f"{kind}: a plain draw's values below 0.5 leave the grid: {off:.3f} of them")
    ratio = scaled[0][drawn[0] != 0].double() / drawn[0][drawn[0] != 0].double()
    check(bool(((ratio - ratio[0]).abs() < 1e-6).all()) and 0.75 <= float(ratio[0]) < 1.25,
          f"{kind}: one factor in [0.75, 1.25) for the whole draw: {float(ratio.min())}-{float(ratio.max())}")
    check(torch.equal(scaled[0] == 0, drawn[0] == 0) and torch.equal(scaled[0] < 0, drawn[0] < 0),
          f"{kind}: zeros and signs are kept")
    check(torch.equal(scaled[1], drawn[1]), f"{kind}: integer inputs are left alone")
check(bool((inputs.make_inputs(Structured, 11, "task", torch.device("cpu"), plain=True)[0][16:33] ==
            inputs.make_inputs(Structured, 11, "task", torch.device("cpu"), plain=True)[0][32]).all()),
      "equal entries stay equal")
check(not torch.equal(inputs.make_inputs(Structured, 11, "task", torch.device("cpu"), plain=True)[0],
                      inputs.make_inputs(Structured, 12, "task", torch.device("cpu"), plain=True)[0]),
      "the factor is the call's, from its seed")



# The edges kind (session 35): a row maximum whose loop stops one column short is exact on every random
# draw of long rows, and wrong on edges, where row 0's maximum is its last column; along each dimension
# of 8 or more, a chosen fiber's maximum and minimum sit on boundary indices (_boundaries, by hand for
# 300: 299, 0, 298, 1, then 31, 32 and the last 32-chunk's start 288 and 287, ...); zeros, masks and
# symmetric matrices stay.
check(inputs._boundaries(300)[:8] == [299, 0, 298, 1, 31, 32, 287, 288], f"boundaries: {inputs._boundaries(300)[:8]}")
check(inputs._boundaries(5) == [4, 0, 3, 1], f"boundaries of 5: {inputs._boundaries(5)}")


class LongRows:
    @staticmethod
    def get_inputs():
        x = torch.rand(64, 300)
        x[40, 7] = 0.0
        s = torch.rand(12, 12)
        return [x, (torch.rand(16, 16) > 0.5).float(), s + s.t()]


for kind in inputs.KINDS[:-1]:
    drawn = inputs.make_inputs(LongRows, 5, kind, torch.device("cpu"))[0]
    check(torch.equal(drawn[:, :-1].amax(1), drawn.amax(1)), f"{kind}: no row's maximum on its last column")
_, mask, symmetric = inputs.make_inputs(LongRows, 5, "edges", torch.device("cpu"))
plain = inputs.make_inputs(LongRows, 5, "task", torch.device("cpu"))
torch.manual_seed(0)
edges = inputs._edges(plain[0], float(plain[0].abs().max()), along="each")
check(not torch.equal(edges[:, :-1].amax(1), edges.amax(1)), "edges: a row maximum one column short differs")
boundary_rows = set(inputs._boundaries(64))
chosen = [r for r in range(64) if r not in boundary_rows]
spots = inputs._boundaries(300)
check(all(int(edges[r].argmax()) == spots[r % len(spots)] and int(edges[r].argmin()) == spots[(r + 1) % len(spots)]
          for r in chosen), "edges: each chosen row's maximum and minimum sit on its boundary columns, in turn")
check(all(16 * float(plain[0].abs().max()) <= float(edges[r].max()) for r in chosen), "edges: peaks of 16m or more")
columns = [c for c in range(300) if c not in set(spots)]
down = inputs._boundaries(64)
check(all(int(edges[:, c].argmax()) == down[c % len(down)] for c in columns),
      "edges: each chosen column's maximum sits on a boundary row")
check(edges[40, 7].item() == 0.0, "edges: a zero stays")
# Over a draw of one sign the rest of an edges input is spread over both signs first (red-team round 47:
# a fast path taken only where a row's sample was small and of both signs, as user's randn rows are).
made = inputs.make_inputs(LongRows, 5, "edges", torch.device("cpu"))[0]
rest = made[made.abs() <= float(plain[0].abs().max()) * 1.01]
check(bool((rest < 0).any()) and bool((rest > 0).any()) and rest.numel() > 0.9 * made.numel(),
      "edges over a one-sign draw: the values besides the extremes are of both signs")
# Corners (round 45's miss, session 36): in half the calls with two such dimensions, one drawn dimension
# alone takes the extremes, in every fiber, so a row on the other dimension's boundary (row 63, the
# last) gets its maximum on a boundary column too; both ways occur among the calls' seeds.
torch.manual_seed(0)
rows_only = inputs._edges(plain[0], float(plain[0].abs().max()), along=1)
check(all(int(rows_only[r].argmax()) == spots[r % len(spots)] for r in range(64)),
      "edges along the rows alone: every row, the boundary rows included, has its maximum on a boundary column")
check(int(rows_only[:, 100].argmax()) not in set(down) or float(rows_only[:, 100].max()) < 16,
      "edges along the rows alone: no column gets extremes of its own")
ways = set()
for seed in range(16):
    drawn = inputs.make_inputs(LongRows, seed, "edges", torch.device("cpu"))[0]
    ways.add((int(drawn[63].argmax()) in set(spots), int(drawn[:, 100].argmax()) in set(down)))
check({(False, True), (True, False)} <= ways or {(False, True), (True, True)} <= ways,
      f"edges: calls that place extremes along both dimensions, and along one alone: {ways}")
# Few fibers (session 36): 4 rows of 300 columns, fewer rows than boundary columns: row 0 always takes
# the last column, and across calls the others reach every boundary column.
few, reached = torch.rand(4, 300), set()
for seed in range(40):
    torch.manual_seed(seed)
    e = inputs._edges(few, 1.0)
    check(int(e[0].argmax()) == 299, "few fibers: the first takes the last index")
    reached |= {int(e[r].argmax()) for r in range(4)}
check(set(spots) <= reached, f"few fibers: calls together reach every boundary column: {sorted(set(spots) - reached)}")
check(torch.equal(mask, plain[1]) and torch.equal(symmetric, plain[2]), "edges: a mask and a symmetric matrix stay")

# Strided inputs (the plain runner's last call): the same values, not contiguous, wherever two
# dimensions have more than one index transposed, else every other element of a NaN-padded buffer.
for shaped in (torch.arange(12.0).reshape(3, 4), torch.arange(24.0).reshape(2, 3, 4), torch.arange(6.0).reshape(1, 6, 1),
               torch.arange(5, dtype=torch.int64), torch.tensor([True, False, True])):
    strided = inputs.strided_copy(shaped)
    check(torch.equal(strided, shaped) and strided.shape == shaped.shape and not strided.is_contiguous(),
          f"strided copy of {tuple(shaped.shape)} {shaped.dtype}: equal {torch.equal(strided, shaped)}, "
          f"strides {strided.stride()}")
check(inputs.strided_copy(torch.arange(12.0).reshape(3, 4)).stride() == (1, 3), "two long dimensions: transposed")
padded = inputs.strided_copy(torch.arange(6.0).reshape(1, 6, 1))
check(padded.stride()[1] == 2 and torch.isnan(padded.as_strided((12,), (1,))[1::2]).all(),
      f"one long dimension: every other element, the gaps NaN: {padded.stride()}")
check(inputs.strided_copy(torch.tensor([2.0])).is_contiguous() and inputs.strided_copy(3) == 3,
      "one element, or not a tensor: as it is")
# Padded rows and a contiguous view from a misaligned start (round 56): the same values, the last
# dimension dense, the data one element past a 256-byte boundary.
for shaped in (torch.arange(12.0).reshape(3, 4), torch.arange(24.0).reshape(2, 3, 4), torch.arange(5.0),
               torch.arange(6, dtype=torch.int16).reshape(2, 3)):
    for layout in ("padded", "offset"):
        moved = inputs.strided_copy(shaped, layout)
        check(torch.equal(moved, shaped) and moved.stride()[-1] == 1 and moved.storage_offset() > 0
              and moved.data_ptr() % inputs.MISALIGNED_BY == moved.element_size(),
              f"{layout} copy of {tuple(shaped.shape)} {shaped.dtype}: strides {moved.stride()}, "
              f"offset {moved.storage_offset()}, address mod {inputs.MISALIGNED_BY} {moved.data_ptr() % inputs.MISALIGNED_BY}")
check(inputs.strided_copy(torch.arange(12.0).reshape(3, 4), "padded").stride() == (7, 1), "padded: rows 3 apart")
# Every outer dimension one index longer than its size (round 65: a kernel that took the outer dimensions
# as packed over padded rows): (2, 3, 4, 5) has rows 8 apart, planes 8 * 5 and blocks 8 * 5 * 4 apart.
check(inputs.strided_copy(torch.arange(120.0).reshape(2, 3, 4, 5), "padded").stride() == (160, 40, 8, 1),
      f"padded: every outer pitch one index longer: {inputs.strided_copy(torch.arange(120.0).reshape(2, 3, 4, 5), 'padded').stride()}")
check(inputs.strided_copy(torch.arange(12.0).reshape(3, 4), "offset").is_contiguous(), "offset: contiguous")

# A mirrored kind is its kind's draw with every floating value negated, biased alike (the rounding moves
# magnitudes, whatever the sign), and integers left alone: every position takes both signs over the two.
for kind in ("task", "signed", "rows", "edges"):
    for rounding, plain in ((False, False), (True, False), (True, True)):
        a = inputs.make_inputs(Task, 11, kind, torch.device("cpu"), rounding=rounding, plain=plain)
        b = inputs.make_inputs(Task, 11, inputs.mirrored(kind), torch.device("cpu"), rounding=rounding, plain=plain)
        check(torch.equal(b[0], -a[0]) and torch.equal(b[1], -a[1]) and torch.equal(b[2], a[2]) and b[3] == a[3],
              f"mirrored {kind} (rounding {rounding}, plain {plain}) negates the floating draws alone")
signed = inputs.make_inputs(Task, 11, "signed", torch.device("cpu"))[0]
check(bool((signed < 0).any() and (signed > 0).any()), "a signed draw has both signs, so its mirror differs")
try:
    inputs.make_inputs(Task, 11, "mirrored nothing", torch.device("cpu"))
    check(False, "an unknown kind under the mirror is refused")
except ValueError:
    pass

sys.exit(finish("ok: rounding-biased inputs"))
