"""What the report says about what gold calls got back: results that read like errors the server
did not flag, results that lack what their gold call expects, and gold calls left for review.

Read from each trial's tool-match details (``disguised_errors``, ``unmet_expectations``,
``review``: engine/scoring/toolmatch.py, engine/scoring/result_checks.py), so trials whose scenario
has gold calls only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proctor.store.read.reader import ScoreRecord, TrialRecord
from proctor.store.scores import ScoreName, ToolMatchDetails, UnreadableScore

_EXAMPLE_CHARS = 240


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXAMPLE_CHARS else flat[: _EXAMPLE_CHARS - 1] + "…"


def _listed(record: ScoreRecord, field: str) -> list[str]:
    try:
        value = record.detail(ToolMatchDetails, field)
    except UnreadableScore:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def result_notes(
    trials: Sequence[TrialRecord], scores: Mapping[int, Mapping[ScoreName, ScoreRecord]]
) -> list[str]:
    """One note per arm and kind, with a count and the first example."""
    disguised: dict[str, list[str]] = {}
    disguised_trials: dict[str, int] = {}
    unmet: dict[str, list[str]] = {}
    review: dict[tuple[str, str], None] = {}
    for t in trials:
        record = scores.get(t.id, {}).get(ScoreName.TFS)
        if record is None:
            continue
        found = _listed(record, "disguised_errors")
        if found:
            disguised.setdefault(t.arm, []).extend(found)
            disguised_trials[t.arm] = disguised_trials.get(t.arm, 0) + 1
        lacking = _listed(record, "unmet_expectations")
        if lacking:
            unmet.setdefault(t.arm, []).extend(lacking)
        for text in _listed(record, "review"):
            review[(t.scenario, text)] = None
    notes = [
        f"{len(found)} tool result(s) in {disguised_trials[arm]} {arm} trial(s) read like errors the server "
        f"did not flag (isError false), e.g. {_clip(found[0])}. A gold call is matched by such a result "
        "unless it says what its result must hold (expect: contains / not_contains / json)"
        for arm, found in sorted(disguised.items())
    ]
    notes += [
        f"{len(lacking)} gold call result(s) in {arm} trials lack what their gold call expects, so they "
        f"match nothing, e.g. {_clip(lacking[0])}"
        for arm, lacking in sorted(unmet.items())
    ]
    if review:
        (scenario, first), *_ = review
        notes.append(
            f"{len(review)} gold call(s) have a result nobody checks yet (their expect is a review note, as "
            f"proctor init leaves them), e.g. scenario {scenario}: {_clip(first)}"
        )
    return notes


__all__ = ["result_notes"]
