"""A SQLite backend: durable, and shareable by worker processes on one machine.

Job records are stored as JSON in one table with the columns that queries filter on
(queue, state, priority, run_at) copied out and indexed. Claiming a job is a single
``BEGIN IMMEDIATE`` transaction, so two processes polling the same file never claim the
same job.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import JobNotFound, StorageError
from ..job import Job, JobState, job_from_dict, job_to_dict

SCHEMA_VERSION = 2

#: Seconds a connection waits for another process's write lock before giving up.
BUSY_TIMEOUT_SECONDS = 5.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    id        TEXT NOT NULL UNIQUE,
    queue     TEXT NOT NULL,
    state     TEXT NOT NULL,
    priority  INTEGER NOT NULL,
    run_at    REAL NOT NULL,
    body      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (queue, state, priority DESC, run_at, seq);
"""


class SqliteStorage:
    """Jobs in a SQLite file (or ``":memory:"``).

    One connection per instance, shared by the instance's threads under a lock; separate
    processes each open their own instance on the same file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            self._conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_SECONDS,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {self.path}: {exc}") from exc
        self._lock = threading.Lock()
        self._migrate()

    def _migrate(self) -> None:
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
            (version,) = self._conn.execute("PRAGMA user_version").fetchone()
            if version > SCHEMA_VERSION:
                raise StorageError(
                    f"{self.path} was written by a newer tinyq (schema {version} > {SCHEMA_VERSION})"
                )
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """An immediate (write-locked) transaction, rolled back on any error."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StorageError(f"{self.path} is locked: {exc}") from exc
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def put(self, job: Job) -> None:
        body = json.dumps(job_to_dict(job), sort_keys=True)
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO jobs (id, queue, state, priority, run_at, body) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET queue=excluded.queue, state=excluded.state, "
                "priority=excluded.priority, run_at=excluded.run_at, body=excluded.body",
                (job.id, job.queue, job.state.value, job.priority, job.run_at, body),
            )

    def get(self, job_id: str) -> Job:
        with self._lock:
            row = self._conn.execute("SELECT body FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise JobNotFound(job_id)
        return job_from_dict(json.loads(row[0]))

    def claim_next(self, queue: str, now: float) -> Job | None:
        """Take the best due job and mark it running, inside one write transaction.

        ``BEGIN IMMEDIATE`` takes the database's write lock before the SELECT, so another
        process cannot read the same row as "queued" until this transaction commits; the
        ``AND state = 'queued'`` guard on the UPDATE is a second line of defence.
        """
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT body FROM jobs WHERE queue = ? AND state = ? AND run_at <= ? "
                "ORDER BY priority DESC, run_at, seq LIMIT 1",
                (queue, JobState.QUEUED.value, now),
            ).fetchone()
            if row is None:
                return None
            job = job_from_dict(json.loads(row[0])).started()
            cur = conn.execute(
                "UPDATE jobs SET state = ?, body = ? WHERE id = ? AND state = ?",
                (
                    job.state.value,
                    json.dumps(job_to_dict(job), sort_keys=True),
                    job.id,
                    JobState.QUEUED.value,
                ),
            )
            if cur.rowcount != 1:
                return None
            return job

    def counts(self, queue: str | None = None) -> dict[JobState, int]:
        sql = "SELECT state, COUNT(*) FROM jobs"
        params: tuple[str, ...] = ()
        if queue is not None:
            sql += " WHERE queue = ?"
            params = (queue,)
        with self._lock:
            rows = self._conn.execute(sql + " GROUP BY state", params).fetchall()
        out = dict.fromkeys(JobState, 0)
        for state, n in rows:
            out[JobState(state)] = int(n)
        return out

    def dead_letters(self, queue: str | None = None) -> list[Job]:
        sql = "SELECT body FROM jobs WHERE state = ?"
        params: tuple[str, ...] = (JobState.DEAD.value,)
        if queue is not None:
            sql += " AND queue = ?"
            params += (queue,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY seq", params).fetchall()
        return [job_from_dict(json.loads(body)) for (body,) in rows]

    def purge(self, states: set[JobState]) -> int:
        if not states:
            return 0
        marks = ", ".join("?" for _ in states)
        with self._transaction() as conn:
            cur = conn.execute(f"DELETE FROM jobs WHERE state IN ({marks})", [s.value for s in states])
            return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()
