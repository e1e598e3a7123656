"""A server's log file: whole lines redacted, and one size cap per file however many write it.

Every ``per_trial`` instance of a server writes the same file from its own supervisor, so the cap
is checked under an ``flock`` against the file's real size, not a count kept by one writer. A line
is redacted whole (a token split across two reads matches no shape), and only then cut.

Only the standard library and proctor.store.redaction are imported: the supervisor loads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
from pathlib import Path

from proctor.store.redaction import Redactor

LINE_MARGIN = 8192  # read past a line's cut, so a token that straddles the cut is still seen whole
ROTATED = b"[log rotated: the previous part is in the .1 file; older output was dropped]\n"
# What a token can be made of: an over-long line loses its trailing run of these before redaction,
# so the part of a token that fit in the buffer is never kept as if it were harmless text.
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-./+=:~%]+\Z")


class LineBuffer:
    """Splits a byte stream into lines; of a line longer than ``keep`` bytes only the head is kept."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._head = bytearray()
        self._dropped = 0

    def feed(self, data: bytes) -> list[tuple[bytes, int]]:
        """Complete lines in ``data`` (with what came before), each as (head, bytes dropped)."""
        lines = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            stop = len(data) if end < 0 else end + 1
            room = max(0, self.keep - len(self._head))
            self._head += data[start : min(stop, start + room)]
            self._dropped += max(0, stop - start - room)
            start = stop
            if end >= 0:
                lines.append(self._take())
        return lines

    def flush(self) -> list[tuple[bytes, int]]:
        """The last line, when the stream ended without a newline."""
        return [self._take()] if self._head or self._dropped else []

    def _take(self) -> tuple[bytes, int]:
        line = (bytes(self._head), self._dropped)
        self._head.clear()
        self._dropped = 0
        return line


class CappedLog:
    """Appends redacted lines to ``path`` until it holds ``limit`` bytes, then rotates it to
    ``path.1`` once more; every process writing the same path shares the one cap."""

    def __init__(self, path: Path, limit: int, redactor: Redactor) -> None:
        self.path, self.limit, self.redactor = path, max(1024, limit), redactor
        self.line_cap = self.limit // 4
        self._fd = self._open()
        self._in_key = False
        self._lock = threading.Lock()  # two pump threads (stderr, stdout) share this writer

    def buffer(self) -> LineBuffer:
        return LineBuffer(self.line_cap + LINE_MARGIN)

    def write(self, line: bytes, dropped: int = 0) -> None:
        """Redact ``line`` whole (``dropped`` bytes of it were not kept), cut it, append it."""
        self.write_lines([(line, dropped)])

    def write_lines(self, lines: list[tuple[bytes, int]]) -> None:
        """Each line as ``write`` does, appended together (one lock and size check per batch)."""
        with self._lock:
            texts = [t for line, dropped in lines if (t := self._prepared(line, dropped))]
            batch: list[bytes] = []
            size = 0
            for text in texts:
                if batch and size + len(text) > self.limit // 2:
                    self._append(b"".join(batch))
                    batch, size = [], 0
                batch.append(text)
                size += len(text)
            if batch:
                self._append(b"".join(batch))

    def _prepared(self, line: bytes, dropped: int) -> bytes:
        decoded = line.decode("utf-8", errors="replace")
        if self._in_key:  # a private key block spans lines; each line alone matches no shape
            self._in_key = "END" not in decoded or "PRIVATE KEY-----" not in decoded
            return b""
        if "PRIVATE KEY-----" in decoded and "BEGIN" in decoded and "END" not in decoded:
            self._in_key = True
        if dropped:
            decoded = _TOKEN_TAIL.sub("", decoded)
        text = self.redactor.redact(decoded).encode()
        if dropped or len(text) > self.line_cap:
            return text[: self.line_cap] + f"…[line cut: {len(line) + dropped} bytes]\n".encode()
        return text if text.endswith(b"\n") else text + b"\n"

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def _append(self, data: bytes) -> None:
        while True:
            fd = self._fd
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if not self._still_the_file(fd):  # another writer rotated it: write to the new one
                    self._fd = self._open()
                    continue
                if os.fstat(fd).st_size + len(data) > self.limit:
                    self._rotate(data)
                else:
                    os.write(fd, data)
                return
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                if self._fd != fd:
                    os.close(fd)

    def _still_the_file(self, fd: int) -> bool:
        try:
            on_disk = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (on_disk.st_ino, on_disk.st_dev) == (mine.st_ino, mine.st_dev)

    def _rotate(self, data: bytes) -> None:
        """Called holding the old file's lock: the new file is locked before anyone can find it."""
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        fresh = self._open()
        fcntl.flock(fresh, fcntl.LOCK_EX)
        try:
            os.write(fresh, ROTATED + data)
        finally:
            fcntl.flock(fresh, fcntl.LOCK_UN)
        self._fd = fresh

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def pump(fd: int, log: CappedLog) -> None:
    """Copy what arrives on ``fd`` into ``log`` line by line until it ends, then close ``fd``."""
    lines = log.buffer()
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 65536):
            log.write_lines(lines.feed(chunk))
    with contextlib.suppress(OSError):
        os.close(fd)
    log.write_lines(lines.flush())


__all__ = ["CappedLog", "LineBuffer", "pump"]
