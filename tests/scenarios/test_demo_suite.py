"""The bundled demo suite: pinned repository, suite file, and its MCP servers end to end."""

from __future__ import annotations

import asyncio
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from proctor.scenarios.demo import REPO_SOURCE_DIR, SUITE_DIR
from proctor.scenarios.demo.servers.codeintel_tools import IndexView, build_codeintel_server
from proctor.scenarios.loader import LoadedSuite, expand_server, load_suite
from proctor.scenarios.repo import PinnedRepo, materialize
from proctor.scenarios.schema import HttpServer, StdioServer

FAULTY_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "faulty_mcp_server.py"
CODEINTEL_TOOLS = {"search_symbols", "find_definition", "find_references", "read_lines", "list_files"}
EXPECTED_TOOLS = {
    "codeintel": CODEINTEL_TOOLS,
    "codeintel_stale": CODEINTEL_TOOLS,
    "weather": {"get_forecast", "list_cities"},
    "tickets": {"search_tickets", "get_ticket"},
    "handbook": {"search_docs", "read_doc"},
}
DEFINITION_HEADER = re.compile(
    r"^(?P<path>[^:\s]+):(?P<start>\d+)-(?P<end>\d+): (?P<kind>\w+) (?P<name>[\w.]+)$"
)


@pytest.fixture(scope="module")
def suite() -> LoadedSuite:
    return load_suite(SUITE_DIR)


@pytest.fixture(scope="module")
def pinned(tmp_path_factory: pytest.TempPathFactory, suite: LoadedSuite) -> Iterator[PinnedRepo]:
    dest = tmp_path_factory.mktemp("demo-repo")
    materialize(REPO_SOURCE_DIR, dest)
    assert suite.suite.repo is not None
    yield PinnedRepo(dest, suite.suite.repo.commit)


def _env(pinned: PinnedRepo, port: int = 0) -> dict[str, str]:
    return {
        "PYTHON": sys.executable,
        "PROCTOR_REPO": str(pinned.path),
        "PROCTOR_COMMIT": pinned.commit,
        "PROCTOR_PORT": str(port),
    }


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_materialize_gives_the_pinned_sha_in_any_folder(tmp_path: Path, suite: LoadedSuite) -> None:
    assert suite.suite.repo is not None and suite.suite.repo.source == "repo"
    first = materialize(REPO_SOURCE_DIR, tmp_path / "one")
    second = materialize(REPO_SOURCE_DIR, tmp_path / "elsewhere" / "two")
    assert first == second
    assert first == suite.suite.repo.commit, f"repo source changed: pin commit {first} in suite.yaml"


def test_repo_source_is_a_plausible_project() -> None:
    files = [p for p in REPO_SOURCE_DIR.rglob("*") if p.is_file()]
    assert 12 <= len(files) <= 22
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)
    assert 1200 <= lines <= 2000
    assert not any(p.name in (".gitignore", "__pycache__") for p in REPO_SOURCE_DIR.rglob("*"))


def test_suite_loads_with_the_expected_shape(suite: LoadedSuite) -> None:
    s = suite.suite
    assert set(s.arms) == {"baseline", "codeintel", "codeintel+distractors", "codeintel_stale"}
    assert s.arms["baseline"].baseline
    mixed = s.arms["codeintel+distractors"]
    assert mixed.tool_retrieval is not None and mixed.tool_retrieval.top_k == 6
    assert "tickets" in mixed.distractors and len(mixed.distractors) >= 3
    assert s.models == ["offline:default"] and s.judge.model.startswith("offline:")
    http = [name for name, cfg in suite.servers.items() if isinstance(cfg, HttpServer) and cfg.launch]
    assert http == ["tickets"]

    scenarios = suite.scenarios
    assert len(scenarios) == 10
    assert sum(sc.held_out for sc in scenarios) == 2
    assert sum(bool(sc.steps) for sc in scenarios) == 1
    gold = [sc for sc in scenarios if sc.gold_tool_calls]
    assert len(gold) >= 4
    shapes = {(len(g.gold_tool_calls), max(len(step) for step in g.gold_tool_calls)) for g in gold}
    assert (1, 2) in shapes, "no dual-parallel gold (one step of two parallel calls)"
    assert (2, 1) in shapes, "no dual-serial gold (two steps of one call)"
    for sc in scenarios:
        assert 2 <= len(sc.claims) <= 4, sc.id
        assert 2 <= len(sc.rubric) <= 3, sc.id
        assert sc.keywords.required and sc.category, sc.id


async def test_gold_tool_calls_match_the_codeintel_schemas(suite: LoadedSuite, pinned: PinnedRepo) -> None:
    async with Client(build_codeintel_server(pinned, "codeintel", IndexView())) as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        for sc in suite.scenarios:
            for step in sc.gold_tool_calls:
                for call in step:
                    assert call.server in (None, "codeintel"), sc.id
                    schema = schemas[call.tool]
                    assert set(call.arguments) <= set(schema["properties"]), (sc.id, call)
                    assert set(schema.get("required", [])) <= set(call.arguments), (sc.id, call)
                    result = await client.call_tool(call.tool, call.arguments)
                    assert not result.is_error, (sc.id, call, _text(result))


