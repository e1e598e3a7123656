"""Configuration: a TOML file, overridden by ``TINYQ_*`` environment variables.

Precedence, lowest to highest: built-in defaults, the file, the environment. Every value is
validated when loaded, so a bad setting fails at start-up with the key's name rather than
later inside a worker.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError

#: Worker threads per pool when neither the file nor the environment says.
DEFAULT_CONCURRENCY = 4

#: Storage used when none is configured: nothing survives a restart.
DEFAULT_STORAGE_URL = "memory://"

#: Prefix of the environment variables that override the file, e.g. ``TINYQ_CONCURRENCY``.
ENV_PREFIX = "TINYQ_"

#: Config file looked up in the current directory when no path is given.
DEFAULT_CONFIG_FILE = "tinyq.toml"


@dataclass(frozen=True)
class Config:
    """Settings for a worker process."""

    storage_url: str = DEFAULT_STORAGE_URL
    queue: str = "default"
    concurrency: int = DEFAULT_CONCURRENCY
    max_attempts: int = 5
    base_delay: float = 0.5
    rate_limit: float | None = None
    rate_burst: int = 10
    log_level: str = "INFO"


def _coerce(name: str, raw: Any, target: Any) -> Any:
    """Convert ``raw`` (from TOML or an environment string) to the field's type."""
    try:
        if target in ("int", int):
            value: Any = int(raw)
        elif target in ("float", float):
            value = float(raw)
        elif target in ("float | None", float | None):
            value = None if raw in (None, "", "none") else float(raw)
        else:
            value = str(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: cannot use {raw!r} as {target}") from None
    return value


def _validate(cfg: Config) -> Config:
    if cfg.concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {cfg.concurrency}")
    if cfg.max_attempts < 1:
        raise ConfigError(f"max_attempts must be at least 1, got {cfg.max_attempts}")
    if cfg.base_delay < 0:
        raise ConfigError(f"base_delay cannot be negative, got {cfg.base_delay}")
    if cfg.rate_limit is not None and cfg.rate_limit <= 0:
        raise ConfigError("rate_limit must be positive (or unset for no limit)")
    if cfg.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ConfigError(f"log_level must be DEBUG, INFO, WARNING or ERROR, got {cfg.log_level!r}")
    return cfg


def apply_overrides(cfg: Config, values: Mapping[str, Any], source: str) -> Config:
    """Return ``cfg`` with ``values`` applied; unknown keys are an error naming ``source``."""
    types = {f.name: f.type for f in fields(Config)}
    changes: dict[str, Any] = {}
    for key, raw in values.items():
        if key not in types:
            known = ", ".join(sorted(types))
            raise ConfigError(f"{source}: unknown setting {key!r} (known: {known})")
        changes[key] = _coerce(f"{source}: {key}", raw, types[key])
    return replace(cfg, **changes)


def env_overrides(environ: Mapping[str, str]) -> dict[str, str]:
    """Settings taken from ``TINYQ_<NAME>`` variables, e.g. ``TINYQ_STORAGE_URL``."""
    names = {f.name for f in fields(Config)}
    out: dict[str, str] = {}
    for var, value in environ.items():
        if var.startswith(ENV_PREFIX):
            key = var[len(ENV_PREFIX) :].lower()
            if key in names:
                out[key] = value
    return out


def load_config_file(path: Path) -> dict[str, Any]:
    """The ``[tinyq]`` table of a TOML file (the whole file if it has no such table)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    table = data.get("tinyq", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tinyq] must be a table")
    return table


def load_config(path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then the file (``path`` or ``./tinyq.toml`` if it exists), then the environment.

    An explicit ``path`` that does not exist is an error; the implicit default file is
    optional.
    """
    cfg = Config()
    if path is not None:
        file = Path(path)
        cfg = apply_overrides(cfg, load_config_file(file), str(file))
    elif Path(DEFAULT_CONFIG_FILE).is_file():
        cfg = apply_overrides(cfg, load_config_file(Path(DEFAULT_CONFIG_FILE)), DEFAULT_CONFIG_FILE)
    env = os.environ if environ is None else environ
    cfg = apply_overrides(cfg, env_overrides(env), "environment")
    return _validate(cfg)
