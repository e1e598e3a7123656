"""Caps on tool output: what is stored, and what is sent back to the model.

A server may answer with megabytes in one line. Storing all of it bloats the run database and
every view of it; resending it to the model on each turn costs real money and context. Both
copies are cut at a configurable size with a visible marker that gives the original size, so a
reader of the transcript knows what the model did and did not see. The stored copy is
redacted before it is cut: a cut through a token leaves a piece too short for any shape to
match, which the store's redactor would then keep.
"""

from __future__ import annotations

import json
from typing import Any

from proctor.store.events import ContentBlock
from proctor.store.redaction import redact


def cap_text(text: str, limit: int, *, what: str, size: int | None = None) -> str:
    """``text`` cut to ``limit`` characters plus a marker saying how much there was (``size``,
    when ``text`` is a redacted copy of something of that size)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n…[truncated: {what} {size or len(text):,} characters, {limit:,} kept]"


def cap_stored(text: str, limit: int) -> str:
    """``cap_text`` for the copy kept in the run database: redacted first when it is cut."""
    if len(text) <= limit:
        return text  # whole: the store's writer redacts it
    return cap_text(redact(text), limit, what="stored", size=len(text))


def cap_structured(value: dict[str, Any] | None, limit: int) -> dict[str, Any] | None:
    """Structured content is kept whole or not at all (half a JSON object means nothing)."""
    if value is None:
        return None
    size = len(json.dumps(value, default=str))
    if size <= limit:
        return value
    return {"truncated": f"structured content of {size:,} characters was not kept (limit {limit:,})"}


def cap_block(block: ContentBlock, limit: int) -> ContentBlock:
    """Text blocks are capped like the content; the rest are labels and stay whole."""
    if block.text is None or len(block.text) <= limit:
        return block
    return block.model_copy(update={"text": cap_stored(block.text, limit)})


__all__ = ["cap_block", "cap_stored", "cap_structured", "cap_text"]
