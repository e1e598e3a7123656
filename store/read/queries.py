"""Every read of a run database as data: one SQL text and one row decoder per read.

``StoreReader`` runs these on a sqlite3 connection (reports, the CLI, resume); the console runs
the same ones through aiosqlite, so no read blocks its event loop. Keeping the SQL and the
decoding here, apart from how they are executed, means the two can never read a row differently.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from proctor.store.events import ErrorEvent, Event, parse_event
from proctor.store.large_payloads import LARGE_PAYLOAD_BYTES, parse_large_tool_result
from proctor.store.payload_codec import decode_payload, loads_details, loads_verdict
from proctor.store.records import (
    AnchorRecord,
    JudgmentRecord,
    RunRecord,
    ScoreRecord,
    StoredEvent,
    TrialRecord,
    UnreadableScoreRow,
)
from proctor.store.schema import SCHEMA_VERSION, SchemaError
from proctor.store.scores import ScoreName
from proctor.store.stored_json import stored_object

T = TypeVar("T")
Rows = Sequence[Sequence[Any]]


@dataclass(frozen=True)
class Query(Generic[T]):
    """A read: its SQL and parameters, and how its rows become records.

    ``size`` estimates the bytes a decoder will parse (event payloads, score details, verdicts),
    so an event loop can hand large results to a thread and decode small ones in place."""

    sql: str
    params: tuple[Any, ...]
    decode: Callable[[Rows], T]
    size: Callable[[Rows], int] | None = None


def _column_bytes(column: int) -> Callable[[Rows], int]:
    return lambda rows: sum(len(r[column] or b"") for r in rows)


def _first_int(rows: Rows) -> int:
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def schema_version() -> Query[int]:
    return Query("PRAGMA user_version", (), _first_int)


def check_schema_version(path: object, version: int) -> None:
    """Refuse a database that is not a proctor run, or one a newer proctor wrote."""
    if version == 0 or version > SCHEMA_VERSION:
        fix = (
            f"it was written by a newer proctor (schema {version}, this one reads up to {SCHEMA_VERSION}): "
            "upgrade proctor to read it"
            if version
            else "it has no proctor schema: give a run database written by 'proctor run' or 'proctor import'"
        )
        raise SchemaError(f"{path}: not a proctor run database this version can read; {fix}")


def data_version() -> Query[int]:
    """Changes whenever another connection commits: a cheap "anything new?" check."""
    return Query("PRAGMA data_version", (), _first_int)


def run() -> Query[RunRecord | None]:
    def decode(rows: Rows) -> RunRecord | None:
        if not rows:
            return None
        r = rows[0]
        return RunRecord(r[0], r[1], json.loads(r[2]), r[3], r[4], r[5], r[6])

    return Query(
        "SELECT id, suite, config, created_at, started_at, finished_at, status FROM runs "
        "ORDER BY created_at LIMIT 1",
        (),
        decode,
    )


def trials() -> Query[list[TrialRecord]]:
    return Query(f"SELECT {_TRIAL_COLUMNS} FROM trials ORDER BY id", (), _trials)


def trial(trial_id: int) -> Query[TrialRecord | None]:
    return Query(
        f"SELECT {_TRIAL_COLUMNS} FROM trials WHERE id = ?", (trial_id,), lambda rows: _first(_trials(rows))
    )


def trials_by_id(trial_ids: Sequence[int]) -> Query[list[TrialRecord]]:
    """Several trial rows in one read (the rows a batch of events touched)."""
    marks = ", ".join("?" * len(trial_ids))
    return Query(
        f"SELECT {_TRIAL_COLUMNS} FROM trials WHERE id IN ({marks}) ORDER BY id", tuple(trial_ids), _trials
    )


def trial_attempt(trial_id: int) -> Query[int]:
    """The trial's current attempt (0 for a trial that does not exist)."""
    return Query("SELECT attempt FROM trials WHERE id = ?", (trial_id,), _first_int)


def max_event_id() -> Query[int]:
    return Query("SELECT coalesce(max(id), 0) FROM events", (), _first_int)


