"""The tool workbench: a trial's MCP call made again by hand, through the engine serving the run."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import TextArea

from proctor.app.screens.trial import TrialScreen
from proctor.app.screens.workbench import ToolTarget, WorkbenchScreen, parse_arguments, tool_target
from proctor.app.views.transcript_state import CallView
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite, serve_run
from proctor.scenarios.loader import load_suite
from proctor.store.events import ListedTool
from proctor.store.read.reader import StoreReader
from tests.app.helpers import console, screen_text, wait_until
from tests.engine.runs.test_resume_scoring import _suite

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_arguments_are_checked_as_json_and_against_the_schema() -> None:
    assert parse_arguments('{"city": "Lisbon"}', SCHEMA) == ({"city": "Lisbon"}, [])
    assert parse_arguments('{"city": ', SCHEMA)[1] == [
        "arguments: not JSON (Expecting value at line 1, column 10)"
    ]
    assert parse_arguments("[1]", SCHEMA)[1][0].startswith("arguments: give a JSON object")
    assert parse_arguments("{}", SCHEMA)[1] == ["schema: (arguments): 'city' is a required property"]
    assert parse_arguments('{"x": 1}', None) == ({"x": 1}, []), "no schema recorded: JSON is enough"


def test_the_target_is_the_mcp_call_behind_the_router_and_never_a_builtin() -> None:
    listed = {
        "get_forecast": ListedTool(name="get_forecast", server="weather", description="", input_schema=SCHEMA)
    }
    direct = CallView(
        "c1", "weather", "get_forecast", '{"city": "Oslo"}', "ok", False, "weather", "get_forecast"
    )
    assert tool_target(7, direct, listed) == ToolTarget(
        7, "weather", "get_forecast", {"city": "Oslo"}, SCHEMA
    )
    routed = CallView("c2", "proctor-router", "execute", json.dumps({"tool": "get_forecast", "arguments": {"city": "Rome"}}),
                      "ok", False, "weather", "get_forecast")  # fmt: skip
    assert tool_target(7, routed, listed) == ToolTarget(
        7, "weather", "get_forecast", {"city": "Rome"}, SCHEMA
    )
    builtin = CallView(
        "c3", "builtin", "grep", '{"pattern": "x"}', "hit", False, "builtin", "grep", True, True
    )
    assert tool_target(7, builtin, listed) is None
    # a server the user named "builtin" is an MCP server: its calls can be made again
    named = CallView(
        "c5", "builtin", "grep", '{"pattern": "x"}', "hit", False, "builtin", "grep", False, False
    )
    assert tool_target(7, named, listed) == ToolTarget(7, "builtin", "grep", {"pattern": "x"}, None)
    unanswered = CallView("c4", "weather", "get_forecast", '{"city": "Oslo"}')
    assert tool_target(7, unanswered, listed) is None


async def test_w_calls_the_tool_again_through_the_serving_engine(tmp_path: Path) -> None:
    root = _suite(tmp_path / "suite")
    (root / "scenarios" / "lima.yaml").write_text("id: lima\nprompt: get the forecast for Lisbon\n")
    loaded = load_suite(root)
    db = tmp_path / "run.db"
    await run_suite(loaded, RunOptions(db=db, arms=["weather"], scenarios=["lima"]))
    with StoreReader(db) as r:
        (trial,) = r.trials()
        assert trial.tool_calls, "the offline agent calls get_forecast for an imperative prompt"
    async with console(db, engine=lambda: serve_run(db)) as (app, pilot):
        app.open_trial(trial.id)
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen) and app.screen.transcript.loaded)
        screen = app.screen
        assert isinstance(screen, TrialScreen)
        index = next(i for i, e in enumerate(screen.transcript.entries) if e.kind == "tool_call")
        screen.view.select_entry(index)
        await pilot.press("w")
        await wait_until(pilot, lambda: isinstance(app.screen, WorkbenchScreen))
        bench = app.screen
        assert isinstance(bench, WorkbenchScreen)
        assert (bench.target.server, bench.target.tool) == ("weather", "get_forecast")
        assert json.loads(bench.query_one(TextArea).text) == bench.target.arguments, (
            "prefilled as the agent sent them"
        )
        bench.query_one(TextArea).text = "{}"
        await pilot.press("ctrl+s")
        assert "'city' is a required property" in screen_text(app)
        assert bench.request_id == "", "nothing is sent until the arguments are valid"
        bench.query_one(TextArea).text = '{"city": "Tokyo"}'
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bench.recall is not None, limit_s=30, what="the engine's tool_recall")
        await wait_until(pilot, lambda: "raw JSON-RPC result" in screen_text(app))
        assert "weather.get_forecast: ok" in screen_text(app) and "Tokyo" in screen_text(app).title()
    with StoreReader(db) as r:
        assert [e.trial_id for e in r.events_of_kind("tool_recall")] == [None]
