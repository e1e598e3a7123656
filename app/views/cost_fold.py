"""Per-model token and dollar totals, folded from trial rows and model_response events.

Dollars add up as the report's do (``engine.stats.sum_known``): unknown when any part is.

A finished trial's row holds its authoritative totals; a running trial only has the
model_response events seen so far. The tool-I/O share of input tokens exists only in events,
so it is summed per trial attempt from the live tail plus a backfill of older events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from proctor.engine.stats import sum_known
from proctor.store.events import ModelResponse
from proctor.store.read.reader import StoredEvent, TrialRecord
from proctor.widgets.cost_panel import CostRow


@dataclass
class AttemptUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    tool_io: int = 0
    cost_usd: float | None = 0.0
    estimated: bool = False


class UsageBook:
    """Sums of model_response events per (trial, attempt)."""

    def __init__(self) -> None:
        self.by_attempt: dict[tuple[int, int], AttemptUsage] = {}
        self.backfill_done = False

    def add(self, events: Iterable[StoredEvent]) -> bool:
        changed = False
        for stored in events:
            ev = stored.event
            if not isinstance(ev, ModelResponse) or stored.trial_id is None or stored.abandoned:
                continue
            acc = self.by_attempt.setdefault((stored.trial_id, stored.attempt), AttemptUsage())
            acc.input_tokens += ev.usage.input_tokens
            acc.output_tokens += ev.usage.output_tokens
            acc.cache_read += ev.usage.cache_read_tokens
            acc.cache_write += ev.usage.cache_write_tokens
            acc.tool_io += ev.tool_io_tokens
            acc.cost_usd = sum_known((acc.cost_usd, ev.cost_usd))
            acc.estimated = acc.estimated or ev.usage.estimated
            changed = True
        return changed


def cost_rows(
    trials: Mapping[int, TrialRecord], statuses: Mapping[int, str], usage: UsageBook
) -> list[CostRow]:
    """One row per model that has spent anything (or has finished trials), sorted by model name."""
    acc: dict[str, dict[str, float]] = {}
    estimated: dict[str, bool] = {}
    costs: dict[str, list[float | None]] = {}
    for trial in trials.values():
        live = usage.by_attempt.get((trial.id, trial.attempt))
        finished = trial.input_tokens is not None and trial.status in ("finished", "error")
        if live is None and not finished:
            continue
        m = acc.setdefault(trial.model, dict.fromkeys(("n", "p", "in", "tio", "out", "cr", "cw"), 0.0))
        m["n"] += 1
        m["p"] += 1 if statuses.get(trial.id) == "passed" else 0
        m["tio"] += live.tool_io if live is not None else 0
        if finished:
            m["in"] += trial.input_tokens or 0
            m["out"] += trial.output_tokens or 0
            m["cr"] += trial.cache_read_tokens or 0
            m["cw"] += trial.cache_write_tokens or 0
            costs.setdefault(trial.model, []).append(trial.cost_usd)
            estimated[trial.model] = estimated.get(trial.model, False) or trial.tokens_estimated
        elif live is not None:
            m["in"] += live.input_tokens
            m["out"] += live.output_tokens
            m["cr"] += live.cache_read
            m["cw"] += live.cache_write
            costs.setdefault(trial.model, []).append(live.cost_usd)
        if live is not None and live.estimated:
            estimated[trial.model] = True
    return [
        CostRow(
            model=model,
            trials=int(m["n"]),
            passed=int(m["p"]),
            input_tokens=int(m["in"]),
            tool_io_in=int(m["tio"]) if usage.backfill_done else None,
            output_tokens=int(m["out"]),
            cache_read=int(m["cr"]),
            cache_write=int(m["cw"]),
            judge_tokens=None,
            cost_usd=sum_known(costs[model]),
            estimated=estimated.get(model, False),
        )
        for model, m in sorted(acc.items())
    ]


__all__ = ["AttemptUsage", "UsageBook", "cost_rows"]
