"""Totals of measured amounts where a missing part makes the whole unknown.

A model without a price has no cost, not a cost of $0: a run's (or an arm's, or a model's)
dollars summed over its parts are ``None`` as soon as one part is, so a partial sum never reads
as the total. The report's cost columns and the console's cost panel both sum this way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def sum_known(values: Iterable[float | None]) -> float | None:
    """The correctly rounded sum (``math.fsum``: independent of order), or None if any value is None."""
    known: list[float] = []
    for v in values:
        if v is None:
            return None
        known.append(v)
    return math.fsum(known)


__all__ = ["sum_known"]
