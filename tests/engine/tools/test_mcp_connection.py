from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import time
from pathlib import Path

import pytest

from proctor.engine.tools import mcp_connection
from proctor.engine.tools.mcp_connection import MAX_RESTARTS
from proctor.engine.tools.mcp_launch import ServerStartError
from proctor.engine.tools.mcp_toolbox import MAX_START_FAILURES, McpToolbox, ServerPool
from proctor.scenarios.loader import SuiteError, load_suite
from proctor.scenarios.schema import StdioServer
from proctor.scenarios.workspace import TRIAL_DIR_MARK, Workspace
from tests.engine.mcp_helpers import FAKES, child_pids, faulty

pytestmark = pytest.mark.slow


async def _toolbox(tmp_path: Path, cfg: StdioServer, name: str = "faulty") -> tuple[ServerPool, McpToolbox]:
    pool = ServerPool(tmp_path / "logs")
    return pool, await McpToolbox.open(pool, {name: cfg}, None)


async def test_ok_round_trip_over_stdio(tmp_path: Path) -> None:
    pool, tb = await _toolbox(tmp_path, faulty("ok"))
    try:
        assert [s.name for s in tb.specs()] == ["probe"]
        out = await tb.call("probe", {"x": "hi"})
        assert (out.content, out.is_error, out.server) == ("probe:hi", False, "faulty")
        bad = await tb.call("nope", {})
        assert bad.is_error and bad.error_type == "unknown_tool" and "probe" in bad.content
    finally:
        await pool.aclose()


async def test_crash_becomes_error_and_server_is_restarted_a_bounded_number_of_times(tmp_path: Path) -> None:
    pool, tb = await _toolbox(tmp_path, faulty("crash"))
    try:
        kinds = [(await tb.call("probe", {"x": str(i)})).error_type for i in range(MAX_RESTARTS + 2)]
        assert kinds[0] == "server_crashed"
        assert all(k in ("server_crashed", "server_unavailable") for k in kinds)
        assert kinds[-1] == "server_unavailable"
    finally:
        await pool.aclose()
    assert child_pids() == set()


async def test_hang_times_out_within_the_per_call_timeout(tmp_path: Path) -> None:
    pool, tb = await _toolbox(tmp_path, faulty("hang", timeout_s=0.5))
    try:
        start = time.perf_counter()
        out = await tb.call("probe", {"x": "1"})
        assert out.is_error and out.error_type == "timeout"
        assert time.perf_counter() - start < 5
    finally:
        await pool.aclose()
    assert child_pids() == set()


async def test_garbage_on_stdout_does_not_break_the_client(tmp_path: Path) -> None:
    pool, tb = await _toolbox(tmp_path, faulty("garbage"))
    try:
        out = await tb.call("probe", {"x": "g"})
        assert out.content == "probe:g" or out.is_error
        again = await tb.call("probe", {"x": "h"})
        assert again.content == "probe:h" or again.is_error
    finally:
        await pool.aclose()


async def test_garbage_then_death_is_a_recorded_error(tmp_path: Path) -> None:
    cfg = StdioServer(
        command=sys.executable,
        args=[str(FAKES / "faulty_mcp_server.py"), "--mode", "garbage", "--garbage-then", "die"],
    )
    pool, tb = await _toolbox(tmp_path, cfg)
    try:
        out = await tb.call("probe", {"x": "g"})
        assert out.is_error and out.error_type in ("server_crashed", "protocol_error")
    finally:
        await pool.aclose()
    assert child_pids() == set()


async def test_huge_result_arrives_whole(tmp_path: Path) -> None:
    pool, tb = await _toolbox(tmp_path, faulty("huge"))
    try:
        out = await tb.call("probe", {"x": "1"})
        assert not out.is_error and len(out.content) == 5 * 1024 * 1024
    finally:
        await pool.aclose()


