"""Read-only access to a run database, for reports, the CLI and resume.

The reader opens SQLite in read-only mode, so a console watching a run can never corrupt it,
and keeps its transactions short so the writer's WAL can checkpoint. ``EventTail`` follows the
event stream by id: the store has one writer and ids are assigned in commit order, so
``id > last_seen`` never misses or reorders an event. The SQL and the row decoding live in
``store.queries``, shared with the console, which runs them through aiosqlite.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TypeVar

from proctor.store import queries
from proctor.store.queries import Query
from proctor.store.records import (
    AnchorRecord,
    JudgmentRecord,
    RunRecord,
    ScoreRecord,
    StoredEvent,
    TrialRecord,
    UnreadableScoreRow,
)
from proctor.store.schema import SchemaError
from proctor.store.scores import UnreadableScore

T = TypeVar("T")


def check_database_path(path: Path) -> None:
    """A clear error for a path that cannot be a run database, before SQLite gives a vague one."""
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory; give the run database file, e.g. runs/demo.db")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such run database")


def _not_a_database(path: Path, exc: Exception) -> SchemaError:
    return SchemaError(
        f"{path}: not a SQLite database ({exc}); give a run database written by 'proctor run' "
        "or 'proctor import'"
    )


def read_only_uri(path: Path) -> str:
    return f"file:{path}?mode=ro"


class StoreReader:
    """A read-only connection to one run database."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_database_path(self.path)
        self._conn = sqlite3.connect(read_only_uri(self.path), uri=True, check_same_thread=False)
        try:
            self._conn.execute("PRAGMA busy_timeout=5000")
            version = self._fetch(queries.schema_version())
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise _not_a_database(self.path, exc) from exc
        try:
            queries.check_schema_version(self.path, version)
        except SchemaError:
            self._conn.close()
            raise

    def _fetch(self, query: Query[T]) -> T:
        return query.decode(self._conn.execute(query.sql, query.params).fetchall())

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def data_version(self) -> int:
        """Changes whenever another connection commits: a cheap "anything new?" check."""
        return self._fetch(queries.data_version())

    def run(self) -> RunRecord | None:
        return self._fetch(queries.run())

    def trials(self) -> list[TrialRecord]:
        return self._fetch(queries.trials())

    def trial(self, trial_id: int) -> TrialRecord | None:
        return self._fetch(queries.trial(trial_id))

    def max_event_id(self) -> int:
        return self._fetch(queries.max_event_id())

    def events_after(self, after_id: int, limit: int = 1000) -> list[StoredEvent]:
        return self._fetch(queries.events_after(after_id, limit))

    def events_of_kind(
        self, kind: str, *, after_id: int = 0, up_to_id: int | None = None, limit: int = 1000
    ) -> list[StoredEvent]:
        """Events of one kind in id order (uses the kind index): backfills without reading everything."""
        upper = self.max_event_id() if up_to_id is None else up_to_id
        return self._fetch(queries.events_of_kind(kind, after_id, upper, limit))

    def trial_events(self, trial_id: int, *, attempt: int | None = None) -> list[StoredEvent]:
        """A trial's events; by default only its current attempt (abandoned attempts stay stored)."""
        if attempt is None:
            attempt = self._fetch(queries.trial_attempt(trial_id))
        return self._fetch(queries.trial_events(trial_id, attempt))

    def judgments(self, trial_id: int | None = None) -> list[JudgmentRecord]:
        """Judgments of each trial's current attempt: an abandoned attempt's verdicts judged another answer."""
        return self._fetch(queries.judgments(trial_id))

    def scores(self, trial_id: int | None = None) -> list[ScoreRecord]:
        """Every score row; an unreadable one raises ``UnreadableScore`` naming the database,
        since a report that skipped it would publish a figure computed on fewer trials."""
        records, unreadable = self.score_rows(trial_id)
        if unreadable:
            raise UnreadableScore(f"{self.path}: {unreadable[0].problem}")
        return records

    def score_rows(self, trial_id: int | None = None) -> tuple[list[ScoreRecord], list[UnreadableScoreRow]]:
        """The readable score rows and, apart, the ones this proctor cannot read."""
        return self._fetch(queries.score_rows(trial_id))

    def blob(self, sha256: str) -> tuple[str, bytes] | None:
        """A stored binary tool output as (MIME type, bytes), or None if it was never stored."""
        return self._fetch(queries.blob(sha256))

    def anchors(self) -> list[AnchorRecord]:
        return self._fetch(queries.anchors())


class EventTail:
    """Follows a run's events in order; ``poll`` returns what was committed since the last call."""

    def __init__(self, reader: StoreReader, *, after_id: int = 0, batch: int = 5000) -> None:
        self._reader = reader
        self.last_id = after_id
        self._batch = batch
        self._seen_version: int | None = None

    def poll(self) -> list[StoredEvent]:
        version = self._reader.data_version()
        if version == self._seen_version:
            return []
        out: list[StoredEvent] = []
        while True:
            chunk = self._reader.events_after(self.last_id, self._batch)
            if not chunk:
                break
            out.extend(chunk)
            self.last_id = chunk[-1].id
            if len(chunk) < self._batch:
                break
        self._seen_version = version
        return out


__all__ = [
    "AnchorRecord",
    "EventTail",
    "JudgmentRecord",
    "RunRecord",
    "ScoreRecord",
    "StoreReader",
    "StoredEvent",
    "TrialRecord",
    "UnreadableScoreRow",
    "check_database_path",
    "read_only_uri",
]
