"""A queued batch's payloads made fit to store: redacted, their derived rows remade where
redaction changed an event, the large ones compressed.

Payloads are checked and redacted many at a time: one ``redact`` over a group of them joined by
a NUL costs far less than one per event. JSON escapes every control character, so a NUL only
ever separates payloads; it is not in any secret shape's character classes and a shape's start
accepts it as it accepts the payload's start, so no replacement crosses it or differs from the
payload's own. Should a replacement ever swallow a separator, the group is redacted one
payload at a time instead.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel

from proctor.store.event_facts import stored_fact
from proctor.store.payload_codec import COMPRESS_OVER_BYTES, encode_raw
from proctor.store.records import JudgmentMeta
from proctor.store.redaction import may_need_redaction, redact
from proctor.store.write.derived_rows import Op, derive

# Payloads are redacted in groups of about this many bytes: one ``redact`` call per group costs
# far less than one per event, and a group never holds much more than one huge payload.
REDACT_GROUP_BYTES = 256 * 1024
_SEP: Final = b"\x00"

# A queued event that has derived rows: its row in the batch, its class, its judgment metadata,
# and the rows derived from it as it was emitted (kept if redaction leaves its payload alone).
Derived = tuple[int, type[BaseModel], JudgmentMeta | None, tuple[Op, ...]]
# The queued events that have facts: (row in the batch, the fact as stored, None for none).
Facts = list[tuple[int, bytes | None]]


def need_no_redaction(payloads: list[bytes]) -> bool:
    """True when ``redact_payloads(payloads)`` is sure to return them unchanged (one RE2 pass)."""
    return not may_need_redaction(_SEP.join(payloads))


def redact_payloads(payloads: list[bytes]) -> list[bytes]:
    """``[redact(p) for p in payloads]`` (UTF-8 JSON documents), one ``redact`` call per group.

    Returns ``payloads`` itself if nothing changed."""
    out: list[bytes] | None = None
    start = size = 0
    n = len(payloads)
    for i in range(n):
        size += len(payloads[i])
        if size < REDACT_GROUP_BYTES and i + 1 < n:
            continue
        group = payloads[start : i + 1]
        done = _redact_group(group)
        if done is not group:
            if out is None:
                out = payloads[:start]
            out += done
        elif out is not None:
            out += group
        start, size = i + 1, 0
    return payloads if out is None else out


def _redact_group(group: list[bytes]) -> list[bytes]:
    joined = _SEP.join(group)
    if not may_need_redaction(joined):
        return group
    text = joined.decode()
    clean = redact(text)
    if clean == text:
        return group
    parts = clean.encode().split(_SEP)
    if len(parts) == len(group):
        return parts
    return [redact(p.decode()).encode() for p in group]


def finish_payloads(flat: list[Any], derived: list[Derived], checked: int, facts: Facts) -> list[Op]:
    """Redact the payloads of ``flat`` (seven values a row, the payload last) after the first
    ``checked`` rows (found to need nothing when queued) and compress the large ones, in place;
    return the derived rows, made again from the stored payload for an event redaction changed.
    ``facts`` are made again likewise, in place."""
    payloads: list[bytes] = flat[6::7]
    rest = payloads[checked:]
    redacted = redact_payloads(rest)
    ops: list[Op] = []
    if redacted is rest:
        for entry in derived:
            ops += entry[3]
    else:
        flat[7 * checked + 6 :: 7] = redacted
        for row, cls, judgment, made in derived:
            if row < checked or redacted[row - checked] == rest[row - checked]:
                ops += made
                continue
            event: Any = cls.model_validate_json(redacted[row - checked])
            at = 7 * row
            ops += derive(flat[at], flat[at + 1], flat[at + 2], flat[at + 3], event, judgment)
        for i, (row, _fact) in enumerate(facts):
            if row >= checked and redacted[row - checked] != rest[row - checked]:
                facts[i] = (row, stored_fact(flat[7 * row + 4], redacted[row - checked]))
        payloads = payloads[:checked] + redacted
    if payloads and max(map(len, payloads)) > COMPRESS_OVER_BYTES:
        for i, p in enumerate(payloads):
            if len(p) > COMPRESS_OVER_BYTES:
                flat[7 * i + 5], flat[7 * i + 6] = encode_raw(p)
    return ops


__all__ = [
    "REDACT_GROUP_BYTES",
    "Derived",
    "Facts",
    "finish_payloads",
    "need_no_redaction",
    "redact_payloads",
]
