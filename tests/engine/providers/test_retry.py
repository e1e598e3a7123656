"""call_with_retries, Backoff, parse_retry_after and the shared failure rules (no network)."""

from __future__ import annotations

import asyncio
import email.utils
import random

import httpx2
import pytest

from proctor.engine.providers.base import ProviderError
from proctor.engine.providers.retry import Backoff, Failure, call_with_retries, parse_retry_after
from proctor.engine.providers.sdk_errors import (
    IncompleteStreamError,
    failure_for_status,
    failure_for_stream_error,
    failure_for_transport,
    redact,
    wire_error_fields,
)
from tests.fakes.recording_sleep import RecordingSleep

NO_JITTER = Backoff(base_s=1.0, multiplier=2.0, max_s=5.0, jitter=0.0)


class Boom(Exception):
    def __init__(self, failure: Failure | None) -> None:
        super().__init__("boom")
        self.failure = failure


def classify(exc: BaseException) -> Failure | None:
    return exc.failure if isinstance(exc, Boom) else None


class Script:
    """Raises the scripted failures in order, then returns ``"ok"``."""

    def __init__(self, *failures: Failure | None) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise Boom(self.failures.pop(0))
        return "ok"


def transient(retry_after_s: float | None = None) -> Failure:
    return Failure("server_error", True, "HTTP 500", retry_after_s)