async def test_read_lines_refuses_paths_outside_the_commit(pinned: PinnedRepo) -> None:
    async with Client(build_codeintel_server(pinned, "codeintel", IndexView())) as client:
        for path in ["../../etc/passwd", "/etc/passwd", "tinyq/../../../etc/passwd", "~/.ssh/id_rsa"]:
            result = await client.call_tool("read_lines", {"path": path, "start": 1, "end": 5})
            assert result.is_error and "not allowed" in _text(result), path
            assert "root:" not in _text(result)
        missing = await client.call_tool("read_lines", {"path": "tinyq/nope.py", "start": 1, "end": 5})
        assert missing.is_error and "no file 'tinyq/nope.py'" in _text(missing)
        too_long = await client.call_tool("read_lines", {"path": "tinyq/retry.py", "start": 1, "end": 401})
        assert too_long.is_error and "400" in _text(too_long)


async def _list_and_define(name: str, params: StdioServerParameters) -> tuple[str, set[str], str | None]:
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        definition = None
        if name.startswith("codeintel"):
            result = await client.call_tool("find_definition", {"symbol": "compute_backoff"})
            assert not result.is_error, _text(result)
            definition = _text(result)
        return name, tools, definition


@pytest.mark.slow
async def test_every_stdio_server_starts_and_lists_its_tools(suite: LoadedSuite, pinned: PinnedRepo) -> None:
    env = _env(pinned)
    jobs = []
    for name, cfg in suite.servers.items():
        if isinstance(cfg, HttpServer):
            assert cfg.launch is not None
            cfg = cfg.launch  # the same module serves stdio when no transport is given
            cfg = cfg.model_copy(update={"args": cfg.args[:2]})
        stdio = expand_server(name, cfg, env)
        assert isinstance(stdio, StdioServer)
        params = StdioServerParameters(command=stdio.command, args=stdio.args, env=stdio.env or None)
        jobs.append(_list_and_define(name, params))
    results = await asyncio.wait_for(asyncio.gather(*jobs), timeout=60)

    seen = {name: tools for name, tools, _ in results}
    assert seen == EXPECTED_TOOLS
    definitions = {name: text for name, _, text in results if text is not None}
    real = _definition_line(pinned, "tinyq/retry.py", "compute_backoff")
    good = DEFINITION_HEADER.match(definitions["codeintel"].splitlines()[0])
    stale = DEFINITION_HEADER.match(definitions["codeintel_stale"].splitlines()[0])
    assert good and stale
    assert (good["path"], int(good["start"]), good["name"]) == ("tinyq/retry.py", real, "compute_backoff")
    assert pinned.lines("tinyq/retry.py")[int(good["start"]) - 1].startswith("def compute_backoff(")
    assert abs(int(stale["start"]) - real) > 5
    assert "compute_backoff" not in pinned.lines("tinyq/retry.py")[int(stale["start"]) - 1]


def _definition_line(pinned: PinnedRepo, path: str, name: str) -> int:
    for number, text in enumerate(pinned.lines(path), start=1):
        if re.match(rf"\s*(def|class) {name}\b", text):
            return number
    raise AssertionError(f"{name} not defined in {path}")


@pytest.mark.slow
async def test_http_distractor_serves_streamable_http(suite: LoadedSuite, pinned: PinnedRepo) -> None:
    port = _free_port()
    cfg = expand_server("tickets", suite.servers["tickets"], _env(pinned, port))
    assert isinstance(cfg, HttpServer) and cfg.launch is not None
    assert cfg.url == f"http://127.0.0.1:{port}/mcp"
    proc = await asyncio.create_subprocess_exec(
        cfg.launch.command,
        *cfg.launch.args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(20):
            await _wait_for_port(port, proc)
        async with Client(cfg.url) as client:
            assert {t.name for t in (await client.list_tools()).tools} == EXPECTED_TOOLS["tickets"]
            result = await client.call_tool("search_tickets", {"query": "webhook retry"})
            assert not result.is_error and "SUP-1051" in _text(result)
            missing = await client.call_tool("get_ticket", {"ticket_id": "SUP-9"})
            assert missing.is_error and "SUP-9" in _text(missing)
    finally:
        if proc.returncode is None:
            proc.terminate()
        try:
            async with asyncio.timeout(10):
                await proc.wait()
        except TimeoutError:
            proc.kill()
            await proc.wait()


async def _wait_for_port(port: int, proc: asyncio.subprocess.Process) -> None:
    """Poll until something accepts connections on ``port``; fail fast if the server died."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        assert proc.returncode is None, f"server exited with {proc.returncode}"
        assert asyncio.get_running_loop().time() < deadline, f"nothing listens on port {port} after 30 s"
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return


@pytest.mark.slow
async def test_faulty_server_in_ok_mode_answers() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(FAULTY_SERVER), "--mode", "ok"])
    async with asyncio.timeout(30), Client(params) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["probe"]
        result = await client.call_tool("probe", {"x": "hello"})
        assert not result.is_error and _text(result) == "probe:hello"
