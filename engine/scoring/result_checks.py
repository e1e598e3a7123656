"""What a tool's result says: whether it holds what a gold call expects, and whether it looks like
an error the server did not flag.

Expectations (a gold call's ``expect``): each ``contains`` text is in the result text and no
``not_contains`` text is (exact, case-sensitive); each ``json`` path reaches at least one value in
the result's JSON, and every value it reaches equals the expected one under the tool-call match's
normalization (``5`` = ``"5"`` = ``5.0``; engine/scoring/normalize.py). The result's JSON is its
structuredContent, else its text read as one JSON document.

An error in disguise: a result with ``isError`` false whose first non-empty line starts like an
error message (``Error: ...``, ``Database error: ...``, ``Parser Error: ...``,
``TypeError: fetch failed``, ``Error executing tool ...``, ``a.txt: Error - ENOENT ...``,
``ERROR 1064 (42000): ...``, ``Failed to ...``, a Python traceback), but not like code that names
an error (``class TinyQError(Exception):``, ``log.error(...)``, ``raise ValueError(...)``), or
whose JSON object says so at its top level (``"success": false``, ``"ok": false``,
``"isError": true``, ``"status": "error"``, a non-empty ``"error"`` or ``"errors"``). Real servers
answer so (mcp-server-sqlite's ``Database error: no such table``); a gold call that only checks
that the call was made would pass on it, so it is flagged, not failed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from proctor.scenarios.json_paths import parse_path, select_path
from proctor.scenarios.schema import ResultExpectation

from .normalize import normalize_value

_ERROR_LINE = re.compile(
    r"""^(?:
        (?:[\w./\\-]+:\s+)?                         # a path or label: "a.txt: Error - ENOENT"
        (?:[a-z]+\s+){0,3}                            # "Database error", "Parser Error", "MCP error"
        \w*(?:error|exception)                        # Error, TypeError, exception
        (?:\s*[:!]|\s+[-—]\s|\s+-?\d|\s*\(\d+\))       # then ":", "!", " - ", a code: never "(" or "."
      | (?:error|exception)\s+(?:executing|calling|running|while|during|occurred)
      | (?:failed|failure)(?:\s+to\b|\s*:)           # Failed to fetch ..., Failure: ...
      | (?:\w+\s+)?fetch\s+failed\b
      | traceback\s+\(most\s+recent\s+call\s+last\)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_ERROR_STATUS = frozenset({"error", "failed", "failure", "fail"})
QUOTE_CHARS = 80
JSON_TEXT_CHARS = 100_000


def json_document(text: str, structured: Mapping[str, Any] | None) -> Any | None:
    """The result as JSON: its structuredContent, else its text when the text is one JSON
    document; None when it is neither."""
    if structured is not None:
        return dict(structured)
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _quote(text: str) -> str:
    line = " ".join(text.split())
    return json.dumps(line if len(line) <= QUOTE_CHARS else line[: QUOTE_CHARS - 1] + "…", ensure_ascii=False)


def disguised_error(text: str, structured: Mapping[str, Any] | None = None) -> str | None:
    """Why a result the server did not flag as an error reads like one, or None (rules above).

    Only the first line is read of the text, and its JSON only when it is structuredContent or
    a text of at most ``JSON_TEXT_CHARS`` (a large result is data, and costs to parse)."""
    head = text.lstrip()[: QUOTE_CHARS * 4]
    first = head.split("\n", 1)[0].strip()
    if _ERROR_LINE.match(first.lstrip("*_`> ")):
        return f"the text begins {_quote(first)}"
    doc = json_document(text, structured) if structured is not None or len(text) <= JSON_TEXT_CHARS else None
    if not isinstance(doc, Mapping):
        return None
    for key in ("success", "ok"):
        if doc.get(key) is False:
            return f'its JSON says "{key}": false'
    for key in ("isError", "is_error"):
        if doc.get(key) is True:
            return f'its JSON says "{key}": true'
    status = doc.get("status")
    if isinstance(status, str) and status.strip().lower() in _ERROR_STATUS:
        return f'its JSON says "status": {json.dumps(status)}'
    error = doc.get("error")
    if error not in (None, False, "", {}, []):
        shown = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False, default=str)
        return f'its JSON has "error": {_quote(str(shown))}'
    errors = doc.get("errors")
    if isinstance(errors, list) and errors:
        return f'its JSON has {len(errors)} "errors"'
    return None


def unmet_expectations(
    expect: ResultExpectation, text: str, structured: Mapping[str, Any] | None, *, has_result: bool = True
) -> list[str]:
    """What ``expect`` asks that the result does not hold (empty when it holds all of it)."""
    if not expect.checks:
        return []
    if not has_result:
        return ["no result was recorded"]
    unmet = [
        f"does not contain {json.dumps(t, ensure_ascii=False)}" for t in expect.contains if t not in text
    ]
    unmet += [f"contains {json.dumps(t, ensure_ascii=False)}" for t in expect.not_contains if t in text]
    if expect.json_:
        doc = json_document(text, structured)
        if doc is None:
            return [*unmet, f"is not JSON, so {', '.join(expect.json_)} cannot be read"]
        for path, wanted in expect.json_.items():
            found = select_path(doc, parse_path(path))
            shown = json.dumps(wanted, ensure_ascii=False, default=str)
            if not found:
                unmet.append(f"has no {path} (expected {shown})")
                continue
            wrong = [v for v in found if normalize_value(v) != normalize_value(wanted)]
            if wrong:
                got = json.dumps(wrong[0], ensure_ascii=False, default=str)
                unmet.append(f"has {path} = {got}, not {shown}")
    return unmet


__all__ = ["disguised_error", "json_document", "unmet_expectations"]
