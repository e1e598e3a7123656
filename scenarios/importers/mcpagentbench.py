"""Import MCPAgentBench (github.com/zixianglhhh/MCPAgentBench): tasks, published results, servers.

PATH is the repository checkout as published, or one task file. In a checkout:

* tasks ``data/tasks.json`` (the full general test; ``data/*.json`` are subsets): a list of
  ``{"id", "content", "tools", "inputs"}`` where ``tools`` are the steps of tool names (a step
  with several tools is parallel) and ``inputs`` the matching steps of argument objects;
* ``configs/evaluation_config.json`` ``skip_input_tools``: tools whose arguments upstream never
  compares (they become the suite's ``names_only_tools``);
* ``servers/TOOL.py``: one FastMCP stdio server per tool (mcp 1.x), written into the suite's
  ``mcpServers`` with an ``mcpagentbench`` arm when ``--python`` names an interpreter that has
  upstream's requirements installed.

The suite scores tool calls in the ``mcpagentbench`` match mode, upstream's evaluator rule for
rule. ``--results FILE`` (repeatable) imports a published results file
(``results/*/MODEL_general_test_runN_results.json``: ``detailed_results[]`` with ``task_id``,
``expected_tools``/``expected_inputs``, ``tools_used``/``inputs_used``) as trials of model
``imported:MODEL``, epoch N-1, each call step one model turn; proctor scores them at import, so
``proctor report`` prints TFS and TEFS next to the file's own ``model_score`` (TEFS) and
``ignore_parallel_score`` (TFS). A file under ``results/FOLDER/`` names model ``MODEL@FOLDER``. The benchmark has no licence: nothing of it is copied into
proctor, only read from the user's checkout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from proctor.scenarios.importers.common import (
    ImportedCall,
    ImportedSuite,
    ImportedTrajectory,
    ImportedTurn,
    ImportFormatError,
    complexity_of,
    read_json,
    records_of,
    scenario_id,
    title_of,
)
from proctor.scenarios.importers.mcpservers import add_server_arm
from proctor.scenarios.importers.suite_files import validated

TASKS_FILE = Path("data/tasks.json")
CONFIG_FILE = Path("configs/evaluation_config.json")
SERVERS_DIR = Path("servers")
ARM = "mcpagentbench"
MODE = "mcpagentbench"
_RESULTS_NAME = re.compile(r"^(?P<model>.+?)(?:_general_test)?(?:_run(?P<run>\d+))?_results$")


def is_checkout(path: Path) -> bool:
    return path.is_dir() and (path / TASKS_FILE).is_file()


def _steps(tools: Any, inputs: Any, where: str, names: tuple[str, str]) -> list[list[dict[str, Any]]]:
    """Gold (or used) calls as steps of ``{"tool", "arguments"}``, from upstream's paired lists."""
    tools_key, inputs_key = names
    if not isinstance(tools, list) or not all(isinstance(s, list) for s in tools):
        raise ImportFormatError(
            f"{where}, field {tools_key!r}: expected a list of steps, each a list of tool names, "
            'e.g. [["get_weather"], ["umbrella_advice"]]'
        )
    if not isinstance(inputs, list) or len(inputs) != len(tools):
        raise ImportFormatError(
            f"{where}, field {inputs_key!r}: expected one list of argument objects per step of "
            f"{tools_key!r} ({len(tools)} steps)"
        )
    steps = []
    for i, (names_step, args_step) in enumerate(zip(tools, inputs, strict=True)):
        if not isinstance(args_step, list) or len(args_step) != len(names_step):
            raise ImportFormatError(
                f"{where}, field '{inputs_key}[{i}]': expected {len(names_step)} argument object(s), "
                f"one per tool of '{tools_key}[{i}]'"
            )
        step = []
        for j, (name, args) in enumerate(zip(names_step, args_step, strict=True)):
            if not isinstance(name, str) or not name.strip():
                raise ImportFormatError(f"{where}, field '{tools_key}[{i}][{j}]': expected a tool name")
            if not isinstance(args, dict):
                raise ImportFormatError(
                    f"{where}, field '{inputs_key}[{i}][{j}]': expected an argument object, got {type(args).__name__}"
                )
            step.append({"tool": name, "arguments": args} if args else {"tool": name})
        steps.append(step)
    return steps


