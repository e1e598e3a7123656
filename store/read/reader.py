"""Read-only access to a run database, for reports, the CLI and resume.

The reader opens SQLite in read-only mode, so a console watching a run can never corrupt it,
and keeps its transactions short so the writer's WAL can checkpoint. ``EventTail`` follows the
event stream by id: the store has one writer and ids are assigned in commit order, so
``id > last_seen`` never misses or reorders an event. The SQL and the row decoding live in
``store.queries``, shared with the console, which runs them through aiosqlite.
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from collections.abc import Callable, Container, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import orjson

from proctor.store.event_facts import TOOL_KINDS, JudgeUsage, ModelCallUsage, ToolRow, read_payload
from proctor.store.event_structs import ReportEvent
from proctor.store.payload_codec import decode_payload
from proctor.store.read import queries
from proctor.store.read.fact_rows import every_event_has_its_fact, fact_rows
from proctor.store.read.queries import Query
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
from proctor.store.scores import ScoreName, UnreadableScore

T = TypeVar("T")


def check_database_path(path: Path) -> None:
    """A clear error for a path that cannot be a run database, before SQLite gives a vague one."""
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory; give the run database file, e.g. runs/demo.db")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such run database")


def _not_a_database(path: Path, exc: Exception) -> SchemaError:
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
        if not os.access(path, os.R_OK):
            return SchemaError(f"{path}: cannot be read (permission denied); give read access to it")
        return SchemaError(
            f"{path}: SQLite could not open it read-only ({exc}); make its directory writable, "
            "or copy the database (with its -wal and -shm files) somewhere writable"
        )
    return SchemaError(
        f"{path}: not a SQLite database ({exc}); give a run database written by 'proctor run' "
        "or 'proctor import'"
    )


def read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` for reading, even in a directory nobody may write to.

    A database in WAL mode needs a ``-shm`` file beside it to be read. Where the directory is
    read-only and there is none, SQLite cannot open it ("unable to open database file"); if no
    WAL content waits either, the file alone is the whole database and is opened ``immutable``
    (nobody can be writing it: a writer would need to create the WAL). A non-empty WAL without
    its ``-shm`` cannot be read there at all, and the error says so rather than show stale data.
    """
    uri = f"file:{quote(str(path), safe='/')}?mode=ro"
    directory = path.parent
    shm = path.with_name(path.name + "-shm")
    if os.access(directory, os.W_OK) or shm.exists():
        return uri
    wal = path.with_name(path.name + "-wal")
    try:
        wal_bytes = wal.stat().st_size
    except OSError:
        wal_bytes = 0
    if wal_bytes == 0:
        return uri + "&immutable=1"
    raise SchemaError(
        f"{path}: its directory is read-only and {wal.name} holds committed events SQLite can only "
        f"read with a {shm.name} file beside it; copy {path.name} and {wal.name} to a writable "
        "directory (or make this one writable) and read the copy"
    )


