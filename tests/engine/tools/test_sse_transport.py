"""Legacy HTTP+SSE servers, made with the mcp SDK's own SSE transport, through proctor's commands."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from proctor.app.cli import main
from proctor.app.commands.servers import check_servers
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.mcp_launch import ServerStartError
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import HttpServer
from proctor.scenarios.workspace import free_port
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow
SERVER = Path(__file__).resolve().parents[2] / "fakes" / "sse_mcp_server.py"


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not _listening(port):
            assert proc.poll() is None and time.monotonic() < deadline, "the SSE server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _config(tmp_path: Path, entry: dict[str, object]) -> Path:
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"servers": {"weather": entry}}))
    return path


async def test_servers_check_lists_a_legacy_sse_servers_tools(tmp_path: Path, sse_url: str) -> None:
    out = Console(width=200, record=True)
    assert await check_servers(_config(tmp_path, {"type": "sse", "url": sse_url}), out)
    text = out.export_text()
    assert "sse" in text and "2: forecast, search" in text


def test_servers_call_reaches_a_tool_over_sse(
    tmp_path: Path, sse_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, {"type": "sse", "url": sse_url})
    assert (
        main(["servers", "call", str(config), "weather", "forecast", "--args", '{"city": "Oslo"}', "--json"])
        == 0
    )
    record = json.loads(capsys.readouterr().out)
    assert record["server"]["name"] == "sse-weather"
    assert record["result"]["content"] == "Oslo: sunny, 21 C"


def test_streamable_http_to_an_sse_server_names_url_status_and_the_fix(
    tmp_path: Path, sse_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one table row per line, so the message reads whole
    config = _config(tmp_path, {"type": "http", "url": sse_url})
    assert main(["servers", "check", str(config)]) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert f"POST {sse_url} answered HTTP 405 Method Not Allowed" in out
    assert "legacy SSE server" in out and '"type": "sse"' in out


async def test_nothing_listening_names_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    conn = McpConnection("gone", HttpServer(url=url, timeout_s=5), tmp_path / "logs")
    with pytest.raises(ServerStartError, match=rf"cannot connect to {url}"):
        await asyncio.wait_for(conn.start(), 30)
    await conn.aclose()


async def test_a_run_whose_arm_uses_an_sse_server_calls_its_tool(tmp_path: Path, sse_url: str) -> None:
    config = _config(tmp_path / "project", {"type": "sse", "url": sse_url})
    suite = tmp_path / "suite"
    (suite / "scenarios").mkdir(parents=True)
    doc = {
        "name": "sse",
        "servers_file": str(config),
        "arms": {"weather": {"servers": ["weather"]}},
        "models": ["offline:default"],
    }
    (suite / "suite.yaml").write_text(yaml.safe_dump(doc))
    scenario = {"id": "oslo", "prompt": "What is tomorrow's forecast for the city Oslo?",
                "keywords": {"required": ["sunny"]}}  # fmt: skip
    (suite / "scenarios" / "oslo.yaml").write_text(yaml.safe_dump(scenario))
    db = tmp_path / "run.db"
    assert await run_suite(load_suite(suite), RunOptions(db=db)) == "finished"
    with StoreReader(db) as r:
        events = [e.event for e in r.events_after(0, limit=10**5)]
    connected = [e for e in events if e.kind == "server_connected"]
    assert [(e.server, e.name) for e in connected] == [("weather", "sse-weather")]  # type: ignore[attr-defined]
    results = [e for e in events if e.kind == "tool_result"]
    assert results and all(not e.is_error for e in results)  # type: ignore[attr-defined]
