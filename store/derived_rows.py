"""Rows derived from events (trial status, scores, judgments), updated in the event's transaction.

Kept apart from the writer's queueing so each table's rule reads on its own; the writer calls
``derive`` when it queues an event (on the caller's thread, after redaction) and runs the
statements with ``apply_derived`` in the transaction that inserts the event.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proctor.store.events import Event, Judged, RunFinished, Scored, TrialFinished, TrialStarted
from proctor.store.scores import ScoreName


@dataclass(frozen=True)
class JudgmentMeta:
    """What a judgment row records besides the verdict (why and by whom it was judged)."""

    prompt_version: str = ""
    prompt_hash: str = ""
    rubric_hash: str = ""
    temperature: float | None = None
    source: str = "proctor"


# One statement and its parameters, computed when the event is queued: a batch holds these
# small tuples rather than the events, and the writer thread runs them without Python logic.
Op = tuple[str, tuple[Any, ...]]
_Deriver = Callable[[str, int | None, int, float, Any, JudgmentMeta | None], tuple[Op, ...]]


def has_rule(kind: str) -> bool:
    return kind in _DERIVERS


def derive(
    run_id: str, trial_id: int | None, attempt: int, ts: float, event: Event, judgment: JudgmentMeta | None
) -> tuple[Op, ...]:
    """The statements that keep the derived tables in step with ``event`` (none for most kinds).

    ``event`` must already be redacted: these parameters are stored as they are."""
    deriver = _DERIVERS.get(event.kind)
    return () if deriver is None else deriver(run_id, trial_id, attempt, ts, event, judgment)


def apply_derived(cur: sqlite3.Cursor, ops: list[Op]) -> None:
    """Run ``ops`` in order; consecutive runs of one statement together (inserts as multi-row ones)."""
    i, n = 0, len(ops)
    while i < n:
        sql = ops[i][0]
        j = i + 1
        while j < n and ops[j][0] == sql:
            j += 1
        if j == i + 1:
            cur.execute(sql, ops[i][1])
        elif sql.startswith("INSERT"):
            insert_many(cur, sql, [params for _, params in ops[i:j]])
        else:
            cur.executemany(sql, [params for _, params in ops[i:j]])
        i = j


# Rows per multi-row INSERT. Each statement step lets go of the GIL and must take it back; while
# the event loop's thread runs Python, taking it back waits out the switch interval (5 ms), so
# a thread that steps once per row is starved (a "convoy"). One step per chunk avoids that.
_CHUNK = 128


def insert_many(cur: sqlite3.Cursor, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """``sql`` is an ``INSERT ... VALUES (?, ...)`` of one row: insert ``rows`` in that order in
    chunks of 128 rows, then one statement for the rest (the writer caches 256 statements)."""
    n = len(rows)
    full = n - n % _CHUNK
    if full:
        cur.executemany(
            _multi_row(sql, _CHUNK), [_flat(rows[i : i + _CHUNK]) for i in range(0, full, _CHUNK)]
        )
    if n > full:
        cur.execute(_multi_row(sql, n - full), _flat(rows[full:]))


def _flat(rows: list[tuple[Any, ...]]) -> list[Any]:
    return [value for row in rows for value in row]


@functools.cache
def _multi_row(sql: str, rows: int) -> str:
    values = sql[sql.rindex("(") :]
    return sql + (", " + values) * (rows - 1)


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
    score: Op = (_SCORE, (trial_id, event.name, event.value, json.dumps(event.details, sort_keys=True), ts))
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
        None if event.verdict is None else json.dumps(event.verdict, sort_keys=True),
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
