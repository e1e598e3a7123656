"""An MCP tool result as proctor records it: every block typed, binary data kept once by hash.

The transcript and the model need text, so each block also has a text form (a labelled
placeholder for binary data); the typed blocks keep what the text cannot (MIME type, size, URI,
name), and the bytes go to the store's ``blobs`` table, so a trial's events stay small and the
same image returned a thousand times is stored once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass

import mcp.types as mtypes

from proctor.engine.tools.toolbox import Blob
from proctor.store.events import ContentBlock


@dataclass(frozen=True)
class RecordedContent:
    text: str
    blocks: tuple[ContentBlock, ...]
    blobs: tuple[Blob, ...]


def record_content(result: mtypes.CallToolResult) -> RecordedContent:
    """Every content block of ``result``; nothing is dropped silently.

    A result with no text block but ``structuredContent`` gets that JSON, pretty-printed, as its
    text (the model then sees the data the server meant it to see).
    """
    parts: list[str] = []
    blocks: list[ContentBlock] = []
    blobs: list[Blob] = []
    for block in result.content:
        text, typed, blob = _one(block)
        annotations = getattr(block, "annotations", None)
        if annotations is not None:
            typed = typed.model_copy(
                update={"annotations": annotations.model_dump(mode="json", exclude_none=True)}
            )
        parts.append(text)
        blocks.append(typed)
        if blob is not None:
            blobs.append(blob)
    if not any(b.type == "text" for b in blocks) and isinstance(result.structured_content, dict):
        parts.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False, default=str))
    return RecordedContent("\n".join(parts), tuple(blocks), tuple(blobs))


def _one(block: object) -> tuple[str, ContentBlock, Blob | None]:
    if isinstance(block, mtypes.TextContent):
        return block.text, ContentBlock(type="text", text=block.text), None
    if isinstance(block, mtypes.ImageContent | mtypes.AudioContent):
        kind = "image" if isinstance(block, mtypes.ImageContent) else "audio"
        blob = _blob(block.data, block.mime_type)
        size = len(blob.data) if blob else None
        label = f"[{kind} {block.mime_type}, {_bytes(size)}]"
        typed = ContentBlock(
            type=kind, mime_type=block.mime_type, size_bytes=size, sha256=blob.sha256 if blob else ""
        )
        return label, typed, blob
    if isinstance(block, mtypes.ResourceLink):
        mime = f", {block.mime_type}" if block.mime_type else ""
        typed = ContentBlock(
            type="resource_link",
            uri=str(block.uri),
            name=block.name,
            mime_type=block.mime_type or "",
            description=block.description or "",
        )
        return f"[resource link {block.uri} ({block.name}{mime})]", typed, None
    if isinstance(block, mtypes.EmbeddedResource):
        res = block.resource
        mime = res.mime_type or ""
        if isinstance(res, mtypes.TextResourceContents):
            typed = ContentBlock(type="resource", uri=str(res.uri), mime_type=mime, text=res.text)
            return res.text, typed, None
        blob = _blob(getattr(res, "blob", ""), mime or "application/octet-stream")
        size = len(blob.data) if blob else None
        typed = ContentBlock(
            type="resource",
            uri=str(res.uri),
            mime_type=mime,
            size_bytes=size,
            sha256=blob.sha256 if blob else "",
        )
        return f"[resource {res.uri} {mime or 'binary'}, {_bytes(size)}]", typed, blob
    name = type(block).__name__
    return (
        f"[{name}: a content type this proctor does not know]",
        ContentBlock(type="text", text=f"[{name}]"),
        None,
    )


def _blob(data: str, mime_type: str) -> Blob | None:
    """The decoded bytes, or None when the server sent something that is not base64."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return Blob(hashlib.sha256(raw).hexdigest(), mime_type, raw)


def _bytes(size: int | None) -> str:
    return "invalid base64" if size is None else f"{size:,} bytes"


__all__ = ["RecordedContent", "record_content"]
