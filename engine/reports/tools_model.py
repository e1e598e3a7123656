"""The JSON report's ``tool_usage`` and ``tool_surface`` sections, declared once (beside
``report_model``, which holds the rest of the report and the ``Report`` that names these).
"""

# No ``from __future__ import annotations``: TypedDict reads NotRequired at run time only from
# evaluated annotations, and the model is introspected (tests/engine/reports/test_report_model.py).
from typing import NotRequired, TypedDict

# --- tool usage ---------------------------------------------------------------------------


class Percentiles(TypedDict):
    p50: float | None
    p95: float | None


class ResultBytes(TypedDict):
    total: int
    mean: float | None


class ToolEntry(TypedDict):
    server: str
    tool: str
    offered: bool
    offered_in_trials: int
    calls: int
    results: int
    errors: int
    error_rate: float | None
    no_result: int
    latency_s: Percentiles
    result_bytes: ResultBytes
    truncated_results: int
    trials: int


class NeverCalledEntry(TypedDict):
    server: str
    tool: str
    offered_in_trials: int


class ArmTools(TypedDict):
    arm: str
    model: str
    trials: int
    offered_tools: int
    tools: list[ToolEntry]
    never_called: list[NeverCalledEntry]


class ToolDefinitions(TypedDict):
    latency_percentiles: str
    result_bytes: str
    routed: str


class ToolUsageSection(TypedDict):
    latency_recorded: bool
    definitions: ToolDefinitions
    arms: list[ArmTools]


# --- tool surface (engine/reports/tool_surface.py) -------------------------------------------


class SurfaceSchemaChange(TypedDict):
    """One input-schema difference at a JSON path; breaking when an old call may be refused."""

    path: str
    change: str
    breaking: bool


class SurfaceWords(TypedDict):
    """A run of a description's words: kept (``=``), removed (``-``) or added (``+``)."""

    op: str
    words: str


class SurfaceChange(TypedDict):
    """How one tool differs from the lock: added, removed, renamed or changed."""

    server: str
    tool: str
    change: str
    breaking: bool
    old_name: NotRequired[str]
    input_schema: NotRequired[list[SurfaceSchemaChange]]
    description: NotRequired[list[SurfaceWords]]
    changed: NotRequired[list[str]]
    """title, outputSchema, annotations: which of them changed."""


class SurfaceLock(TypedDict):
    status: str
    """none, holds, differs or unreadable."""
    file: str | None
    changes: list[SurfaceChange]
    error: NotRequired[str]


class SurfaceArm(TypedDict):
    arm: str
    model: str
    trials: int
    tools: float
    tokens_per_turn: float
    by_server: dict[str, float]
    passed: int
    judged: int
    pass_rate: float | None


class SurfaceTool(TypedDict):
    server: str
    tool: str
    sha256: str
    tokens: int


class ToolSurfaceSection(TypedDict):
    tokenizer: str
    note: str
    lock: SurfaceLock
    changed_during_run: list[str]
    """``server/tool`` of each tool whose definition was not the same in every trial."""
    arms: list[SurfaceArm]
    tools: list[SurfaceTool]


__all__ = [
    "ArmTools",
    "NeverCalledEntry",
    "Percentiles",
    "ResultBytes",
    "SurfaceArm",
    "SurfaceChange",
    "SurfaceLock",
    "SurfaceSchemaChange",
    "SurfaceTool",
    "SurfaceWords",
    "ToolDefinitions",
    "ToolEntry",
    "ToolSurfaceSection",
    "ToolUsageSection",
]
