"""Read-only access to a run database, for the console, reports and resume.

The reader opens SQLite in read-only mode, so a console watching a run can never corrupt it,
and keeps its transactions short so the writer's WAL can checkpoint. ``EventTail`` follows the
event stream by id: the store has one writer and ids are assigned in commit order, so
``id > last_seen`` never misses or reorders an event.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from proctor.store.events import ErrorEvent, Event, parse_event
from proctor.store.schema import SCHEMA_VERSION, SchemaError
from proctor.store.scores import D, ScoreDetails, ScoreName, UnreadableScore, parse_details
from proctor.store.writer import decode_payload


@dataclass(frozen=True)
class RunRecord:
    id: str
    suite: str
    config: dict[str, Any]
    created_at: float
    started_at: float | None
    finished_at: float | None
    status: str


@dataclass(frozen=True)
class TrialRecord:
    id: int
    scenario: str
    arm: str
    model: str
    epoch: int
    seed: int
    status: str
    attempt: int
    started_at: float | None
    finished_at: float | None
    stop: str | None
    final_answer: str | None
    error: str | None
    tool_calls: int | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    tokens_estimated: bool
    cost_usd: float | None
    wall_s: float | None
    passed: bool | None

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.scenario, self.arm, self.model, self.epoch)


@dataclass(frozen=True)
class StoredEvent:
    id: int
    trial_id: int | None
    attempt: int
    ts: float
    kind: str
    abandoned: bool
    event: Event


@dataclass(frozen=True)
class JudgmentRecord:
    id: int
    trial_id: int
    pass_no: int
    judge: str
    source: str
    prompt_version: str
    prompt_hash: str
    rubric_hash: str
    temperature: float | None
    verdict: dict[str, Any] | None
    error: str
    created_at: float


@dataclass(frozen=True)
class AnchorRecord:
    scenario: str
    lock_file: str
    sha256: str
    source_run: str | None
    locked_at: float


@dataclass(frozen=True)
class ScoreRecord:
    """One stored score; ``details`` is the raw JSON, ``parsed`` validates it against its model."""

    trial_id: int
    name: ScoreName
    value: float | None
    details: dict[str, Any]

    @cached_property
    def typed(self) -> ScoreDetails:
        """The details validated by this score's model, once; raises ``UnreadableScore``."""
        try:
            return parse_details(self.name, self.details, ScoreDetails)
        except UnreadableScore as err:
            raise UnreadableScore(f"trial {self.trial_id}: {err}") from err

    def parsed(self, model: type[D]) -> D:
        """The details as ``model``, which must be this score's model or one of its bases."""
        typed = self.typed
        if not isinstance(typed, model):
            raise TypeError(
                f"score {self.name.value} has {type(typed).__name__} details, not {model.__name__}"
            )
        return typed


@dataclass(frozen=True)
class UnreadableScoreRow:
    """A scores row this proctor cannot read (a name it does not know, details that are not
    JSON); the console shows it as unreadable instead of failing or hiding it."""

    trial_id: int
    name: str
    problem: str


