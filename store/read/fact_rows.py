"""The facts of many events, for a report: small rows from ``event_facts``, payloads only where
an event has none.

Written by the writer beside each model call, judge call and tool event (``store.event_facts``),
a fact spares the report reading and decoding that event's payload. An event without one (the
database was written before schema 4 and migrated since, or its fact could not be stored) is
read from its payload, as before; a database still at schema 3 (a report opens it read-only and
never migrates it) has no ``event_facts`` table, and every event is read that way. Where no
event lacks its fact (``every_event_has_its_fact``: a database written at schema 4 throughout,
the common case), ``event_facts`` is read alone, without the merge that finds the others.

Whether an event was abandoned is read from ``events`` (a retried attempt marks it after the
fact), through the partial index that holds only the abandoned ones: the report never touches
the events table's pages for an event that has its fact.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any

import msgspec

from proctor.store.event_facts import FACT_KINDS, decode_fact, decoder, fact_of_kind, read_payload

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


def every_event_has_its_fact(conn: sqlite3.Connection, up_to_id: int) -> bool:
    """True when each event of ``FACT_KINDS`` up to ``up_to_id`` has its ``event_facts`` row (a
    database written at schema 4 throughout): two counts over the ids, no row read.

    A fact row is its event's (the writer stores both in one transaction, under the event's id
    and kind), so as many facts as such events means none is missing."""
    if not has_facts(conn):
        return False
    marks = ", ".join("?" * len(FACT_KINDS))
    (events,) = conn.execute(
        f"SELECT count(*) FROM events WHERE kind IN ({marks}) AND id <= ?", [*sorted(FACT_KINDS), up_to_id]
    ).fetchone()
    (last,) = conn.execute("SELECT max(event_id) FROM event_facts").fetchone()
    # Counting the whole table is SQLite's quick count, which a bound on the ids would forgo.
    whole = last is None or last <= up_to_id
    (facts,) = conn.execute(
        "SELECT count(*) FROM event_facts" + ("" if whole else " WHERE event_id <= ?"),
        () if whole else (up_to_id,),
    ).fetchone()
    return bool(events == facts)


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
    conn: sqlite3.Connection, kinds: Sequence[str], up_to_id: int, *, complete: bool = False
) -> Iterator[tuple[int | None, int, bool, Any]]:
    """(trial_id, attempt, abandoned, fact) of each event of ``kinds`` (of ``FACT_KINDS``) up to
    ``up_to_id``, in id order; nothing for an event whose fact is None. Streamed.

    ``complete``: ``every_event_has_its_fact`` said so, and only ``event_facts`` is read."""
    if complete:
        return _stored_rows(conn, kinds, up_to_id)
    return _mixed_rows(conn, kinds, up_to_id)


def _stored_rows(
    conn: sqlite3.Connection, kinds: Sequence[str], up_to_id: int
) -> Iterator[tuple[int | None, int, bool, Any]]:
    """``fact_rows`` of a database where every event has its fact: one pass over ``event_facts``
    in id order (its rowid), the events table read only where some event was abandoned.

    The hot read of a report (on 10,000 trials 145,000 rows): each row is its fewest columns,
    the kind as its index in ``kinds``, no event id (a damaged fact finds its event by value)."""
    abandoned = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM events WHERE abandoned = 1 AND id <= ?)", (up_to_id,)
    ).fetchone()[0]
    # Only the columns this read needs (each costs a Python object per row): the kind as its
    # index in ``kinds`` when there are several, the abandoned flag when any event is.
    columns = "trial_id, attempt, facts"
    params: list[Any] = []
    if len(kinds) > 1 or abandoned:
        columns += ", CASE kind " + " ".join(f"WHEN ? THEN {i}" for i in range(len(kinds))) + " END"
        params += kinds
    if abandoned:
        columns += ", event_id IN (SELECT id FROM events WHERE abandoned = 1)"
    marks = ", ".join("?" * len(kinds))
    cur = conn.execute(
        f"SELECT {columns} FROM event_facts WHERE kind IN ({marks}) AND event_id <= ?"
        # A "null" fact reads as None, which is not given: such rows are not read (judge passes
        # without usage).
        " AND facts <> CAST('null' AS BLOB) ORDER BY event_id",
        [*params, *kinds, up_to_id],
    )
    return chain.from_iterable(_decoded_chunks(conn, cur, kinds, up_to_id))


def _decoded_chunks(
    conn: sqlite3.Connection, cur: sqlite3.Cursor, kinds: Sequence[str], up_to_id: int
) -> Iterator[list[tuple[int | None, int, bool, Any]]]:
    """The rows of ``cur`` (trial_id, attempt, facts[, kind index[, abandoned]]) with their facts
    decoded, a chunk at a time: a list built in one comprehension, which the caller iterates
    without a generator step per row."""
    decoders = [decoder(kind) for kind in kinds]
    remembered: dict[bytes, Any] = {}

    def recall(stored: bytes) -> Any:  # a tool list recurs verbatim: decoded once
        got = remembered.get(stored)
        if got is None:
            got = decoders[repeated](stored)
            if len(remembered) < _REMEMBERED:
                remembered[stored] = got
        return got

    repeated = kinds.index(_REPEATED) if _REPEATED in kinds else -1
    read = [recall if i == repeated else d for i, d in enumerate(decoders)]
    first = read[0]
    damaged: dict[tuple[Any, ...], int] = {}

    def one(row: tuple[Any, ...]) -> tuple[int | None, int, bool, Any]:
        t, a, stored, *rest = row
        which = rest[0] if rest else 0
        try:
            got = read[which](stored)
        except msgspec.DecodeError:  # a damaged row: its payload says
            key = (t, a, kinds[which], stored)
            damaged[key] = seen = damaged.get(key, -1) + 1
            got = _damaged_fact(conn, key, seen, up_to_id)
        return t, a, len(rest) > 1 and rest[1] == 1, got

    while rows := cur.fetchmany(2000):
        width = len(rows[0])
        try:
            if width == 3:
                chunk = [(t, a, False, first(f)) for t, a, f in rows]
            elif width == 4:
                chunk = [(t, a, False, read[w](f)) for t, a, f, w in rows]
            else:
                chunk = [(t, a, gone == 1, read[w](f)) for t, a, f, w, gone in rows]
        except msgspec.DecodeError:
            chunk = [one(row) for row in rows]
        yield [row for row in chunk if row[3] is not None]


def _damaged_fact(conn: sqlite3.Connection, row: tuple[Any, ...], seen: int, up_to_id: int) -> Any:
    """The fact, from its payload, of the ``seen``-th (from 0) fact row with these values."""
    trial_id, attempt, kind, stored = row
    found = conn.execute(
        "SELECT event_id FROM event_facts WHERE trial_id IS ? AND attempt = ? AND kind = ? AND facts = ? "
        "AND event_id <= ? ORDER BY event_id LIMIT 1 OFFSET ?",
        (trial_id, attempt, kind, stored, up_to_id, seen),
    ).fetchone()
    return None if found is None else _payload_fact(conn, found[0], kind)


def _mixed_rows(
    conn: sqlite3.Connection, kinds: Sequence[str], up_to_id: int
) -> Iterator[tuple[int | None, int, bool, Any]]:
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


__all__ = ["every_event_has_its_fact", "fact_rows", "has_facts"]
