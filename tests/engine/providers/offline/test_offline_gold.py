"""``offline:gold`` plays a scenario's gold calls against the real servers and scores 100% on them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.engine.providers.base import ProviderError, ToolOutcome, ToolResults, UserMessage
from proctor.engine.providers.offline.gold import GoldProvider, GoldRequest, exposed_call, gold_plan
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.registry import make_provider
from proctor.engine.tools.toolbox import ToolSpec
from proctor.scenarios.loader import load_suite
from proctor.store.events import FinalAnswer, ToolCall, ToolResult
from proctor.store.read.reader import StoreReader
from proctor.store.scores import ScoreName

DEMO = Path(__file__).resolve().parents[4] / "scenarios" / "demo"
SPEC = ToolSpec("read", "", {"type": "object"}, "fs")


def _demo_copy(tmp_path: Path) -> Path:
    suite = tmp_path / "demo"
    shutil.copytree(DEMO, suite, ignore=shutil.ignore_patterns("__pycache__"))
    return suite


async def test_steps_are_played_in_order_with_a_step_s_calls_in_one_turn() -> None:
    plan = (
        (GoldRequest("read", {"path": "a"}), GoldRequest("read", {"path": "b"})),
        (GoldRequest("read", {"path": "c"}),),
    )
    session = GoldProvider().gold_session("s1", plan)
    messages: list = [UserMessage("whatever the prompt says")]
    first = await session.turn("", messages, [SPEC])
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("read", {"path": "a"}),
        ("read", {"path": "b"}),
    ]
    messages.append(
        ToolResults(
            [ToolOutcome(c.call_id, c.name, f"text of {c.arguments['path']}") for c in first.tool_calls]
        )
    )
    second = await session.turn("", messages, [SPEC])
    assert [(c.name, c.arguments) for c in second.tool_calls] == [("read", {"path": "c"})]
    messages.append(ToolResults([ToolOutcome(second.tool_calls[0].call_id, "read", "boom", is_error=True)]))
    last = await session.turn("", messages, [SPEC])
    assert last.tool_calls == [] and last.stop_reason == "end_turn"
    assert last.text.index("text of a") < last.text.index("text of b") < last.text.index("boom")
    assert 'read {"path": "c"} (error):\nboom' in last.text


def test_the_gold_tool_is_called_by_the_name_the_trial_offers_it_under() -> None:
    gold = GoldRequest("read", {"path": "x"}, server="fs")
    collided = [ToolSpec("fs__read", "", {}, "fs"), ToolSpec("git__read", "", {}, "git")]
    assert exposed_call(gold, collided) == ("fs__read", {"path": "x"})
    routed = [ToolSpec("route", "", {}), ToolSpec("execute", "", {})]
    assert exposed_call(gold, routed) == ("execute", {"tool": "read", "arguments": {"path": "x"}})
    assert exposed_call(gold, []) == ("read", {"path": "x"})  # the toolbox's "unknown tool" says why


def test_gold_is_a_model_name_and_cannot_judge_or_draft() -> None:
    provider = make_provider("offline:gold", PriceTable({}), {})
    assert provider.model_id == "offline:gold"
    with pytest.raises(ProviderError, match="only plays a scenario's gold_tool_calls"):
        provider.session(0)
    with pytest.raises(ProviderError, match="'s9' has no gold_tool_calls"):
        GoldProvider().gold_session("s9", gold_plan([]))


def test_a_scenario_without_gold_calls_stops_the_run_before_any_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _demo_copy(tmp_path)
    scenario = suite / "scenarios" / "03_token_bucket.yaml"
    scenario.write_text(_drop_gold(scenario.read_text()))
    db = tmp_path / "r.db"
    code = main(["run", str(suite), "--headless", "--db", str(db), "--models", "offline:gold"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "03_token_bucket.yaml: scenario '" in err
    assert "field 'gold_tool_calls' is empty, but model offline:gold replays it" in err
    assert not db.exists()


def _drop_gold(text: str) -> str:
    """The scenario without its gold_tool_calls block (the key and its indented lines)."""
    out, skipping = [], False
    for line in text.splitlines():
        if line.startswith("gold_tool_calls:"):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "-")) or not line.strip()):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out) + "\n"


def test_gold_replayed_on_the_demo_s_real_server_scores_full_marks(tmp_path: Path) -> None:
    suite = _demo_copy(tmp_path)
    loaded = load_suite(suite)
    db = tmp_path / "gold.db"
    with_gold = [s.id for s in loaded.scenarios if s.gold_tool_calls]
    args = [
        "run",
        str(suite),
        "--headless",
        "--db",
        str(db),
        "--models",
        "offline:gold",
        "--arms",
        "codeintel",
    ]
    assert main([*args, "--scenarios", ",".join(with_gold)]) == 0
    with StoreReader(db) as reader:
        trials = reader.trials()
        assert len(trials) == len(with_gold) >= 5
        for name in (ScoreName.TFS, ScoreName.TEFS):
            assert {s.value for s in reader.scores(name=name)} == {1.0}, name
        for trial in trials:
            events = [e.event for e in reader.trial_events(trial.id)]
            calls = [(e.tool, e.arguments) for e in events if isinstance(e, ToolCall)]
            gold = [
                (g.tool, g.arguments)
                for step in loaded.scenario(trial.scenario).gold_tool_calls
                for g in step
            ]
            assert calls == gold
            results = [e for e in events if isinstance(e, ToolResult)]
            assert results and not any(r.is_error for r in results)
            (answer,) = [e for e in events if isinstance(e, FinalAnswer)]
            assert all(r.content[:200] in answer.text for r in results)
