"""A cached build's failure record, FAILED.json in the folder its output would have taken.

A failure is cached too, but only after a retry: the first failure of a key may be the machine's (a
full disk, a killed compiler), the second is the source's. Extension builds and precompiled headers
keep the same record.
"""
from __future__ import annotations

import json
import os

ATTEMPTS_BEFORE_TRUSTED = 2
FILE = "FAILED.json"


def read(folder: str) -> dict | None:
    """The record ({"attempts", "log", ...}), or None when there is none or it is unreadable."""
    try:
        with open(os.path.join(folder, FILE)) as f:
            record = json.load(f)
        return record if isinstance(record.get("attempts"), int) else None
    except (OSError, ValueError, AttributeError):
        return None


def attempts(folder: str) -> int:
    record = read(folder)
    return record["attempts"] if record else 0


def write(folder: str, record: dict) -> None:
    """Replaces the record whole, so a reader never sees half of one."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, FILE + ".tmp"), "w") as f:
        json.dump(record, f)
    os.replace(os.path.join(folder, FILE + ".tmp"), os.path.join(folder, FILE))
