"""Build ``StoredEvent`` and ``TrialRecord`` values directly, for state-folding tests."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from proctor.store.events import Event
from proctor.store.read.reader import StoredEvent, TrialRecord

_ids = itertools.count(1)


def stored(
    event: Event, trial_id: int | None = 1, attempt: int = 1, event_id: int | None = None, ts: float = 0.0
) -> StoredEvent:
    return StoredEvent(
        event_id if event_id is not None else next(_ids), trial_id, attempt, ts, event.kind, False, event
    )


def trial(trial_id: int = 1, **kw: Any) -> TrialRecord:
    base = TrialRecord(
        id=trial_id,
        scenario="s1",
        arm="baseline",
        model="offline:a",
        epoch=0,
        seed=1,
        status="queued",
        attempt=0,
        started_at=None,
        finished_at=None,
        stop=None,
        final_answer=None,
        error=None,
        tool_calls=None,
        input_tokens=None,
        output_tokens=None,
        cache_read_tokens=None,
        cache_write_tokens=None,
        tokens_estimated=False,
        cost_usd=None,
        wall_s=None,
        passed=None,
    )
    return replace(base, **kw)
