"""What every benchmark importer shares: the imported data model and field parsing.

An importer turns a public benchmark's files into an ``ImportedSuite``: suite and scenario
mappings already validated against the suite schema, plus any trajectories the source holds as
plain data (this package may not import the store; ``proctor.engine.runs.imported_runs`` turns them
into events). Every error names the file, the row or entry, the field, and what would fix it.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.scenarios.loader import SuiteError
from proctor.scenarios.schema import Complexity
from proctor.scenarios.suite_text import UnsafeFile, read_regular_bytes

_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_STEP_NUMBER = re.compile(r"^\s*(?:\d+\s*[.):]|[-*•])\s*")
# A Python list literal is parsed (never evaluated) only up to this size.
_MAX_LITERAL_CHARS = 4_000_000
MAX_IMPORT_BYTES = 1024 * 1024 * 1024  # one source file of an import (tasks, traces, trajectories)


class ImportFormatError(SuiteError):
    """A source file cannot be imported; the message says where and how to fix it."""


@dataclass(frozen=True)
class ImportedCall:
    """A call as the source recorded it. ``builtin``: the agent's own tool, not an MCP server's;
    None while an importer has not decided (written as an MCP call, what every benchmark format
    but OpenTelemetry's records)."""

    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    builtin: bool | None = None


@dataclass(frozen=True)
class ImportedResult:
    call_id: str
    server: str
    tool: str
    content: str
    is_error: bool = False
    latency_s: float = 0.0
    builtin: bool | None = None  # as its call's


@dataclass(frozen=True)
class ImportedTurn:
    """One assistant message: its prose, the calls it requested (in parallel), their results.

    ``input_tokens``/``output_tokens`` are the model call's usage when the source recorded it
    (None: estimated from text length on import); ``tokens_estimated`` when the source itself
    says its counts were estimated.
    """

    text: str
    calls: tuple[ImportedCall, ...] = ()
    results: tuple[ImportedResult, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens_estimated: bool = False
    latency_s: float = 0.0
    cost_usd: float | None = None  # the model call's cost as the source recorded it


@dataclass(frozen=True)
class ImportedTool:
    """A tool the model was offered, as the source defined it (e.g. ``gen_ai.tool.definitions``)."""

    name: str
    server: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    builtin: bool | None = None  # as a call's
    annotations: dict[str, Any] | None = None  # the MCP tool's annotations, where the source kept them


@dataclass(frozen=True)
class ImportedJudgment:
    """A verdict the source recorded: a human label or a third-party judge's output."""

    judge: str
    source: str
    verdict: dict[str, Any] | None
    error: str = ""
    pass_no: int = 1


@dataclass(frozen=True)
class ImportedTrajectory:
    """One trial as another tool recorded it: its turns, final answer and any judgments."""

    scenario: str
    arm: str
    model: str
    epoch: int
    turns: tuple[ImportedTurn, ...]
    final_answer: str
    judgments: tuple[ImportedJudgment, ...] = ()
    origin: str = ""
    wall_s: float = 0.0  # recorded duration of the whole trial, when the source has one
    error: str = ""  # the trial ended in error (the source says so); "" when it finished
    tools: tuple[ImportedTool, ...] = ()  # the tools offered, when the source recorded them
    stop: str = ""  # why it ended when the source says (e.g. Inspect's "token_limit"); "" = answer/error


@dataclass(frozen=True)
class ImportedSuite:
    """A suite ready to write: ``suite`` and ``scenarios`` are YAML-ready and schema-valid."""

    source_format: str
    sources: tuple[str, ...]
    suite: dict[str, Any]
    scenarios: tuple[dict[str, Any], ...]
    trajectories: tuple[ImportedTrajectory, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def arms(self) -> list[str]:
        return list(self.suite.get("arms", {}))


# -- reading source files -----------------------------------------------------------------


def read_text(path: Path) -> str:
    """A source file's text (UTF-8, a BOM allowed), or an error naming the file and the fix.

    Only a regular file is read (a FIFO would hang the import, ``/dev/zero`` fill memory), and at
    most ``MAX_IMPORT_BYTES``: datasets are larger than suite files, but not without bound.
    """
    try:
        text = read_regular_bytes(path, MAX_IMPORT_BYTES).decode("utf-8-sig")
    except UnsafeFile as exc:
        raise ImportFormatError(str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
    return text


def read_json(path: Path) -> Any:
    """A JSON file, or JSON Lines when the name ends in ``.jsonl`` (a list of its lines)."""
    text = read_text(path)
    if path.suffix == ".jsonl":
        rows: list[Any] = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ImportFormatError(
                        f"{path}: line {n}, column {exc.colno}: not valid JSON ({exc.msg}); "
                        "each line must hold one JSON object"
                    ) from exc
        return rows
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
        ) from exc


def records_of(data: Any, path: Path, *, list_keys: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The list of objects a file holds (a top-level list, or the list under one of ``list_keys``)."""
    if isinstance(data, dict):
        for key in list_keys:
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list):
        where = f" (or an object with {' / '.join(map(repr, list_keys))})" if list_keys else ""
        raise ImportFormatError(f"{path}: expected a JSON list of objects{where}, got {type(data).__name__}")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise ImportFormatError(f"{path}: entry {i}: expected an object, got {type(item).__name__}")
    return data


def parse_list_text(value: str) -> Any:
    """Decode a cell that holds a list as text: JSON, or a Python list literal as pandas writes.

    The literal is parsed with ``ast.literal_eval`` (a parser of literals: nothing is called or
    evaluated), only when it looks like a list and is not huge.
    """
    text = value.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    if text.startswith("[") and text.endswith("]") and len(text) <= _MAX_LITERAL_CHARS:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    raise ValueError("not a JSON list")


def str_list(value: Any, where: str, what: str, example: str) -> list[str]:
    """A list of non-empty strings from a native list or a text cell; otherwise a clear error."""
    if isinstance(value, str):
        try:
            value = parse_list_text(value)
        except ValueError:
            raise ImportFormatError(
                f"{where}: expected a list of {what}, got text that is not a list; write it as a JSON list, "
                f"e.g. {example}"
            ) from None
    if not isinstance(value, list | tuple):
        raise ImportFormatError(
            f"{where}: expected a list of {what}, got {type(value).__name__}; write it as a JSON list, e.g. {example}"
        )
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ImportFormatError(
                f"{where}[{i}]: expected a string, got {type(item).__name__}; every item must be one of the {what}"
            )
        if item.strip():
            out.append(item.strip())
    return out


def text_field(row: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, float) and value != value):  # NaN: an empty Parquet/CSV cell
        value = ""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ImportFormatError(f"{where}, field '{key}': expected text, got {type(value).__name__}")
    if required and not value.strip():
        raise ImportFormatError(f"{where}, field '{key}': is empty; every entry needs a {key}")
    return value.strip()


def json_object(value: Any, where: str) -> dict[str, Any]:
    """Tool-call arguments: an object, or a string holding a JSON object ('' means none)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{where}: arguments are not valid JSON ({exc.msg})") from exc
    if not isinstance(value, dict):
        raise ImportFormatError(f"{where}: arguments must be a JSON object, got {type(value).__name__}")
    return value


# -- scenario building blocks --------------------------------------------------------------


def scenario_id(raw: str) -> str:
    """A scenario id the schema accepts (``[A-Za-z0-9_.-]+``) from a source's task id."""
    sid = _ID_CHARS.sub("-", raw.strip()).strip("-.")
    return sid or "task"


def title_of(prompt: str, limit: int = 80) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def key_points_from_steps(steps: str) -> list[str]:
    """Annotator steps (``"1. do x\\n2. do y"``) as a list of key points, numbering removed."""
    points = []
    for line in steps.splitlines():
        point = _STEP_NUMBER.sub("", line).strip()
        if point:
            points.append(point)
    return points


def complexity_of(steps: Sequence[Sequence[object]]) -> Complexity:
    """MCPAgentBench's invocation complexity from the shape of a gold solution."""
    calls = sum(len(s) for s in steps)
    if calls <= 1:
        return "single"
    if calls == 2:
        return "dual-parallel" if len(steps) == 1 else "dual-serial"
    return "multi"


def split_prefixed(name: str) -> tuple[str, str]:
    """``server_tool`` -> (server, tool), as MCP-Atlas names tools; no underscore -> ("", name)."""
    server, sep, tool = name.partition("_")
    return (server, tool) if sep and server and tool else ("", name)


def content_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of an OpenAI content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


__all__ = [
    "ImportFormatError",
    "ImportedCall",
    "ImportedJudgment",
    "ImportedResult",
    "ImportedSuite",
    "ImportedTool",
    "ImportedTrajectory",
    "ImportedTurn",
    "complexity_of",
    "content_text",
    "json_object",
    "key_points_from_steps",
    "parse_list_text",
    "read_json",
    "read_text",
    "records_of",
    "scenario_id",
    "split_prefixed",
    "str_list",
    "text_field",
    "title_of",
]
