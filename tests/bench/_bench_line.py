"""The one output format every benchmark shares: ``BENCH <name> <value> <unit> goal <op><target> PASS|FAIL``."""

from __future__ import annotations


def bench_line(
    name: str, value: float, unit: str, op: str, target: float, ok: bool | None = None, *, digits: int = 2
) -> bool:
    """Print a figure's line; PASS only when the goal holds (and ``ok``, if given: a figure that
    also needs, say, every trial to have finished)."""
    holds = value >= target if op == ">=" else value <= target if op == "<=" else value > target
    holds = holds and (ok is None or ok)
    print(
        f"BENCH {name} {value:.{digits}f} {unit} goal {op}{target:g} {'PASS' if holds else 'FAIL'}",
        flush=True,
    )
    return holds


__all__ = ["bench_line"]