async def test_exit_on_start_is_a_start_error_naming_the_server(tmp_path: Path) -> None:
    pool = ServerPool(tmp_path / "logs")
    with pytest.raises(ServerStartError, match="faulty"):
        await McpToolbox.open(pool, {"faulty": faulty("exit_on_start")}, None)
    await pool.aclose()
    assert child_pids() == set()


async def test_stderr_is_captured_to_the_run_log(tmp_path: Path) -> None:
    pool, tb = await _toolbox(tmp_path, faulty("stderr_noise"))
    try:
        await tb.call("probe", {"x": "1"})
    finally:
        await pool.aclose()
    log = (tmp_path / "logs" / "faulty.stderr.log").read_text()
    assert "faulty server noise 0 on call 1" in log


async def test_children_get_no_api_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret-value-123456")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value-abcdefgh")
    cfg = StdioServer(command=sys.executable, args=[str(FAKES / "env_mcp_server.py")], env={"EXPLICIT": "1"})
    pool, tb = await _toolbox(tmp_path, cfg, "env")
    try:
        names = (await tb.call("env_names", {})).content.split()
    finally:
        await pool.aclose()
    assert "EXPLICIT" in names
    assert "ANTHROPIC_API_KEY" not in names and "OPENAI_API_KEY" not in names


async def test_concurrent_calls_share_one_process(tmp_path: Path) -> None:
    pool, tb = await _toolbox(tmp_path, faulty("ok"))
    try:
        outs = await asyncio.gather(*(tb.call("probe", {"x": str(i)}) for i in range(50)))
        assert [o.content for o in outs] == [f"probe:{i}" for i in range(50)]
        assert len(child_pids()) == 1
    finally:
        await pool.aclose()
    assert child_pids() == set()


async def test_per_trial_lifecycle_starts_a_fresh_process(tmp_path: Path) -> None:
    pool = ServerPool(tmp_path / "logs")
    cfg = faulty("ok", lifecycle="per_trial")
    a = await McpToolbox.open(pool, {"f": cfg}, None)
    b = await McpToolbox.open(pool, {"f": cfg}, None)
    assert len(child_pids()) == 2
    await a.aclose()
    assert len(child_pids()) == 1
    await b.aclose()
    await pool.aclose()
    assert child_pids() == set()


@pytest.mark.parametrize("reply", ["garbage", "shape"])
async def test_invalid_json_rpc_without_an_answer_is_a_protocol_error_not_a_timeout(
    tmp_path: Path, reply: str
) -> None:
    cfg = StdioServer(
        command=sys.executable, args=[str(FAKES / "broken_jsonrpc_server.py"), "--reply", reply], timeout_s=60
    )
    pool, tb = await _toolbox(tmp_path, cfg)
    try:
        out = await asyncio.wait_for(tb.call("probe", {"x": "g"}), 30)
        assert out.is_error and out.error_type == "protocol_error", out
        assert "invalid JSON-RPC" in out.content
    finally:
        await pool.aclose()


async def test_a_server_that_never_answers_initialize_is_not_retried_for_every_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_connection, "START_TIMEOUT_S", 0.5)
    cfg = StdioServer(
        command=sys.executable,
        args=[str(FAKES / "broken_jsonrpc_server.py"), "--reply", "silent"],
        lifecycle="per_trial",
    )
    pool = ServerPool(tmp_path / "logs")
    messages = []
    try:
        for _ in range(MAX_START_FAILURES + 2):
            with pytest.raises(ServerStartError) as info:
                await pool.acquire("silent", cfg)
            messages.append(str(info.value))
    finally:
        await pool.aclose()
    assert all("no MCP handshake" in m for m in messages)
    assert ["not tried again" in m for m in messages] == [False] * MAX_START_FAILURES + [True, True]


