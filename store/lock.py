"""One engine per run database: an advisory lock held while a process runs or serves a run.

Two engines resuming the same run would run trials twice; a console serving commands for a
run that another process is executing would act behind its back. The lock file sits next to
the database and names the holder's pid; the operating system releases it when the process
dies, however it dies.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class EngineLock:
    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def try_acquire(cls, db: Path) -> EngineLock | None:
        """The lock, or None if another live process holds it."""
        path = db.with_name(db.name + ".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd)

    @staticmethod
    def is_held(db: Path) -> bool:
        """Whether some live process (this one included) holds the run; never takes the lock."""
        try:
            fd = os.open(db.with_name(db.name + ".lock"), os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    @staticmethod
    def holder(db: Path) -> str:
        try:
            return db.with_name(db.name + ".lock").read_text().strip() or "unknown"
        except OSError:
            return "unknown"

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
