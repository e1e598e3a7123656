"""How an event's payload is stored (its JSON, zlib-compressed when it is large), and how a
score's details or a verdict read back."""

from __future__ import annotations

import json
import zlib
from typing import Any

import msgspec
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


# msgspec's strict JSON decoder: where it accepts a text, it returns what ``json.loads`` does
# (big integers, duplicate keys and float rounding included; tests/store/test_payload_codec.py).
_decode_strict = msgspec.json.Decoder().decode


def loads_details(text: Any) -> dict[str, Any] | None:
    """``json.loads(text)`` for a details text that decodes to an object, else None (then the
    ordinary decoding reads the row). A report reads every score's details, 95 MB on 10,000
    trials: msgspec's strict decoder reads them in two thirds of pydantic's time. What strict
    JSON refuses (NaN, Infinity, a number too large for a float, a lone surrogate escape) goes
    to ``loads_verdict``'s parsers."""
    if type(text) is not str:
        return None
    try:
        value = _decode_strict(text)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        value = _loads_lax(text)
    return value if type(value) is dict else None


def loads_verdict(text: Any) -> dict[str, Any] | None:
    """``loads_details`` for a verdict: pydantic's parser, which returns the same values (NaN and
    Infinity included) and one str object per distinct short string, so the criterion names and
    claim verdicts a report hashes again and again (judge variance, validation) hash once. What
    it refuses (a lone surrogate escape) goes to ``json.loads``."""
    if type(text) is not str:
        return None
    value = _loads_lax(text)
    return value if type(value) is dict else None


def _loads_lax(text: str) -> object:
    try:
        return from_json(text)
    except ValueError:
        try:
            return json.loads(text)
        except ValueError:
            return None


__all__ = [
    "COMPRESS_OVER_BYTES",
    "decode_payload",
    "encode_payload",
    "encode_raw",
    "loads_details",
    "loads_verdict",
]
