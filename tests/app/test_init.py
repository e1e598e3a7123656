"""``proctor init``: a suite drafted from a real MCP server's tools, loadable and runnable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.scenarios.loader import load_suite
from proctor.scenarios.skeleton import schema_problems


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