def events_after(after_id: int, limit: int) -> Query[list[StoredEvent]]:
    return Query(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?",
        (after_id, limit),
        _events,
        _PAYLOAD_BYTES,
    )


def events_of_kind(kind: str, after_id: int, up_to_id: int, limit: int) -> Query[list[StoredEvent]]:
    """Events of one kind in id order (uses the kind index): backfills without reading everything."""
    return Query(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE kind = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?",
        (kind, after_id, up_to_id, limit),
        _events,
        _PAYLOAD_BYTES,
    )


def trial_events(trial_id: int, attempt: int) -> Query[list[StoredEvent]]:
    return Query(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE trial_id = ? AND attempt = ? ORDER BY id",
        (trial_id, attempt),
        _events,
        _PAYLOAD_BYTES,
    )


def judgments(trial_id: int | None = None) -> Query[list[JudgmentRecord]]:
    """Judgments of each trial's current attempt: an abandoned attempt's verdicts judged another answer."""
    sql = (
        "SELECT j.id, j.trial_id, j.pass_no, j.judge, j.source, j.prompt_version, j.prompt_hash, "
        "j.rubric_hash, j.temperature, j.verdict, j.error, j.created_at FROM judgments j "
        "JOIN trials t ON t.id = j.trial_id WHERE j.attempt = t.attempt"
    )
    if trial_id is not None:
        return Query(sql + " AND j.trial_id = ? ORDER BY j.id", (trial_id,), _judgments, _column_bytes(9))
    return Query(sql + " ORDER BY j.id", (), _judgments, _column_bytes(9))


def score_rows(trial_id: int | None = None) -> Query[tuple[list[ScoreRecord], list[UnreadableScoreRow]]]:
    """The readable score rows and, apart, the ones this proctor cannot read."""
    sql = "SELECT trial_id, name, value, CAST(details AS BLOB) FROM scores"
    if trial_id is not None:
        return Query(sql + " WHERE trial_id = ? ORDER BY name", (trial_id,), _scores, _column_bytes(3))
    return Query(sql + " ORDER BY trial_id, name", (), _scores, _column_bytes(3))


def named_score_rows(name: ScoreName) -> Query[tuple[list[ScoreRecord], list[UnreadableScoreRow]]]:
    """``score_rows`` of one score of every trial."""
    return Query(
        "SELECT trial_id, name, value, CAST(details AS BLOB) FROM scores WHERE name = ? ORDER BY trial_id",
        (name.value,),
        _scores,
        _column_bytes(3),
    )


def trials_with_score(name: ScoreName) -> Query[set[int]]:
    """The ids of the trials that have a ``name`` score (without reading any score's details)."""
    return Query(
        "SELECT DISTINCT trial_id FROM scores WHERE name = ?",
        (name.value,),
        lambda rows: {int(r[0]) for r in rows},
    )


def blob(sha256: str) -> Query[tuple[str, bytes] | None]:
    """A stored binary tool output as (MIME type, bytes), or None if it was never stored."""
    return Query(
        "SELECT mime_type, data FROM blobs WHERE sha256 = ?",
        (sha256,),
        lambda rows: (str(rows[0][0]), bytes(rows[0][1])) if rows else None,
    )


def anchors() -> Query[list[AnchorRecord]]:
    return Query(
        "SELECT scenario, lock_file, sha256, source_run, locked_at FROM anchors ORDER BY scenario",
        (),
        lambda rows: [AnchorRecord(r[0], r[1], r[2], r[3], r[4]) for r in rows],
    )


# -- decoders -------------------------------------------------------------------------------------

_TRIAL_COLUMNS = (
    "id, scenario, arm, model, epoch, seed, status, attempt, started_at, finished_at, stop, final_answer, error, "
    "tool_calls, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tokens_estimated, cost_usd, "
    "wall_s, passed"
)
_EVENT_COLUMNS = "id, trial_id, attempt, ts, kind, encoding, payload, abandoned"
_PAYLOAD_BYTES = _column_bytes(6)


