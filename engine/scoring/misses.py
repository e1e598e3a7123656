"""Misses: the agent's own search or read calls made while its arm offered an MCP tool for that job.

A built-in call (``ToolCallRecord.builtin``) is a miss when its job (``tool_jobs.tool_job``) is
``search`` or ``read`` and the trial was offered an MCP tool that does the same job: a tool of one
of the arm's servers in the trial's tool list, or one it called (a trace may record no list).
Each such call counts once, wherever it falls in the session. ``count`` is None when the trial
records neither a tool list nor an MCP call: what its arm offered is unknown.

The first source's harness (github.com/luuuc/sense, ``detect_misses`` in ``bench/lib/scorer.py``)
reports misses beside its adoption layer, diagnostic only; it differs from this count in three
ways, each named in docs/scoring.md: it counts only in sessions that called its MCP tools at least
once, it files a Read after the first MCP call as a verification read, not a miss, and it counts
Claude Code's ``Agent`` (a sub-agent) among the grep fallbacks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from proctor.store.events import ListedTool
from proctor.store.tool_origin import is_builtin

from .tool_jobs import JOBS, Job, tool_job
from .trial_digest import ToolCallRecord

NO_OFFER_KNOWN = "the trial records neither its tool list nor an MCP call: what its arm offered is unknown"


@dataclass(frozen=True)
class Misses:
    """``missed``: each missed call as ``TOOL (job)``, in call order; ``offered``: the arm's MCP
    tools for each job."""

    count: int | None
    missed: tuple[str, ...] = ()
    offered: dict[Job, tuple[str, ...]] = field(default_factory=dict)


def count_misses(
    calls: Sequence[ToolCallRecord],
    listed: Sequence[ListedTool] | None,
    *,
    arm_servers: Collection[str] = (),
) -> Misses:
    """The trial's misses; ``listed`` is its tool list (None: it recorded none), ``arm_servers``
    the servers whose tools count as offered (empty: every MCP tool)."""
    tools = list(listed or ())
    ours = {t.name: t for t in tools if is_builtin(t)}
    offered: dict[Job, list[str]] = {job: [] for job in JOBS}

    def offer(name: str, job: Job | None) -> None:
        if job is not None and name not in offered[job]:
            offered[job].append(name)

    for t in tools:
        if not is_builtin(t) and (not arm_servers or t.server in arm_servers):
            offer(t.name, tool_job(t.name, description=t.description, annotations=t.annotations))
    mcp_calls = [c for c in calls if not c.builtin and (not arm_servers or c.server in arm_servers)]
    for c in mcp_calls:
        known = next((t for t in tools if t.name == c.tool and not is_builtin(t)), None)
        if known is None:
            offer(c.tool, tool_job(c.tool, arguments=c.arguments))
    if listed is None and not mcp_calls:
        return Misses(None)
    missed = []
    for c in calls:
        if not c.builtin:
            continue
        own = ours.get(c.tool)
        job = tool_job(
            c.tool,
            description=own.description if own else "",
            annotations=own.annotations if own else None,
            arguments=c.arguments,
        )
        if job is not None and offered[job]:
            missed.append(f"{c.tool} ({job})")
    return Misses(len(missed), tuple(missed), {job: tuple(names) for job, names in offered.items() if names})


__all__ = ["NO_OFFER_KNOWN", "Misses", "count_misses"]
