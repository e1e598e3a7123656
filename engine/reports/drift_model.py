"""The JSON report's ``drift`` section (a replay run's calls against its recording), declared
once beside ``report_model``, which holds the rest of the report and the ``Report`` that names it.
"""

# No ``from __future__ import annotations``: TypedDict reads NotRequired at run time only from
# evaluated annotations, and the model is introspected (tests/engine/reports/test_report_model.py).
from typing import Literal, NotRequired, TypedDict, final

from proctor.engine.drift import Status

# --- drift (a replay run) -----------------------------------------------------------------


class DriftSource(TypedDict):
    """The recording the replay ran from: its database as recorded in the replay's config."""

    db: str
    run: str


class DriftTotals(TypedDict):
    """Calls by status (``result_diff.STATUSES``, in that order); every status is always there."""

    identical: int
    changed: int
    new_error: int
    fixed_error: int
    missing: int
    skipped: int


class DriftServer(TypedDict):
    server: str
    calls: int
    identical: int
    changed: int
    new_error: int
    fixed_error: int
    missing: int
    skipped: int


class DriftChange(TypedDict):
    """``result_diff.LeafChange``: one changed JSON leaf, its path and both values as text."""

    path: str
    op: Literal["~", "+", "-"]
    old: str
    new: str


class DriftCall(TypedDict):
    scenario: str
    arm: str
    model: str
    epoch: int
    trial: int | None
    recorded_trial: int
    call: int
    """1-based position of the call in its trial."""
    call_id: str
    server: str
    tool: str
    arguments: str
    status: Status
    # The keys below are there together, only on a call that did not stay identical (or has notes).
    summary: NotRequired[str]
    changes: NotRequired[list[DriftChange]]
    more_changes: NotRequired[int]
    text_diff: NotRequired[list[str]]
    more_lines: NotRequired[int]
    notes: NotRequired[list[str]]


# @final, both: renderers tell them apart by key (``"error" in section``).
@final
class DriftSection(TypedDict):
    source: DriftSource
    totals: DriftTotals
    drifted: int
    """Calls that changed or newly erred: what ``gate --max-changed`` counts."""
    servers: list[DriftServer]
    calls: list[DriftCall]
    notes: list[str]


@final
class DriftUnavailable(TypedDict):
    """The section when the recording cannot be read (moved, deleted): why, and how to fix it."""

    error: str


__all__ = [
    "DriftCall",
    "DriftChange",
    "DriftSection",
    "DriftServer",
    "DriftSource",
    "DriftTotals",
    "DriftUnavailable",
]
