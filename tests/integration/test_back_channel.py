"""The server-everything reference server asks the client for roots, a sampling and an elicitation;
proctor answers each by its policy and records the exchange under the call that caused it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.agent_loop import run_agent
from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool
from proctor.scenarios.schema import Limits, StdioServer
from proctor.store.events import Event, McpNotice, ToolCallRequest, ToolResult
from tests.engine.runs.test_agent_loop import ScriptedSession, _turn

pytestmark = pytest.mark.slow

EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "reference_servers"
    / "node_modules"
    / ".bin"
    / "mcp-server-everything"
)


def _server(tmp_path: Path, sampling: Literal["decline", "model"] = "decline") -> StdioServer:
    assert EVERYTHING.exists(), (
        f"{EVERYTHING} is missing: run `make test`, which installs the reference servers"
    )
    return StdioServer(command=str(EVERYTHING), roots=[str(tmp_path)], sampling=sampling)


async def _agent(
    tmp_path: Path, cfg: StdioServer, tool: str, arguments: dict[str, object], answers: list[str]
) -> list[Event]:
    call = ToolCallRequest(call_id="c1", name=tool, arguments=arguments)
    session = ScriptedSession([_turn(calls=[call]), *(_turn(a) for a in answers)])
    events: list[Event] = []
    pool = ServerPool(tmp_path / "logs")
    try:
        box = await McpToolbox.open(pool, {"every": cfg}, None)
        await run_agent(
            model_id="offline:default",
            session=session,
            toolbox=box,
            prompts=["go"],
            limits=Limits(),
            prices=PriceTable({}),
            emit=events.append,
        )
        await box.aclose()
    finally:
        await pool.aclose()
    return events


def _result(events: list[Event]) -> ToolResult:
    return next(e for e in events if isinstance(e, ToolResult))


def _notices(events: list[Event], method: str) -> list[McpNotice]:
    return [e for e in events if isinstance(e, McpNotice) and e.method == method]


async def test_roots_are_the_declared_directories(tmp_path: Path) -> None:
    events = await _agent(tmp_path, _server(tmp_path), "get-roots-list", {}, ["done"])
    assert tmp_path.as_uri() in _result(events).content
    (asked,) = _notices(events, "roots/list")
    assert asked.answer == tmp_path.as_uri() and asked.call_id == "c1"


async def test_sampling_is_declined_by_default_and_recorded(tmp_path: Path) -> None:
    events = await _agent(
        tmp_path, _server(tmp_path), "trigger-sampling-request", {"prompt": "say hi"}, ["done"]
    )
    result = _result(events)
    assert result.is_error and "proctor declined" in result.content
    (asked,) = _notices(events, "sampling/createMessage")
    assert "say hi" in asked.message and asked.answer.startswith("declined: proctor does not sample")


async def test_sampling_through_the_trials_model_when_the_server_may(tmp_path: Path) -> None:
    events = await _agent(
        tmp_path,
        _server(tmp_path, "model"),
        "trigger-sampling-request",
        {"prompt": "say hi"},
        ["hi from the model", "done"],
    )
    result = _result(events)
    assert not result.is_error and "hi from the model" in result.content
    (asked,) = _notices(events, "sampling/createMessage")
    assert asked.answer == "answered by offline:default: hi from the model"


async def test_elicitation_is_declined_and_recorded(tmp_path: Path) -> None:
    events = await _agent(tmp_path, _server(tmp_path), "trigger-elicitation-request", {}, ["done"])
    assert '"action": "decline"' in _result(events).content
    (asked,) = _notices(events, "elicitation/create")
    assert asked.answer.startswith("declined") and asked.call_id == "c1"
