"""The end of a server's stderr log, keeping the line that says why it died.

Node prints the reason first and a stack and an object dump after it ("Error: Cannot find
module '/x'", then eight lines ending in ``code: 'MODULE_NOT_FOUND'``); Python prints the reason
last. The tail is the last few lines plus the most recent lines before them that name an error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TAIL_BYTES = 16_384
LAST_LINES = 5
REASON_LINES = 3
MAX_LINE_CHARS = 300
_REASON = re.compile(
    r"error|exception|cannot|can't|could not|no such|not found|enoent|eacces|denied|refused|failed|fatal"
    r"|invalid|missing|usage:",
    re.I,
)
_STACK_FRAME = re.compile(r"^\s+(at |File \")")


def stderr_tail(log_path: Path, last: int = LAST_LINES, reasons: int = REASON_LINES) -> list[str]:
    """The last ``last`` non-blank lines, after up to ``reasons`` earlier lines that name an error."""
    try:
        with open(log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - TAIL_BYTES))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = [line[:MAX_LINE_CHARS] for line in text.splitlines() if line.strip()]
    head, tail = lines[:-last], lines[-last:]
    if any(_REASON.search(line) and not _STACK_FRAME.match(line) for line in tail):
        return tail
    found = [line for line in head if _REASON.search(line) and not _STACK_FRAME.match(line)]
    return found[-reasons:] + (["…"] if found else []) + tail


__all__ = ["stderr_tail"]
