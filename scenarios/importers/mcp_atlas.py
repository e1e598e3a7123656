"""Import MCP-Atlas tasks (Scale AI, CC BY 4.0) as a proctor suite.

Accepted files: the public dataset's table as CSV, JSON (a list of row objects), JSON Lines, or
Parquet (read with pyarrow when it is installed; proctor does not depend on it). Columns:

========================  =========  ============================================================
column                    required   becomes
========================  =========  ============================================================
TASK                      yes        the scenario id
PROMPT                    yes        the scenario prompt
GTFA_CLAIMS               yes        the scenario claims (a list; JSON or a Python list literal)
ENABLED_TOOLS             no         names the servers a task needs (``server_tool``)
TRAJECTORY                no         the reference trajectory (OpenAI chat messages): gold tool
                                     calls (one step per assistant message) and an imported trial
GTFA                      no         the reference final answer of that trial
GOLD_TOOL_CALLS           no         ``[{name, arguments}]`` when TRAJECTORY is absent (each call
                                     its own step); the shared fixture carries it
REQUIRED_SERVERS          no         checked against ``--servers``
========================  =========  ============================================================

MCP-Atlas names its servers but does not define them, so the suite has a baseline arm, plus an
``mcp`` arm when an ``mcpServers`` file is given. Tool names ``server_tool`` are split at the
first underscore into server and tool. A row's TRAJECTORY becomes a trial of model
``imported:mcp-atlas-reference`` in ``imported.db``, in arm ``mcp`` when there is one (so it can
be re-judged), else in arm ``reference``, which the suite does not define. The public sample's
trajectories end on a tool result and the file has no GTFA: such a trial is "no answer", never
judged as an (empty) answer, and the import says so.
"""

from __future__ import annotations

import csv
import importlib
import io
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from proctor.scenarios.importers.chat_turns import last_assistant_text, openai_messages_to_turns
from proctor.scenarios.importers.common import (
    ImportedSuite,
    ImportedTrajectory,
    ImportedTurn,
    ImportFormatError,
    complexity_of,
    json_object,
    parse_list_text,
    read_json,
    read_text,
    records_of,
    scenario_id,
    split_prefixed,
    str_list,
    text_field,
    title_of,
)
from proctor.scenarios.importers.mcpservers import add_server_arm
from proctor.scenarios.importers.suite_files import validated

COLUMNS = ("TASK", "PROMPT", "ENABLED_TOOLS", "TRAJECTORY", "GTFA", "GTFA_CLAIMS")
REQUIRED = ("TASK", "PROMPT", "GTFA_CLAIMS")
REFERENCE_ARM = "reference"
REFERENCE_MODEL = "imported:mcp-atlas-reference"
ATTRIBUTION = "MCP-Atlas, Scale AI and the MCP-Atlas authors, CC BY 4.0"
_CLAIMS_EXAMPLE = '["The average rating is 4.26.", "The average age is 32.5."]'


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The table's rows as dicts, whatever the file format."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path)
    if suffix in (".json", ".jsonl"):
        return records_of(read_json(path), path, list_keys=("rows", "data", "tasks"))
    if suffix == ".parquet":
        return _read_parquet(path)
    raise ImportFormatError(
        f"{path}: unsupported file type {suffix or '(none)'}; use .csv, .json, .jsonl or .parquet"
    )


def _read_csv(path: Path) -> list[dict[str, Any]]:
    csv.field_size_limit(max(csv.field_size_limit(), min(sys.maxsize, 2**31 - 1)))
    text = read_text(path)  # a regular file only, bounded: a FIFO or /dev/zero is refused
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        _check_columns(path, header, "its header")
        rows = [dict(r) for r in reader]
    except csv.Error as exc:
        raise ImportFormatError(f"{path}: not valid CSV ({exc})") from exc
    for i, row in enumerate(rows, start=1):
        if None in row:
            raise ImportFormatError(
                f"{path}: row {i}: more cells than header columns; quote cells that hold commas"
            )
    return rows


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    try:
        parquet: Any = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise ImportFormatError(
            f"{path}: reading Parquet needs pyarrow, which is not installed; install it "
            "(pip install pyarrow) or convert the file to CSV or JSON"
        ) from None
    try:
        table = parquet.read_table(str(path))
    except Exception as exc:  # pyarrow raises its own error types for unreadable files
        raise ImportFormatError(f"{path}: not a readable Parquet file ({exc})") from exc
    _check_columns(path, list(table.column_names), "its schema")
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def _check_columns(path: Path, columns: Sequence[str], where: str) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise ImportFormatError(
            f"{path}: {where} lacks column(s) {', '.join(missing)}; MCP-Atlas columns are {', '.join(COLUMNS)} "
            f"({', '.join(REQUIRED)} are required)"
        )


def _gold_from_turns(turns: tuple[ImportedTurn, ...]) -> list[list[dict[str, Any]]]:
    steps = []
    for turn in turns:
        step = [_gold(c.server, c.tool, c.arguments) for c in turn.calls if "_unparsed" not in c.arguments]
        if step:
            steps.append(step)
    return steps


