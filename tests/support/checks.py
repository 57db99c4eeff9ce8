"""What vinci's Python test scripts share: a check records a failure and goes on, so one run reports
every broken behaviour; each script ends by exiting non-zero when `failures` holds any."""
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
