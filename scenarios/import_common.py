"""What every benchmark importer shares: the imported data model, field parsing, suite writing.

An importer turns a public benchmark's files into an ``ImportedSuite``: suite and scenario
mappings already validated against the suite schema, plus any transcripts the source holds as
plain data (this package may not import the store; ``proctor.engine.runs.imported_runs`` turns them
into events). Nothing is written until everything has been read and validated, and then only
into a staging folder that is moved into place at the end, so a bad input never leaves a
partial suite behind.

Every error names the file, the row or entry, the field, and what would fix it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from proctor.scenarios.loader import SuiteError, load_suite
from proctor.scenarios.schema import Complexity, Scenario, Suite

_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_STEP_NUMBER = re.compile(r"^\s*(?:\d+\s*[.):]|[-*•])\s*")
# A Python list literal is parsed (never evaluated) only up to this size.
_MAX_LITERAL_CHARS = 4_000_000


class ImportFormatError(SuiteError):
    """A source file cannot be imported; the message says where and how to fix it."""


@dataclass(frozen=True)
class ImportedCall:
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ImportedResult:
    call_id: str
    server: str
    tool: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ImportedTurn:
    """One assistant message: its prose, the calls it requested (in parallel), their results."""

    text: str
    calls: tuple[ImportedCall, ...] = ()
    results: tuple[ImportedResult, ...] = ()


@dataclass(frozen=True)
class ImportedJudgment:
    """A verdict the source recorded: a human label or a third-party judge's output."""

    judge: str
    source: str
    verdict: dict[str, Any] | None
    error: str = ""
    pass_no: int = 1


@dataclass(frozen=True)
class ImportedTranscript:
    scenario: str
    arm: str
    model: str
    epoch: int
    turns: tuple[ImportedTurn, ...]
    final_answer: str
    judgments: tuple[ImportedJudgment, ...] = ()
    origin: str = ""


@dataclass(frozen=True)
class ImportedSuite:
    """A suite ready to write: ``suite`` and ``scenarios`` are YAML-ready and schema-valid."""

    source_format: str
    sources: tuple[str, ...]
    suite: dict[str, Any]
    scenarios: tuple[dict[str, Any], ...]
    transcripts: tuple[ImportedTranscript, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def arms(self) -> list[str]:
        return list(self.suite.get("arms", {}))


# -- reading source files -----------------------------------------------------------------


def read_json(path: Path) -> Any:
    """A JSON file, or JSON Lines when the name ends in ``.jsonl`` (a list of its lines)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
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


CallMapper = Callable[[str, dict[str, Any]], tuple[str, str, dict[str, Any]]]


def openai_messages_to_turns(messages: Any, where: str, map_call: CallMapper) -> tuple[ImportedTurn, ...]:
    """OpenAI chat ``messages`` as turns: each assistant message with the results of its calls.

    ``map_call(name, arguments)`` gives (server, tool, arguments) for one requested call, so a
    source's naming (``server_tool``, a router's ``execute-tool``) becomes proctor's. Arguments
    that are not valid JSON are kept as ``{"_unparsed": text}``: a model's malformed call is a
    fact of the transcript, not an import error.
    """
    if not isinstance(messages, list):
        raise ImportFormatError(
            f"{where}: expected a list of chat messages, got {type(messages).__name__}; "
            "write it as a JSON list of {role, content, tool_calls} objects"
        )
    turns: list[tuple[str, list[ImportedCall], list[ImportedResult]]] = []
    by_id: dict[str, ImportedCall] = {}
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise ImportFormatError(f"{where}[{i}]: expected a message object, got {type(msg).__name__}")
        role = msg.get("role")
        if role == "assistant":
            calls = []
            for j, raw in enumerate(msg.get("tool_calls") or []):
                call = _call(raw, f"{where}[{i}].tool_calls[{j}]", map_call, fallback_id=f"call-{i}-{j}")
                by_id[call.call_id] = call
                calls.append(call)
            turns.append((content_text(msg.get("content")).strip(), calls, []))
        elif role == "tool":
            call_id = str(msg.get("tool_call_id") or "")
            known = by_id.get(call_id)
            content = content_text(msg.get("content"))
            result = ImportedResult(
                call_id=call_id,
                server=known.server if known else "",
                tool=known.tool if known else str(msg.get("name") or ""),
                content=content,
                is_error=bool(msg.get("is_error")) or content.rstrip().endswith("isError=True"),
            )
            if not turns:
                turns.append(("", [], []))
            turns[-1][2].append(result)
        elif role not in ("system", "user", "developer"):
            raise ImportFormatError(
                f"{where}[{i}], field 'role': {role!r} is not a chat role (valid: system, user, assistant, tool)"
            )
    return tuple(ImportedTurn(text, tuple(calls), tuple(results)) for text, calls, results in turns)


def _call(raw: Any, where: str, map_call: CallMapper, fallback_id: str) -> ImportedCall:
    fn = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise ImportFormatError(f"{where}: expected {{id, function: {{name, arguments}}}}")
    args_raw = fn.get("arguments")
    try:
        args = json_object(args_raw, where)
    except ImportFormatError:
        args = {"_unparsed": str(args_raw)}
    server, tool, args = map_call(fn["name"], args)
    return ImportedCall(call_id=str(raw.get("id") or fallback_id), server=server, tool=tool, arguments=args)


def last_assistant_text(turns: Sequence[ImportedTurn]) -> str:
    for turn in reversed(turns):
        if turn.text and not turn.calls:
            return turn.text
    return ""


def number_epochs(transcripts: Sequence[ImportedTranscript]) -> tuple[ImportedTranscript, ...]:
    """Give repeated (scenario, arm, model) transcripts epochs 0, 1, ... in source order."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for t in transcripts:
        key = (t.scenario, t.arm, t.model)
        epoch = seen.get(key, 0)
        seen[key] = epoch + 1
        out.append(replace(t, epoch=epoch))
    return tuple(out)


