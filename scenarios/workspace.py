"""Where a run's pinned repositories and server configs come from.

A scenario's repository is pinned by commit; a ``source`` folder is materialized once into a
cache keyed by that commit. Server configs are expanded against the environment plus the
variables proctor provides (``${PYTHON}``, ``${PROCTOR_REPO}``, ``${PROCTOR_COMMIT}``,
``${PROCTOR_SUITE_DIR}``, and ``${PROCTOR_PORT}`` for HTTP servers proctor launches).
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from proctor.scenarios.loader import LoadedSuite, SuiteError, expand_server
from proctor.scenarios.repo import PinnedRepo, RepoError, clean_checkout, materialize
from proctor.scenarios.schema import HttpServer, RepoSpec, Scenario, ServerConfig, StdioServer

TRIAL_DIR_MARK = "@@PROCTOR_TRIAL_DIR@@"  # no JSON escaping, so it survives model_dump_json


def cache_dir() -> Path:
    root = os.environ.get("PROCTOR_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "proctor"
    )
    return Path(root)


@dataclass
class Workspace:
    loaded: LoadedSuite
    _repos: dict[RepoSpec, PinnedRepo]
    _ports: dict[tuple[str, str], int]
    _expanded: dict[tuple[tuple[str, ...], str], dict[str, ServerConfig]]

    @classmethod
    def prepare(cls, loaded: LoadedSuite) -> Workspace:
        ws = cls(loaded, {}, {}, {})
        for sc in loaded.scenarios:
            ws.repo_for(sc)
        return ws

    def repo_spec(self, scenario: Scenario) -> RepoSpec | None:
        return scenario.repo or self.loaded.suite.repo

    def repo_for(self, scenario: Scenario | None) -> PinnedRepo | None:
        """``None`` as the scenario: the suite's own repo (``servers check`` of a suite without scenarios)."""
        spec = self.repo_spec(scenario) if scenario is not None else self.loaded.suite.repo
        if spec is None:
            return None
        if spec not in self._repos:
            self._repos[spec] = self._open(spec, scenario)
        return self._repos[spec]

    def _open(self, spec: RepoSpec, scenario: Scenario | None) -> PinnedRepo:
        # The suite's own repo is suite.yaml's mistake, not the first scenario's that used it.
        suite_file = self.loaded.root / "suite.yaml"
        own = scenario is not None and scenario.repo is not None
        where = self.loaded.scenario_files.get(scenario.id, suite_file) if scenario and own else suite_file
        field = "repo"
        try:
            if spec.source is not None:
                source = (self.loaded.root / spec.source).resolve()
                dest = cache_dir() / "repos" / spec.commit
                sha = materialize(source, dest)
                if not sha.startswith(spec.commit):
                    raise SuiteError(
                        f"{where}: field '{field}.commit': {spec.source} materializes to {sha}, not {spec.commit}; "
                        f"pin the new commit if the files changed on purpose"
                    )
                return PinnedRepo(dest, sha)
            assert spec.path is not None
            source = (self.loaded.root / spec.path).resolve()
            dest = cache_dir() / "checkouts" / f"{_safe(source.name)}-{spec.commit}"
            return PinnedRepo(dest, clean_checkout(source, spec.commit, dest))
        except RepoError as exc:
            raise SuiteError(f"{where}: field '{field}': {exc}") from exc

    def servers_for(self, names: list[str], scenario: Scenario | None) -> dict[str, ServerConfig]:
        """The named servers' configs with variables expanded (cached: the same for every trial)."""
        repo = self.repo_for(scenario)
        key = (tuple(names), repo.commit if repo else "")
        if key not in self._expanded:
            self._expanded[key] = self._expand(names, repo)
        return self._expanded[key]

    def _expand(self, names: list[str], repo: PinnedRepo | None) -> dict[str, ServerConfig]:
        variables = dict(os.environ) | {
            "PYTHON": sys.executable,
            "PROCTOR_SUITE_DIR": str(self.loaded.root),
            "PROCTOR_REPO": str(repo.path) if repo else "",
            "PROCTOR_COMMIT": repo.commit if repo else "",
            "PROCTOR_TRIAL_DIR": TRIAL_DIR_MARK,  # a fresh folder per trial, filled in by the server pool
        }
        out: dict[str, ServerConfig] = {}
        for name in names:
            cfg = self.loaded.servers[name]
            if isinstance(cfg, HttpServer) and cfg.launch is not None:
                port = self._ports.setdefault((name, repo.commit if repo else ""), free_port())
                variables = variables | {"PROCTOR_PORT": str(port)}
            try:
                out[name] = expand_server(name, cfg, variables)
            except SuiteError as exc:
                raise SuiteError(f"{self.loaded.root / 'suite.yaml'}: {exc}") from exc
            out[name] = _with_passthrough(out[name], self.loaded.suite.env_passthrough)
            if not out[name].roots and repo is not None:
                out[name] = out[name].model_copy(update={"roots": [str(repo.path)]})
            if cfg.lifecycle != "per_trial" and TRIAL_DIR_MARK in out[name].model_dump_json():
                raise SuiteError(
                    f"{self.loaded.root / 'suite.yaml'}: field 'mcpServers.{name}': ${{PROCTOR_TRIAL_DIR}} is a "
                    "fresh folder per trial, so the server needs 'lifecycle: per_trial'"
                )
        return out


def _with_passthrough(cfg: ServerConfig, names: list[str]) -> ServerConfig:
    """``cfg`` (or the command that serves it) also given the suite's ``env_passthrough`` names."""
    if not names:
        return cfg
    if isinstance(cfg, StdioServer):
        return cfg.model_copy(update={"env_passthrough": [*names, *cfg.env_passthrough]})
    if cfg.launch is None:
        return cfg
    launch = cfg.launch.model_copy(update={"env_passthrough": [*names, *cfg.launch.env_passthrough]})
    return cfg.model_copy(update={"launch": launch})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "repo"
