"""Retries for model calls: exponential backoff with jitter under one overall deadline.

The SDKs' own retry loops are disabled (``max_retries=0``) because they honour ``retry-after``
without a cap and know nothing of a trial's deadline. Here every attempt, and every wait
between attempts, runs inside one ``asyncio.timeout``; a server asking us to wait past the
deadline makes us give up at once instead of sleeping into a certain timeout.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from proctor.engine.providers.base import ProviderError

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class Failure:
    """What went wrong with one attempt, in words safe to store (no API key, no request)."""

    error_type: str
    retryable: bool
    message: str
    retry_after_s: float | None = None


Classifier = Callable[[BaseException], "Failure | None"]
"""Maps an exception to a Failure; ``None`` means "not a model-call failure": re-raised as is."""


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: ``base_s * multiplier**n``, capped at ``max_s``, minus up to ``jitter``."""

    base_s: float = 0.5
    multiplier: float = 2.0
    max_s: float = 20.0
    jitter: float = 0.25

    def delay(self, retry_index: int, rng: random.Random) -> float:
        """Wait before retry number ``retry_index`` (0 for the first retry)."""
        ceiling = min(self.max_s, self.base_s * self.multiplier ** min(retry_index, 64))
        return ceiling * (1.0 - self.jitter * rng.random())


@dataclass(frozen=True)
class Attempted(Generic[T]):
    """A successful result and how many retries it took."""

    value: T
    retries: int


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds a server asked us to wait: ``retry-after-ms``, ``retry-after`` seconds or HTTP date."""
    if headers is None:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, float(email.utils.mktime_tz(parsed)) - current)


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    *,
    deadline_s: float,
    max_attempts: int,
    classify: Classifier,
    backoff: Backoff | None = None,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Attempted[T]:
    """Call ``fn`` until it succeeds, a failure is not retryable, attempts run out or the deadline passes.

    Raises ``ProviderError`` (``error_type`` from the last failure, or ``"timeout"`` when the
    deadline passed) with ``retries`` set to the number of retries made.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    policy = backoff or Backoff()
    chance = rng or random.Random()
    started = clock()
    retries = 0
    scope = asyncio.timeout(deadline_s)
    try:
        async with scope:
            while True:
                try:
                    return Attempted(await fn(), retries)
                except Exception as exc:
                    failure = classify(exc)
                    if failure is None:
                        raise
                if not failure.retryable:
                    raise ProviderError(failure.message, error_type=failure.error_type, retries=retries)
                if retries + 1 >= max_attempts:
                    raise ProviderError(
                        f"{failure.message} (gave up after {retries + 1} attempts)",
                        error_type=failure.error_type,
                        retries=retries,
                    )
                wait = failure.retry_after_s
                if wait is None:
                    wait = policy.delay(retries, chance)
                remaining = deadline_s - (clock() - started)
                if wait >= remaining:
                    raise ProviderError(
                        f"{failure.message} (gave up: a retry in {wait:.2f} s would pass the deadline,"
                        f" {max(0.0, remaining):.2f} s left)",
                        error_type=failure.error_type,
                        retries=retries,
                    )
                await sleep(wait)
                retries += 1
    except TimeoutError:
        if not scope.expired():
            raise
        raise ProviderError(
            f"no complete response within the {deadline_s:g} s deadline ({retries} retries)",
            error_type="timeout",
            retries=retries,
        ) from None
