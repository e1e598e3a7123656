"""The end of a server's stderr log, keeping the lines that say why it died.

Node prints the reason first and a stack and an object dump after it ("Error: Cannot find
module '/x'", then eight lines ending in ``code: 'MODULE_NOT_FOUND'``); Python prints the reason
last; uv prints ``error: No solution found`` and its ``cause:`` ("the current Python version
(3.11.2) does not satisfy Python>=3.12") first, then a dozen lines of derivation that end on
"cannot be used" and "unsatisfiable". The tail is the last few lines plus, before them, the
last error report (a line that starts with ``error:``, ``Error:``, ``fatal:``, ``panic``, or a
Python ``...Error:``, with the ``cause:`` lines under it); without one, the most recent lines
that name an error.
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
_ERROR_REPORT = re.compile(
    r"^(?:error|fatal|panic|Error|ERROR|FATAL|[A-Za-z_.]*(?:Error|Exception))\b(?:\[\w+\])?:"
)
_CAUSE = re.compile(r"^\s*(?:cause|caused by|Caused by|hint)\b:?", re.I)


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
    if any(_ERROR_REPORT.match(line) for line in tail):
        return tail
    report = _last_report(head, reasons)
    if report:
        return report + (["…"] if len(report) < len(head) else []) + tail
    if any(_REASON.search(line) and not _STACK_FRAME.match(line) for line in tail):
        return tail
    found = [line for line in head if _REASON.search(line) and not _STACK_FRAME.match(line)]
    return found[-reasons:] + (["…"] if found else []) + tail


def _last_report(lines: list[str], most: int) -> list[str]:
    """The last error report in ``lines``: its first line and up to ``most - 1`` cause lines under it."""
    for start in range(len(lines) - 1, -1, -1):
        if _ERROR_REPORT.match(lines[start]):
            causes = []
            for line in lines[start + 1 : start + most]:
                if not _CAUSE.match(line):
                    break
                causes.append(line)
            return [lines[start], *causes]
    return []


__all__ = ["stderr_tail"]
