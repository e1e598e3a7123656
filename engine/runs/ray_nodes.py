"""Before a Ray run places any worker: every node with CPUs is asked (``ray_probe.probe``, a plain
task pinned to it) for its proctor, Ray and Python versions and for the suite's variables and
server commands, and compared with the driver, so a node that would play differently, or crash
the driver with a raw ``ActorDiedError``, stops the run with exit 2 naming it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection
from typing import Any

from proctor.engine.runs import ray_probe
from proctor.engine.runs.options import RunError
from proctor.engine.runs.trial_seam import RunServices
from proctor.scenarios.model_ids import API_KEY_ENV
from proctor.scenarios.schema import HttpServer, StdioServer

PROBE_TIMEOUT_S = 60.0
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")
_OURS = {"PYTHON", "PROCTOR_SUITE_DIR", "PROCTOR_REPO", "PROCTOR_COMMIT", "PROCTOR_TRIAL_DIR", "PROCTOR_PORT"}


async def check_nodes(ray: Any, run: RunServices, models: Collection[str]) -> None:
    """Every node with CPUs has this proctor, and the suite's variables and commands the driver has."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    ray.cloudpickle.register_pickle_by_value(ray_probe)  # answers even where proctor is missing
    variables, commands = _needs(run, models)
    here = ray_probe.NodeView.of(ray_probe.probe(variables, commands))
    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
    task = ray.remote(ray_probe.probe)
    asked = [
        task.options(
            num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
        ).remote(variables, commands)
        for n in nodes
    ]
    try:
        answers = await asyncio.wait_for(asyncio.gather(*asked, return_exceptions=True), PROBE_TIMEOUT_S)
    except TimeoutError:
        raise RunError(f"the Ray nodes did not answer proctor's check within {PROBE_TIMEOUT_S:g}s") from None
    problems = []
    for node, answer in zip(nodes, answers, strict=True):
        name = _node_name(node)
        if isinstance(answer, BaseException):
            problems.append(f"node {name}: cannot run a task: {_last_line(answer)}")
        else:
            problems += ray_probe.problems(name, here, ray_probe.NodeView.of(answer))
    if problems:
        raise RunError("a Ray node cannot play this run as the driver would:\n  " + "\n  ".join(problems))


def _needs(run: RunServices, models: Collection[str]) -> tuple[list[str], list[str]]:
    """The variables (names) and commands the suite's servers and the run's models use."""
    variables: set[str] = set()
    commands: set[str] = set()
    for cfg in run.loaded.servers.values():
        variables |= set(_VARIABLE.findall(cfg.model_dump_json())) - _OURS
        launch = cfg.launch if isinstance(cfg, HttpServer) else cfg
        if isinstance(launch, StdioServer) and _findable(launch.command):
            commands.add(launch.command)
    for model in models:
        provider = model.partition(":")[0]
        spec = run.loaded.suite.providers.get(provider)
        key = (spec.api_key_env if spec is not None else None) or API_KEY_ENV.get(provider)
        if key:
            variables.add(key)
    return sorted(variables), sorted(commands)


def _node_name(node: dict[str, Any]) -> str:
    """``host (address:port)``: the port tells apart two nodes of one machine."""
    host, address = node.get("NodeManagerHostname", "?"), node.get("NodeManagerAddress", "?")
    return f"{host} ({address}:{node.get('NodeManagerPort', '?')})"


def _findable(command: str) -> bool:
    """A command a node finds as the driver does: on PATH or absolute, no variable in it."""
    return "${" not in command and ("/" not in command or command.startswith("/"))


def _last_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


__all__ = ["check_nodes"]
