"""One engine per run database: the lock excludes a second holder and dies with its process."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from proctor.store.lock import EngineLock

HOLD_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from proctor.store.lock import EngineLock

    lock = EngineLock.try_acquire(Path(sys.argv[1]))
    print("held" if lock else "refused", flush=True)
    time.sleep(60)
    """
)


def test_a_second_holder_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    assert not EngineLock.is_held(db)
    first = EngineLock.try_acquire(db)
    assert first is not None
    assert EngineLock.is_held(db)
    assert EngineLock.try_acquire(db) is None
    first.release()
    assert not EngineLock.is_held(db)
    second = EngineLock.try_acquire(db)
    assert second is not None
    second.release()


def test_the_lock_names_its_holder_and_is_freed_when_the_holder_is_killed(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    proc = subprocess.Popen([sys.executable, "-c", HOLD_SCRIPT, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        assert EngineLock.is_held(db)
        assert EngineLock.holder(db) == str(proc.pid)
        assert EngineLock.try_acquire(db) is None
    finally:
        proc.kill()
        proc.wait(timeout=30)
    lock = EngineLock.try_acquire(db)
    assert lock is not None, "a killed holder must not keep the run locked"
    lock.release()


def _names(tmp_path: Path, db: Path) -> dict[str, Path]:
    """Every other name of ``db`` an operator could give: each must meet the same lock."""
    (tmp_path / "link.db").symlink_to(db)
    (tmp_path / "other").mkdir()
    os.link(db, tmp_path / "other" / "hard.db")
    (db.parent / "inner").mkdir()
    (tmp_path / "deep").symlink_to(db.parent / "inner")
    return {
        "symlink": tmp_path / "link.db",
        "hard link": tmp_path / "other" / "hard.db",
        "dot-dot": tmp_path / "deep" / ".." / db.name,  # deep/.. is db's directory, not tmp_path
        "relative": Path(os.path.relpath(db)),
        "absolute": db.absolute(),
    }


def test_every_name_of_the_database_meets_the_one_lock(tmp_path: Path) -> None:
    db = tmp_path / "runs" / "run.db"
    db.parent.mkdir()
    db.write_bytes(b"a run")
    held = EngineLock.try_acquire(db)
    assert held is not None
    try:
        for form, name in _names(tmp_path, db).items():
            assert EngineLock.is_held(name), form
            assert EngineLock.try_acquire(name) is None, f"{form}: a second engine got the lock"
            assert EngineLock.holder(name) == str(os.getpid()), form
            message = EngineLock.held_message(name)
            assert f"pid {os.getpid()}" in message and os.path.realpath(db) in message, f"{form}: {message}"
    finally:
        held.release()
    for form, name in _names_again(tmp_path, db).items():
        lock = EngineLock.try_acquire(name)
        assert lock is not None, f"{form}: released, yet refused"
        try:
            assert EngineLock.try_acquire(db) is None, (
                f"{form}: holding through {form} does not lock the file"
            )
        finally:
            lock.release()


def _names_again(tmp_path: Path, db: Path) -> dict[str, Path]:
    return {
        "symlink": tmp_path / "link.db",
        "hard link": tmp_path / "other" / "hard.db",
        "dot-dot": tmp_path / "deep" / ".." / db.name,
    }


def test_a_lock_that_created_the_database_leaves_no_empty_file(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    lock = EngineLock.try_acquire(db)
    assert lock is not None and db.exists(), "a new database is locked on its own inode from the start"
    os.link(db, tmp_path / "hard.db")
    assert EngineLock.try_acquire(tmp_path / "hard.db") is None
    lock.release()
    assert not db.exists(), "an empty file left behind would be taken for a run by the next 'proctor run'"


LEAVE_WAL = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=0); print(c.execute('PRAGMA journal_mode=DELETE').fetchone()[0])"


def test_locking_and_probing_never_drop_the_sqlite_locks_this_process_holds(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops the process's POSIX locks on it, SQLite's included:
    a console reading the run while it checks who holds it must keep its reader's lock."""
    db = tmp_path / "run.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        reader.execute("SELECT * FROM t").fetchall()
        conn.close()
        other = subprocess.Popen(
            [sys.executable, "-c", HOLD_SCRIPT, str(db)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert other.stdout is not None and other.stdout.readline().strip() == "held"
            assert EngineLock.is_held(db)
            assert EngineLock.try_acquire(db) is None
        finally:
            other.kill()
            other.wait(timeout=30)
        mine = EngineLock.try_acquire(db)
        assert mine is not None
        mine.release()
        assert not EngineLock.is_held(db)
        switched = subprocess.run(
            [sys.executable, "-c", LEAVE_WAL, str(db)], capture_output=True, text=True, timeout=60
        )
        assert switched.returncode != 0 and "locked" in switched.stderr, "the reader's lock was dropped"
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        reader.close()