def _scenario(task_id: str, content: str, gold: list[list[dict[str, Any]]]) -> dict[str, Any]:
    scenario: dict[str, Any] = {
        "id": scenario_id(task_id),
        "title": title_of(content),
        "prompt": content.strip(),
        "gold_tool_calls": gold,
        "complexity": complexity_of(gold),
    }
    prefix = task_id.split("_", 1)[0]
    if prefix in ("daytask", "protask"):
        scenario["category"] = {"daytask": "daily", "protask": "professional"}[prefix]
    return scenario


def _task(entry: dict[str, Any], where: str) -> dict[str, Any]:
    raw_id, content = entry.get("id"), entry.get("content")
    if not isinstance(raw_id, str | int) or isinstance(raw_id, bool) or not str(raw_id).strip():
        raise ImportFormatError(f"{where}: field 'id' is missing; every task needs an id")
    where = f"{where} (id {raw_id})"
    if not isinstance(content, str) or not content.strip():
        raise ImportFormatError(f"{where}: field 'content' is missing or empty; it is the user's task")
    gold = _steps(entry.get("tools"), entry.get("inputs"), where, ("tools", "inputs"))
    if not gold:
        raise ImportFormatError(f"{where}, field 'tools': no steps; a task needs at least one gold call")
    return _scenario(str(raw_id), content, gold)


def _skip_list(path: Path) -> list[str]:
    data = read_json(path)
    skip = data.get("skip_input_tools") if isinstance(data, dict) else None
    if not isinstance(skip, list) or not all(isinstance(s, str) for s in skip):
        raise ImportFormatError(f"{path}, field 'skip_input_tools': expected a list of tool names")
    return sorted(set(skip))


def _model_and_run(path: Path) -> tuple[str, int]:
    """``results/tool20/openai_gpt-5_general_test_run3_results.json`` -> ("openai_gpt-5@tool20", 3)."""
    m = _RESULTS_NAME.match(path.stem)
    name, run = (path.stem, 1) if m is None else (m["model"], int(m["run"] or 1))
    if path.parent.parent.name == "results":
        name = f"{name}@{path.parent.name}"  # the folder is the experiment (tools offered per task)
    return name, run


def _results(
    files: Sequence[Path], known: dict[str, dict[str, Any]], model: str | None, notes: list[str]
) -> tuple[list[tuple[str, dict[str, Any]]], list[ImportedTrajectory]]:
    """Published results as trajectories (and the scenarios of tasks no task file has)."""
    extra: list[tuple[str, dict[str, Any]]] = []
    trajectories = []
    ordered = sorted(files, key=lambda f: (_model_and_run(f), str(f)))
    epochs: dict[str, int] = {}
    for f in ordered:
        name, _run = _model_and_run(f)
        name = model or name
        epoch = epochs[name] = epochs.get(name, -1) + 1  # the model's n-th run is its epoch n-1
        records = records_of(read_json(f), f, list_keys=("detailed_results",))
        seen: set[str] = set()
        for i, r in enumerate(records):
            where = f"{f}: detailed_results[{i}] (task_id {r.get('task_id', '?')})"
            task_id = r.get("task_id")
            if not isinstance(task_id, str) or not task_id.strip():
                raise ImportFormatError(f"{where}: field 'task_id' is missing")
            gold = _steps(
                r.get("expected_tools"),
                r.get("expected_inputs"),
                where,
                ("expected_tools", "expected_inputs"),
            )
            sid = scenario_id(task_id)
            if sid in seen:
                raise ImportFormatError(f"{where}: task {task_id!r} appears twice in this results file")
            seen.add(sid)
            if sid not in known:
                content = r.get("task_content")
                sc = _scenario(
                    task_id, content if isinstance(content, str) and content.strip() else task_id, gold
                )
                known[sid] = sc
                extra.append((where, sc))
                notes.append(
                    f"{where}: task not in the task file; its prompt is the results file's (cut at 100 characters)"
                )
            elif known[sid]["gold_tool_calls"] != gold:
                notes.append(
                    f"{where}: the results file's expected calls differ from the task file's; proctor scores against the task file"
                )
            used = _steps(r.get("tools_used"), r.get("inputs_used"), where, ("tools_used", "inputs_used"))
            turns = tuple(
                ImportedTurn(
                    "",
                    tuple(
                        ImportedCall(f"call_{s}_{j}", "", c["tool"], dict(c.get("arguments", {})))
                        for j, c in enumerate(step)
                    ),
                )
                for s, step in enumerate(used)
            )
            trajectories.append(ImportedTrajectory(sid, ARM, f"imported:{name}", epoch, turns, "", (), where))
    return extra, trajectories