async def test_per_trial_servers_get_a_fresh_scratch_folder_removed_after_the_trial(tmp_path: Path) -> None:
    cfg = StdioServer(
        command=sys.executable,
        args=[str(FAKES / "scratch_mcp_server.py"), TRIAL_DIR_MARK],
        lifecycle="per_trial",
    )
    pool = ServerPool(tmp_path / "logs")
    folders = []
    try:
        for _ in range(2):
            tb = await McpToolbox.open(pool, {"scratch": cfg}, None)
            first = (await tb.call("bump", {})).content.split(" ", 1)
            second = (await tb.call("bump", {})).content.split(" ", 1)
            assert (first[0], second[0]) == ("1", "2"), "state is kept within a trial"
            folders.append(Path(first[1]))
            assert folders[-1].is_dir()
            await tb.aclose()
            assert not folders[-1].exists(), "the trial's folder goes with it"
    finally:
        await pool.aclose()
    assert folders[0] != folders[1]


def test_proctor_trial_dir_on_a_shared_server_is_refused(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "suite.yaml").write_text(
        "name: t\nmcpServers:\n  s: {command: x, args: ['${PROCTOR_TRIAL_DIR}']}\narms:\n  a: {servers: [s]}\n"
    )
    (tmp_path / "scenarios" / "one.yaml").write_text("id: one\nprompt: hi\n")
    loaded = load_suite(tmp_path)
    with pytest.raises(SuiteError, match="needs 'lifecycle: per_trial'"):
        Workspace.prepare(loaded).servers_for(["s"], loaded.scenarios[0])


async def test_images_resource_links_and_structured_only_results_are_kept_as_labelled_text(
    tmp_path: Path,
) -> None:
    cfg = StdioServer(command=sys.executable, args=[str(FAKES / "content_mcp_server.py")])
    pool, tb = await _toolbox(tmp_path, cfg, "content")
    try:
        picture = await tb.call("picture", {})
        assert not picture.is_error, picture
        assert picture.content.splitlines() == [
            "[image image/png, 300 bytes]",
            "[resource link file:///repo/README.md (README.md, text/markdown)]",
        ]
        stats = await tb.call("stats", {})
        assert not stats.is_error and stats.structured == {"files": 3, "lines": 120}
        assert '"lines": 120' in stats.content
    finally:
        await pool.aclose()


@pytest.mark.parametrize(
    ("on_list", "said"),
    [
        ("die", "could not list its tools: MCPError: Connection closed"),
        ("deep", "could not list its tools: no answer within 2s"),  # the SDK drops the line it cannot parse
    ],
)
async def test_a_server_that_fails_tools_list_after_its_handshake_does_not_start_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_list: str, said: str
) -> None:
    # Both used to escape as an uncaught MCPError (die) or wait for ever (deep): `proctor init`
    # against such a server printed a traceback, or hung.
    monkeypatch.setattr(mcp_connection, "START_TIMEOUT_S", 2.0)
    raw = FAKES / "raw_stdio_server.py"
    cfg = StdioServer(command=sys.executable, args=[str(raw), "--marker", "x", "--on-list", on_list])
    pool = ServerPool(tmp_path / "logs")
    try:
        with pytest.raises(ServerStartError) as info:
            await asyncio.wait_for(pool.acquire("raw", cfg), 20)
    finally:
        await pool.aclose()
    assert said in str(info.value)
    assert child_pids() == set()


async def test_proctor_introduces_itself_to_a_server_by_its_own_name_and_version(tmp_path: Path) -> None:
    # The SDK's default clientInfo is {"name": "mcp", "version": "0.1.0"}: a server's logs and
    # analytics then cannot tell proctor from any other script on the SDK.
    record = tmp_path / "initialize.json"
    raw = FAKES / "raw_stdio_server.py"
    cfg = StdioServer(
        command=sys.executable, args=[str(raw), "--marker", "x", "--record-initialize", str(record)]
    )
    pool = ServerPool(tmp_path / "logs")
    try:
        await asyncio.wait_for(pool.acquire("raw", cfg), 20)
    finally:
        await pool.aclose()
    sent = json.loads(record.read_text())["params"]["clientInfo"]
    assert sent == {"name": "proctor", "version": importlib.metadata.version("proctor")}
