"""How an event's payload is stored: its JSON, zlib-compressed when it is large."""

from __future__ import annotations

import zlib

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


__all__ = ["COMPRESS_OVER_BYTES", "decode_payload", "encode_payload", "encode_raw"]
