"""Third-party servers in a changed state, for drift tests (replay, tool-surface diff, lock).

A changed copy is a copy of one of this folder's suites whose server differs from the installed
one in one known way, while the installed packages stay untouched:

- ``patched_description``: the server runs a copy of its package with one text replaced (a tool
  description): for a Python server a copy of the package put first on ``PYTHONPATH``, for an
  npm server a copy of the package whose ``node_modules`` links to the installed ones;
- ``changed_suite(..., servers={...})``: other settings for a server (a data file, arguments);
- ``changed_project``: the pinned project with some files edited, so another commit.

    copy = patched_description("time", tmp / "time-v2", 'description="Convert time between timezones"',
                               'description="Convert a time between two time zones"')
    # proctor run copy / proctor replay OLD.db --suite copy: same server, one description changed

Also from the shell: ``python -m tests.integration.third_party.changed_copy time DEST OLD NEW``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from proctor.scenarios.repo import materialize
from tests.integration.third_party.servers import NPM_SCOPE, PROJECT, REFERENCE, SERVERS, SUITES, VENVS

_SUITE_DIR = "${PROCTOR_SUITE_DIR}"


class ChangeError(Exception):
    """A change that cannot be made as asked (the text to replace is missing or ambiguous)."""


def changed_suite(
    suite: str,
    dest: Path,
    *,
    servers: Mapping[str, Mapping[str, Any]] | None = None,
    repo: Mapping[str, str] | None = None,
    scenarios: list[str] | None = None,
    arms: Mapping[str, Mapping[str, Any]] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Path:
    """A copy of ``suite`` at ``dest`` (same name, scenarios and gold calls) that runs anywhere:
    ``${PROCTOR_SUITE_DIR}`` and the repository source point back at the original suite. Each
    ``servers[name]`` updates that server's settings (``env`` is merged); ``repo`` replaces the
    suite's ``repo``; ``scenarios`` keeps only the scenario files of those ids; ``arms`` are
    added to the suite's (a ``replay:`` arm serving a recording back, say); ``settings`` sets
    other top-level fields (``replay: {ignore: [...]}``)."""
    source = SUITES / suite
    doc: dict[str, Any] = yaml.safe_load((source / "suite.yaml").read_text())
    text = json.dumps(doc["mcpServers"]).replace(_SUITE_DIR, json.dumps(str(source))[1:-1])
    doc["mcpServers"] = json.loads(text)
    if "repo" in doc and "source" in doc["repo"]:
        doc["repo"]["source"] = str((source / doc["repo"]["source"]).resolve())
    for name, update in (servers or {}).items():
        if name not in doc["mcpServers"]:
            raise ChangeError(
                f"{source / 'suite.yaml'}: no server {name!r} (has {', '.join(doc['mcpServers'])})"
            )
        config = doc["mcpServers"][name]
        for key, value in update.items():
            config[key] = {**config.get(key, {}), **value} if key == "env" else value
    if repo is not None:
        doc["repo"] = dict(repo)
    doc["arms"] |= {name: dict(arm) for name, arm in (arms or {}).items()}
    doc |= dict(settings or {})
    (dest / "scenarios").mkdir(parents=True, exist_ok=True)
    for file in sorted((source / "scenarios").glob("*.yaml")):
        if scenarios is None or yaml.safe_load(file.read_text())["id"] in scenarios:
            shutil.copy2(file, dest / "scenarios" / file.name)
    (dest / "suite.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return dest


def patched_description(suite: str, dest: Path, old: str, new: str, **changes: Any) -> Path:
    """A copy of ``suite`` whose server runs a copy of its package in which the text ``old``
    (found exactly once in the package's code) reads ``new``: a tool's description, or any other
    text (a property's description or type in an input schema). ``changes``: more for
    ``changed_suite`` (``scenarios``, ``settings``, ...). Returns the suite's folder."""
    install, package = SERVERS[suite]
    (server,) = yaml.safe_load((SUITES / suite / "suite.yaml").read_text())["mcpServers"]
    if install == "npm":
        update: dict[str, Any] = {"command": str(patched_npm_package(package, old, new, dest / "server"))}
    else:
        venv = REFERENCE / VENVS[install]
        update = {
            "env": {"PYTHONPATH": str(patched_python_package(venv, package, old, new, dest / "server"))}
        }
    return changed_suite(suite, dest / "suite", servers={server: update}, **changes)


def patched_python_package(venv: Path, package: str, old: str, new: str, dest: Path) -> Path:
    """Copy the import package of distribution ``package`` from ``venv`` into ``dest`` with one
    replacement; returns ``dest``, to put first on ``PYTHONPATH`` (the venv's own entry point
    then imports the copy)."""
    module = package.replace("-", "_")
    (installed,) = venv.glob(f"lib/python*/site-packages/{module}")
    copy = dest / module
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    _replace_once(copy, "*.py", old, new, package)
    return dest


def patched_npm_package(package: str, old: str, new: str, dest: Path) -> Path:
    """Copy an installed npm ``package`` (``@modelcontextprotocol/...``) into ``dest`` with one
    replacement in its ``dist``; returns the copy's command (its ``bin``). ``dest/node_modules``
    links to the installed packages, so the copy's imports resolve as the original's do."""
    installed = NPM_SCOPE / package.removeprefix("@modelcontextprotocol/")
    copy = dest / installed.name
    shutil.copytree(installed, copy, symlinks=True)
    (dest / "node_modules").symlink_to(REFERENCE / "node_modules", target_is_directory=True)
    _replace_once(copy / "dist", "*.js", old, new, package)
    bins = json.loads((copy / "package.json").read_text())["bin"]
    script = bins if isinstance(bins, str) else next(iter(bins.values()))
    return copy / script


def changed_project(dest: Path, edits: Mapping[str, str | None]) -> dict[str, str]:
    """The pinned project (``project/``) with ``edits`` (path -> new text, None deletes it) at
    ``dest``; returns the ``repo`` entry for ``changed_suite``, with the commit it materializes to."""
    shutil.copytree(PROJECT, dest)
    for path, text in edits.items():
        target = dest / path
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    with tempfile.TemporaryDirectory(prefix="proctor-changed-project-") as scratch:
        commit = materialize(dest, Path(scratch) / "repo")
    return {"source": str(dest), "commit": commit}


def _replace_once(root: Path, glob: str, old: str, new: str, package: str) -> None:
    found = [(f, f.read_text(encoding="utf-8")) for f in sorted(root.rglob(glob))]
    hits = [(f, text) for f, text in found if old in text]
    count = sum(text.count(old) for _, text in hits)
    if count != 1:
        where = ", ".join(f"{f.relative_to(root)} ({text.count(old)}x)" for f, text in hits) or "nowhere"
        raise ChangeError(
            f"{package}: {old!r} must occur exactly once in its {glob} files to be replaced, found {count} "
            f"times ({where}); give a longer text"
        )
    ((file, text),) = hits
    file.write_text(text.replace(old, new), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("suite", choices=sorted(SERVERS))
    parser.add_argument("dest", type=Path, help="a new folder: the changed suite is DEST/suite")
    parser.add_argument("old", help="text in the server's code (a tool description), found exactly once")
    parser.add_argument("new", help="what it reads in the copy")
    args = parser.parse_args(argv)
    try:
        print(patched_description(args.suite, args.dest, args.old, args.new))
    except ChangeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