def _first(items: list[T]) -> T | None:
    return items[0] if items else None


def _trials(rows: Rows) -> list[TrialRecord]:
    return [
        TrialRecord(
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
        for r in rows
    ]


def _events(rows: Rows) -> list[StoredEvent]:
    return [_event(r) for r in rows]


def _event(r: Sequence[Any]) -> StoredEvent:
    kind: str = r[4]
    event: Event
    try:
        raw = decode_payload(r[5], r[6])
        large = parse_large_tool_result(raw) if len(raw) > LARGE_PAYLOAD_BYTES else None
        event = large if large is not None else parse_event(raw)
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


def _judgments(rows: Rows) -> list[JudgmentRecord]:
    """The rows as records. A verdict the same as the row before's (the passes of a judge whose
    passes agree, such as the offline one, are stored one after another) is parsed once and its
    dictionary shared: verdicts are read, never changed."""
    records: list[JudgmentRecord] = []
    last_text: Any = None
    last: Any = None
    for r in rows:
        text = r[9]
        if text != last_text:
            last_text, last = text, _verdict(text)
        records.append(
            JudgmentRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], last, r[10], r[11])
        )
    return records


def _verdict(text: Any) -> Any:
    """A verdict column as JSON reads it; text that is not JSON stays the text, a verdict no reader
    can validate, like one of the wrong shape (the report counts neither; it used to crash)."""
    try:
        return _details(text, loads_verdict)
    except ValueError:
        return text


def _details(text: Any, loads: Callable[[Any], dict[str, Any] | None] = loads_details) -> Any:
    """A details or verdict column as ``json.loads`` reads it (None stays None); ``loads`` first,
    which reads objects the same in a fraction of the time (a report reads every one)."""
    if text is None:
        return None
    parsed = loads(text)
    return json.loads(text) if parsed is None else parsed


# ScoreName by its value: a dictionary lookup, where ``ScoreName(name)`` is a call (a report reads
# every score); a name that is not here takes the call and its error.
_SCORE_NAMES: dict[object, ScoreName] = {n.value: n for n in ScoreName}


def _scores(rows: Rows) -> tuple[list[ScoreRecord], list[UnreadableScoreRow]]:
    """Details are read as bytes (``CAST(details AS BLOB)``) and kept as their text where it is
    one strict JSON object (``stored_object``), the common row; the rest are decoded as text."""
    records: list[ScoreRecord] = []
    unreadable: list[UnreadableScoreRow] = []
    names = _SCORE_NAMES
    for tid, name, value, details in rows:
        known = names.get(name)
        if known is not None and (stored := stored_object(details)) is not None:
            records.append(ScoreRecord(tid, known, value, stored))  # the common row, in one step
            continue
        try:
            text = details.decode() if type(details) is bytes else details
            records.append(ScoreRecord(tid, known or ScoreName(name), value, _details(text)))
        except ValueError as err:  # an unknown name, details that are not JSON or not UTF-8
            unreadable.append(UnreadableScoreRow(tid, str(name), score_problem(tid, str(name), err)))
    return records, unreadable


def score_problem(trial_id: int, name: str, err: ValueError) -> str:
    if name not in {n.value for n in ScoreName}:
        known = ", ".join(n.value for n in ScoreName)
        return (
            f"trial {trial_id}: unknown score name {name!r} in the scores table; this proctor knows "
            f"{known}: upgrade proctor to read this run"
        )
    if isinstance(err, UnicodeDecodeError):
        return f"trial {trial_id}: score {name}: details are not UTF-8 text ({err})"
    return f"trial {trial_id}: score {name}: details are not JSON ({err})"


__all__ = [
    "Query",
    "Rows",
    "anchors",
    "blob",
    "check_schema_version",
    "data_version",
    "events_after",
    "events_of_kind",
    "judgments",
    "max_event_id",
    "named_score_rows",
    "run",
    "schema_version",
    "score_problem",
    "score_rows",
    "trial",
    "trial_attempt",
    "trial_events",
    "trials",
    "trials_by_id",
    "trials_with_score",
]
