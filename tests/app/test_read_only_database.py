"""Attack: a valid run database in a directory nobody may write to (a read-only mount, an archive).

SQLite cannot create the ``-shm`` file a WAL database is read with there, and said "unable to
open database file", which proctor reported as "not a SQLite database". Every reader (report,
export, the console's feed, resume's checks) must read it, or, where its WAL holds committed
events that cannot be read without a ``-shm``, say so and how to read it.

Root ignores directory permissions, so as root the directory is a tmpfs remounted read-only.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.app.views.feed import StoreFeed
from proctor.store.read.reader import StoreReader, read_only_uri
from proctor.store.schema import SchemaError
from tests.app.fixture_store import RUN, build

Freeze = Callable[[], None]


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[tuple[Path, Freeze]]:
    """A directory, and a call that makes it read-only for this process (undone afterwards)."""
    where = tmp_path / "archive"
    where.mkdir()
    if os.geteuid() != 0:
        yield where, lambda: where.chmod(0o555)
        where.chmod(0o755)
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"root, and cannot mount a tmpfs to make read-only: {mounted.stderr.decode().strip()}")

    def freeze() -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True, capture_output=True)

    try:
        yield where, freeze
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture(scope="module")
def source_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("source")
    return asyncio.run(build(root)).db


def _copy(db: Path, to: Path, *suffixes: str) -> Path:
    for suffix in ("", *suffixes):
        shutil.copyfile(f"{db}{suffix}", f"{to / db.name}{suffix}")
    return to / db.name


def _checkpointed(db: Path) -> None:
    """Fold the WAL into the file, as a writer's last close does (then no -wal, no -shm)."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def test_report_and_export_read_a_closed_database_in_a_read_only_directory(
    source_run: Path, read_only_dir: tuple[Path, Freeze], capsys: pytest.CaptureFixture[str]
) -> None:
    where, freeze = read_only_dir
    db = _copy(source_run, where)
    _checkpointed(db)
    freeze()
    assert main(["report", str(db), "--format", "json"]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["run"]["id"] == RUN
    assert main(["export", str(db)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.count("\n") >= 6
    with StoreReader(db) as reader:
        assert len(reader.trials()) == 6
    assert sorted(p.name for p in where.iterdir()) == ["run.db"], "reading wrote nothing beside it"


async def test_the_console_feed_reads_a_closed_database_in_a_read_only_directory(
    source_run: Path, read_only_dir: tuple[Path, Freeze]
) -> None:
    where, freeze = read_only_dir
    db = await asyncio.to_thread(_copy, source_run, where)
    await asyncio.to_thread(_checkpointed, db)
    await asyncio.to_thread(freeze)
    feed = StoreFeed(db)
    try:
        snapshot = await feed.snapshot()
        assert snapshot is not None and len(snapshot.trials) == 6
    finally:
        await feed.close()


def test_a_wal_with_its_shm_is_read_in_a_read_only_directory(
    source_run: Path, read_only_dir: tuple[Path, Freeze]
) -> None:
    where, freeze = read_only_dir
    live = sqlite3.connect(source_run)  # keeps -wal and -shm in place, as a live or crashed writer does
    try:
        live.execute("CREATE TABLE IF NOT EXISTS probe (x)")  # something only the WAL holds
        live.commit()
        db = _copy(source_run, where, "-wal", "-shm")
    finally:
        live.close()
    freeze()
    with StoreReader(db) as reader:
        assert len(reader.trials()) == 6


def test_a_wal_without_its_shm_in_a_read_only_directory_is_refused_saying_how_to_read_it(
    source_run: Path, read_only_dir: tuple[Path, Freeze], capsys: pytest.CaptureFixture[str]
) -> None:
    where, freeze = read_only_dir
    live = sqlite3.connect(source_run)
    try:
        live.execute("PRAGMA wal_autocheckpoint = 0")
        live.execute("CREATE TABLE IF NOT EXISTS probe2 (x)")
        live.commit()
        db = _copy(source_run, where, "-wal")
    finally:
        live.close()
    assert Path(f"{db}-wal").stat().st_size > 0
    freeze()
    with pytest.raises(SchemaError) as refused:
        read_only_uri(db)
    assert "run.db-wal holds committed events" in str(refused.value)
    assert main(["report", str(db)]) == 2
    err = capsys.readouterr().err
    assert "directory is read-only" in err and "copy run.db and run.db-wal to a writable directory" in err
    assert "not a SQLite database" not in err
