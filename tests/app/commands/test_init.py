"""``proctor init``: a suite drafted from a real MCP server's tools, loadable and runnable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.scenarios.loader import load_suite
from proctor.scenarios.skeleton import schema_problems
from proctor.store.events import ToolCall, ToolResult
from proctor.store.read.reader import StoreReader
from proctor.store.scores import ScoreName
from tests.fakes import fake_anthropic as fa


def test_init_drafts_one_schema_valid_scenario_per_tool_of_a_stdio_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "suite"
    server = [sys.executable, "-m", "proctor.scenarios.demo.servers.weather"]
    assert main(["init", str(out), "--name", "weather", "--server", *server]) == 0
    assert "2 draft scenarios" in capsys.readouterr().out
    loaded = load_suite(out)
    assert sorted(s.id for s in loaded.scenarios) == ["weather-get_forecast", "weather-list_cities"]
    assert list(loaded.suite.arms) == ["baseline", "weather"]
    forecast = loaded.scenario("weather-get_forecast")
    ((call,),) = forecast.gold_tool_calls
    assert call.tool == "get_forecast" and call.server == "weather" and "city" in call.arguments
    assert forecast.title == "DRAFT: get_forecast"
    assert main(["servers", "check", str(out)]) == 0  # the written config starts the same server
    capsys.readouterr()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert schema_problems(call.arguments, schema) == []


def test_init_with_a_server_that_does_not_start_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["init", str(tmp_path / "s"), "--server", str(tmp_path / "no-such-server")])
    assert code == 2
    assert "did not start" in capsys.readouterr().err
    assert main(["init", str(tmp_path / "s")]) == 2
    assert "--server COMMAND" in capsys.readouterr().err


def test_init_with_a_model_drafts_prompts_and_claims_for_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    draft = {
        "prompt": "Will it rain in Oslo tomorrow?",
        "arguments": {"city": "Oslo"},
        "claims": ["It names Oslo."],
    }
    with fa.FakeAnthropic() as model:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", model.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
        model.enqueue(fa.message_reply(text=["```json\n" + json.dumps(draft) + "\n```"]))
        model.enqueue(fa.message_reply(text=["I cannot help with that."]))
        out = tmp_path / "suite"
        server = [sys.executable, "-m", "proctor.scenarios.demo.servers.weather"]
        args = [
            "init",
            str(out),
            "--name",
            "weather",
            "--model",
            "anthropic:claude-test",
            "--server",
            *server,
        ]
        assert main(args) == 0
        asked = [r.json()["messages"][0]["content"][0]["text"] for r in model.requests]
    first_tool = "get_forecast" if '"name": "get_forecast"' in asked[0] else "list_cities"
    second_tool = ({"get_forecast", "list_cities"} - {first_tool}).pop()
    err = capsys.readouterr().err
    loaded = load_suite(out)
    drafted = loaded.scenario(f"weather-{first_tool}")
    assert drafted.prompt == draft["prompt"] and drafted.claims == draft["claims"]
    assert drafted.title == f"DRAFT: {first_tool} (prompt and claims by anthropic:claude-test)"
    if first_tool == "get_forecast":
        assert drafted.gold_tool_calls[0][0].arguments == {"city": "Oslo"}
    else:
        assert "arguments do not fit the schema" in err
    kept = loaded.scenario(f"weather-{second_tool}")
    assert kept.title == f"DRAFT: {second_tool}" and kept.claims == []
    assert f"tool {second_tool}: anthropic:claude-test gave no usable draft (the reply is not JSON" in err
    assert "<tool>" in asked[0] and "not instructions to you" in model.requests[0].json()["system"]


def test_init_refuses_the_offline_agent_as_a_drafting_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = [sys.executable, "-m", "proctor.scenarios.demo.servers.weather"]
    assert main(["init", str(tmp_path / "s"), "--model", "offline:default", "--server", *server]) == 2
    assert "drafting needs a real model" in capsys.readouterr().err


def test_init_follows_the_refs_of_pydantic_model_parameters_to_calls_the_server_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The schemas are the mcp SDK's own ($defs and $ref per model), and so is the validation:
    # played by offline:gold, each drafted call must come back without an error.
    out, db = tmp_path / "suite", tmp_path / "run.db"
    server = [sys.executable, str(Path(__file__).parents[2] / "fakes" / "pydantic_models_mcp_server.py")]
    assert main(["init", str(out), "--name", "models", "--server", *server]) == 0
    printed = capsys.readouterr()
    assert "need a person" not in printed.out + printed.err
    loaded = load_suite(out)
    calls = {s.gold_tool_calls[0][0].tool: s.gold_tool_calls[0][0].arguments for s in loaded.scenarios}
    assert calls["sort_range"]["sort_by"] == [{"column": "column"}, {"column": "column"}]  # minItems 2
    assert calls["set_settings"]["settings"]["title"] == "titlexxx"  # minLength 8, inside a $ref
    assert "fallback" not in calls["set_settings"]  # optional
    assert calls["count_nodes"] == {"root": {"name": "name"}}  # recursive, children optional
    run = ["run", str(out), "--models", "offline:gold", "--arms", "models", "--headless", "--db", str(db)]
    assert main(run) == 0, capsys.readouterr().err
    with StoreReader(db) as reader:
        events = [e.event for t in reader.trials() for e in reader.trial_events(t.id)]
    results = {e.tool: e for e in events if isinstance(e, ToolResult)}
    assert sorted(results) == ["count_nodes", "set_settings", "sort_range"]
    assert [r.content for r in results.values() if r.is_error] == []
    assert results["count_nodes"].content == "1 node(s) under name"
    assert results["sort_range"].content == "sorted path by column ascending, column ascending"
    # The drafted prompt names the tool and spells its arguments out, objects and lists too: the
    # suite's own model (offline:default, no key) makes each drafted call, and the match says so.
    assert loaded.suite.models == ["offline:default"]
    again = tmp_path / "default.db"
    assert main(["run", str(out), "--arms", "models", "--headless", "--db", str(again)]) == 0
    with StoreReader(again) as reader:
        made = [e.event for t in reader.trials() for e in reader.trial_events(t.id)]
        tfs = [s.value for s in reader.scores(name=ScoreName.TFS)]
    assert {e.tool: e.arguments for e in made if isinstance(e, ToolCall)} == calls
    assert [e.content for e in made if isinstance(e, ToolResult) and e.is_error] == []
    assert tfs == [1.0, 1.0, 1.0]
