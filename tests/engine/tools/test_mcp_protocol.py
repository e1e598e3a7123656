"""The whole MCP result and what servers say while they work, recorded over a real stdio session."""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import sys
from pathlib import Path

import mcp.types as mtypes
import pytest

from proctor.engine.providers.base import ToolImage, ToolResults
from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.agent_loop import run_agent
from proctor.engine.tools.mcp_notices import MAX_NOTICES_PER_CALL, NoticeBoard
from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool
from proctor.engine.tools.toolbox import CURRENT_SAMPLER, Blob, SampleReply, SampleRequest
from proctor.scenarios.schema import Limits, StdioServer
from proctor.store.events import Event, McpNotice, ModelResponse, ToolCallRequest, ToolResult
from proctor.store.read.reader import StoreReader
from proctor.store.write.writer import StoreWriter, TrialRow
from tests.engine.mcp_helpers import FAKES
from tests.engine.runs.test_agent_loop import ScriptedSession, _turn
from tests.fakes.content_mcp_server import BLOB, PNG, WAV

pytestmark = pytest.mark.slow

CONTENT = StdioServer(command=sys.executable, args=[str(FAKES / "content_mcp_server.py")])


async def _open(tmp_path: Path) -> tuple[ServerPool, McpToolbox]:
    pool = ServerPool(tmp_path / "logs")
    return pool, await McpToolbox.open(pool, {"content": CONTENT}, None)


async def test_every_block_is_typed_and_binary_data_is_kept_once_by_hash(tmp_path: Path) -> None:
    pool, tb = await _open(tmp_path)
    try:
        out = await tb.call("everything", {})
    finally:
        await pool.aclose()
    assert not out.is_error, out.content
    assert [b.type for b in out.blocks] == [
        "text",
        "image",
        "image",
        "audio",
        "resource",
        "resource",
        "image",
    ]
    png, wav, blob = (hashlib.sha256(d).hexdigest() for d in (PNG, WAV, BLOB))
    image = out.blocks[1]
    assert (image.mime_type, image.size_bytes, image.sha256) == ("image/png", len(PNG), png)
    assert out.blocks[3].sha256 == wav and out.blocks[3].mime_type == "audio/wav"
    text_res, blob_res = out.blocks[4], out.blocks[5]
    assert (text_res.uri, text_res.text, text_res.mime_type) == ("file:///repo/a.txt", "alpha", "text/plain")
    assert (blob_res.uri, blob_res.sha256, blob_res.size_bytes) == ("file:///repo/b.bin", blob, 16)
    bad = out.blocks[6]
    assert (bad.sha256, bad.size_bytes) == ("", None), "data that is not base64 is labelled, never guessed"
    assert [(b.sha256, b.data) for b in out.blobs] == [(png, PNG), (png, PNG), (wav, WAV), (blob, BLOB)]
    assert out.content.splitlines() == [
        "every block",
        "[image image/png, 300 bytes]",
        "[image image/png, 300 bytes]",
        "[audio audio/wav, 12 bytes]",
        "alpha",
        "[resource file:///repo/b.bin application/x-bin, 16 bytes]",
        "[image image/png, invalid base64]",
    ]


async def test_progress_and_log_messages_are_filed_under_their_call(tmp_path: Path) -> None:
    pool, tb = await _open(tmp_path)
    try:
        out = await tb.call("chatty", {})
        quiet = await tb.call("stats", {})
        (server,) = tb.connected()
    finally:
        await pool.aclose()
    assert out.content == "done"
    progress = [(n.progress, n.total, n.message) for n in out.notices if n.method == "notifications/progress"]
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    (log,) = [n for n in out.notices if n.method == "notifications/message"]
    assert (log.level, log.message, log.shared) == ("info", "halfway there", False)
    assert quiet.notices == ()
    assert (server.name, server.instructions) == ("content", "Answers in every content type.")
    assert server.protocol_version and "tools" in server.capabilities


async def test_a_flood_of_notices_is_capped_and_counted(tmp_path: Path) -> None:
    pool, tb = await _open(tmp_path)
    try:
        out = await tb.call("flood", {"n": MAX_NOTICES_PER_CALL + 500})
    finally:
        await pool.aclose()
    assert out.content == f"sent {MAX_NOTICES_PER_CALL + 500}"
    assert len(out.notices) == MAX_NOTICES_PER_CALL + 1
    assert out.notices[-1].method == "proctor/dropped" and "500 more notices" in out.notices[-1].message


