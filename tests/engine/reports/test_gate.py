"""The CI gate: paired fairness deltas against a margin; refusal when nothing is scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.engine.reports.error_causes import ErrorCause
from proctor.engine.reports.gate import (
    TOOLS_NOT_OFFERED_CAUSE,
    FairnessSample,
    GateInputError,
    decide,
    format_table,
    load_fairness,
)
from proctor.store.events import Scored
from proctor.store.read.reader import StoreReader
from proctor.store.write.writer import StoreWriter, TrialRow


def _samples(arm: str, values: list[float], model: str = "m", epoch: int = 0) -> list[FairnessSample]:
    return [FairnessSample(f"s{i}", arm, model, epoch, v) for i, v in enumerate(values)]


BASE = _samples("baseline", [0.4, 0.5, 0.6])


def test_an_arm_passes_when_its_paired_mean_gain_reaches_the_margin() -> None:
    result = decide(
        BASE + _samples("good", [0.5, 0.6, 0.7]) + _samples("flat", [0.4, 0.5, 0.6]),
        baseline="baseline",
        min_delta=0.1,
    )
    flat, good = result.arms  # arms in name order
    assert (good.arm, good.pairs, good.passed) == ("good", 3, True)
    assert (
        good.delta == pytest.approx(0.1)
        and good.baseline_mean == pytest.approx(0.5)
        and good.arm_mean == pytest.approx(0.6)
    )
    assert good.ci_low == pytest.approx(0.1) and good.ci_high == pytest.approx(0.1)
    assert (flat.passed, flat.delta) == (False, pytest.approx(0.0))
    assert not result.passed
    assert decide(BASE + _samples("flat", [0.4, 0.5, 0.6]), baseline="baseline", min_delta=0.0).passed


def test_only_paired_trials_count() -> None:
    arm = [
        FairnessSample("s0", "mcp", "m", 0, 0.9),
        FairnessSample("s9", "mcp", "m", 0, 0.0),
        FairnessSample("s1", "mcp", "m", 1, 0.0),
    ]
    (r,) = decide(BASE + arm, baseline="baseline", min_delta=0.4).arms
    assert r.pairs == 1 and r.delta == pytest.approx(0.5) and r.passed


def test_model_and_arm_filters() -> None:
    samples = (
        BASE
        + _samples("mcp", [0.9, 0.9, 0.9])
        + _samples("baseline", [0.9], model="big")
        + _samples("mcp", [0.1], model="big")
    )
    assert decide(samples, baseline="baseline", min_delta=0.2, models=["m"]).passed
    assert not decide(samples, baseline="baseline", min_delta=0.2, models=["big"]).passed
    only = decide(
        samples + _samples("other", [0.0, 0.0, 0.0]),
        baseline="baseline",
        min_delta=0.2,
        arms=["mcp"],
        models=["m"],
    )
    assert [a.arm for a in only.arms] == ["mcp"] and only.passed


def test_an_arm_without_pairs_fails() -> None:
    (r,) = decide(BASE + _samples("mcp", [0.9], model="other"), baseline="baseline", min_delta=0.0).arms
    assert (r.pairs, r.passed, r.reason) == (0, False, "no trial paired with the baseline")


@pytest.mark.parametrize(
    ("samples", "kwargs", "message"),
    [
        ([], {}, "no scored trials"),
        (BASE, {"models": ["nope"]}, "no scored trials for model"),
        (_samples("mcp", [0.5]), {}, "baseline arm 'baseline' has no scored trials; arms with scores: mcp"),
        (BASE, {}, "only the baseline arm"),
        (BASE + _samples("mcp", [0.5]), {"arms": ["typo"]}, "arm\\(s\\) typo have no scored trials"),
    ],
)
def test_refusals(samples: list[FairnessSample], kwargs: dict[str, list[str]], message: str) -> None:
    with pytest.raises(GateInputError, match=message):
        decide(samples, baseline="baseline", min_delta=0.0, **kwargs)  # type: ignore[arg-type]


def test_table_lists_each_arm_and_the_verdict() -> None:
    table = format_table(decide(BASE + _samples("mcp", [0.3, 0.4, 0.5]), baseline="baseline", min_delta=0.05))
    assert "mcp" in table and "-0.100" in table and "FAIL" in table
    assert table.splitlines()[-1] == "gate: FAILED"


async def test_fairness_is_read_from_the_store(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await StoreWriter.open(db)
    try:
        await w.create_run("r", "s", {})
        await w.add_trials("r", [TrialRow("s1", "baseline", "m", 0, 1), TrialRow("s1", "mcp", "m", 0, 1)])
        with StoreReader(db) as reader:
            ids = {t.arm: t.id for t in reader.trials()}
        w.emit("r", Scored(name="fairness", value=0.5, details={}), trial_id=ids["baseline"])
        w.emit("r", Scored(name="fairness", value=0.8, details={}), trial_id=ids["mcp"])
        w.emit("r", Scored(name="adoption", value=0.9, details={}), trial_id=ids["mcp"])
    finally:
        await w.close()
    assert sorted(load_fairness(db), key=lambda s: s.arm) == [
        FairnessSample("s1", "baseline", "m", 0, 0.5),
        FairnessSample("s1", "mcp", "m", 0, 0.8),
    ]


def test_errored_trials_fail_their_arm_and_a_baseline_with_errors_fails_every_arm() -> None:
    samples = BASE + _samples("good", [0.9, 0.9, 0.9])
    result = decide(samples, baseline="baseline", min_delta=0.0, errored={"good": 2})
    (good,) = result.arms
    assert not good.passed and good.reason.startswith("2 good trial(s) errored")
    (good,) = decide(samples, baseline="baseline", min_delta=0.0, errored={"baseline": 1}).arms
    assert not good.passed and "1 baseline trial(s) errored" in good.reason
    assert decide(samples, baseline="baseline", min_delta=0.0, errored={}).passed


def test_trials_without_the_gold_calls_tools_are_never_called_the_cause_of_errors() -> None:
    samples = BASE + _samples("good", [0.9, 0.9, 0.9])
    causes = [
        ErrorCause("server 'fs' did not start", 1, ("baseline",), "server 'fs' did not start"),
        ErrorCause(TOOLS_NOT_OFFERED_CAUSE, 4, ("baseline",), TOOLS_NOT_OFFERED_CAUSE),
    ]
    (good,) = decide(samples, baseline="baseline", min_delta=0.0, errored={"baseline": 1}, causes=causes).arms
    assert "1 baseline trial(s) errored (server 'fs' did not start)" in good.reason
    assert TOOLS_NOT_OFFERED_CAUSE not in good.reason
    with pytest.raises(GateInputError, match="4 trials: the arm does not offer the tools"):
        decide(BASE, baseline="baseline", min_delta=0.0, causes=causes)
