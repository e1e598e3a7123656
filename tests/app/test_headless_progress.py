"""Headless progress in a CI log: a plain line every few seconds and one at the end, no bar."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console

from proctor.app.headless import HeadlessProgress
from proctor.store.read.reader import TrialRecord


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _trial(status: str) -> Any:
    return SimpleNamespace(status=status)


def test_plain_lines_every_few_seconds_when_not_a_terminal(monkeypatch: Any, tmp_path: Path) -> None:
    out = io.StringIO()
    clock = _Clock()
    progress = HeadlessProgress(Console(file=out, force_terminal=False), clock=clock)
    monkeypatch.setattr("proctor.app.headless.StoreReader", _FakeReader)
    progress.start(SimpleNamespace(options=SimpleNamespace(db=tmp_path / "x.db")), [_trial("queued")] * 3)  # type: ignore[arg-type]
    progress.advance(_trial("finished"))
    clock.now += HeadlessProgress.PLAIN_EVERY_S
    progress.advance(_trial("error"))
    progress.advance(_trial("finished"))
    clock.now += 1
    progress.stop()
    assert out.getvalue().splitlines() == [
        "proctor: 1/4 trials done, 0 errors, 0s elapsed",
        "proctor: 3/4 trials done, 1 errors, 5s elapsed; ETA 2s",
        "proctor: 4/4 trials done, 1 errors, 6s elapsed",
    ]


class _FakeReader:
    def __init__(self, db: Path) -> None:
        pass

    def __enter__(self) -> _FakeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def trials(self) -> list[TrialRecord]:
        return [_trial("finished")] + [_trial("queued")] * 3  # type: ignore[list-item]


def test_plain_progress_says_servers_are_starting_then_gives_an_eta(monkeypatch: Any, tmp_path: Path) -> None:
    out = io.StringIO()
    clock = _Clock()
    progress = HeadlessProgress(Console(file=out, force_terminal=False), clock=clock)
    monkeypatch.setattr("proctor.app.headless.StoreReader", _FakeReader)
    up: set[str] = set()
    arm = SimpleNamespace(servers=["a"], distractors=["b", "c"])
    servers = {n: SimpleNamespace(lifecycle="shared") for n in "abc"}
    run = SimpleNamespace(
        options=SimpleNamespace(db=tmp_path / "x.db", arms=None),
        loaded=SimpleNamespace(suite=SimpleNamespace(arms={"x": arm}), servers=servers),
        pool=SimpleNamespace(shared_started=lambda: set(up)),
    )
    progress.start(run, [_trial("queued")] * 3)  # type: ignore[arg-type]
    up.add("b")
    assert progress.phase() == "servers starting: 1 of 3 ready"
    up.update({"a", "c"})
    clock.now += 10
    progress.advance(_trial("finished"))
    assert progress.phase() == "ETA 20s"  # 10 s for the first trial, two left
    assert out.getvalue().splitlines() == [
        "proctor: 1/4 trials done, 0 errors, 0s elapsed; servers starting: 0 of 3 ready",
        "proctor: 2/4 trials done, 0 errors, 10s elapsed; ETA 20s",
    ]


def test_the_live_bar_shows_the_phase_column(monkeypatch: Any, tmp_path: Path) -> None:
    out = io.StringIO()
    progress = HeadlessProgress(Console(file=out, force_terminal=True, width=120), clock=_Clock())
    monkeypatch.setattr("proctor.app.headless.StoreReader", _FakeReader)
    run = SimpleNamespace(
        options=SimpleNamespace(db=tmp_path / "x.db", arms=None),
        loaded=SimpleNamespace(
            suite=SimpleNamespace(arms={"x": SimpleNamespace(servers=["a"], distractors=[])}),
            servers={"a": SimpleNamespace(lifecycle="shared")},
        ),
        pool=SimpleNamespace(shared_started=set),
    )
    progress.start(run, [_trial("queued")] * 3)  # type: ignore[arg-type]
    progress.stop()
    assert "servers starting: 0 of 1 ready" in out.getvalue()
