"""Attacks on the files under a running writer: nothing committed is lost, and the stop says why.

The WAL deleted, the database deleted (with or without its WAL), the database replaced by
another file, and a full disk, each while the writer has committed events: the writer must stop
with ``StoreFailed`` saying what happened, what was kept and how to resume, and every event it
had committed must still be readable somewhere it names.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.store.events import FinalAnswer, TrialFinished, TrialStarted, Usage
from proctor.store.file_watch import StoreFailed
from proctor.store.lock import EngineLock
from proctor.store.read.reader import StoreReader
from proctor.store.write.writer import StoreWriter, TrialRow

ROWS = [TrialRow(f"s{i}", "baseline", "offline:default", 0, i) for i in range(1, 41)]


async def _finish_trials(w: StoreWriter, ids: range, text: str = "done") -> None:
    for tid in ids:
        w.emit(
            "r1",
            TrialStarted(scenario="s", arm="baseline", model="m", epoch=0, seed=1, attempt=1),
            trial_id=tid,
            attempt=1,
        )
        w.emit("r1", FinalAnswer(text=text), trial_id=tid, attempt=1)
        finished = TrialFinished(
            status="finished",
            stop="answer",
            final_answer=text,
            tool_calls=0,
            usage=Usage(),
            cost_usd=0.0,
            wall_s=0.1,
        )
        w.emit("r1", finished, trial_id=tid, attempt=1)
        await w.flush()


async def _writer_with_ten_finished(db: Path) -> StoreWriter:
    w = await StoreWriter.open(db, flush_interval_s=0.005)
    await w.create_run("r1", "suite", {"epochs": 1})
    await w.add_trials("r1", ROWS)
    await _finish_trials(w, range(1, 11))
    return w


def _finished(db: Path) -> int:
    with StoreReader(db) as r:
        return sum(t.status == "finished" for t in r.trials())


def _rm_all(directory: Path, pattern: str) -> None:
    for f in directory.glob(pattern):
        f.unlink()


def _saved(message: str, directory: Path) -> Path:
    """The file the message says holds the run, checked to be a new one beside the database."""
    found = re.search(r"saved in (\S+)\.", message)
    assert found is not None, message
    saved = Path(found.group(1))
    assert saved.parent == directory and saved.is_file()
    return saved


async def _stopped(w: StoreWriter) -> str:
    """The writer's failure once the next commit meets the damage; the writer closed."""
    with pytest.raises(StoreFailed) as first:
        await _finish_trials(w, range(11, 13))
    with pytest.raises(StoreFailed):
        w.emit("r1", FinalAnswer(text="after"), trial_id=13, attempt=1)
    with pytest.raises(StoreFailed):
        await w.close()
    return str(first.value)


