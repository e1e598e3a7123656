"""Before the first trial, start the shared MCP servers the run's arms use, and say so.

Started lazily by the first trials, servers made the first seconds of a run look stalled:
every trial "running", nothing finishing, nothing saying why. Started here, with a
``servers_starting`` event when startup begins and as each server comes up, a reader can say
"starting servers: 2 of 5 ready". A server that fails here is left to the trials that need it:
they try it again and record why it failed, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from proctor.engine.runs.gold_check import START_CONCURRENCY
from proctor.engine.runs.trial_seam import RunServices
from proctor.scenarios.schema import ServerConfig
from proctor.store.events import ServersStarting
from proctor.store.read.reader import TrialRecord


def shared_servers(run: RunServices, trials: Sequence[TrialRecord]) -> dict[str, tuple[str, ServerConfig]]:
    """The distinct shared servers ``trials`` will use, keyed as the pool keys them."""
    suite = run.loaded.suite
    found: dict[str, tuple[str, ServerConfig]] = {}
    for arm_name, scenario_id in sorted({(t.arm, t.scenario) for t in trials}):
        arm = suite.arms[arm_name]
        if arm.baseline:
            continue
        names = [*arm.servers, *arm.distractors]
        configs = run.workspace.servers_for(names, run.loaded.scenario(scenario_id))
        for name, cfg in configs.items():
            if cfg.lifecycle == "shared":
                found.setdefault(f"{name}\x00{cfg.model_dump_json()}", (name, cfg))
    return found


async def start_shared_servers(run: RunServices, trials: Sequence[TrialRecord]) -> None:
    """Start every shared server ``trials`` use, emitting progress; failures are not raised."""
    servers = list(shared_servers(run, trials).values())
    if not servers:
        return
    waiting = [name for name, _ in servers]
    ready = failed = 0

    def report() -> None:
        run.writer.emit(
            run.run_id, ServersStarting(total=len(servers), ready=ready, failed=failed, waiting=list(waiting))
        )

    report()
    limit = asyncio.Semaphore(START_CONCURRENCY)

    async def start(name: str, cfg: ServerConfig) -> None:
        nonlocal ready, failed
        async with limit:
            try:
                await run.pool.acquire(name, cfg)
            except Exception:
                failed += 1
            else:
                ready += 1
        waiting.remove(name)
        report()

    await asyncio.gather(*(start(name, cfg) for name, cfg in servers))
    await run.writer.flush()


__all__ = ["shared_servers", "start_shared_servers"]
