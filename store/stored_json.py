"""A JSON object as a run database stores it (a score's details): its text, checked when read to
be one strict JSON object in UTF-8, and parsed only when a field of it is wanted.

A report writes every score's details and reads a field of few of them: 95 MB of text on 10,000
trials. Parsing them all into dicts, and encoding those again, cost the JSON report over a
second; it now writes the stored text as it is (engine/reports/report.py), and the other
renderings parse the few they read.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec


class _AnyObject(msgspec.Struct):
    """No fields: decoding into it checks a whole JSON text and builds nothing."""


_check_object = msgspec.json.Decoder(_AnyObject).decode
_decode_strict = msgspec.json.Decoder().decode


class StoredJson:
    """One JSON object's stored text; ``value()`` parses it once."""

    __slots__ = ("_value", "text")

    def __init__(self, text: bytes) -> None:
        self.text = text
        self._value: dict[str, Any] | None = None

    def value(self) -> dict[str, Any]:
        """The object as ``json.loads`` reads it (msgspec's strict decoder returns the same
        values; a number too large for a float, which it refuses, goes to ``json.loads``)."""
        if self._value is None:
            try:
                parsed = _decode_strict(self.text)
            except ValueError:  # msgspec.DecodeError is a ValueError
                parsed = json.loads(self.text)
            self._value = parsed
        return self._value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredJson):
            return self.text == other.text
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StoredJson({self.text!r})"


def stored_object(raw: object) -> StoredJson | None:
    """``raw`` (a column read as bytes) as a StoredJson when it is one strict JSON object in
    UTF-8; None for anything else (not JSON, NaN or Infinity, a lone surrogate escape, not an
    object, not UTF-8), which the ordinary decoding then reads or refuses as it always did."""
    if type(raw) is not bytes:
        return None
    try:
        _check_object(raw)
        if not raw.isascii():
            raw.decode()
    except (ValueError, RecursionError):  # DecodeError, ValidationError, UnicodeDecodeError
        return None
    return StoredJson(raw)


__all__ = ["StoredJson", "stored_object"]
