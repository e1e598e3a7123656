"""How an event's payload is stored (its JSON, zlib-compressed when it is large), and how a
score's details or a verdict read back."""

from __future__ import annotations

import json
import zlib
from typing import Any

from pydantic_core import from_json

from proctor.store.events import Event

COMPRESS_OVER_BYTES = 64 * 1024


def encode_payload(event: Event) -> tuple[str, bytes]:
    return encode_raw(event.model_dump_json().encode())


def encode_raw(raw: bytes) -> tuple[str, bytes]:
    if len(raw) > COMPRESS_OVER_BYTES:
        return "zlib", zlib.compress(raw, 6)
    return "json", raw


def decode_payload(encoding: str, payload: bytes) -> bytes:
    return zlib.decompress(payload) if encoding == "zlib" else payload


def loads_details(text: Any) -> dict[str, Any] | None:
    """``json.loads(text)`` for a details text that decodes to an object, else None (then the
    ordinary decoding reads the row). pydantic's JSON parser returns the same values (big
    integers, NaN and Infinity included) in half the time; what it refuses (a lone surrogate
    escape) goes to ``json.loads``."""
    if type(text) is not str:
        return None
    try:
        value = from_json(text)
    except ValueError:
        try:
            value = json.loads(text)
        except ValueError:
            return None
    return value if type(value) is dict else None


__all__ = ["COMPRESS_OVER_BYTES", "decode_payload", "encode_payload", "encode_raw", "loads_details"]