class FakeClock:
    """Time that moves only when the injected sleep sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.delays: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.delays.append(delay)
        self.now += delay


async def test_first_success_has_no_retries() -> None:
    fn = Script()
    result = await call_with_retries(fn, deadline_s=5, max_attempts=3, classify=classify)
    assert (result.value, result.retries, fn.calls) == ("ok", 0, 1)


async def test_transient_failures_back_off_exponentially_then_succeed() -> None:
    fn = Script(transient(), transient(), transient())
    clock = FakeClock()
    result = await call_with_retries(
        fn,
        deadline_s=100,
        max_attempts=5,
        classify=classify,
        backoff=NO_JITTER,
        sleep=clock.sleep,
        clock=clock,
    )
    assert (result.value, result.retries, fn.calls) == ("ok", 3, 4)
    assert clock.delays == [1.0, 2.0, 4.0]


async def test_retry_after_replaces_backoff() -> None:
    fn = Script(transient(retry_after_s=0.25))
    sleep = RecordingSleep()
    result = await call_with_retries(
        fn, deadline_s=10, max_attempts=3, classify=classify, backoff=NO_JITTER, sleep=sleep
    )
    assert result.retries == 1
    assert sleep.delays == [0.25]


async def test_retry_after_past_the_deadline_gives_up_at_once() -> None:
    fn = Script(Failure("rate_limited", True, "HTTP 429", 30.0))
    sleep = RecordingSleep()
    with pytest.raises(ProviderError) as caught:
        await call_with_retries(fn, deadline_s=2, max_attempts=5, classify=classify, sleep=sleep)
    assert caught.value.error_type == "rate_limited"
    assert caught.value.retries == 0
    assert sleep.delays == []
    assert fn.calls == 1


async def test_backoff_that_would_pass_the_deadline_gives_up() -> None:
    fn = Script(transient(), transient(), transient())
    clock = FakeClock()
    backoff = Backoff(base_s=4.0, multiplier=2.0, max_s=60.0, jitter=0.0)
    with pytest.raises(ProviderError) as caught:
        await call_with_retries(
            fn,
            deadline_s=10,
            max_attempts=9,
            classify=classify,
            backoff=backoff,
            sleep=clock.sleep,
            clock=clock,
        )
    assert clock.delays == [4.0]
    assert caught.value.retries == 1
    assert all(delay < 10 for delay in clock.delays)


async def test_final_failure_is_not_retried() -> None:
    fn = Script(Failure("auth", False, "HTTP 401"))
    sleep = RecordingSleep()
    with pytest.raises(ProviderError) as caught:
        await call_with_retries(fn, deadline_s=5, max_attempts=5, classify=classify, sleep=sleep)
    assert (caught.value.error_type, caught.value.retries, fn.calls) == ("auth", 0, 1)
    assert sleep.delays == []


async def test_attempts_run_out() -> None:
    fn = Script(*[Failure("overloaded", True, "HTTP 529")] * 10)
    sleep = RecordingSleep()
    with pytest.raises(ProviderError) as caught:
        await call_with_retries(
            fn, deadline_s=50, max_attempts=3, classify=classify, backoff=NO_JITTER, sleep=sleep
        )
    assert (caught.value.error_type, caught.value.retries, fn.calls) == ("overloaded", 2, 3)
    assert "3 attempts" in str(caught.value)
    assert caught.value.__cause__ is None


async def test_deadline_stops_a_hanging_call() -> None:
    async def hang() -> str:
        await asyncio.Event().wait()
        return "never"

    with pytest.raises(ProviderError) as caught:  # without the deadline, the call never ends
        await asyncio.wait_for(
            call_with_retries(hang, deadline_s=0.05, max_attempts=3, classify=classify), 60
        )
    assert caught.value.error_type == "timeout"


async def test_unclassified_exceptions_propagate_unchanged() -> None:
    fn = Script(None)
    with pytest.raises(Boom):
        await call_with_retries(fn, deadline_s=5, max_attempts=3, classify=classify)

    async def own_timeout() -> str:
        raise TimeoutError("from inside")

    with pytest.raises(TimeoutError, match="from inside"):
        await call_with_retries(own_timeout, deadline_s=5, max_attempts=3, classify=classify)


async def test_max_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError):
        await call_with_retries(Script(), deadline_s=5, max_attempts=0, classify=classify)


def test_backoff_grows_caps_and_jitters_downwards() -> None:
    rng = random.Random(7)
    assert [NO_JITTER.delay(n, rng) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    jittery = Backoff(base_s=1.0, multiplier=2.0, max_s=100.0, jitter=0.25)
    delays = [jittery.delay(3, rng) for _ in range(200)]
    assert all(6.0 <= d <= 8.0 for d in delays)
    assert len(set(delays)) > 1


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 12, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(12.0)
    assert parse_retry_after({"retry-after": "-4"}) == 0.0


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [
        (429, "rate_limited", True),
        (500, "server_error", True),
        (502, "server_error", True),
        (503, "server_error", True),
        (504, "server_error", True),
        (529, "overloaded", True),
        (408, "timeout", True),
        (400, "bad_request", False),
        (401, "auth", False),
        (403, "permission", False),
        (404, "not_found", False),
        (501, "server_error", False),
        (418, "client_error", False),
    ],
)
def test_status_rules(status: int, error_type: str, retryable: bool) -> None:
    failure = failure_for_status(
        "x", status, wire_type=None, wire_code=None, detail="d", headers={"retry-after": "2"}, secrets=()
    )
    assert (failure.error_type, failure.retryable) == (error_type, retryable)
    if retryable:
        assert failure.retry_after_s == 2.0


def test_spend_limit_429_is_final() -> None:
    failure = failure_for_status(
        "x",
        429,
        wire_type="rate_limit_error",
        wire_code="insufficient_quota",
        detail="d",
        headers=None,
        secrets=(),
    )
    assert (failure.error_type, failure.retryable) == ("quota", False)


def test_stream_error_rules() -> None:
    assert failure_for_stream_error("x", wire_type="overloaded_error", detail="d", secrets=()).retryable
    assert failure_for_stream_error("x", wire_type="api_error", detail="d", secrets=()).retryable
    final = failure_for_stream_error("x", wire_type="invalid_request_error", detail="d", secrets=())
    assert (final.error_type, final.retryable) == ("stream_error", False)


def test_transport_rules() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/")
    timeout = failure_for_transport("x", httpx2.ReadTimeout("slow", request=request))
    dropped = failure_for_transport("x", httpx2.RemoteProtocolError("peer closed", request=request))
    cut = failure_for_transport("x", IncompleteStreamError("no stop"))
    assert timeout is not None and (timeout.error_type, timeout.retryable) == ("timeout", True)
    assert dropped is not None and (dropped.error_type, dropped.retryable) == ("connection", True)
    assert cut is not None and (cut.error_type, cut.retryable) == ("stream_error", True)
    assert failure_for_transport("x", ValueError("bug")) is None


def test_redact_removes_key_fragments_and_caps_length() -> None:
    key = "sk-ant-api03-SECRETSECRETSECRET"
    text = redact(f"bad key {key}; hint sk-proj-abc***wxyz; header Bearer {key}", [key])
    assert key not in text
    assert "SECRET" not in text
    assert "sk-proj-abc" not in text
    assert "[redacted: " in text
    assert len(redact("y" * 5000, [])) <= 301


def test_wire_error_fields_shapes() -> None:
    assert wire_error_fields({"type": "error", "error": {"type": "t", "message": "m"}}) == ("t", None, "m")
    assert wire_error_fields({"type": "t", "code": "c", "message": "m"}) == ("t", "c", "m")
    assert wire_error_fields("plain") == (None, None, "plain")
    assert wire_error_fields(None) == (None, None, None)
