"""Log records from proctor and its libraries, redacted and capped before they are written.

The mcp SDK logs what a server sends when it cannot parse it (the offending line, in an
exception's text); a server that sends megabytes of invalid lines would write megabytes, with
whatever secret they hold, to the terminal (headless runs) or ``engine.stderr.log`` (console
runs), where Python's last-resort handler sent them. One handler on the root logger, installed
once by the CLI, replaces that: each record is formatted whole (traceback included), redacted,
then cut (head and tail kept), and the stream takes at most ``MAX_LOG_BYTES`` in all before it
only counts. An uncaught exception's traceback takes the same path.
"""

from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType
from typing import Any, TextIO

MAX_RECORD_CHARS = 4000
MAX_LOG_BYTES = 1_000_000
_FORMAT = "%(levelname)s %(name)s: %(message)s"


class _Formatter(logging.Formatter):
    def formatException(self, ei: Any) -> str:
        """A validation error (the mcp SDK's, for a line that is not JSON-RPC) quotes its input
        already cut, so a token in it would be kept in pieces: describe it from its parts."""
        from pydantic import ValidationError

        from proctor.store.error_text import error_text

        _kind, value, tb = ei
        if not isinstance(value, ValidationError):
            return super().formatException(ei)
        frames = "".join(traceback.format_tb(tb)) if tb is not None else ""
        return f"Traceback (most recent call last):\n{frames}{error_text(value)}"


class RedactingHandler(logging.StreamHandler[TextIO]):
    """A stream handler whose every line is redacted (before any cut) and whose total is capped."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        record_chars: int = MAX_RECORD_CHARS,
        total_bytes: int = MAX_LOG_BYTES,
    ) -> None:
        super().__init__(stream)
        self._follow_stderr = stream is None  # sys.stderr as it is at each write (it may be replaced)
        self.setFormatter(_Formatter(_FORMAT))
        self.record_chars = record_chars
        self.total_bytes = total_bytes
        self.written = 0
        self.dropped = 0

    def format(self, record: logging.LogRecord) -> str:
        # Imported here: light commands install this handler too and must not load re2 for it.
        from proctor.store.redaction import redact
        from proctor.widgets.sanitize import sanitize

        text = sanitize(redact(super().format(record)))
        if len(text) > self.record_chars:  # the head says what failed, the tail (a traceback's end) why
            half = self.record_chars // 2
            text = f"{text[:half]}\n…[{len(text) - 2 * half:,} characters left out]…\n{text[-half:]}"
        return text

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # a record that cannot be formatted must not end the run
            self.handleError(record)
            return
        size = len(text.encode("utf-8", "replace")) + 1
        if self.written + size > self.total_bytes:
            if self.dropped == 0:
                self._write(f"proctor: log capped at {self.total_bytes:,} bytes; further records dropped")
            self.dropped += 1
            return
        self.written += size
        self._write(text)

    def _write(self, text: str) -> None:
        if self._follow_stderr:
            self.stream = sys.stderr
        try:
            self.stream.write(text + self.terminator)
            self.flush()
        except Exception:
            self.handleError(logging.makeLogRecord({"msg": "log write failed"}))


def install_log_guard(stream: TextIO | None = None, level: int = logging.WARNING) -> RedactingHandler:
    """Route every logger (the mcp SDK's included) through one redacting, capped handler.

    Idempotent: a second call returns the handler already installed. Warnings go through it too.
    """
    root = logging.getLogger()
    for handler in root.handlers:
        if isinstance(handler, RedactingHandler):
            return handler
    handler = RedactingHandler(stream)
    handler.setLevel(level)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught  # a crash's traceback quotes values too: same path, same cap
    return handler


def _log_uncaught(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, tb)
        return
    logging.getLogger("proctor").critical("uncaught exception", exc_info=(kind, value, tb))


__all__ = ["MAX_LOG_BYTES", "MAX_RECORD_CHARS", "RedactingHandler", "install_log_guard"]