def _server_config(root: Path, python: str) -> dict[str, Any]:
    servers = sorted((root / SERVERS_DIR).glob("*.py"))
    if not servers:
        raise ImportFormatError(
            f"{root / SERVERS_DIR}: no server files (*.py); --python needs the checkout's servers/"
        )
    return {"mcpServers": {f.stem: {"command": python, "args": [str(f.resolve())]} for f in servers}}


def read_mcpagentbench(
    path: Path,
    *,
    results: Sequence[Path] = (),
    servers_file: Path | None = None,
    python: str | None = None,
    model: str | None = None,
) -> ImportedSuite:
    checkout = is_checkout(path)
    task_file = path / TASKS_FILE if checkout else path
    if path.is_dir() and not checkout:
        raise ImportFormatError(
            f"{path}: not an MCPAgentBench checkout ({TASKS_FILE} is missing); give the checkout or a task file"
        )
    notes: list[str] = []
    scenarios: list[tuple[str, dict[str, Any]]] = []
    known: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(records_of(read_json(task_file), task_file)):
        where = f"{task_file}: task {i}"
        sc = _task(entry, where)
        if sc["id"] in known:
            raise ImportFormatError(f"{where}: id {sc['id']!r} appears twice; task ids must be unique")
        known[sc["id"]] = sc
        scenarios.append((where, sc))
    skip: list[str] = []
    if checkout and (path / CONFIG_FILE).is_file():
        skip = _skip_list(path / CONFIG_FILE)
    else:
        notes.append(
            f"no {CONFIG_FILE}: no tool is compared by name only; pass the checkout to use its skip list"
        )
    extra, trajectories = _results(results, known, model, notes)
    suite: dict[str, Any] = {
        "name": scenario_id(f"mcpagentbench-{path.resolve().stem}"),
        "description": f"Imported from MCPAgentBench ({path.name}); TFS/TEFS in upstream's match mode.",
        "arms": {"baseline": {"baseline": True, "description": "no MCP servers"}},
        "models": ["offline:default"],
        "scoring": {"tool_match": MODE, "names_only_tools": skip},
    }
    sources = [path, *results]
    if python is not None:
        if not checkout:
            raise ImportFormatError(f"{path}: --python needs the repository checkout (its servers/ folder)")
        config = _server_config(path, python)
        suite["mcpServers"] = config["mcpServers"]
        suite["arms"][ARM] = {
            "servers": sorted(config["mcpServers"]),
            "tool_retrieval": {"top_k": 40},
            "description": f"MCPAgentBench's {len(config['mcpServers'])} tool servers behind top-40 retrieval",
        }
    elif servers_file is not None:
        add_server_arm(suite, servers_file, notes)
        sources.append(servers_file)
    else:
        notes.append("no --python INTERPRETER (or --servers FILE): the suite has only the baseline arm")
    return validated(
        "mcpagentbench",
        sources,
        suite,
        scenarios + extra,
        trajectories=trajectories,
        notes=notes,
    )


__all__ = ["ARM", "is_checkout", "read_mcpagentbench"]
