"""Operator commands in the store: queued by the console, claimed once by the engine, always closed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from proctor.store.operator_commands import (
    cancel_unserved,
    claim_pending,
    enqueue_operator_command,
    finish,
    list_operator_commands,
)
from proctor.store.schema import configure, migrate


def _db(tmp_path: Path) -> tuple[Path, sqlite3.Connection]:
    db = tmp_path / "run.db"
    conn = sqlite3.connect(db, isolation_level=None)
    configure(conn)
    migrate(conn, str(db))
    return db, conn


def test_commands_are_claimed_once_in_order_and_finished(tmp_path: Path) -> None:
    db, conn = _db(tmp_path)
    first = enqueue_operator_command(db, "rejudge", {"trial_ids": [1], "passes": 2})
    second = enqueue_operator_command(db, "cancel_run", {})
    claimed = claim_pending(conn)
    assert [(c.id, c.command, c.args, c.status) for c in claimed] == [
        (first, "rejudge", {"trial_ids": [1], "passes": 2}, "claimed"),
        (second, "cancel_run", {}, "claimed"),
    ]
    assert claim_pending(conn) == [], "a claimed command is never handed out twice"
    finish(conn, first, ok=True, message="rejudged 1")
    finish(conn, second, ok=False, message="nothing to cancel")
    assert [(c.status, c.message) for c in list_operator_commands(conn)] == [
        ("done", "rejudged 1"),
        ("failed", "nothing to cancel"),
    ]


def test_unserved_commands_are_cancelled_not_left_waiting(tmp_path: Path) -> None:
    db, conn = _db(tmp_path)
    enqueue_operator_command(db, "rejudge", {"trial_ids": [1]})
    claim_pending(conn)
    enqueue_operator_command(db, "lock_anchors", {})
    done = enqueue_operator_command(db, "verify_anchors", {})
    finish(conn, done, ok=True)
    assert cancel_unserved(conn, "the run ended") == 2
    assert [c.status for c in list_operator_commands(conn)] == ["cancelled", "cancelled", "done"]


def test_an_unknown_command_is_refused_before_it_is_stored(tmp_path: Path) -> None:
    db, conn = _db(tmp_path)
    with pytest.raises(ValueError, match="unknown command 'explode'"):
        enqueue_operator_command(db, "explode", {})  # type: ignore[arg-type]
    assert list_operator_commands(conn) == []
