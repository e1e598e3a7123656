"""Schema versions: older files migrate in place, newer or foreign ones are refused."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from proctor.store.read.reader import StoreReader
from proctor.store.schema import MIGRATIONS, SCHEMA_VERSION, SchemaError, configure, migrate
from proctor.store.write.writer import StoreWriter


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaError, match="newer"):
        asyncio.run(StoreWriter.open(db))
    with pytest.raises(SchemaError):
        StoreReader(db)


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE x (a)")
    conn.close()
    with pytest.raises(SchemaError, match="not a proctor run database"):
        asyncio.run(StoreWriter.open(db))


def test_migration_gives_old_judgments_their_trials_attempt(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    configure(conn)
    conn.executescript(f"BEGIN;\n{MIGRATIONS[0]}\nPRAGMA user_version = 1;\nCOMMIT;")
    conn.execute("INSERT INTO runs (id, suite, config, created_at) VALUES ('r', 's', '{}', 0)")
    conn.execute("INSERT INTO trials (id, run_id, scenario, arm, model, epoch, seed, status, attempt) "
                 "VALUES (1, 'r', 'a', 'b', 'm', 0, 0, 'finished', 3)")  # fmt: skip
    conn.execute("INSERT INTO judgments (trial_id, pass_no, judge, created_at) VALUES (1, 1, 'j', 0)")
    assert migrate(conn, str(db)) == 1
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    with StoreReader(db) as r:
        assert [(j.trial_id, j.judge) for j in r.judgments()] == [(1, "j")]
