"""Every string in a JSON-shaped value redacted, checked with one ``redact`` call where possible.

The exports (JSONL/CSV, OpenTelemetry, Inspect logs) all pass their payloads through here;
it sits below them so none of them has to import another to reach it.
"""

from __future__ import annotations

from typing import Any

from proctor.store.redaction import redact


def _redact_tree(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): _redact_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_tree(v) for v in value]
    return value


def _strings(value: Any, out: list[str]) -> None:
    kind = type(value)
    if kind is str:
        out.append(value)
    elif kind is dict:
        for k, v in value.items():
            out.append(str(k))
            if type(v) is str:
                out.append(v)
            elif type(v) in (dict, list):
                _strings(v, out)
    elif kind is list:
        for v in value:
            if type(v) is str:
                out.append(v)
            elif type(v) in (dict, list):
                _strings(v, out)


def _joined(value: Any) -> str:
    parts: list[str] = []
    _strings(value, parts)
    return "\x00".join(parts)


def redacted(value: Any) -> Any:
    """``value`` with every string redacted; one ``redact`` call when nothing needs it."""
    joined = _joined(value)
    return value if redact(joined) == joined else _redact_tree(value)


def redacted_batch(values: list[Any]) -> list[Any]:
    """``redacted`` over many values with one ``redact`` call when none needs it (the usual case).

    ``redact`` reads the environment on every call, so checking each row alone would dominate an
    export. No secret or key shape contains NUL, so joining with NUL cannot create or hide one.
    """
    joined = [_joined(v) for v in values]
    whole = "\x00".join(joined)
    if redact(whole) == whole:
        return values
    return [v if redact(j) == j else _redact_tree(v) for v, j in zip(values, joined, strict=True)]


__all__ = ["redacted", "redacted_batch"]