def _gold(server: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call: dict[str, Any] = {"tool": tool}
    if server:
        call["server"] = server
    if arguments:
        call["arguments"] = arguments
    return call


def _gold_from_list(value: Any, where: str) -> list[list[dict[str, Any]]]:
    if isinstance(value, str):
        try:
            value = parse_list_text(value)
        except ValueError:
            raise ImportFormatError(f"{where}: expected a JSON list of {{name, arguments}} objects") from None
    if not isinstance(value, list):
        raise ImportFormatError(f"{where}: expected a list of {{name, arguments}} objects")
    steps = []
    for i, call in enumerate(value):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ImportFormatError(f"{where}[{i}]: expected an object with a 'name' string")
        server, tool = split_prefixed(call["name"])
        steps.append([_gold(server, tool, json_object(call.get("arguments"), f"{where}[{i}]"))])
    return steps


def _atlas_call(name: str, arguments: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    server, tool = split_prefixed(name)
    return server, tool, arguments


def _present(value: Any) -> bool:
    return value is not None and value != "" and not (isinstance(value, float) and value != value)


def no_answer_note(unanswered: int, total: int) -> str:
    """What a reference trajectory without a final answer means, said at import."""
    return (
        f"{unanswered} of {total} reference trajectories end without a final answer (the last message "
        'is a tool result and GTFA is absent or empty): imported as "no answer" (stop no_answer). '
        "Their calls are the scenarios' gold calls and score TFS/TEFS; no judge reads them and they "
        "count in no pass rate, since a missing answer is not a failed one"
    )


def read_mcp_atlas(path: Path, *, servers_file: Path | None = None) -> ImportedSuite:
    rows = read_rows(path)
    scenarios: list[tuple[str, dict[str, Any]]] = []
    trajectories: list[ImportedTrajectory] = []
    needed_servers: set[str] = set()
    for n, row in enumerate(rows, start=1):
        for col in REQUIRED:
            if col not in row:
                raise ImportFormatError(
                    f"{path}: row {n}: lacks column {col}; every row needs {', '.join(REQUIRED)}"
                )
        task = text_field(row, "TASK", f"{path}: row {n}")
        where = f"{path}: row {n} (TASK {task})"
        prompt = text_field(row, "PROMPT", where)
        claims = str_list(row["GTFA_CLAIMS"], f"{where}, field 'GTFA_CLAIMS'", "claims", _CLAIMS_EXAMPLE)
        if not claims:
            raise ImportFormatError(
                f"{where}, field 'GTFA_CLAIMS': is empty; a task needs at least one claim"
            )
        if _present(row.get("ENABLED_TOOLS")):
            tools = str_list(
                row["ENABLED_TOOLS"], f"{where}, field 'ENABLED_TOOLS'", "tool names", '["memory_read_graph"]'
            )
            needed_servers |= {split_prefixed(t)[0] for t in tools} - {""}
        if _present(row.get("REQUIRED_SERVERS")):
            needed_servers |= set(
                str_list(
                    row["REQUIRED_SERVERS"],
                    f"{where}, field 'REQUIRED_SERVERS'",
                    "server names",
                    '["memory"]',
                )
            )
        sid = scenario_id(task)
        gold: list[list[dict[str, Any]]] = []
        trajectory = row.get("TRAJECTORY")
        if _present(trajectory):
            if isinstance(trajectory, str):
                try:
                    trajectory = parse_list_text(trajectory)
                except ValueError:
                    raise ImportFormatError(
                        f"{where}, field 'TRAJECTORY': not a JSON list of chat messages; export it as JSON"
                    ) from None
            turns = openai_messages_to_turns(trajectory, f"{where}, field 'TRAJECTORY'", _atlas_call)
            gold = _gold_from_turns(turns)
            final = text_field(row, "GTFA", where, required=False) or last_assistant_text(turns)
            trajectories.append(
                ImportedTrajectory(sid, REFERENCE_ARM, REFERENCE_MODEL, 0, turns, final, origin=where)
            )
        elif _present(row.get("GOLD_TOOL_CALLS")):
            gold = _gold_from_list(row["GOLD_TOOL_CALLS"], f"{where}, field 'GOLD_TOOL_CALLS'")
        scenario: dict[str, Any] = {"id": sid, "title": title_of(prompt), "prompt": prompt, "claims": claims}
        if gold:
            scenario["gold_tool_calls"] = gold
            scenario["complexity"] = complexity_of(gold)
        scenarios.append((where, scenario))
    notes: list[str] = []
    suite: dict[str, Any] = {
        "name": scenario_id(f"mcp-atlas-{path.stem}"),
        "description": f"Imported from MCP-Atlas ({path.name}). Task data: {ATTRIBUTION}.",
        "arms": {"baseline": {"baseline": True, "description": "no MCP servers"}},
        "models": ["offline:default"],
    }
    sources = [path]
    if servers_file is not None:
        servers = add_server_arm(suite, servers_file, notes)
        sources.append(servers_file)
        missing = sorted(needed_servers - set(servers))
        if missing:
            notes.append(f"{servers_file}: does not define server(s) the tasks use: {', '.join(missing)}")
    elif needed_servers:
        notes.append(
            "MCP-Atlas names servers but does not define them (" + ", ".join(sorted(needed_servers)) + "); "
            "pass --servers FILE (an mcpServers config) to add an MCP arm"
        )
    unanswered = [t for t in trajectories if not t.final_answer.strip()]
    if unanswered:
        notes.append(no_answer_note(len(unanswered), len(trajectories)))
    if "mcp" in suite["arms"]:
        trajectories = [replace(t, arm="mcp") for t in trajectories]
    return validated("mcp-atlas", sources, suite, scenarios, trajectories=trajectories, notes=notes)


__all__ = ["COLUMNS", "REFERENCE_ARM", "REFERENCE_MODEL", "REQUIRED", "read_mcp_atlas", "read_rows"]
