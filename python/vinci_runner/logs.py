"""Compiler and runtime logs trimmed to what says what went wrong.

Compiler and runtime logs trimmed to what says what went wrong (no torch here: the build
step uses it before importing torch)."""
import re


def trim_log(text: str, limit: int = 4000) -> str:
    """Keeps the lines that say what went wrong; compiler logs are mostly noise."""
    lines = text.splitlines()
    keep = [ln for ln in lines if re.search(r"error|Error|ERROR|undefined|expected|cannot|fatal|Traceback|line \d+", ln)]
    body = "\n".join(keep[:40]) if keep else "\n".join(lines[-40:])
    return body[:limit]
