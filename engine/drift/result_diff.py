"""One call's drift: the recorded result against the replayed one, classified and explained.

``identical`` (after the suite's masks), ``changed``, ``new_error`` (only the replay erred),
``fixed_error`` (only the recording erred), ``missing`` (a side has no result: a trial cut
short, a replay interrupted) or ``skipped`` (not replayed: proctor's own tools, the baseline's and the router's
``route``, have no server to replay against). JSON is compared structurally (structuredContent,
and the text when both sides are JSON documents): each changed leaf is named by its path, so
``$.commits[0].date`` changing reads as that and not as a re-indented document. Other text is
compared as a unified diff. Every list is bounded and says how much it left out.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from proctor.engine.drift import Status
from proctor.engine.drift.masks import NO_MASK, CallMask

LOST_REFUSAL = "no longer refused: the scenario's gold call expects an error (expect_error)"
STATUSES: tuple[Status, ...] = ("identical", "changed", "new_error", "fixed_error", "missing", "skipped")
DRIFTED: frozenset[Status] = frozenset({"changed", "new_error"})  # what ``gate --max-changed`` counts

MAX_CHANGES = 50
MAX_DIFF_LINES = 60
DIFF_INPUT_LINES = 2000
VALUE_CHARS = 200
LINE_CHARS = 300
JSON_CHARS = 2_000_000
SHORT_VALUES = 100  # a one-change summary shows both values up to this length


@dataclass(slots=True)
class RecordedResult:
    """What a ``tool_result`` event holds that a diff reads (binary blocks by their labels).

    Not frozen (never changed once read): a frozen dataclass's ``__init__`` costs a third more,
    and a drift reads 20,000 of these."""

    content: str
    is_error: bool
    error_type: str = ""
    structured: Any = None
    blocks: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def of_payload(cls, payload: Mapping[str, Any]) -> RecordedResult:
        """From a ``tool_result`` payload as decoded JSON (the event's fields)."""
        blocks = tuple(
            (
                str(b.get("type", "")),
                str(b.get("mime_type", "")),
                str(b.get("sha256", "")),
                str(b.get("uri", "")),
            )
            for b in payload.get("blocks") or ()
            if isinstance(b, dict) and b.get("type") != "text"
        )
        content = payload.get("content", "")
        return cls(
            content if type(content) is str else str(content),
            payload.get("is_error") is True,
            payload.get("error_type") or "",
            payload.get("structured"),
            blocks,
        )


@dataclass(frozen=True)
class LeafChange:
    """A JSON leaf (or subtree) that differs: ``~`` changed, ``+`` only new, ``-`` only old."""

    path: str
    op: Literal["~", "+", "-"]
    old: str = ""
    new: str = ""


@dataclass(frozen=True)
class CallDiff:
    status: Status
    changes: tuple[LeafChange, ...] = ()
    more_changes: int = 0
    text_diff: tuple[str, ...] = ()
    more_lines: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def drifted(self) -> bool:
        return self.status in DRIFTED

    def summary(self) -> str:
        """One line: what changed, for a table cell or a JUnit message (a single short change
        with both values, else the first paths)."""
        if self.status == "identical":
            return "identical"
        head = self.status.replace("_", " ")
        if self.notes and (self.status != "changed" or self.notes[0] == LOST_REFUSAL):
            return f"{head}: {self.notes[0]}"
        if len(self.changes) == 1 and not self.more_changes:
            c = self.changes[0]
            values = {"~": f"{c.old} -> {c.new}", "+": f"added {c.new}", "-": f"removed {c.old}"}[c.op]
            if len(values) <= SHORT_VALUES:
                return f"{head}: {c.path}: {values}"
        if self.changes:
            paths = ", ".join(c.path for c in self.changes[:3])
            extra = len(self.changes) - 3 + self.more_changes
            return f"{head}: {paths}{f' and {extra} more' if extra > 0 else ''}"
        if self.text_diff:
            return f"{head}: text differs ({len(self.text_diff) + self.more_lines} diff lines)"
        return f"{head}: {self.notes[0]}" if self.notes else head

    def details(self) -> list[str]:
        """Every line a reader needs: notes, changed paths with both values, the text diff."""
        lines = list(self.notes)
        for c in self.changes:
            if c.op == "~":
                lines.append(f"~ {c.path}: {c.old} -> {c.new}")
            elif c.op == "+":
                lines.append(f"+ {c.path}: {c.new}")
            else:
                lines.append(f"- {c.path}: {c.old}")
        if self.more_changes:
            lines.append(f"… {self.more_changes} more changed paths")
        lines += self.text_diff
        if self.more_lines:
            lines.append(f"… {self.more_lines} more diff lines")
        return lines


def diff_results(
    old: RecordedResult | None, new: RecordedResult | None, mask: CallMask = NO_MASK
) -> CallDiff:
    """Classify and explain how ``new`` differs from ``old`` once ``mask`` hid the volatile parts."""
    if old is None or new is None:
        side = "recording" if old is None else "replay"
        return CallDiff("missing", notes=(f"no result in the {side}",))
    if old == new:
        return CallDiff("identical")
    status: Status = "changed"
    notes: list[str] = []
    if old.is_error != new.is_error:
        status = "new_error" if new.is_error else "fixed_error"
        notes.append(f"error: {_cut(new.content if new.is_error else old.content, LINE_CHARS)}")
    elif old.error_type != new.error_type:
        notes.append(f"error type {old.error_type or '(none)'} -> {new.error_type or '(none)'}")
    changes: list[LeafChange] = []
    count = [0]
    if old.structured is not None or new.structured is not None:
        _json_changes(
            mask.json(old.structured), mask.json(new.structured), "structuredContent", changes, count
        )
    text_lines: list[str] = []
    more_lines = 0
    a_doc, b_doc = _json_document(old.content), _json_document(new.content)
    if a_doc is not _NOT_JSON and b_doc is not _NOT_JSON:
        _json_changes(mask.json(a_doc), mask.json(b_doc), "$", changes, count)
    else:
        a_text, b_text = mask.text(old.content), mask.text(new.content)
        if a_text != b_text:
            text_lines, more_lines = _text_diff(a_text, b_text)
    if old.blocks != new.blocks:
        _json_changes([list(b) for b in old.blocks], [list(b) for b in new.blocks], "blocks", changes, count)
    if status == "changed" and not changes and not text_lines and not notes:
        return CallDiff(
            "identical", notes=("equal once the suite's replay.ignore masks applied",) if mask else ()
        )
    return CallDiff(
        status, tuple(changes), count[0] - len(changes), tuple(text_lines), more_lines, tuple(notes)
    )


_NOT_JSON = object()


def _json_document(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or len(stripped) > JSON_CHARS:
        return _NOT_JSON
    try:
        return orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return _NOT_JSON


def _json_changes(a: Any, b: Any, path: str, out: list[LeafChange], count: list[int]) -> None:
    """Append the leaves where ``a`` and ``b`` differ (at most ``MAX_CHANGES``; all are counted)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys(), key=str):
            sub = _child(path, key)
            if key not in b:
                _add(out, count, LeafChange(sub, "-", old=_value(a[key])))
            elif key not in a:
                _add(out, count, LeafChange(sub, "+", new=_value(b[key])))
            else:
                _json_changes(a[key], b[key], sub, out, count)
        return
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(b):
                _add(out, count, LeafChange(sub, "-", old=_value(a[i])))
            elif i >= len(a):
                _add(out, count, LeafChange(sub, "+", new=_value(b[i])))
            else:
                _json_changes(a[i], b[i], sub, out, count)
        return
    if a != b or type(a) is not type(b):
        _add(out, count, LeafChange(path, "~", _value(a), _value(b)))


def _add(out: list[LeafChange], count: list[int], change: LeafChange) -> None:
    count[0] += 1
    if len(out) < MAX_CHANGES:
        out.append(change)


def _child(path: str, key: object) -> str:
    text = str(key)
    if text.isidentifier():
        return f"{path}.{text}"
    return f"{path}[{json.dumps(text, ensure_ascii=False)}]"


def _value(v: Any) -> str:
    return _cut(json.dumps(v, ensure_ascii=False, sort_keys=True, default=str), VALUE_CHARS)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more chars)"


def _text_diff(a: str, b: str) -> tuple[list[str], int]:
    """A unified diff (one line of context) of the first ``DIFF_INPUT_LINES`` lines, bounded."""
    a_lines, b_lines = a.splitlines(), b.splitlines()
    diff = list(
        difflib.unified_diff(
            a_lines[:DIFF_INPUT_LINES], b_lines[:DIFF_INPUT_LINES], "recorded", "replayed", lineterm="", n=1
        )
    )[2:]
    if not diff:  # the difference lies past the lines compared, or in line endings only
        diff = [f"(the texts differ after line {DIFF_INPUT_LINES:,} or only in whitespace at line ends)"]
    return [_cut(x, LINE_CHARS) for x in diff[:MAX_DIFF_LINES]], max(0, len(diff) - MAX_DIFF_LINES)


__all__ = [
    "DRIFTED",
    "STATUSES",
    "CallDiff",
    "LeafChange",
    "RecordedResult",
    "Status",
    "diff_results",
]
