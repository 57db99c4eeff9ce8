"""What vinci's Python test scripts share: a check records a failure and goes on, so one run reports
every broken behaviour; each script ends by exiting non-zero when `failures` holds any."""
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def check_equal(label, got, want):
    check(got == want, f"{label}: got {got!r}, want {want!r}")


def finish(passed: str) -> int:
    """A script's exit status: 1 with the count of failed checks (each already printed), else 0 after
    printing what passed."""
    if failures:
        print(f"{len(failures)} checks failed", file=sys.stderr)
        return 1
    print(passed)
    return 0
