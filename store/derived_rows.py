"""Rows derived from events (trial status, scores, judgments), updated in the event's transaction.

Kept apart from the writer's queueing so each table's rule reads on its own; the writer calls
``update_derived`` for every event whose kind has a rule here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

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


# (run id, trial id, attempt, timestamp, event, judgment metadata)
Derived = tuple[str, int | None, int, float, Event, JudgmentMeta | None]
_Updater = Callable[[sqlite3.Cursor, Derived], None]


def has_rule(kind: str) -> bool:
    return kind in _UPDATERS


def update_derived(cur: sqlite3.Cursor, item: Derived) -> None:
    _UPDATERS[item[4].kind](cur, item)


def _on_run_started(cur: sqlite3.Cursor, item: Derived) -> None:
    run_id, _, _, ts, _, _ = item
    cur.execute(
        "UPDATE runs SET started_at = coalesce(started_at, ?), status = 'running' WHERE id = ?", (ts, run_id)
    )


def _on_run_finished(cur: sqlite3.Cursor, item: Derived) -> None:
    run_id, _, _, ts, event, _ = item
    assert isinstance(event, RunFinished)
    cur.execute("UPDATE runs SET finished_at = ?, status = ? WHERE id = ?", (ts, event.status, run_id))


def _on_trial_started(cur: sqlite3.Cursor, item: Derived) -> None:
    _, trial_id, attempt, ts, event, _ = item
    assert isinstance(event, TrialStarted)
    cur.execute(
        "UPDATE trials SET status = 'running', attempt = ?, started_at = ?, finished_at = NULL, "
        "passed = NULL WHERE id = ?",
        (attempt, ts, trial_id),
    )
    cur.execute("DELETE FROM scores WHERE trial_id = ?", (trial_id,))


def _on_trial_finished(cur: sqlite3.Cursor, item: Derived) -> None:
    _, trial_id, _, ts, event, _ = item
    assert isinstance(event, TrialFinished)
    u = event.usage
    cur.execute(
        "UPDATE trials SET status = ?, finished_at = ?, stop = ?, final_answer = ?, error = ?, tool_calls = ?, "
        "input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, "
        "tokens_estimated = ?, cost_usd = ?, wall_s = ? WHERE id = ?",
        (
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
        ),
    )


def _on_score(cur: sqlite3.Cursor, item: Derived) -> None:
    _, trial_id, _, ts, event, _ = item
    assert isinstance(event, Scored)
    cur.execute(
        "INSERT OR REPLACE INTO scores (trial_id, name, value, details, created_at) VALUES (?, ?, ?, ?, ?)",
        (trial_id, event.name, event.value, json.dumps(event.details, sort_keys=True), ts),
    )
    if event.name == ScoreName.PASSED:
        passed = None if event.value is None else int(event.value >= 0.5)
        cur.execute("UPDATE trials SET passed = ? WHERE id = ?", (passed, trial_id))


def _on_judgment(cur: sqlite3.Cursor, item: Derived) -> None:
    _, trial_id, attempt, ts, event, meta = item
    assert isinstance(event, Judged)
    meta = meta or JudgmentMeta()
    cur.execute(
        "INSERT INTO judgments (trial_id, attempt, pass_no, judge, source, prompt_version, prompt_hash, "
        "rubric_hash, temperature, verdict, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
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
        ),
    )


_UPDATERS: dict[str, _Updater] = {
    "run_started": _on_run_started,
    "run_finished": _on_run_finished,
    "trial_started": _on_trial_started,
    "trial_finished": _on_trial_finished,
    "score": _on_score,
    "judgment": _on_judgment,
}