# -- validation and writing ----------------------------------------------------------------


def validated(
    source_format: str,
    sources: Sequence[Path],
    suite: dict[str, Any],
    scenarios: Sequence[tuple[str, dict[str, Any]]],
    *,
    transcripts: Sequence[ImportedTranscript] = (),
    notes: Sequence[str] = (),
) -> ImportedSuite:
    """Check every mapping against the suite schema; ``scenarios`` pairs each with its origin."""
    first = str(sources[0]) if sources else source_format
    if not scenarios:
        raise ImportFormatError(f"{first}: no tasks found; nothing to import")
    _check(Suite, suite, f"{first}: the suite built from it")
    seen: dict[str, str] = {}
    for origin, data in scenarios:
        _check(Scenario, data, origin)
        sid = str(data["id"])
        if sid in seen:
            raise ImportFormatError(
                f"{origin}: task id {sid!r} is already used by {seen[sid]}; task ids must be unique"
            )
        seen[sid] = origin
    known_arms = set(suite.get("arms", {}))
    extra = sorted({t.arm for t in transcripts} - known_arms)
    all_notes = list(notes)
    if extra:
        all_notes.append(
            f"imported transcripts use arm(s) {', '.join(extra)} that the suite does not define; they can be "
            "exported and compared, but re-judging needs their arm in the suite: give the servers they used"
        )
    return ImportedSuite(
        source_format=source_format,
        sources=tuple(str(s) for s in sources),
        suite=suite,
        scenarios=tuple(data for _, data in scenarios),
        transcripts=tuple(transcripts),
        notes=tuple(all_notes),
    )


def _check(model: type[Suite] | type[Scenario], data: dict[str, Any], where: str) -> None:
    try:
        model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"field '{'.'.join(str(p) for p in e['loc']) or '(top level)'}': {e['msg']}" for e in exc.errors()
        )
        raise ImportFormatError(f"{where}: cannot become a {model.__name__.lower()}: {problems}") from exc


def _dump_yaml(data: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)


def write_suite_files(imported: ImportedSuite, root: Path) -> None:
    """Write ``suite.yaml`` and ``scenarios/<id>.yaml`` into ``root`` and load them back."""
    (root / "scenarios").mkdir(parents=True, exist_ok=True)
    (root / "suite.yaml").write_text(_dump_yaml(imported.suite), encoding="utf-8")
    for sc in imported.scenarios:
        (root / "scenarios" / f"{sc['id']}.yaml").write_text(_dump_yaml(sc), encoding="utf-8")
    load_suite(root)


def _is_replaceable(path: Path) -> bool:
    return path.is_dir() and (not any(path.iterdir()) or (path / "suite.yaml").is_file())


@contextmanager
def staged_dir(out_dir: Path, *, force: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder beside ``out_dir``; move it into place only on success.

    ``out_dir`` may be missing or empty; with ``force`` it may also be an earlier suite (a
    folder with ``suite.yaml``), which is replaced. Anything else is refused, even with force.
    """
    out_dir = out_dir.absolute()
    if out_dir.exists():
        if not out_dir.is_dir():
            raise ImportFormatError(f"{out_dir}: is a file; -o must name a folder")
        empty = not any(out_dir.iterdir())
        if not empty and not force:
            raise ImportFormatError(
                f"{out_dir}: already exists and is not empty; choose another -o DIR, or pass --force to replace "
                "an earlier import"
            )
        if not empty and not _is_replaceable(out_dir):
            raise ImportFormatError(
                f"{out_dir}: is not a suite folder (no suite.yaml); refusing to replace it"
            )
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".partial", dir=out_dir.parent))
    try:
        yield stage
        stage.chmod(0o755)
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
            os.replace(out_dir, old / "previous")
            os.replace(stage, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(stage, out_dir)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


__all__ = [
    "CallMapper",
    "ImportFormatError",
    "ImportedCall",
    "ImportedJudgment",
    "ImportedResult",
    "ImportedSuite",
    "ImportedTranscript",
    "ImportedTurn",
    "complexity_of",
    "content_text",
    "json_object",
    "key_points_from_steps",
    "last_assistant_text",
    "number_epochs",
    "openai_messages_to_turns",
    "parse_list_text",
    "read_json",
    "records_of",
    "scenario_id",
    "split_prefixed",
    "staged_dir",
    "str_list",
    "text_field",
    "title_of",
    "validated",
    "write_suite_files",
]