class StoreReader:
    """A read-only connection to one run database."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise IsADirectoryError(
                f"{self.path}: is a directory; give the run database file, e.g. runs/demo.db"
            )
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such run database")
        self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        try:
            self._conn.execute("PRAGMA busy_timeout=5000")
            (version,) = self._conn.execute("PRAGMA user_version").fetchone()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise SchemaError(
                f"{self.path}: not a SQLite database ({exc}); give a run database written by 'proctor run' "
                "or 'proctor import'"
            ) from exc
        if version == 0 or version > SCHEMA_VERSION:
            self._conn.close()
            fix = (
                f"it was written by a newer proctor (schema {version}, this one reads up to {SCHEMA_VERSION}): "
                "upgrade proctor to read it"
                if version
                else "it has no proctor schema: give a run database written by 'proctor run' or 'proctor import'"
            )
            raise SchemaError(f"{self.path}: not a proctor run database this version can read; {fix}")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def data_version(self) -> int:
        """Changes whenever another connection commits: a cheap "anything new?" check."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def run(self) -> RunRecord | None:
        row = self._conn.execute(
            "SELECT id, suite, config, created_at, started_at, finished_at, status FROM runs ORDER BY created_at LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        return RunRecord(row[0], row[1], json.loads(row[2]), row[3], row[4], row[5], row[6])

    def trials(self) -> list[TrialRecord]:
        return [_trial(r) for r in self._conn.execute(f"SELECT {_TRIAL_COLUMNS} FROM trials ORDER BY id")]

    def trial(self, trial_id: int) -> TrialRecord | None:
        row = self._conn.execute(f"SELECT {_TRIAL_COLUMNS} FROM trials WHERE id = ?", (trial_id,)).fetchone()
        return None if row is None else _trial(row)

    def max_event_id(self) -> int:
        return int(self._conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])

    def events_after(self, after_id: int, limit: int = 1000) -> list[StoredEvent]:
        rows = self._conn.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?", (after_id, limit)
        ).fetchall()
        return [_event(r) for r in rows]

    def events_of_kind(
        self, kind: str, *, after_id: int = 0, up_to_id: int | None = None, limit: int = 1000
    ) -> list[StoredEvent]:
        """Events of one kind in id order (uses the kind index): backfills without reading everything."""
        upper = self.max_event_id() if up_to_id is None else up_to_id
        rows = self._conn.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE kind = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?",
            (kind, after_id, upper, limit),
        ).fetchall()
        return [_event(r) for r in rows]

    def trial_events(self, trial_id: int, *, attempt: int | None = None) -> list[StoredEvent]:
        """A trial's events; by default only its current attempt (abandoned attempts stay stored)."""
        if attempt is None:
            row = self._conn.execute("SELECT attempt FROM trials WHERE id = ?", (trial_id,)).fetchone()
            attempt = 0 if row is None else int(row[0])
        rows = self._conn.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE trial_id = ? AND attempt = ? ORDER BY id",
            (trial_id, attempt),
        ).fetchall()
        return [_event(r) for r in rows]

    def judgments(self, trial_id: int | None = None) -> list[JudgmentRecord]:
        """Judgments of each trial's current attempt: an abandoned attempt's verdicts judged another answer."""
        sql = (
            "SELECT j.id, j.trial_id, j.pass_no, j.judge, j.source, j.prompt_version, j.prompt_hash, "
            "j.rubric_hash, j.temperature, j.verdict, j.error, j.created_at FROM judgments j "
            "JOIN trials t ON t.id = j.trial_id WHERE j.attempt = t.attempt"
        )
        rows = (
            self._conn.execute(sql + " AND j.trial_id = ? ORDER BY j.id", (trial_id,))
            if trial_id is not None
            else self._conn.execute(sql + " ORDER BY j.id")
        )
        return [
            JudgmentRecord(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                r[6],
                r[7],
                r[8],
                None if r[9] is None else json.loads(r[9]),
                r[10],
                r[11],
            )
            for r in rows
        ]

    def scores(self, trial_id: int | None = None) -> list[ScoreRecord]:
        """Every score row; an unreadable one raises ``UnreadableScore`` naming the database,
        since a report that skipped it would publish a figure computed on fewer trials."""
        records, unreadable = self.score_rows(trial_id)
        if unreadable:
            raise UnreadableScore(f"{self.path}: {unreadable[0].problem}")
        return records

    def score_rows(self, trial_id: int | None = None) -> tuple[list[ScoreRecord], list[UnreadableScoreRow]]:
        """The readable score rows and, apart, the ones this proctor cannot read."""
        sql = "SELECT trial_id, name, value, details FROM scores"
        rows = (
            self._conn.execute(sql + " WHERE trial_id = ? ORDER BY name", (trial_id,))
            if trial_id is not None
            else self._conn.execute(sql + " ORDER BY trial_id, name")
        )
        records: list[ScoreRecord] = []
        unreadable: list[UnreadableScoreRow] = []
        for tid, name, value, details in rows:
            try:
                records.append(ScoreRecord(tid, ScoreName(name), value, json.loads(details)))
            except ValueError as err:
                unreadable.append(UnreadableScoreRow(tid, str(name), _score_problem(tid, str(name), err)))
        return records, unreadable

    def blob(self, sha256: str) -> tuple[str, bytes] | None:
        """A stored binary tool output as (MIME type, bytes), or None if it was never stored."""
        row = self._conn.execute("SELECT mime_type, data FROM blobs WHERE sha256 = ?", (sha256,)).fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    def anchors(self) -> list[AnchorRecord]:
        rows = self._conn.execute(
            "SELECT scenario, lock_file, sha256, source_run, locked_at FROM anchors ORDER BY scenario"
        )
        return [AnchorRecord(r[0], r[1], r[2], r[3], r[4]) for r in rows]


def _score_problem(trial_id: int, name: str, err: ValueError) -> str:
    if name not in {n.value for n in ScoreName}:
        known = ", ".join(n.value for n in ScoreName)
        return (
            f"trial {trial_id}: unknown score name {name!r} in the scores table; this proctor knows "
            f"{known}: upgrade proctor to read this run"
        )
    return f"trial {trial_id}: score {name}: details are not JSON ({err})"


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


_TRIAL_COLUMNS = (
    "id, scenario, arm, model, epoch, seed, status, attempt, started_at, finished_at, stop, final_answer, error, "
    "tool_calls, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tokens_estimated, cost_usd, "
    "wall_s, passed"
)
_EVENT_COLUMNS = "id, trial_id, attempt, ts, kind, encoding, payload, abandoned"


def _trial(r: Any) -> TrialRecord:
    return TrialRecord(
        id=r[0],
        scenario=r[1],
        arm=r[2],
        model=r[3],
        epoch=r[4],
        seed=r[5],
        status=r[6],
        attempt=r[7],
        started_at=r[8],
        finished_at=r[9],
        stop=r[10],
        final_answer=r[11],
        error=r[12],
        tool_calls=r[13],
        input_tokens=r[14],
        output_tokens=r[15],
        cache_read_tokens=r[16],
        cache_write_tokens=r[17],
        tokens_estimated=bool(r[18]),
        cost_usd=r[19],
        wall_s=r[20],
        passed=None if r[21] is None else bool(r[21]),
    )


def _event(r: Any) -> StoredEvent:
    kind: str = r[4]
    event: Event
    try:
        event = parse_event(decode_payload(r[5], r[6]))
    except (ValueError, zlib.error) as err:
        # A row from a newer proctor or a damaged file: shown in its transcript, never fatal.
        first = str(err).splitlines()[:3]
        event = ErrorEvent(
            where="store",
            error_type="UnreadableEvent",
            message=f"event {r[0]} ({kind!r}) cannot be read by this proctor: {' '.join(first)}",
        )
        kind = event.kind
    return StoredEvent(
        id=r[0], trial_id=r[1], attempt=r[2], ts=r[3], kind=kind, abandoned=bool(r[7]), event=event
    )
