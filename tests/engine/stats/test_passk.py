from __future__ import annotations

import math
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.engine.stats import pass_at_k, pass_hat_k, pass_k_over_tasks


def test_by_hand() -> None:
    # n = 5, c = 2, k = 2: C(3,2)/C(5,2) = 3/10, so pass@2 = 0.7; pass^2 = C(2,2)/C(5,2) = 0.1
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # k = 1 is the plain success rate for both.
    assert pass_at_k(5, 2, 1) == pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    # n - c < k: every k-subset holds a success.
    assert pass_at_k(5, 4, 2) == 1.0
    assert (pass_at_k(3, 0, 2), pass_hat_k(3, 0, 2)) == (0.0, 0.0)
    assert (pass_at_k(3, 3, 3), pass_hat_k(3, 3, 3)) == (1.0, 1.0)


def test_over_tasks_by_hand() -> None:
    # t1: n=5, c=2 -> pass@2 0.7, pass^2 0.1; t2: n=3, c=3 -> 1, 1. Means: 0.85 and 0.55.
    summary = pass_k_over_tasks({"t1": [True, False, True, False, False], "t2": [True, True, True]}, k=2)
    assert summary.k == 2
    assert summary.n_tasks == 2
    assert summary.pass_at_k == pytest.approx(0.85)
    assert summary.pass_hat_k == pytest.approx(0.55)


def test_k_larger_than_n_names_the_task() -> None:
    with pytest.raises(ValueError, match=r"k=4 exceeds the n=3 attempts for task 'short'"):
        pass_k_over_tasks({"long": [True] * 5, "short": [True, False, True]}, k=4)
    with pytest.raises(ValueError, match=r"k=2 exceeds the n=1 attempts"):
        pass_at_k(1, 1, 2)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        pass_at_k(3, 1, 0)
    with pytest.raises(ValueError, match="successes"):
        pass_hat_k(3, 4, 1)
    with pytest.raises(ValueError, match="at least one attempt"):
        pass_at_k(0, 0, 1)
    with pytest.raises(ValueError, match="at least one task"):
        pass_k_over_tasks({}, k=1)


def n_c_k() -> st.SearchStrategy[tuple[int, int, int]]:
    return st.integers(1, 10).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n)),
    )


@given(n_c_k())
def test_matches_enumerating_k_subsets(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    attempts = [True] * c + [False] * (n - c)
    subsets = list(combinations(attempts, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


@given(n_c_k())
def test_matches_chen_product_form(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    product_form = 1.0 if n - c < k else 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))
    assert pass_at_k(n, c, k) == pytest.approx(product_form)


@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_monotone_in_k(nc: tuple[int, int]) -> None:
    n, c = nc
    at = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    hat = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert at == sorted(at)
    assert hat == sorted(hat, reverse=True)
    assert all(h <= a for h, a in zip(hat, at, strict=True))
