"""Import MCPAgentBench-style tasks: a query and its unique, step-structured gold solution.

The MCPAgentBench paper (seed 004) defines a test case as a task description, the MCP tool
definitions (with mock code), and the unique solution: a sequence of tool invocations that is
single, dual-serial, dual-parallel or multi-step. No public file layout is fixed there, so this
is the layout proctor accepts:

* ``PATH`` is a ``.json`` file (a list of tasks, or ``{"tasks": [...]}``), a ``.jsonl`` file
  (one task per line), or a folder of such files.
* A task:

  ========================================  ========  ===============================================
  field                                     required  meaning
  ========================================  ========  ===============================================
  ``id`` (or ``task_id``)                   yes       scenario id
  ``query`` (or ``task``, ``question``)     yes       the user task
  ``solution`` (or ``gold``, ``answer``)    yes       list of steps, in order; a step is one call or a
                                                      list of calls made in parallel
  ``type`` (or ``complexity``)              no        single | dual_serial | dual_parallel | multi;
                                                      derived from the solution's shape when absent
  ``domain`` (or ``category``)              no        e.g. general, professional
  ``tools``                                 no        candidate tool definitions (counted, not used)
  ========================================  ========  ===============================================

* A call: ``{"name": str, "arguments": object | JSON string, "server": str?}`` (``tool`` for
  ``name`` and ``parameters``/``args`` for ``arguments`` are accepted too).

Example::

    {"id": "weather-then-umbrella", "query": "Is it raining in Oslo, and should I take an umbrella?",
     "type": "dual_serial",
     "solution": [[{"name": "get_weather", "arguments": {"city": "Oslo"}}],
                  [{"name": "umbrella_advice", "arguments": {"condition": "rain"}}]]}

MCPAgentBench's tools are mock code in its own sandbox, so the suite has a baseline arm, plus an
``mcp`` arm when an ``mcpServers`` file serving those tools is given.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from proctor.scenarios.import_common import (
    ImportedSuite,
    ImportFormatError,
    complexity_of,
    json_object,
    read_json,
    records_of,
    scenario_id,
    title_of,
    validated,
)
from proctor.scenarios.import_mcpservers import add_server_arm
from proctor.scenarios.schema import Complexity

_TYPES: dict[str, Complexity] = {
    "single": "single",
    "single-tool": "single",
    "dual-serial": "dual-serial",
    "dual-tool-serial": "dual-serial",
    "serial": "dual-serial",
    "dual-parallel": "dual-parallel",
    "dual-tool-parallel": "dual-parallel",
    "parallel": "dual-parallel",
    "multi": "multi",
    "multi-tool": "multi",
    "multiple": "multi",
}
_EXAMPLE = '[[{"name": "get_weather", "arguments": {"city": "Oslo"}}]]'


def _first(entry: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any]:
    for k in keys:
        if k in entry and entry[k] is not None:
            return k, entry[k]
    return keys[0], None


def _call(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ImportFormatError(
            f"{where}: expected a call object {{name, arguments}}, got {type(raw).__name__}"
        )
    _, name = _first(raw, ("name", "tool", "tool_name"))
    if not isinstance(name, str) or not name.strip():
        raise ImportFormatError(f"{where}: the call has no 'name'; give the tool's name, e.g. {_EXAMPLE}")
    _, args = _first(raw, ("arguments", "parameters", "args", "params", "input"))
    call: dict[str, Any] = {"tool": name.strip()}
    server = raw.get("server") or raw.get("server_name")
    if isinstance(server, str) and server.strip():
        call["server"] = server.strip()
    arguments = json_object(args, where)
    if arguments:
        call["arguments"] = arguments
    return call


def parse_solution(value: Any, where: str) -> list[list[dict[str, Any]]]:
    """The gold solution as steps of parallel calls (the scenario's ``gold_tool_calls``)."""
    if not isinstance(value, list) or not value:
        raise ImportFormatError(
            f"{where}: expected a non-empty list of steps (a step is a call or a list of parallel calls), "
            f"e.g. {_EXAMPLE}"
        )
    steps = []
    for i, step in enumerate(value):
        here = f"{where}[{i}]"
        if isinstance(step, dict) and isinstance(step.get("calls"), list):
            step = step["calls"]
        if isinstance(step, list):
            if not step:
                raise ImportFormatError(f"{here}: an empty step; remove it or list its calls")
            steps.append([_call(c, f"{here}[{j}]") for j, c in enumerate(step)])
        else:
            steps.append([_call(step, here)])
    return steps


def _complexity(
    entry: dict[str, Any], steps: list[list[dict[str, Any]]], where: str, notes: list[str]
) -> Complexity:
    key, label = _first(entry, ("type", "complexity", "invocation_type"))
    derived = complexity_of(steps)
    if label is None or label == "":
        return derived
    norm = re.sub(r"[\s_-]+", "-", str(label).strip().lower())
    if norm not in _TYPES:
        raise ImportFormatError(
            f"{where}, field '{key}': {label!r} is not a complexity; use single, dual_serial, dual_parallel or multi"
        )
    if _TYPES[norm] != derived:
        notes.append(
            f"{where}: labelled {_TYPES[norm]} but its solution has the shape of {derived}; kept the label"
        )
    return _TYPES[norm]


def _task(entry: dict[str, Any], where: str, notes: list[str]) -> dict[str, Any]:
    key, raw_id = _first(entry, ("id", "task_id"))
    if not isinstance(raw_id, str | int) or isinstance(raw_id, bool) or not str(raw_id).strip():
        raise ImportFormatError(f"{where}: field 'id' is missing; every task needs an id (or task_id)")
    where = f"{where} (id {raw_id})"
    key, query = _first(entry, ("query", "task", "question", "prompt"))
    if not isinstance(query, str) or not query.strip():
        raise ImportFormatError(f"{where}: field 'query' is missing or empty; give the user task as text")
    key, solution = _first(entry, ("solution", "gold", "answer", "gold_solution", "golden_solution"))
    if solution is None:
        raise ImportFormatError(f"{where}: field 'solution' is missing; give the gold calls, e.g. {_EXAMPLE}")
    steps = parse_solution(solution, f"{where}, field '{key}'")
    scenario: dict[str, Any] = {
        "id": scenario_id(str(raw_id)),
        "title": title_of(query),
        "prompt": query.strip(),
        "gold_tool_calls": steps,
        "complexity": _complexity(entry, steps, where, notes),
    }
    _, domain = _first(entry, ("domain", "category"))
    if isinstance(domain, str) and domain.strip():
        scenario["category"] = domain.strip()
    return scenario


def read_mcpagentbench(path: Path, *, servers_file: Path | None = None) -> ImportedSuite:
    files = sorted([*path.glob("*.json"), *path.glob("*.jsonl")]) if path.is_dir() else [path]
    if not files:
        raise ImportFormatError(f"{path}: no *.json or *.jsonl files in this folder")
    notes: list[str] = []
    scenarios: list[tuple[str, dict[str, Any]]] = []
    tool_defs = 0
    for f in files:
        for i, entry in enumerate(records_of(read_json(f), f, list_keys=("tasks",))):
            where = f"{f}: task {i}"
            scenarios.append((where, _task(entry, where, notes)))
            tools = entry.get("tools")
            tool_defs += len(tools) if isinstance(tools, list) else 0
    if tool_defs:
        notes.append(
            f"{tool_defs} candidate tool definitions were not imported: serve them from an MCP server and "
            "pass --servers FILE"
        )
    suite: dict[str, Any] = {
        "name": scenario_id(f"mcpagentbench-{path.stem}"),
        "description": f"Imported from MCPAgentBench-style tasks ({path.name}); scored by TFS/TEFS tool-call match.",
        "arms": {"baseline": {"baseline": True, "description": "no MCP servers"}},
        "models": ["offline:default"],
    }
    sources = [path]
    if servers_file is not None:
        add_server_arm(suite, servers_file, notes)
        sources.append(servers_file)
    else:
        notes.append(
            "no --servers FILE given: the suite has only the baseline arm, which cannot make the gold calls"
        )
    return validated("mcpagentbench", sources, suite, scenarios, notes=notes)


__all__ = ["parse_solution", "read_mcpagentbench"]
