"""How a judge's request ends before its last step: a classified result (class, reason, message)"""
from __future__ import annotations

MESSAGE_CAP = 4000  # characters of a result's message


class Outcome(Exception):
    """Ends an evaluation with a classified result."""

    def __init__(self, cls: str, reason: str, message: str, **extra):
        super().__init__(message)
        self.reply = {"ok": False, "class": cls, "reason": reason, "message": message[:MESSAGE_CAP], **extra}
