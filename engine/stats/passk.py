"""pass@k and pass^k over epochs, estimated without bias from n attempts with c successes.

pass@k (Chen et al. 2021) is the chance that at least one of k attempts drawn without
replacement from the n observed succeeds: 1 − C(n−c, k)/C(n, k). It rewards finding a solution
at all. pass^k (τ-bench, LiveMCPBench) is the chance that all k drawn attempts succeed:
C(c, k)/C(n, k). It rewards reliability. Both are computed with exact integer arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction


def _check(n: int, c: int, k: int, task: str | None = None) -> None:
    where = f" for task {task!r}" if task is not None else ""
    if n < 1:
        raise ValueError(f"need at least one attempt{where}, got n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"successes must be within 0..n{where}, got c={c}, n={n}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got k={k}")
    if k > n:
        raise ValueError(
            f"k={k} exceeds the n={n} attempts{where}: pass@k and pass^k need at least k epochs per task"
        )


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: 1 − C(n−c, k)/C(n, k)."""
    _check(n, c, k)
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: C(c, k)/C(n, k)."""
    _check(n, c, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


@dataclass(frozen=True)
class PassKSummary:
    """pass@k and pass^k averaged over tasks (each task weighs the same)."""

    k: int
    pass_at_k: float
    pass_hat_k: float
    n_tasks: int


def pass_k_over_tasks(outcomes: Mapping[str, Sequence[bool]], k: int) -> PassKSummary:
    """Average pass@k and pass^k over tasks, each given as its per-epoch pass/fail outcomes.

    Every task needs at least k outcomes; otherwise ``ValueError`` names the task.
    """
    if not outcomes:
        raise ValueError("pass@k needs at least one task")
    at_k: list[Fraction] = []
    hat_k: list[Fraction] = []
    for task, results in outcomes.items():
        n, c = len(results), sum(1 for passed in results if passed)
        _check(n, c, k, task)
        total = math.comb(n, k)
        at_k.append(1 - Fraction(math.comb(n - c, k), total))
        hat_k.append(Fraction(math.comb(c, k), total))
    return PassKSummary(
        k=k,
        pass_at_k=float(sum(at_k, Fraction(0)) / len(at_k)),
        pass_hat_k=float(sum(hat_k, Fraction(0)) / len(hat_k)),
        n_tasks=len(outcomes),
    )
