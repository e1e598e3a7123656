"""Rows derived from events (trial status, scores, judgments), updated in the event's transaction.

Kept apart from the writer's queueing so each table's rule reads on its own; the writer calls
``derive`` when it queues an event (on the caller's thread), calls it again on the writer thread
from the redacted payload if redaction changed the event (so only what is stored is derived),
and runs the statements with ``apply_derived`` in the transaction that inserts the event.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable
from typing import Any

import orjson

from proctor.store.events import Event, Judged, RunFinished, Scored, TrialFinished, TrialStarted
from proctor.store.records import JudgmentMeta
from proctor.store.scores import ScoreName

# One statement and its parameters, computed when the event is queued: a batch holds these
# small tuples rather than the events, and the writer thread runs them without Python logic.
Op = tuple[str, tuple[Any, ...]]
_Deriver = Callable[[str, int | None, int, float, Any, JudgmentMeta | None], tuple[Op, ...]]


def has_rule(kind: str) -> bool:
    return kind in RULE_KINDS


def derive(
    run_id: str, trial_id: int | None, attempt: int, ts: float, event: Event, judgment: JudgmentMeta | None
) -> tuple[Op, ...]:
    """The statements that keep the derived tables in step with ``event`` (none for most kinds).

    These parameters are stored as they are: what reaches the file must come from a redacted
    event (the writer derives again from the redacted payload when redaction changed it)."""
    deriver = _DERIVERS.get(event.kind)
    return () if deriver is None else deriver(run_id, trial_id, attempt, ts, event, judgment)


def apply_derived(cur: sqlite3.Cursor, ops: list[Op]) -> None:
    """Run ``ops`` as if in order, with few statements: each statement's rows together.

    Grouped in the order a trial goes through them (run started, trial started, its scores
    cleared, trial finished, scores, passed, judgments, run finished), each group keeping the
    batch's order, as long as no row (a run's, a trial's, a trial's scores) is touched by a
    statement of an earlier group after one of a later group (a trial re-run within the batch);
    then the statements run one after the other as they came. Every statement lets go of the
    GIL while SQLite works and must take it back: fewer statements, fewer waits for it."""
    groups: list[list[tuple[Any, ...]]] = [[] for _ in _GROUPS]
    reached: dict[tuple[str, Any], int] = {}
    for sql, params in ops:
        spec = _GROUP_OF.get(sql)
        if spec is None:
            _apply_in_order(cur, ops)
            return
        rank, table, key_at = spec
        row = (table, params[key_at] if key_at is not None else None)
        if reached.get(row, rank) > rank:
            _apply_in_order(cur, ops)
            return
        reached[row] = rank
        groups[rank].append(params)
    for (sql, _table, _key), rows in zip(_GROUPS, groups, strict=True):
        if rows:
            _run_group(cur, sql, rows)


def _apply_in_order(cur: sqlite3.Cursor, ops: list[Op]) -> None:
    """Run ``ops`` in order; consecutive runs of one statement together (inserts as multi-row ones)."""
    i, n = 0, len(ops)
    while i < n:
        sql = ops[i][0]
        j = i + 1
        while j < n and ops[j][0] == sql:
            j += 1
        _run_group(cur, sql, [params for _, params in ops[i:j]])
        i = j


def _run_group(cur: sqlite3.Cursor, sql: str, rows: list[tuple[Any, ...]]) -> None:
    if len(rows) == 1:
        cur.execute(sql, rows[0])
    elif sql.startswith("INSERT"):
        insert_many(cur, sql, rows)
    elif sql == _TRIAL_SCORES_CLEARED:
        for at, size in _pieces(len(rows)):
            cur.execute(_delete_scores(size), [r[0] for r in rows[at : at + size]])
    elif sql in _UPDATE_FROM and len({r[-1] for r in rows}) == len(rows):
        # One statement updates many rows (each row once: its key is its last parameter).
        template = _UPDATE_FROM[sql]
        for at, size in _pieces(len(rows)):
            chunk = rows[at : at + size]
            cur.execute(_update_from(template, len(chunk[0]), size), [v for r in chunk for v in r])
    else:
        cur.executemany(sql, rows)


# Rows per multi-row INSERT. Each statement step lets go of the GIL and must take it back; while
# the event loop's thread runs Python, taking it back waits out the switch interval (5 ms), so
# a thread that steps once per row is starved (a "convoy"). One step per chunk avoids that, and
# large chunks cost SQLite less per row (512 rows of 7 values are well under SQLite's 32,766
# parameters). The rest goes 128 rows at a time, then in one statement: at most 129 distinct
# statements per table, which the writer's statement cache (256) keeps prepared.
_CHUNK = 128
_BIG_CHUNK = 512


def insert_many(cur: sqlite3.Cursor, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """``sql`` is an ``INSERT ... VALUES (?, ...)`` of one row: insert ``rows`` in that order in
    multi-row statements (see ``_CHUNK``)."""
    if rows:
        insert_flat(cur, sql, len(rows[0]), [value for row in rows for value in row])


def insert_flat(cur: sqlite3.Cursor, sql: str, width: int, values: list[Any]) -> None:
    """``insert_many`` of rows given flat: ``values`` holds ``width`` values per row, row after row."""
    n = len(values) // width
    at = 0
    for chunk in (_BIG_CHUNK, _CHUNK):
        full = (n - at) - (n - at) % chunk
        if full:
            step = chunk * width
            start = at * width
            cur.executemany(
                _multi_row(sql, chunk),
                [values[i : i + step] for i in range(start, start + full * width, step)],
            )
            at += full
    if n > at:
        cur.execute(_multi_row(sql, n - at), values[at * width :])


@functools.cache
def _multi_row(sql: str, rows: int) -> str:
    values = sql[sql.rindex("(") :]
    return sql + (", " + values) * (rows - 1)


_json_sorted = json.JSONEncoder(sort_keys=True).encode


def dumps_sorted(value: Any) -> str:
    """A score's details or a verdict as stored: JSON with sorted keys, compact (readers parse it).

    orjson, several times faster than ``json.dumps`` on the caller's thread; what orjson refuses
    (integers past 64 bits, keys that are not strings, lone surrogates) goes to ``json.dumps`` as
    before. NaN and infinities become null, as in the event's own payload."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return _json_sorted(value)


