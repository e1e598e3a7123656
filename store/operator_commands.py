"""Operator commands: the console asks, the engine acts.

The console never calls the engine: it inserts a row into ``commands`` and the engine (in the
same process or another) claims pending rows, acts, and records the outcome as events. This
keeps SQLite the single record of truth and lets a console drive a headless run elsewhere.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from proctor.store.schema import configure

OperatorCommandName = Literal[
    "rejudge", "rerun_trial", "lock_anchors", "verify_anchors", "cancel_run", "call_tool"
]
COMMAND_NAMES: tuple[str, ...] = get_args(OperatorCommandName)


@dataclass(frozen=True)
class OperatorCommandRow:
    id: int
    command: str
    args: dict[str, Any]
    status: str
    message: str


def enqueue_operator_command(
    db: str | Path, command: OperatorCommandName, args: dict[str, Any], run_id: str | None = None
) -> int:
    """Insert one pending command and return its id (a short write transaction of its own)."""
    if command not in COMMAND_NAMES:
        raise ValueError(f"unknown command {command!r}; valid: {', '.join(COMMAND_NAMES)}")
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        configure(conn)
        cur = conn.execute(
            "INSERT INTO commands (run_id, command, args, created_at) VALUES (?, ?, ?, ?)",
            (run_id, command, json.dumps(args, sort_keys=True), time.time()),
        )
        return int(cur.lastrowid or 0)
    finally:
        conn.close()


def claim_pending(conn: sqlite3.Connection) -> list[OperatorCommandRow]:
    """Mark every pending command as claimed and return them, oldest first (engine side)."""
    cur = conn.cursor()
    cur.execute("BEGIN IMMEDIATE")
    try:
        rows = cur.execute(
            "SELECT id, command, args FROM commands WHERE status = 'pending' ORDER BY id"
        ).fetchall()
        cur.executemany(
            "UPDATE commands SET status = 'claimed', claimed_at = ? WHERE id = ?",
            [(time.time(), r[0]) for r in rows],
        )
        cur.execute("COMMIT")
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    return [OperatorCommandRow(int(r[0]), str(r[1]), json.loads(r[2]), "claimed", "") for r in rows]


def finish(conn: sqlite3.Connection, command_id: int, ok: bool, message: str = "") -> None:
    conn.execute(
        "UPDATE commands SET status = ?, finished_at = ?, message = ? WHERE id = ?",
        ("done" if ok else "failed", time.time(), message, command_id),
    )


def cancel_unserved(conn: sqlite3.Connection, message: str) -> int:
    """Close every command no engine will serve any more, so none waits forever."""
    cur = conn.execute(
        "UPDATE commands SET status = 'cancelled', finished_at = ?, message = ? "
        "WHERE status IN ('pending', 'claimed')",
        (time.time(), message),
    )
    return cur.rowcount


def list_operator_commands(conn: sqlite3.Connection) -> list[OperatorCommandRow]:
    rows = conn.execute("SELECT id, command, args, status, message FROM commands ORDER BY id")
    return [OperatorCommandRow(int(r[0]), str(r[1]), json.loads(r[2]), str(r[3]), str(r[4])) for r in rows]
