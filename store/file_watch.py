"""The run database stays the file the writer opened, and a write that cannot land says why.

An operator can delete or replace the database or its WAL file while a run writes it, and a
disk can fill up. SQLite then keeps writing to a file nobody will open again, or fails with a
bare "database or disk is full"; later readers find a database without the committed trials
("disk I/O error"). The writer checks after every batch commit that the path still names the
file it writes (two ``stat`` calls), saves what was committed where a later run can find it,
and stops the run with ``StoreFailed``: what happened, what was kept, how to resume.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from proctor.store.lock import resume_command


class StoreFailed(Exception):
    """The run database can no longer be written; the message says what was kept and what to do."""


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@dataclass
class FileWatch:
    """The identities of the database file and its WAL as the writer's connection opened them."""

    path: Path
    db: tuple[int, int] | None
    wal: tuple[int, int] | None

    @classmethod
    def of(cls, path: Path) -> FileWatch:
        """Taken once the connection is in WAL mode (it keeps the WAL open from then on)."""
        return cls(path, _identity(path), _identity(wal_path(path)))

    def problem(self) -> str | None:
        """What happened to the files since ``of``, or None while they are the same."""
        now = _identity(self.path)
        if now != self.db:
            return "was deleted" if now is None else "was replaced by another file"
        if self.wal is not None:
            wal = _identity(wal_path(self.path))
            if wal != self.wal:
                return (
                    "'s WAL file was deleted" if wal is None else "'s WAL file was replaced by another file"
                )
        return None


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def kept(conn: sqlite3.Connection) -> str:
    """What the database holds, for the message: trials done out of the matrix."""
    try:
        rows = conn.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall()
    except sqlite3.Error:
        return "what was committed before"
    counts = {str(status): int(n) for status, n in rows}
    done = sum(n for status, n in counts.items() if status not in ("queued", "running"))
    return f"{done} of {sum(counts.values())} trials done"


def moved_away(conn: sqlite3.Connection, path: Path, what: str) -> StoreFailed:
    """Save what the connection committed, then the error that stops the run.

    A lost WAL still holds committed pages the database file lacks: a checkpoint through the
    writer's connection (which keeps both files open) copies them into the file at ``path``, and
    a file put in the WAL's place is moved aside (its frames would be replayed over the database
    on the next open). Where the checkpoint cannot copy everything (a reader's snapshot holds
    pages back), and for a lost or replaced database file, the database is copied whole, from the
    connection, to a new file beside it (never over whatever now sits at ``path``).
    """
    if what.startswith("'s WAL"):
        try:
            _busy, pages, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error:
            pages, copied = 1, 0
        aside = _move_aside(wal_path(path)) if what.endswith("replaced by another file") else ""
        if copied >= pages:
            return StoreFailed(
                f"{path}{what} while the run was writing it: the run stopped after copying every "
                f"committed event back into the database ({kept(conn)}){aside}. Resume with {resume_command(path)}"
            )
        what += " (and a reader kept its events from being copied back)"
    rescue = path.with_name(
        f"{path.stem}.rescued-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}{path.suffix}"
    )
    try:
        conn.execute("VACUUM INTO ?", (str(rescue),))
    except sqlite3.Error as exc:
        return StoreFailed(
            f"{path}{_space(what)} while the run was writing it, and what was committed could not be "
            f"saved elsewhere ({exc}); the run stopped"
        )
    return StoreFailed(
        f"{path}{_space(what)} while the run was writing it: the run stopped, and everything it had "
        f"committed ({kept(conn)}) is saved in {rescue}. Resume with {resume_command(rescue)}"
    )


def _space(what: str) -> str:
    return what if what.startswith("'s") else f" {what}"


def _move_aside(wal: Path) -> str:
    """Rename the file now at the WAL's path out of SQLite's way; a note for the message."""
    aside = wal.with_name(f"{wal.name}.replaced-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.rename(wal, aside)
    except OSError:
        return ""
    return f"; the file found in its place is now {aside}"


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL


def disk_full(conn: sqlite3.Connection, path: Path, exc: BaseException) -> StoreFailed:
    return StoreFailed(
        f"{path}: the disk is full ({exc}): the run stopped; the database keeps every event committed "
        f"before ({kept(conn)}). Free some space, then resume with {resume_command(path)}"
    )


__all__ = ["FileWatch", "StoreFailed", "disk_full", "is_disk_full", "kept", "moved_away", "wal_path"]