async def test_blobs_are_stored_once_and_read_back_by_hash(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await StoreWriter.open(db)
    await w.create_run("r", "s", {})
    await w.add_trials("r", [TrialRow("s", "a", "m", 0, 0)])
    sha = hashlib.sha256(PNG).hexdigest()
    for _ in range(3):
        w.put_blob(sha, "image/png", PNG)
    await w.close()
    with StoreReader(db) as r:
        assert r.blob(sha) == ("image/png", PNG)
        assert r.blob("0" * 64) is None
    assert sqlite3.connect(db).execute("SELECT count(*) FROM blobs").fetchone() == (1,)


async def test_the_agent_loop_records_notices_blocks_and_blobs_in_order(tmp_path: Path) -> None:
    calls = [
        ToolCallRequest(call_id="c1", name="chatty", arguments={}),
        ToolCallRequest(call_id="c2", name="picture", arguments={}),
    ]
    session = ScriptedSession([_turn(calls=calls[:1]), _turn(calls=calls[1:]), _turn("seen")])
    events: list[Event] = []
    blobs: list[Blob] = []
    pool, tb = await _open(tmp_path)
    try:
        await run_agent(
            model_id="offline:default",
            session=session,
            toolbox=tb,
            prompts=["look"],
            limits=Limits(),
            prices=PriceTable({}),
            emit=events.append,
            put_blob=blobs.append,
        )
    finally:
        await pool.aclose()
    kinds = [e.kind for e in events if not isinstance(e, ModelResponse)]
    first_result = kinds.index("tool_result")
    assert kinds[kinds.index("tool_call") + 1 : first_result] == ["mcp_notice"] * 4
    assert all(e.call_id == "c1" for e in events if isinstance(e, McpNotice))
    picture = next(e for e in events if isinstance(e, ToolResult) and e.tool == "picture")
    assert [b.type for b in picture.blocks] == ["image", "resource_link"]
    assert [b.sha256 for b in blobs] == [picture.blocks[0].sha256]
    sent = session.seen[-1][-1]
    assert isinstance(sent, ToolResults)
    assert sent.results[0].images == (ToolImage("image/png", base64.b64encode(PNG).decode()),)


async def test_log_messages_from_info_up_are_kept_and_debug_is_dropped() -> None:
    """Pre-2026 servers log at every level unless told otherwise, and proctor declares "info":
    a debug message is noise it did not ask for; every other level is the server talking."""
    board = NoticeBoard("srv", [])
    with board.call() as (inbox, _):
        for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
            await board.on_log(mtypes.LoggingMessageNotificationParams(level=level, data=f"{level} said"))
    assert [(n.level, n.message) for n in inbox.notices] == [
        (level, f"{level} said")
        for level in ("info", "notice", "warning", "error", "critical", "alert", "emergency")
    ]


async def test_sampling_is_refused_when_the_calling_trial_is_ambiguous() -> None:
    async def model(request: SampleRequest) -> SampleReply:
        return SampleReply("sampled", "m")

    board = NoticeBoard("srv", [], sampling="model")
    params = mtypes.CreateMessageRequestParams(
        messages=[mtypes.SamplingMessage(role="user", content=mtypes.TextContent(type="text", text="hi"))],
        max_tokens=5,
    )
    token = CURRENT_SAMPLER.set(model)
    try:
        with board.call() as (alone, _):
            answered = await board.on_sampling(None, params)  # type: ignore[arg-type]
        with board.call() as (first, _), board.call() as (second, _):
            refused = await board.on_sampling(None, params)  # type: ignore[arg-type]
    finally:
        CURRENT_SAMPLER.reset(token)
    assert (
        isinstance(answered, mtypes.CreateMessageResult)
        and alone.notices[0].answer == "answered by m: sampled"
    )
    assert isinstance(refused, mtypes.ErrorData) and "2 calls in flight" in refused.message
    assert first.notices[0].shared and second.notices[0].answer.startswith("declined: 2 calls in flight")
