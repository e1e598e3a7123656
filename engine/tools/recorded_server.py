"""A stdio MCP server that serves a recorded run back: its tools, and its results call for call.

``python -m proctor.engine.tools.recorded_server --db RUN.db --run ID [--arm NAME]`` is what a
``replay:`` arm starts. It offers the tools the recorded arm was offered (names, descriptions,
input schemas as listed) and answers a call with the result recorded for the same tool and
arguments (canonical JSON): the blocks as the server typed them (images and other binary blocks
from the run's blobs), ``structuredContent`` and ``isError``. When several results were recorded
for one call they are served in recorded order, starting over after the last. A call with no
recording is an MCP tool error saying so, naming the tool and the arguments. Agents and judges
can then run again without the real server, offline and deterministically (as in CI).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolRequestParams,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)

from proctor.engine.tools.recordings import Recording, RecordingError, call_key, load_recording
from proctor.store.events import ContentBlock as StoredBlock
from proctor.store.events import ToolResult
from proctor.store.read.reader import StoreReader

MAX_SHOWN_ARGUMENTS = 500
NOT_BASE64 = "(not base64)"


class Replayer:
    """The recording and, per call key, which of its results comes next."""

    def __init__(self, recording: Recording, reader: StoreReader) -> None:
        self.recording = recording
        self._reader = reader
        self._next: dict[str, int] = {}

    def tools(self) -> list[Tool]:
        return [
            Tool(name=t.name, description=t.description, input_schema=t.input_schema)
            for t in self.recording.tools
        ]

    def answer(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        key = call_key(tool, arguments)
        found = self.recording.results.get(key)
        if not found:
            return _error(self._missing(tool, arguments))
        index = self._next.get(key, 0)
        self._next[key] = index + 1
        return self._result(found[index % len(found)])

    def _missing(self, tool: str, arguments: dict[str, Any]) -> str:
        shown = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        if len(shown) > MAX_SHOWN_ARGUMENTS:
            shown = shown[:MAX_SHOWN_ARGUMENTS] + "..."
        where = f"run {self.recording.run} (arm {self.recording.arm})"
        known = sum(len(v) for k, v in self.recording.results.items() if k.startswith(f"{tool}\x00"))
        if not any(t.name == tool for t in self.recording.tools):
            return f"no recording for {tool} with arguments {shown}: {where} offered no tool {tool!r}"
        return (
            f"no recording for {tool} with arguments {shown} in {where}; "
            f"{known} call(s) of {tool} were recorded, with other arguments"
        )

    def _result(self, recorded: ToolResult) -> CallToolResult:
        blocks = [self._block(b) for b in recorded.blocks]
        if not blocks and recorded.structured is None and recorded.content:
            blocks = [TextContent(type="text", text=recorded.content)]  # an error proctor itself wrote
        return CallToolResult(
            content=blocks, structured_content=recorded.structured, is_error=recorded.is_error
        )

    def _block(self, block: StoredBlock) -> ContentBlock:
        annotations = block.annotations or None
        if block.type == "text":
            return TextContent(type="text", text=block.text or "", annotations=annotations)
        if block.type == "resource_link":
            return ResourceLink(
                type="resource_link",
                uri=block.uri,
                name=block.name,
                mime_type=block.mime_type or None,
                description=block.description or None,
                annotations=annotations,
            )
        data = self._bytes(block.sha256)
        if block.type == "resource":
            if block.text is not None:
                text = TextResourceContents(uri=block.uri, text=block.text, mime_type=block.mime_type or None)
                return EmbeddedResource(type="resource", resource=text, annotations=annotations)
            blob = BlobResourceContents(uri=block.uri, blob=data, mime_type=block.mime_type or None)
            return EmbeddedResource(type="resource", resource=blob, annotations=annotations)
        if block.type == "image":
            return ImageContent(type="image", data=data, mime_type=block.mime_type, annotations=annotations)
        return AudioContent(type="audio", data=data, mime_type=block.mime_type, annotations=annotations)

    def _bytes(self, sha256: str) -> str:
        """The block's bytes as base64, from the run's blobs. A block recorded without bytes (the
        server sent something that was not base64) is served as such again."""
        stored = self._reader.blob(sha256) if sha256 else None
        return base64.b64encode(stored[1]).decode() if stored is not None else NOT_BASE64


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(replayer: Replayer) -> Server[Any]:
    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=replayer.tools())

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return replayer.answer(params.name, dict(params.arguments or {}))

    name = f"proctor-replay {replayer.recording.run}/{replayer.recording.arm}"
    return Server(name, version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="proctor-replay-server", description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--arm")
    args = parser.parse_args(argv)
    try:
        recording, reader = load_recording(args.db, args.run, args.arm)
    except RecordingError as exc:
        print(f"proctor replay server: {exc}", file=sys.stderr, flush=True)
        return 2
    import anyio

    try:
        anyio.run(_serve, build_server(Replayer(recording, reader)))
    finally:
        reader.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
