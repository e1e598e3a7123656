"""Both backends claim jobs in the same order and never hand one out twice."""

from __future__ import annotations

import pytest

from ..job import Job, JobState
from ..storage import MemoryStorage, SqliteStorage, Storage


@pytest.fixture(params=["memory", "sqlite"])
def storage(request: pytest.FixtureRequest) -> Storage:
    if request.param == "memory":
        return MemoryStorage()
    return SqliteStorage(":memory:")


def test_claim_takes_highest_priority_due_job(storage: Storage) -> None:
    storage.put(Job(task="late", run_at=100.0, priority=9))
    storage.put(Job(task="normal", run_at=1.0))
    storage.put(Job(task="urgent", run_at=2.0, priority=5))
    first = storage.claim_next("default", now=10.0)
    assert first is not None and first.task == "urgent"
    assert first.state is JobState.RUNNING and first.attempts == 1


def test_a_claimed_job_is_not_claimed_again(storage: Storage) -> None:
    storage.put(Job(task="only"))
    assert storage.claim_next("default", now=1.0) is not None
    assert storage.claim_next("default", now=1.0) is None


def test_dead_letters_and_purge(storage: Storage) -> None:
    job = Job(task="boom")
    storage.put(job.started().dead("RuntimeError: boom"))
    assert [j.task for j in storage.dead_letters()] == ["boom"]
    assert storage.purge({JobState.DEAD}) == 1
    assert storage.counts()[JobState.DEAD] == 0
