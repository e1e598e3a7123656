"""The processes below a supervisor, read from /proc (Linux), and the reaping of its children.

Only the standard library is imported besides the redactor: the supervisor loads it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from proctor.store.redaction import Redactor

PROC = Path("/proc")
DESCRIBE_CHARS = 160


def _table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every live process; zombies are left out."""
    rows: dict[int, tuple[int, int]] = {}
    if not PROC.is_dir():
        return rows
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                rows[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return rows


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (children, theirs, and orphans reparented to it)."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in _table().items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return sorted(found)


def children(parent: int) -> list[int]:
    """Live processes whose parent is ``parent``."""
    return sorted(pid for pid, (ppid, _) in _table().items() if ppid == parent)


def group_members(pgid: int) -> list[int]:
    """Live processes in the group ``pgid``."""
    return sorted(pid for pid, (_, group) in _table().items() if group == pgid)


def describe(pid: int, redactor: Redactor) -> str:
    """``pid 123 (python3 serve.py --port 1)``, redacted and short; empty when it is gone."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    words = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace")
    text = redactor.redact(words)
    text = "".join(c if c.isprintable() else "?" for c in text)
    if len(text) > DESCRIBE_CHARS:
        text = text[: DESCRIBE_CHARS - 1] + "…"
    return f"pid {pid} ({text})" if text else f"pid {pid}"


def reap_children() -> list[tuple[int, int]]:
    """Collect every child that has exited, without blocking: (pid, wait status) each."""
    reaped = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        reaped.append((pid, status))
    return reaped


__all__ = ["descendants", "describe", "group_members", "reap_children"]
