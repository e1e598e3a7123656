"""The dashboard's two top lines: what the run is doing now, and how far it has got.

Startup says what is happening (the engine process loading, then "starting servers: 2 of 5
ready") instead of "no run recorded yet · 0/0 done" for seconds. A rate is shown only while
the run is running and rests on enough finished trials over enough time: an import (all
trials finished in the same instant) or one re-run on a finished run made numbers like
"482566.1 trials/min" or "1.0 trials/min" that meant nothing.
"""

from __future__ import annotations

from rich.text import Text

from proctor.app.views.state import ConsoleState, Filters
from proctor.widgets.sanitize import one_line
from proctor.widgets.trial_matrix import STATUS_GLYPH, STATUSES

RATE_MIN_TRIALS = 3
RATE_MIN_SPAN_S = 10.0


def meaningful_rate(state: ConsoleState) -> float | None:
    """Trials per minute, or None when a rate would mean nothing (see the module docstring)."""
    run = state.run
    if run is None or run.status != "running":
        return None
    done, window = state.rate_basis()
    if done < RATE_MIN_TRIALS or window < RATE_MIN_SPAN_S:
        return None
    return done * 60.0 / window


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def starting_text(state: ConsoleState, engine_for_s: float | None) -> Text | None:
    """What the engine is doing before its first trial starts, or None once trials run."""
    if state.run is None:
        if engine_for_s is None:
            return Text("no run recorded yet in this database", style="dim")
        text = Text("starting the engine: loading the suite and its libraries", style="bold yellow", end="")
        text.append(f" · {duration(engine_for_s)}", style="dim")
        return text
    servers = state.servers
    counts = state.counts()
    if servers is None or counts["queued"] != len(state.statuses) or state.run.status != "running":
        return None
    if servers.ready + servers.failed >= servers.total:
        return Text("servers started; the first trials are starting", style="bold yellow")
    text = Text(f"starting servers: {servers.ready} of {servers.total} ready", style="bold yellow", end="")
    if servers.failed:
        text.append(f", {servers.failed} failed", style="bold red")
    if servers.waiting:
        names = ", ".join(one_line(n, 24) for n in servers.waiting[:4])
        more = f" and {len(servers.waiting) - 4} more" if len(servers.waiting) > 4 else ""
        text.append(f" · waiting for {names}{more}", style="dim")
    return text


def progress_text(state: ConsoleState, filters: Filters, engine_for_s: float | None) -> Text:
    starting = starting_text(state, engine_for_s)
    if starting is not None:
        return starting
    done, total = state.progress()
    counts = state.counts()
    text = Text(f"{done}/{total} done ", style="bold", end="")
    text.append(f"({done / total:.0%}) " if total else "")
    for status in STATUSES:
        if counts[status]:
            text.append(f" {STATUS_GLYPH[status]}{status} {counts[status]}")
    rate = meaningful_rate(state)
    if rate is not None:
        text.append(f"  · {rate:.1f} trials/min", style="bold")
        left = total - done
        if left:
            text.append(f" · ~{duration(left * 60.0 / rate)} left")
    if filters.active:
        text.append(f"  · filters: {filters.describe()}", style="yellow")
    return text


__all__ = [
    "RATE_MIN_SPAN_S",
    "RATE_MIN_TRIALS",
    "duration",
    "meaningful_rate",
    "progress_text",
    "starting_text",
]
