"""Dollar totals stay unknown when any part is: a partial sum would read as the whole cost."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from proctor.engine.stats import sum_known


def test_an_unpriced_part_makes_the_total_unknown_not_smaller() -> None:
    assert sum_known([0.25, None, 1.0]) is None
    assert sum_known([0.25, 1.0]) == 1.25


def test_nothing_spent_is_zero() -> None:
    assert sum_known([]) == 0.0


@given(st.lists(st.floats(0, 1e6), max_size=20))
def test_the_total_is_exact_whatever_the_order(costs: list[float]) -> None:
    assert sum_known(costs) == math.fsum(costs) == sum_known(list(reversed(costs)))
