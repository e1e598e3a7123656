"""The tools screen (4): per arm and tool, calls, errors, latency and size; never-called tools."""

from __future__ import annotations

from proctor.app.screens.tools import ToolsScreen, tool_lines
from proctor.engine.reports.tool_usage import ArmToolUsage, NeverCalled, ToolStats
from tests.app.fixture_store import Fixture
from tests.app.helpers import console, screen_text, wait_until


def test_rows_name_every_figure_and_list_never_called_tools() -> None:
    grep = ToolStats("fs", "grep", True, 3, 4, 4, 1, 0, 0.012, 0.2, 4000, 0, 3)
    usage = [ArmToolUsage("mcp", "m", 3, 2, (grep,), (NeverCalled("fs", "[b]write[/b]", 3),))]
    lines = [line.plain for line in tool_lines(usage)]
    assert lines[0] == "mcp · m · 3 trials, 2 tools offered"
    assert lines[2].split() == ["fs/grep", "4", "1", "25%", "12", "200", "1,000", "3"]
    assert lines[3] == "offered but never called (1): fs/[b]write[/b]", "tool names are text, not markup"
    assert [line.plain for line in tool_lines([])] == ["no tool calls recorded yet"]


def test_with_definition_tokens_each_row_and_the_never_called_say_what_they_cost() -> None:
    grep = ToolStats("fs", "grep", True, 3, 4, 4, 1, 0, 0.012, 0.2, 4000, 0, 3)
    usage = [
        ArmToolUsage("mcp", "m", 3, 3, (grep,), (NeverCalled("fs", "write", 3), NeverCalled("fs", "move", 3)))
    ]
    lines = [
        line.plain
        for line in tool_lines(usage, {("fs", "grep"): 85, ("fs", "write"): 90, ("fs", "move"): 107})
    ]
    assert lines[1].split()[-2:] == ["def", "tok"]
    assert lines[2].split()[-1] == "85"
    assert lines[3] == "offered but never called (2, 197 definition tokens per turn): fs/write, fs/move"


async def test_4_opens_the_tools_of_every_arm(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("4")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolsScreen))
        await wait_until(pilot, lambda: "grep" in screen_text(app), what="tool rows")
        text = screen_text(app)
        assert "mcp-good · offline:default" in text and "server/tool" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolsScreen))
