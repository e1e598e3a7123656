"""Backoff arithmetic and retry decisions."""

from __future__ import annotations

import random

import pytest

from ..errors import PermanentJobError
from ..retry import MAX_RETRY_DELAY, RetryPolicy, compute_backoff, compute_backoff_jitter


def test_backoff_doubles_from_the_base_delay() -> None:
    assert [compute_backoff(n) for n in range(1, 5)] == [0.5, 1.0, 2.0, 4.0]


def test_backoff_is_capped_at_the_max_retry_delay() -> None:
    assert compute_backoff(50) == MAX_RETRY_DELAY
    assert compute_backoff(10_000) == MAX_RETRY_DELAY


def test_attempt_numbers_start_at_one() -> None:
    with pytest.raises(ValueError):
        compute_backoff(0)


def test_jitter_stays_within_the_spread() -> None:
    rng = random.Random(7)
    for _ in range(200):
        assert 9.0 <= compute_backoff_jitter(10.0, rng, 0.1) <= 11.0


def test_policy_never_retries_permanent_errors() -> None:
    policy = RetryPolicy(max_attempts=3)
    assert policy.should_retry(1, ValueError("flaky"))
    assert not policy.should_retry(1, PermanentJobError("bad input"))
    assert not policy.should_retry(3, ValueError("flaky"))


def test_next_delay_with_jitter_respects_max_delay() -> None:
    policy = RetryPolicy(max_delay=5.0, jitter=0.5)
    rng = random.Random(1)
    assert all(policy.next_delay(20, rng) <= 5.0 for _ in range(50))


def test_max_delay_above_the_global_cap_is_rejected() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_delay=MAX_RETRY_DELAY + 1)
