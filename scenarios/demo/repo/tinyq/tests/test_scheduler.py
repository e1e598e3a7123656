"""Scheduler ordering: due time, then priority, then FIFO."""

from __future__ import annotations

from ..clock import ManualClock
from ..job import Job
from ..scheduler import Scheduler


def test_jobs_come_out_when_due() -> None:
    clock = ManualClock()
    s = Scheduler(clock)
    s.schedule(Job(task="a"), delay=5)
    assert s.pop_due() is None
    assert s.next_due_in() == 5
    clock.advance(5)
    job = s.pop_due()
    assert job is not None and job.task == "a"


def test_priority_then_fifo_among_jobs_due_together() -> None:
    s = Scheduler(ManualClock())
    for name, prio in [("low", 0), ("high", 9), ("low2", 0)]:
        s.schedule(Job(task=name, priority=prio))
    assert [j.task for j in s.drain_due()] == ["high", "low", "low2"]


def test_cancelled_jobs_are_skipped() -> None:
    s = Scheduler(ManualClock())
    doomed = s.schedule(Job(task="x"))
    s.schedule(Job(task="y"))
    s.cancel(doomed.id)
    assert [j.task for j in s.drain_due()] == ["y"]
    assert len(s) == 0


def test_reschedule_moves_a_job_later() -> None:
    clock = ManualClock()
    s = Scheduler(clock)
    job = s.schedule(Job(task="x"))
    s.reschedule(job.id, 10.0)
    assert s.pop_due() is None
    clock.advance(10)
    assert s.pop_due() is not None
