"""The rounding input kind (python/vinci_runner/inputs.py): fp32 values moved so that fp16, TF32 and
bf16 round every one of them down by nearly half an ulp, and why the judge needs it: on a task draw,
a matmul whose operands were narrowed to fp16 (fp32 accumulation; red-team round 13) stays within
fp32's relative-error bound, on rounding inputs it fails it, while fp32 arithmetic passes both. The
bit values are worked by hand; the bound is compare.relative_error's.

    python3 tests/eval/input_kinds_test.py REPO_ROOT
"""
import sys

sys.path.insert(0, f"{sys.argv[1]}/python")
import torch  # noqa: E402

from vinci_runner import inputs  # noqa: E402
from vinci_worker import compare  # noqa: E402
from vinci_worker.judge import DEFAULTS, Judge, merged  # noqa: E402

failures = []


def check(ok: bool, what: str) -> None:
    if not ok:
        failures.append(what)


check("rounding" in inputs.OUT_OF_DISTRIBUTION, f"rounding is an out-of-distribution kind: {inputs.OUT_OF_DISTRIBUTION}")
x = torch.tensor([0.0, 1.0, 3.0, -0.5, float("inf"), float("-inf"), 0.99999])
y = inputs._transform(x, "rounding")
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
moved = inputs._transform(draw, "rounding")
check(bool((moved.to(torch.float16).float() <= moved).all()), "fp16 rounds every moved value down")
check(bool((moved.to(torch.bfloat16).float() <= moved).all()), "bf16 rounds every moved value down")
check(bool(((moved - draw).abs() <= draw * 2.0**-7).all()), "a value moves by less than a bf16 ulp")
check(int(inputs._transform(torch.ones(3, dtype=torch.float16), "rounding").sum()) == 3, "half inputs are left alone")

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
fp32, fp16 = verdicts(inputs._transform(a, "rounding"), inputs._transform(b, "rounding"))
check(fp32 is None, f"fp32 arithmetic passes on rounding inputs: {fp32}")
check(fp16 is not None and fp16["reason"] == "relative_error", f"fp16 operands fail on rounding inputs: {fp16}")

check(Judge._ood_kinds(merged({})) == inputs.OUT_OF_DISTRIBUTION, "every kind is checked by default")
allowed = Judge._ood_kinds(merged({"allow_precision_drop": True}))
check("rounding" not in allowed and "signed" in allowed, f"--allow-precision-drop drops the rounding kind only: {allowed}")
check(Judge._ood_kinds(merged({"ood_trials": False})) == (), "no kind without out-of-distribution trials")
check(DEFAULTS["ood_trials"] is True, "out-of-distribution trials are on by default")

for f in failures:
    print("FAILED:", f)
print(f"{'FAIL' if failures else 'ok'}: the rounding input kind")
sys.exit(1 if failures else 0)
