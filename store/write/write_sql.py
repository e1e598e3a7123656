"""Every statement the store's writer thread runs: a queued batch in one transaction, and the
rare direct writes (the run row, the trial matrix, abandoning a resumed run's partial trials).

Derived rows (trial status, scores, judgments) go in the same transaction as the events they
come from, so the store never says a trial is finished without also holding its
``trial_finished`` event.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from proctor.store.write.batch_payloads import finish_payloads
from proctor.store.write.derived_rows import apply_derived, insert_flat
from proctor.store.write.write_queue import Batch

_INSERT_EVENT = (
    "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_FACT = "INSERT INTO event_facts (event_id, trial_id, attempt, kind, facts) VALUES (?, ?, ?, ?, ?)"


def write_batch(conn: sqlite3.Connection, batch: Batch) -> None:
    """Redact and compress the batch's payloads, then insert it and its derived rows in one transaction."""
    ops = finish_payloads(batch.flat, batch.derived, batch.checked, batch.facts) if batch.rows else []
    with transaction(conn) as cur:
        if batch.blobs:
            cur.executemany(
                "INSERT OR IGNORE INTO blobs (sha256, mime_type, size, data) VALUES (?, ?, ?, ?)", batch.blobs
            )
        insert_flat(cur, _INSERT_EVENT, 7, batch.flat)
        if batch.facts:
            insert_flat(cur, _INSERT_FACT, 5, _fact_rows(cur, batch))
        apply_derived(cur, ops)


def _fact_rows(cur: sqlite3.Cursor, batch: Batch) -> list[Any]:
    """The batch's facts as ``event_facts`` rows, five values a row, keyed by their event's id.

    The batch's events were just inserted in order, in this transaction, by the only writer:
    AUTOINCREMENT gave them consecutive ids ending at ``last_insert_rowid()``."""
    (last,) = cur.execute("SELECT last_insert_rowid()").fetchone()
    first = last - batch.rows + 1
    flat = batch.flat
    values: list[Any] = []
    for row, fact in batch.facts:
        if fact is not None:
            at = 7 * row
            values += (first + row, flat[at + 1], flat[at + 2], flat[at + 4], fact)
    return values


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Cursor]:
    cur = conn.cursor()
    cur.execute("BEGIN IMMEDIATE")
    try:
        yield cur
        cur.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back already (a full disk does): a second ROLLBACK would fail
        # and hide the error that matters.
        if conn.in_transaction:
            cur.execute("ROLLBACK")
        raise


def insert_run(conn: sqlite3.Connection, run_id: str, suite: str, config: str) -> None:
    conn.execute(
        "INSERT INTO runs (id, suite, config, created_at) VALUES (?, ?, ?, ?)",
        (run_id, suite, config, time.time()),
    )


def insert_trials(conn: sqlite3.Connection, rows: list[tuple[str, str, str, str, int, int]]) -> None:
    with transaction(conn) as cur:
        cur.executemany(
            "INSERT OR IGNORE INTO trials (run_id, scenario, arm, model, epoch, seed) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )


def abandon_unfinished(conn: sqlite3.Connection, run_id: str) -> list[int]:
    ids = [
        int(r[0])
        for r in conn.execute("SELECT id FROM trials WHERE run_id = ? AND status = 'running'", (run_id,))
    ]
    requeue(conn, ids)
    return ids


def requeue(conn: sqlite3.Connection, ids: list[int]) -> None:
    """Mark every event of these trials' attempts so far abandoned, and queue them to run again."""
    with transaction(conn) as cur:
        cur.executemany(
            "UPDATE events SET abandoned = 1 WHERE trial_id = ? AND attempt <= (SELECT attempt FROM trials WHERE id = ?)",
            [(i, i) for i in ids],
        )
        cur.executemany("UPDATE trials SET status = 'queued' WHERE id = ?", [(i,) for i in ids])


def replan_run(conn: sqlite3.Connection, run_id: str, config: str, drop: list[int]) -> None:
    """A resumed run's new plan: its config, and the queued trials outside it removed, each only
    if it never started (no attempt, no event): nothing recorded goes."""
    with transaction(conn) as cur:
        cur.execute("UPDATE runs SET config = ? WHERE id = ?", (config, run_id))
        cur.executemany(
            "DELETE FROM trials WHERE id = ? AND run_id = ? AND status = 'queued' AND attempt = 0 "
            "AND NOT EXISTS (SELECT 1 FROM events WHERE events.trial_id = trials.id)",
            [(i, run_id) for i in drop],
        )


def execute(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> None:
    conn.execute(sql, params)


__all__ = [
    "abandon_unfinished",
    "execute",
    "insert_run",
    "insert_trials",
    "replan_run",
    "requeue",
    "transaction",
    "write_batch",
]
