"""Scoring one finished trial: deterministic scores, N judge passes, then the two layers.

Shared by the live run (``engine/runs/trial_scoring.py`` calls it as each trial finishes) and by
re-judging, so both emit the same events in the same order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from proctor.engine.grading.evaluation import (
    TrialInput,
    deterministic_scores,
    digest_of,
    is_judged,
    judged_event,
    layer_scores,
)
from proctor.engine.judges.base import Judge, JudgeOutcome, JudgeSubject, Verdict, can_judge, judge_answer
from proctor.store.events import Event, ToolsListed
from proctor.store.records import JudgmentMeta

Emit = Callable[[Event, JudgmentMeta | None], None]


def tool_schemas(events: Sequence[Event]) -> dict[str, dict[str, object]]:
    return {t.name: t.input_schema for e in events if isinstance(e, ToolsListed) for t in e.tools}


async def score_trial(
    trial: TrialInput, judge: Judge | Sequence[Judge], pass_numbers: Sequence[int], emit: Emit
) -> None:
    """Emit every score and judgment for one trial (every judge of a panel judges every pass)."""
    judges = [j for j in (judge if isinstance(judge, Sequence) else [judge]) if can_judge(j, trial.scenario)]
    digest = digest_of(trial.events)
    det = deterministic_scores(trial, digest)
    for s in det.values():
        emit(s, None)
    subject = JudgeSubject(trial.scenario, digest.answer_text, digest.audit_text, trial.arm_name, trial.model)
    jobs = [(j, p) for j in judges for p in pass_numbers] if is_judged(trial) else []
    outcomes: list[JudgeOutcome] = list(await asyncio.gather(*(judge_answer(j, subject, p) for j, p in jobs)))
    by_judge: dict[str, list[Verdict]] = {j.judge_id: [] for j in judges}
    errors: list[str] = []
    for (j, p), o in zip(jobs, outcomes, strict=True):
        emit(judged_event(o, p, j.judge_id), o.meta)
        if o.verdict is not None:
            by_judge[j.judge_id].append(o.verdict)
        else:
            errors.append(o.error)
    verdicts = [v for vs in by_judge.values() for v in vs]
    for s in layer_scores(trial, digest, det, verdicts, by_judge, errors).values():
        emit(s, None)