_RUN_STARTED = "UPDATE runs SET started_at = coalesce(started_at, ?), status = 'running' WHERE id = ?"
_RUN_FINISHED = "UPDATE runs SET finished_at = ?, status = ? WHERE id = ?"
_TRIAL_STARTED = "UPDATE trials SET status = 'running', attempt = ?, started_at = ?, finished_at = NULL, passed = NULL WHERE id = ?"
_TRIAL_SCORES_CLEARED = "DELETE FROM scores WHERE trial_id = ?"
_TRIAL_FINISHED = (
    "UPDATE trials SET status = ?, finished_at = ?, stop = ?, final_answer = ?, error = ?, tool_calls = ?, "
    "input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, "
    "tokens_estimated = ?, cost_usd = ?, wall_s = ? WHERE id = ?"
)
_SCORE = "INSERT OR REPLACE INTO scores (trial_id, name, value, details, created_at) VALUES (?, ?, ?, ?, ?)"
_PASSED = "UPDATE trials SET passed = ? WHERE id = ?"
_JUDGMENT = (
    "INSERT INTO judgments (trial_id, attempt, pass_no, judge, source, prompt_version, prompt_hash, "
    "rubric_hash, temperature, verdict, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


# Every statement derive() makes, in the order apply_derived groups them, with the row it
# touches: (table, index of its key among the parameters; None for judgments, which are only
# ever inserted, so their order among themselves is all that matters).
_GROUPS: tuple[tuple[str, str, int | None], ...] = (
    (_RUN_STARTED, "runs", 1),
    (_TRIAL_STARTED, "trials", 2),
    (_TRIAL_SCORES_CLEARED, "scores", 0),
    (_TRIAL_FINISHED, "trials", 13),
    (_SCORE, "scores", 0),
    (_PASSED, "trials", 1),
    (_JUDGMENT, "judgments", None),
    (_RUN_FINISHED, "runs", 2),
)
_GROUP_OF = {sql: (rank, table, key_at) for rank, (sql, table, key_at) in enumerate(_GROUPS)}


# The row updates as one statement for many rows: the VALUES rows are the single-row statement's
# parameters, in its order, the key last.
_UPDATE_FROM = {
    _TRIAL_STARTED: (
        "UPDATE trials SET status = 'running', attempt = v.column1, started_at = v.column2, "
        "finished_at = NULL, passed = NULL FROM ({values}) AS v WHERE trials.id = v.column3"
    ),
    _TRIAL_FINISHED: (
        "UPDATE trials SET status = v.column1, finished_at = v.column2, stop = v.column3, "
        "final_answer = v.column4, error = v.column5, tool_calls = v.column6, input_tokens = v.column7, "
        "output_tokens = v.column8, cache_read_tokens = v.column9, cache_write_tokens = v.column10, "
        "tokens_estimated = v.column11, cost_usd = v.column12, wall_s = v.column13 "
        "FROM ({values}) AS v WHERE trials.id = v.column14"
    ),
    _PASSED: "UPDATE trials SET passed = v.column1 FROM ({values}) AS v WHERE trials.id = v.column2",
}


def _pieces(n: int) -> list[tuple[int, int]]:
    """(start, size) pieces of ``n`` rows: 64 at a time, then the rest by powers of two, so that
    few distinct statements are prepared (and cached) whatever the batch."""
    out, at = [], 0
    while n - at >= 64:
        out.append((at, 64))
        at += 64
    size = 32
    while at < n:
        if n - at >= size:
            out.append((at, size))
            at += size
        size //= 2
    return out


@functools.cache
def _update_from(template: str, width: int, rows: int) -> str:
    row = "(" + ", ".join("?" * width) + ")"
    return template.format(values="VALUES " + ", ".join([row] * rows))


@functools.cache
def _delete_scores(rows: int) -> str:
    return "DELETE FROM scores WHERE trial_id IN (" + ", ".join("?" * rows) + ")"


def _on_run_started(
    run_id: str, _t: int | None, _a: int, ts: float, _e: Any, _j: JudgmentMeta | None
) -> tuple[Op, ...]:
    return ((_RUN_STARTED, (ts, run_id)),)


def _on_run_finished(
    run_id: str, _t: int | None, _a: int, ts: float, event: Any, _j: JudgmentMeta | None
) -> tuple[Op, ...]:
    assert isinstance(event, RunFinished)
    return ((_RUN_FINISHED, (ts, event.status, run_id)),)


def _on_trial_started(
    _r: str, trial_id: int | None, attempt: int, ts: float, event: Any, _j: JudgmentMeta | None
) -> tuple[Op, ...]:
    assert isinstance(event, TrialStarted)
    return ((_TRIAL_STARTED, (attempt, ts, trial_id)), (_TRIAL_SCORES_CLEARED, (trial_id,)))


def _on_trial_finished(
    _r: str, trial_id: int | None, _a: int, ts: float, event: Any, _j: JudgmentMeta | None
) -> tuple[Op, ...]:
    assert isinstance(event, TrialFinished)
    u = event.usage
    params = (
        event.status,
        ts,
        event.stop,
        event.final_answer,
        event.error,
        event.tool_calls,
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        int(u.estimated),
        event.cost_usd,
        event.wall_s,
        trial_id,
    )
    return ((_TRIAL_FINISHED, params),)


def _on_score(
    _r: str, trial_id: int | None, _a: int, ts: float, event: Any, _j: JudgmentMeta | None
) -> tuple[Op, ...]:
    assert isinstance(event, Scored)
    score: Op = (_SCORE, (trial_id, event.name, event.value, dumps_sorted(event.details), ts))
    if event.name == ScoreName.PASSED:
        passed = None if event.value is None else int(event.value >= 0.5)
        return (score, (_PASSED, (passed, trial_id)))
    return (score,)


def _on_judgment(
    _r: str, trial_id: int | None, attempt: int, ts: float, event: Any, meta: JudgmentMeta | None
) -> tuple[Op, ...]:
    assert isinstance(event, Judged)
    meta = meta or JudgmentMeta()
    params = (
        trial_id,
        attempt,
        event.pass_no,
        event.judge,
        meta.source,
        meta.prompt_version,
        meta.prompt_hash,
        meta.rubric_hash,
        meta.temperature,
        None if event.verdict is None else dumps_sorted(event.verdict),
        event.error,
        ts,
    )
    return ((_JUDGMENT, params),)


_DERIVERS: dict[str, _Deriver] = {
    "run_started": _on_run_started,
    "run_finished": _on_run_finished,
    "trial_started": _on_trial_started,
    "trial_finished": _on_trial_finished,
    "score": _on_score,
    "judgment": _on_judgment,
}

RULE_KINDS: frozenset[str] = frozenset(_DERIVERS)
"""The event kinds that have derived rows."""
