"""Decode a very large tool result without holding the GIL for the whole document.

A 30 MB tool result is one JSON string. Every JSON parser unescapes it in one C call that
holds the GIL (25 ms on a quiet machine, 45 ms or more when the other core is busy), so the
console's event loop stalls while its decoder thread parses, although nothing runs on the loop.
Here the document is cut in two: the event without its ``content`` (a few hundred bytes,
parsed and validated as usual) and the content's JSON text, unescaped in pieces of about
``PIECE_BYTES``, each one short C call; between pieces the loop can take the GIL. The result
is the same event ``parse_event`` gives (the tests compare them); anything unexpected
(another field order, a document that is not a tool result) returns None and the caller
parses the whole document as before.
"""

from __future__ import annotations

import time
from typing import Final

from pydantic_core import from_json

from proctor.store.events import Event, ToolResult, parse_event

LARGE_PAYLOAD_BYTES: Final = 1024 * 1024
PIECE_BYTES: Final = 128 * 1024
_KIND: Final = b'"kind":"tool_result"'
_START: Final = b'"content":"'
_END: Final = b'","is_error":'
_BACKSLASH: Final = 0x5C
_FIND_WINDOW: Final = 1024 * 1024
_CUT_SEARCH: Final = 64 * 1024


def parse_large_tool_result(raw: bytes) -> Event | None:
    """``parse_event(raw)`` for a tool result's JSON, unescaping its content in pieces; None
    when ``raw`` is not a tool result laid out as proctor writes one (then parse it whole)."""
    if not raw.startswith(b"{") or _KIND not in raw[:64]:
        return None
    start = raw.find(_START, 0, 4096)
    if start < 0:
        return None
    begin = start + len(_START)
    # A string's quotes are escaped inside it, so the first unescaped '","is_error":' after
    # the content's opening quote ends the content (a wrong guess fails to parse below).
    end = _find(raw, _END, begin)
    while end >= 0 and _escaped(raw, end, begin):
        end = _find(raw, _END, end + 1)
    if end < 0:
        return None
    try:
        skeleton = parse_event(raw[:begin] + raw[end:])
        if not isinstance(skeleton, ToolResult) or skeleton.content != "":
            return None
        content = _unescape(raw, begin, end)
    except ValueError:
        return None
    return skeleton.model_copy(update={"content": content})


def _find(raw: bytes, needle: bytes, start: int) -> int:
    """``raw.find(needle, start)`` a window at a time (one search over 30 MB holds the GIL)."""
    overlap = len(needle) - 1
    while start < len(raw):
        stop = min(len(raw), start + _FIND_WINDOW + overlap)
        found = raw.find(needle, start, stop)
        if found >= 0:
            return found
        start += _FIND_WINDOW
    return -1


def _escaped(raw: bytes, quote: int, floor: int) -> bool:
    """Whether the quote at ``quote`` is preceded by an odd run of backslashes."""
    run = 0
    i = quote - 1
    while i >= floor and raw[i] == _BACKSLASH:
        run += 1
        i -= 1
    return run % 2 == 1


def _unescape(raw: bytes, begin: int, end: int) -> str:
    """The JSON string body ``raw[begin:end]`` decoded, piece by piece."""
    pieces: list[str] = []
    pos = begin
    while pos < end:
        cut = _cut(raw, pos + PIECE_BYTES, end)
        text = from_json(b'"' + raw[pos:cut] + b'"')
        if not isinstance(text, str):
            raise ValueError("not a JSON string")
        pieces.append(text)
        pos = cut
        time.sleep(0)  # hand the GIL to a waiting thread (the console's event loop) between pieces
    return "".join(pieces)


def _cut(raw: bytes, target: int, end: int) -> int:
    """A place at or after ``target`` where the string may be cut: no backslash in the six
    bytes before it (so no escape, ``\\uXXXX`` being the longest, is split, nor a surrogate
    pair) and not inside a UTF-8 character. Text too dense with backslashes to find one soon
    is not cut (one piece to the end)."""
    q = target
    while q < end and q - target < _CUT_SEARCH:
        b = raw.rfind(b"\\", q - 6, q)
        if b >= 0:
            q = b + 7
            continue
        while q < end and raw[q] & 0xC0 == 0x80:
            q += 1
        return min(q, end)
    return end


__all__ = ["LARGE_PAYLOAD_BYTES", "PIECE_BYTES", "parse_large_tool_result"]
