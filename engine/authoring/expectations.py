"""What a drafted gold call's result must hold, from what the server answered when ``proctor init``
called it, or a note that a person must write it.

Only tools that declare themselves read-only (``annotations.readOnlyHint``) are called, twice
with the drafted arguments, so a value that changes between calls (a clock, an id) is never
drafted. From two results that succeeded and do not read like errors: the small top-level fields
of their JSON that agree (up to ``MAX_FIELDS``), else a line of text both hold; what echoes an
argument first.
Anything else (a tool not called, an error, an error in disguise, nothing stable) is a review
note (``expect: {review: ...}``), which the run reports until someone writes the expectation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from proctor.engine.scoring.result_checks import disguised_error, json_document

MAX_FIELDS = 3
MAX_VALUE_CHARS = 80
MAX_LINE_CHARS = 120
NOT_READ_ONLY = (
    "not called by proctor init: the tool does not declare itself read-only (annotations.readOnlyHint); "
    "write what its result must hold"
)
BAD_ARGUMENTS = "not called by proctor init: the drafted arguments need a person first; then write what its result must hold"


@dataclass(frozen=True)
class Observed:
    """One result of a probe call, as proctor's MCP connection recorded it."""

    text: str
    is_error: bool
    structured: Mapping[str, Any] | None = None


def is_read_only(annotations: Mapping[str, Any] | None) -> bool:
    return bool(annotations) and annotations.get("readOnlyHint") is True  # type: ignore[union-attr]


def _first_line(text: str) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= MAX_VALUE_CHARS else line[: MAX_VALUE_CHARS - 1] + "…"


def _review(why: str) -> dict[str, Any]:
    return {"review": why}


def _small(value: Any) -> bool:
    """A value worth checking: a number, a boolean, a one-line text with a word, a short list."""
    if isinstance(value, bool | int | float):
        return True
    if isinstance(value, str):
        return "\n" not in value.strip() and any(c.isalnum() for c in value) and len(value) <= MAX_VALUE_CHARS
    return len(json.dumps(value, ensure_ascii=False, default=str)) <= MAX_VALUE_CHARS


def _stable_fields(first: Any, second: Any, given: Sequence[Any]) -> dict[str, Any]:
    """Top-level fields both results agree on; those that echo an argument, when there are any."""
    if not isinstance(first, Mapping) or not isinstance(second, Mapping):
        return {}
    stable = {
        key: value
        for key, value in first.items()
        if value is not None
        and _small(value)
        and key in second
        and json.dumps(second[key]) == json.dumps(value)
    }
    echoed = {k: v for k, v in stable.items() if any(v == g and type(v) is type(g) for g in given)}
    chosen = list((echoed or stable).items())[:MAX_FIELDS]
    return {(f"$.{k}" if k.isidentifier() else f"$[{json.dumps(k)}]"): v for k, v in chosen}


def _shared_line(first: str, second: str, given: Sequence[Any]) -> str | None:
    """A line both texts hold (one with a word in it); one that echoes an argument, if any does."""
    lines = {x.strip() for x in second.splitlines()}
    shared = [
        line
        for line in (x.strip() for x in first.splitlines())
        if line in lines and len(line) <= MAX_LINE_CHARS and any(c.isalnum() for c in line)
    ]
    words = [str(g) for g in given if isinstance(g, str | int | float) and not isinstance(g, bool) and str(g)]
    echoing = [line for line in shared if any(w in line for w in words)]
    found = echoing or shared
    return found[0] if found else None


def drafted_expectation(observed: Sequence[Observed], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The ``expect`` of a gold call from two results of the call with ``arguments`` (rules
    above). What echoes an argument is preferred: a field or line that only happened to be
    equal twice (today's weekday) would fail tomorrow."""
    if len(observed) < 2:
        return _review("proctor init could not call it twice; write what its result must hold")
    first, second = observed[0], observed[1]
    for o in (first, second):
        if o.is_error:
            return _review(
                f"proctor init called it with these arguments and the server answered with an error "
                f"({json.dumps(_first_line(o.text), ensure_ascii=False)}); fix the arguments, then write "
                "what its result must hold"
            )
        why = disguised_error(o.text, o.structured)
        if why is not None:
            return _review(
                f"proctor init called it with these arguments and the result reads like an error the "
                f"server did not flag ({why}); fix the arguments, then write what its result must hold"
            )
    given = list(arguments.values())
    fields = _stable_fields(
        json_document(first.text, first.structured), json_document(second.text, second.structured), given
    )
    if fields:
        return {"json": fields}
    line = _shared_line(first.text, second.text, given)
    if line is not None:
        return {"contains": line}
    return _review(
        "proctor init called it twice and the results share nothing stable to check; write what its result must hold"
    )


__all__ = ["BAD_ARGUMENTS", "NOT_READ_ONLY", "Observed", "drafted_expectation", "is_read_only"]
