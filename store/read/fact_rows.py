"""The facts of many events, for a report: small rows from ``event_facts``, payloads only where
an event has none.

Written by the writer beside each model call, judge call and tool event (``store.event_facts``),
a fact spares the report reading and decoding that event's payload. An event without one (the
database was written before schema 4 and migrated since, or its fact could not be stored) is
read from its payload, as before; a database still at schema 3 (a report opens it read-only and
never migrates it) has no ``event_facts`` table, and every event is read that way.

Whether an event was abandoned is read from ``events`` (a retried attempt marks it after the
fact), through the partial index that holds only the abandoned ones: the report never touches
the events table's pages for an event that has its fact.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from proctor.store.event_facts import decode_fact, fact_of_kind, read_payload

# Distinct tool lists remembered per read: they recur verbatim (an arm's tools_listed is the
# same in every trial), an arm's worth, not a whole run's when each trial's differs.
_REMEMBERED = 256
_REPEATED = "tools_listed"

_FROM_PAYLOAD = (
    "SELECT id, trial_id, attempt, abandoned, kind, NULL, encoding, payload FROM events AS e "
    "WHERE kind = ? AND id <= ?"
)
_WITHOUT_FACT = " AND NOT EXISTS (SELECT 1 FROM event_facts AS f WHERE f.event_id = e.id)"


def has_facts(conn: sqlite3.Connection) -> bool:
    """True when the database has the ``event_facts`` table (schema 4 and later)."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event_facts'").fetchone()
    return row is not None


def _rows(conn: sqlite3.Connection, kinds: Sequence[str], up_to_id: int) -> Iterator[tuple[Any, ...]]:
    """(id, trial_id, attempt, abandoned, kind, fact, encoding, payload) of events of ``kinds`` in
    id order: the fact where there is one (then no payload), else the payload (then no fact)."""
    params: list[Any] = [value for kind in kinds for value in (kind, up_to_id)]
    if has_facts(conn):
        marks = ", ".join("?" * len(kinds))
        sql = (
            "SELECT event_id, trial_id, attempt, event_id IN (SELECT id FROM events WHERE abandoned = 1), "
            f"kind, facts, NULL, NULL FROM event_facts WHERE kind IN ({marks}) AND event_id <= ?"
            + "".join(" UNION ALL " + _FROM_PAYLOAD + _WITHOUT_FACT for _ in kinds)
        )
        params = [*kinds, up_to_id, *params]
    else:
        sql = " UNION ALL ".join([_FROM_PAYLOAD] * len(kinds))
    cur = conn.execute(sql + " ORDER BY 1", params)
    while rows := cur.fetchmany(1000):
        yield from rows


def fact_rows(
    conn: sqlite3.Connection, kinds: Sequence[str], up_to_id: int
) -> Iterator[tuple[int | None, int, bool, Any]]:
    """(trial_id, attempt, abandoned, fact) of each event of ``kinds`` (of ``FACT_KINDS``) up to
    ``up_to_id``, in id order; nothing for an event whose fact is None. Streamed."""
    remembered: dict[tuple[Any, ...], Any] = {}
    for event_id, trial_id, attempt, abandoned, kind, stored, encoding, payload in _rows(
        conn, kinds, up_to_id
    ):
        key = None
        if kind == _REPEATED:
            key = (stored, encoding, payload)
            if key in remembered:
                got = remembered[key]
                if got is not None:
                    yield trial_id, attempt, bool(abandoned), got
                continue
        if stored is not None:
            try:
                got = decode_fact(kind, stored)
            except msgspec.DecodeError:  # a damaged row: the payload says
                got = _payload_fact(conn, event_id, kind)
        else:
            got = read_payload(encoding, payload, fact_of_kind(kind))
        if key is not None and len(remembered) < _REMEMBERED:
            remembered[key] = got
        if got is not None:
            yield trial_id, attempt, bool(abandoned), got


def _payload_fact(conn: sqlite3.Connection, event_id: int, kind: str) -> Any:
    row = conn.execute("SELECT encoding, payload FROM events WHERE id = ?", (event_id,)).fetchone()
    return None if row is None else read_payload(row[0], row[1], fact_of_kind(kind))


__all__ = ["fact_rows", "has_facts"]