async def test_a_deleted_wal_is_copied_back_and_the_run_stops_saying_so(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer_with_ten_finished(db)
    assert db.with_name("run.db-wal").stat().st_size > 0, "the attack needs committed pages in the WAL"
    db.with_name("run.db-wal").unlink()
    message = await _stopped(w)
    assert "WAL file was deleted" in message
    assert "copying every committed event back" in message and f"--resume --db {db}" in message
    assert _finished(db) >= 11, "the events committed before (and in) the batch that met it are kept"


async def test_a_deleted_database_is_saved_beside_it_and_the_run_stops_saying_where(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer_with_ten_finished(db)
    _rm_all(tmp_path, "run.db*")  # the file, its WAL and -shm
    message = await _stopped(w)
    assert "run.db was deleted" in message
    saved = _saved(message, tmp_path)
    assert message.endswith(f"Resume with proctor run --resume --db {saved}")
    assert _finished(saved) >= 11
    assert not db.exists(), "nothing is written at the deleted name: whoever deleted it may reuse it"


async def test_a_replaced_database_is_left_alone_and_the_run_is_saved_apart(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer_with_ten_finished(db)
    other = tmp_path / "other.db"
    other.write_bytes(b"someone else's file")
    os.replace(other, db)
    message = await _stopped(w)
    assert "run.db was replaced by another file" in message
    assert db.read_bytes() == b"someone else's file"
    assert _finished(_saved(message, tmp_path)) >= 11


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 600 KiB tmpfs: a real full disk (ENOSPC), unmounted afterwards."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)], capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a tmpfs to fill ({exc}); test_sqlite_full_says_* covers the message")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill ({done.stderr.decode().strip()}): needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


async def _fill(w: StoreWriter) -> str:
    with pytest.raises(StoreFailed) as failed:
        for start in range(11, 41, 2):
            await _finish_trials(w, range(start, start + 2), text="x" * 60_000 + str(start))
    return str(failed.value)


async def test_a_full_disk_stops_the_run_with_what_was_kept_and_how_to_resume(tiny_disk: Path) -> None:
    db = tiny_disk / "run.db"
    w = await _writer_with_ten_finished(db)
    message = await _fill(w)
    with pytest.raises(StoreFailed):
        await w.close()
    assert message.startswith(f"{db}: the disk is full") and "trials done" in message
    assert f"Free some space, then resume with proctor run --resume --db {db}" in message
    assert _finished(db) >= 10, "what was committed before the disk filled is still readable"


async def test_sqlite_full_says_the_disk_is_full_without_a_mount(tmp_path: Path) -> None:
    """The same path where mounting is not allowed: SQLite's own page limit raises SQLITE_FULL."""
    db = tmp_path / "run.db"
    w = await _writer_with_ten_finished(db)
    pages = sqlite3.connect(db).execute("PRAGMA page_count").fetchone()[0]
    await w.execute(f"PRAGMA max_page_count = {pages + 8}")
    message = await _fill(w)
    with pytest.raises(StoreFailed):
        await w.close()
    assert "the disk is full" in message and "10 of 40 trials done" in message
    assert _finished(db) == 10


def _fill_disk(mount: Path) -> None:
    with (mount / "filler").open("wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass


async def test_a_run_started_on_a_full_disk_says_so_instead_of_a_traceback(tiny_disk: Path) -> None:
    await asyncio.to_thread(_fill_disk, tiny_disk)
    with pytest.raises(StoreFailed, match=r"the disk is full .*free some space and start again"):
        await StoreWriter.open(tiny_disk / "run.db")
    lock = EngineLock.try_acquire(tiny_disk / "other.db")  # the pid file cannot be written: still a lock
    assert lock is not None
    lock.release()


def _replace_with_stale_copy(wal: Path) -> None:
    """A copy of the WAL as it is now, put back in its place: valid frames, soon stale."""
    copy = wal.with_name("copy-wal")
    copy.write_bytes(wal.read_bytes())
    os.replace(copy, wal)


async def test_a_replaced_wal_is_never_replayed_over_the_saved_database(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer_with_ten_finished(db)
    console = sqlite3.connect(f"file:{db}?mode=ro", uri=True)  # a console watching: the writer is not last
    console.execute("SELECT count(*) FROM trials").fetchone()
    await asyncio.to_thread(_replace_with_stale_copy, db.with_name("run.db-wal"))
    message = await _stopped(w)
    console.close()
    assert "WAL file was replaced by another file" in message
    resume = Path(message.rsplit("--resume --db ", 1)[1])
    kept = _finished(resume)
    assert kept >= 11, "a reader's snapshot cost committed trials"
    resumed = await StoreWriter.open(resume)  # what a resume does first: its own WAL recovery
    await resumed.close()
    assert _finished(resume) == kept, "stale frames were replayed over the saved database"
    for saved in {db, resume}:
        check = sqlite3.connect(saved)
        try:
            assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            check.close()


async def test_a_lost_wal_a_reader_holds_back_is_saved_whole_beside_the_database(tmp_path: Path) -> None:
    """A console mid-read keeps the checkpoint from copying the newest pages: they must not be lost."""
    db = tmp_path / "run.db"
    w = await _writer_with_ten_finished(db)
    console = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    console.execute("BEGIN")
    console.execute("SELECT count(*) FROM trials").fetchone()  # a snapshot of 10 trials, held
    try:
        await asyncio.to_thread(db.with_name("run.db-wal").unlink)
        message = await _stopped(w)
    finally:
        console.close()
    assert "WAL file was deleted (and a reader kept its events from being copied back)" in message
    saved = _saved(message, tmp_path)
    assert message.endswith(f"Resume with proctor run --resume --db {saved}")
    assert _finished(saved) >= 11
