"""A recorded run's tool surface and results, keyed for serving back (``replay:`` arms).

The run database already holds what a replay needs: each trial's ``tools_listed`` (the tools
offered) and every ``tool_call`` with its ``tool_result`` (paired by call id within the trial's
current attempt). A call is looked up by tool name and the canonical JSON of its arguments
(keys sorted, no spaces), so ``{"b": 1, "a": 2}`` and ``{"a": 2, "b": 1}`` are the same call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.store.events import ListedTool, ToolCall, ToolResult, ToolsListed
from proctor.store.read.reader import StoreReader


class RecordingError(Exception):
    """The recording cannot be served (no database, another run, an arm it does not hold)."""


def call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """``tool`` and its arguments as one canonical string."""
    return f"{tool}\x00{json.dumps(arguments, sort_keys=True, separators=(',', ':'), ensure_ascii=False)}"


@dataclass
class Recording:
    """One arm of one run: its tools, and per call key the results recorded, in event order."""

    run: str
    arm: str
    tools: list[ListedTool]
    results: dict[str, list[ToolResult]] = field(default_factory=dict)


def recorded_arm(db: Path, run: str, arm: str | None) -> str:
    """The arm to serve, after checking the database holds ``run`` and that arm; else RecordingError."""
    if not db.is_file():
        raise RecordingError(
            f"{db} does not exist: record the run first (proctor run SUITE --db {db}) or fix the path"
        )
    try:
        with StoreReader(db) as reader:
            found = reader.run()
            arms = sorted({t.arm for t in reader.trials()})
    except Exception as exc:  # not a database, another tool's SQLite file, a newer schema
        raise RecordingError(f"{db} is not a proctor run database ({exc})") from exc
    if found is None:
        raise RecordingError(f"{db} holds no run yet")
    if found.id != run:
        raise RecordingError(f"{db} holds run {found.id!r}, not {run!r}; set run: {found.id}")
    if arm is None:
        if len(arms) != 1:
            raise RecordingError(
                f"run {run} has arms {', '.join(arms) or 'none'}; say which to serve with arm: NAME"
            )
        return arms[0]
    if arm not in arms:
        raise RecordingError(f"run {run} has no arm {arm!r} (its arms: {', '.join(arms) or 'none'})")
    return arm


def load_recording(db: Path, run: str, arm: str | None) -> tuple[Recording, StoreReader]:
    """The arm's tools and results; the open reader is returned too, for binary blocks' bytes."""
    arm = recorded_arm(db, run, arm)
    reader = StoreReader(db)
    recording = Recording(run, arm, [])
    seen: set[str] = set()
    for trial in sorted(reader.trials(), key=lambda t: t.id):
        if trial.arm != arm:
            continue
        calls: dict[str, ToolCall] = {}
        for stored in reader.trial_events(trial.id):
            event = stored.event
            if isinstance(event, ToolsListed):
                for tool in event.tools:
                    if tool.name not in seen:
                        seen.add(tool.name)
                        recording.tools.append(tool)
            elif isinstance(event, ToolCall):
                calls[event.call_id] = event
            elif isinstance(event, ToolResult) and (call := calls.get(event.call_id)) is not None:
                recording.results.setdefault(call_key(call.tool, call.arguments), []).append(event)
    return recording, reader


__all__ = ["Recording", "RecordingError", "call_key", "load_recording", "recorded_arm"]
