"""Why trials ended in error, as one line per cause: what the headless summary, the report, the
gate and the console show, so a user sees "server 'fs' did not start: No such file or
directory: …/server-filesytem" instead of a count of errors.

A trial's stored error is a paragraph (the server's stderr tail, a retry count); trials that
failed for the same reason differ only in that tail, so causes are grouped on a short line made
from the message's first line and, for a server that did not start, the line of its stderr that
says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from proctor.store.events import RunFinished
from proctor.store.read.reader import StoreReader

MAX_CAUSE_CHARS = 200
MAX_FIRST_CHARS = 400

_SERVER_START = re.compile(r"^(?P<server>[^\n:]+): could not start: (?P<why>[^\n]*)")
_ERRNO = re.compile(r"\[Errno \d+\] (?P<message>[^:\n]+): '(?P<path>[^'\n]+)'")
_RETRIES = re.compile(r"\s*\(failed to start \d+ times; not tried again in this run[^)]*\)")
_GAVE_UP = re.compile(r"\s*\(gave up after (\d+) attempts\)")
_DEADLINE = re.compile(r"\s*\(gave up: a retry in [^)]* would pass the deadline[^)]*\)")
_EXCEPTION_LINE = re.compile(r"^[\w.]*(?:Error|Exception)\b[^:\s]*: \S")
_REASON = re.compile(
    r"error|cannot|could not|no such|not found|denied|refused|failed|fatal|invalid|missing", re.I
)
_STACK_FRAME = re.compile(r"^(at |File \"|\^|~)")
_GENERIC = ("Connection closed", "MCPError: Connection closed")


@dataclass(frozen=True)
class ErrorCause:
    """Trials that ended in error for one reason."""

    cause: str
    """One line: the reason, with the server or endpoint it concerns."""
    trials: int
    arms: tuple[str, ...]
    first: str
    """The first such trial's message, on one line and clipped, for the detail behind the cause."""

    def line(self) -> str:
        """``4 trials: server 'fs' did not start: …`` (arms named when the caller groups several)."""
        return f"{self.trials} trial{'s' if self.trials != 1 else ''}: {self.cause}"


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _short_path(path: str) -> str:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return path if name == path else f"…/{name}"


def _stderr_reason(lines: list[str]) -> str:
    """The stderr line that says why a server died: the last ``SomeError: message`` (node prints
    it first, then a stack; Python last), else the last line naming a failure, else the last."""
    tail = [ln.strip() for ln in lines if ln.strip() and not ln.startswith("[server stderr]")]
    tail = [ln for ln in tail if ln != "…" and not _STACK_FRAME.match(ln)]
    for pattern in (_EXCEPTION_LINE, _REASON):
        found = [ln for ln in tail if pattern.search(ln)]
        if found:
            return found[-1]
    return tail[-1] if tail else ""


def cause_of(error: str | None) -> str:
    """The one-line reason for a trial's stored error message."""
    text = _RETRIES.sub("", error or "").strip()
    if not text:
        return "no error message recorded"
    start = _SERVER_START.match(text)
    if start is not None:
        server = start.group("server").strip()
        errno = _ERRNO.search(text)
        if errno is not None:
            why = f"{errno.group('message')}: {_short_path(errno.group('path'))}"
        else:
            own = start.group("why").strip()
            why = (_stderr_reason(text.splitlines()[1:]) if own in _GENERIC else own) or own
        return _one_line(f"server '{server}' did not start: {why}", MAX_CAUSE_CHARS)
    first = text.splitlines()[0]
    first = _DEADLINE.sub(" (gave up at the trial's deadline)", first)
    return _one_line(_GAVE_UP.sub(r" after \1 attempts", first), MAX_CAUSE_CHARS)


def group_errors(errored: Iterable[tuple[str, str | None]]) -> list[ErrorCause]:
    """``(arm, error message)`` of each errored trial, grouped by cause, most trials first."""
    groups: dict[str, tuple[list[str], str]] = {}
    for arm, error in errored:
        cause = cause_of(error)
        groups.setdefault(cause, ([], _one_line(error or "", MAX_FIRST_CHARS)))[0].append(arm)
    out = [
        ErrorCause(cause, len(arms), tuple(sorted(set(arms))), first)
        for cause, (arms, first) in groups.items()
    ]
    return sorted(out, key=lambda c: (-c.trials, c.cause))


def run_stop_message(reader: StoreReader) -> str | None:
    """Why the run stopped, when it stopped on an error ("" if it recorded no message), else None."""
    run = reader.run()
    if run is None or run.status != "error":
        return None
    ends = reader.events_of_kind("run_finished", after_id=0, up_to_id=reader.max_event_id(), limit=10_000)
    messages = [e.event.message for e in ends if isinstance(e.event, RunFinished)]
    return messages[-1] if messages else ""


__all__ = ["MAX_CAUSE_CHARS", "ErrorCause", "cause_of", "group_errors", "run_stop_message"]
