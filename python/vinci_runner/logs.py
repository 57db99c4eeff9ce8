"""Compiler and runtime logs trimmed to what says what went wrong.

Compiler and runtime logs trimmed to what says what went wrong (no torch here: the build
step uses it before importing torch)."""
import re


def trim_log(text: str, limit: int = 4000) -> str:
    """Keeps the lines that say what went wrong; compiler logs are mostly noise."""
    lines = text.splitlines()
    # The judge's own verdict on a build ends its log as one bracketed line ("[... (reason)]"): first.
    verdicts = [ln for ln in lines if re.fullmatch(r"\[.*\((forbidden_source|build_\w+)\)\]", ln)]
    keep = verdicts + [ln for ln in lines if ln not in verdicts and
                       re.search(r"error|Error|ERROR|undefined|expected|cannot|fatal|Traceback|line \d+", ln)]
    body = "\n".join(keep[:40]) if keep else "\n".join(lines[-40:])
    return body[:limit]