class StoreReader:
    """A read-only connection to one run database."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._complete: tuple[int, bool] | None = None  # (up_to_id, every event has its fact)
        check_database_path(self.path)
        try:
            self._conn = sqlite3.connect(read_only_uri(self.path), uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _not_a_database(self.path, exc) from exc
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

    def _fetch_chunks(self, query: Query[T], size: int = 2000) -> Iterator[T]:
        """``query``'s rows decoded a chunk at a time: a large read's raw rows (the JSON texts of
        every score's details) are then never all held at once, and their memory is reused."""
        cur = self._conn.execute(query.sql, query.params)
        while rows := cur.fetchmany(size):
            yield query.decode(rows)

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
        return [j for chunk in self._fetch_chunks(queries.judgments(trial_id)) for j in chunk]

    def scores(self, trial_id: int | None = None, *, name: ScoreName | None = None) -> list[ScoreRecord]:
        """Every score row (of one trial, or only the ``name`` scores); an unreadable one raises
        ``UnreadableScore`` naming the database, since a report that skipped it would publish a
        figure computed on fewer trials."""
        records, unreadable = self.score_rows(trial_id, name=name)
        if unreadable:
            raise UnreadableScore(f"{self.path}: {unreadable[0].problem}")
        return records

    def score_rows(
        self, trial_id: int | None = None, *, name: ScoreName | None = None
    ) -> tuple[list[ScoreRecord], list[UnreadableScoreRow]]:
        """The readable score rows and, apart, the ones this proctor cannot read."""
        if trial_id is not None and name is not None:
            raise ValueError("score_rows reads one trial's scores or one score of every trial, not both")
        query = queries.score_rows(trial_id) if name is None else queries.named_score_rows(name)
        records: list[ScoreRecord] = []
        unreadable: list[UnreadableScoreRow] = []
        for readable, unread in self._fetch_chunks(query):
            records += readable
            unreadable += unread
        return records, unreadable

    def trials_with_score(self, name: ScoreName) -> set[int]:
        return self._fetch(queries.trials_with_score(name))

    def blob(self, sha256: str) -> tuple[str, bytes] | None:
        """A stored binary tool output as (MIME type, bytes), or None if it was never stored."""
        return self._fetch(queries.blob(sha256))

    def anchors(self) -> list[AnchorRecord]:
        return self._fetch(queries.anchors())

    # -- a few fields of many events, for reports ---------------------------------------------

    def extract(
        self,
        kinds: Sequence[str],
        up_to_id: int,
        read: Callable[[ReportEvent], T | None],
        repeated: Container[str] = (),
    ) -> Iterator[tuple[int | None, int, bool, T]]:
        """What ``read`` takes from each event of ``kinds`` up to ``up_to_id``, in id order, with
        the event's (trial_id, attempt, abandoned); nothing where it returns None. Rows are
        streamed, never all held at once.

        For a reader that needs more of an event than its stored facts (``fact_rows`` reads those
        without the payloads): each payload is decoded into its msgspec Struct
        (``store.event_structs``), and a row this proctor cannot read is skipped (other readers
        show it as an ``ErrorEvent``), as is one whose text cannot be encoded (a lone surrogate).

        For the kinds in ``repeated``, whose payloads recur verbatim (a ``tools_listed`` is the
        same in every trial of an arm), what a payload gave is kept and given again for the same
        bytes, for up to ``_REMEMBERED`` distinct payloads.
        """
        remembered: dict[tuple[str, str, bytes], T | None] = {}
        for _id, trial_id, attempt, abandoned, kind, encoding, payload in self._rows_of_kinds(
            kinds, up_to_id
        ):
            key = (kind, encoding, payload) if kind in repeated else None
            if key is not None and key in remembered:
                got = remembered[key]
            else:
                got = read_payload(encoding, payload, read)
                if key is not None and len(remembered) < _REMEMBERED:
                    remembered[key] = got
            if got is not None:
                yield trial_id, attempt, bool(abandoned), got

    def payloads(
        self, kinds: Sequence[str], up_to_id: int
    ) -> Iterator[tuple[int | None, int, bool, str, dict[str, Any]]]:
        """(trial_id, attempt, abandoned, kind, payload as plain JSON) of events of ``kinds`` in id
        order, unvalidated: for readers that take a few fields with defaults of their own (the
        drift of a replay reads 20,000 results this way in a fraction of ``extract``'s time).
        A payload that does not decode to an object is skipped."""
        for _id, trial_id, attempt, abandoned, kind, encoding, payload in self._rows_of_kinds(
            kinds, up_to_id
        ):
            try:
                obj = orjson.loads(decode_payload(encoding, payload))
            except (orjson.JSONDecodeError, zlib.error):
                continue
            if type(obj) is dict:
                yield trial_id, attempt, bool(abandoned), kind, obj

    def _rows_of_kinds(self, kinds: Sequence[str], up_to_id: int) -> Iterator[tuple[Any, ...]]:
        """(id, trial_id, attempt, abandoned, kind, encoding, payload) of events of ``kinds``, in
        id order: one indexed read per kind (each in its index's order), merged by SQLite."""
        select = (
            "SELECT id, trial_id, attempt, abandoned, kind, encoding, payload FROM events "
            "WHERE kind = ? AND id <= ?"
        )
        cur = self._conn.execute(
            " UNION ALL ".join([select] * len(kinds)) + " ORDER BY id",
            [value for kind in kinds for value in (kind, up_to_id)],
        )
        while rows := cur.fetchmany(1000):
            yield from rows

    def model_call_usage(self, up_to_id: int) -> Iterator[tuple[int | None, int, bool, ModelCallUsage]]:
        """(input_tokens, tool_io_tokens, output_tokens) of each ``model_response``, see ``fact_rows``."""
        return fact_rows(self._conn, ("model_response",), up_to_id, complete=self._facts_complete(up_to_id))

    def judge_usage(self, up_to_id: int) -> Iterator[tuple[int | None, int, bool, JudgeUsage]]:
        """(input_tokens, output_tokens, cost_usd) of each ``judgment`` event that records the
        judge's own usage, see ``fact_rows``."""
        return fact_rows(self._conn, ("judgment",), up_to_id, complete=self._facts_complete(up_to_id))

    def tool_rows(self, up_to_id: int) -> Iterator[tuple[int | None, int, bool, ToolRow]]:
        """What the tool counter reads of each ``tools_listed``, ``tool_call`` and ``tool_result``
        (``event_facts.tool_row``), in id order, see ``fact_rows``."""
        return fact_rows(self._conn, TOOL_KINDS, up_to_id, complete=self._facts_complete(up_to_id))

    def _facts_complete(self, up_to_id: int) -> bool:
        """``every_event_has_its_fact``, asked once per view of the run (a report reads three).
        What it says of the events up to an id never changes: later events get higher ids."""
        if self._complete is None or self._complete[0] != up_to_id:
            self._complete = (up_to_id, every_event_has_its_fact(self._conn, up_to_id))
        return self._complete[1]


# Distinct payloads ``extract`` keeps per read of a ``repeated`` kind: an arm's tool lists, not a
# whole run's when each trial's differs (top-k tool retrieval).
_REMEMBERED = 256


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
    "JudgeUsage",
    "JudgmentRecord",
    "ModelCallUsage",
    "RunRecord",
    "ScoreRecord",
    "StoreReader",
    "StoredEvent",
    "TrialRecord",
    "UnreadableScoreRow",
    "check_database_path",
    "read_only_uri",
]
