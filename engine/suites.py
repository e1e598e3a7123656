"""A suite as it enters a run: its servers' secrets made known, credential-shaped names redacted.

Names are written everywhere: the run table, every report and export format, OTLP span names,
log file names, the terminal. A suite whose name, arm or server is a token (pasted by mistake,
or a hostile suite) would put it in all of them, so names are redacted once, here, before any
of those sees them; a gold call's server is renamed with its server. The secrets a server's
``env:`` and ``headers:`` hold are registered at the same moment, before anything is written.
Every command that runs, judges or reports a suite loads it through ``load_suite`` here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from proctor.engine.tools.server_secrets import server_secrets
from proctor.scenarios import loader
from proctor.scenarios.loader import LoadedSuite
from proctor.scenarios.schema import ArmSpec, GoldCall, Scenario, StdioServer
from proctor.store.redaction import SECRET_NAME, redact, register_secrets


def load_suite(root: str | Path, *, need_scenarios: bool = True) -> LoadedSuite:
    """``scenarios.loader.load_suite``, then ``admit``."""
    return admit(loader.load_suite(root, need_scenarios=need_scenarios))


def admit(loaded: LoadedSuite) -> LoadedSuite:
    """``loaded`` with its servers' secrets registered and its names redacted."""
    for config in loaded.servers.values():
        register_secrets(server_secrets(config))
    if withheld := _secret_passthrough(loaded):
        loaded = dataclasses.replace(loaded, notes=(*loaded.notes, *withheld))
    names = _Names()
    suite_name = names.safe(loaded.suite.name)
    server = {s: names.safe(s) for s in loaded.servers}
    arm = {a: names.safe(a) for a in loaded.suite.arms}
    if suite_name == loaded.suite.name and all(k == v for k, v in (server | arm).items()):
        return loaded
    suite = loaded.suite.model_copy(
        update={
            "name": suite_name,
            "arms": {arm[a]: _arm(spec, server) for a, spec in loaded.suite.arms.items()},
            "mcpServers": {server.get(s, s): c for s, c in loaded.suite.mcpServers.items()},
        }
    )
    return dataclasses.replace(
        loaded,
        suite=suite,
        servers={server[s]: c for s, c in loaded.servers.items()},
        scenarios=[_scenario(sc, server) for sc in loaded.scenarios],
    )


def _secret_passthrough(loaded: LoadedSuite) -> list[str]:
    """A warning per ``env_passthrough`` name that looks secret: it is withheld all the same."""
    listed = [("env_passthrough", n) for n in loaded.suite.env_passthrough]
    for server, cfg in loaded.servers.items():
        launch = cfg if isinstance(cfg, StdioServer) else cfg.launch
        listed += [
            (f"mcpServers.{server}.env_passthrough", n) for n in (launch.env_passthrough if launch else [])
        ]
    return [
        f"{loaded.root / 'suite.yaml'}: field '{where}': {name!r} looks like a secret, which is never passed "
        f"through; hand it to the server that needs it as env: {{{name}: ${{{name}}}}}"
        for where, name in listed
        if SECRET_NAME.search(name)
    ]


class _Names:
    """Redacted names, kept distinct: two tokens of one kind must stay two arms or servers."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def safe(self, name: str) -> str:
        clean = redact(name)
        if clean == name:
            return name
        candidate, n = clean, 1
        while candidate in self._seen.values() and self._seen.get(name) != candidate:
            n += 1
            candidate = f"{clean} #{n}"
        self._seen[name] = candidate
        return candidate


def _arm(spec: ArmSpec, server: dict[str, str]) -> ArmSpec:
    return spec.model_copy(
        update={
            "servers": [server.get(s, s) for s in spec.servers],
            "distractors": [server.get(s, s) for s in spec.distractors],
        }
    )


def _scenario(scenario: Scenario, server: dict[str, str]) -> Scenario:
    if not any(
        g.server in server and server[g.server] != g.server for step in scenario.gold_tool_calls for g in step
    ):
        return scenario

    def renamed(g: GoldCall) -> GoldCall:
        return g if g.server is None else g.model_copy(update={"server": server.get(g.server, g.server)})

    return scenario.model_copy(
        update={"gold_tool_calls": [[renamed(g) for g in step] for step in scenario.gold_tool_calls]}
    )


__all__ = ["admit", "load_suite"]
