"""Validating an imported suite and writing it: nothing is written until everything has been
read and validated, and then only into a staging folder moved into place at the end, so a bad
input never leaves a partial suite behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from proctor.scenarios.importers.common import ImportedSuite, ImportedTrajectory, ImportFormatError
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import Scenario, Suite


def validated(
    source_format: str,
    sources: Sequence[Path],
    suite: dict[str, Any],
    scenarios: Sequence[tuple[str, dict[str, Any]]],
    *,
    trajectories: Sequence[ImportedTrajectory] = (),
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
    extra = sorted({t.arm for t in trajectories} - known_arms)
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
        trajectories=tuple(trajectories),
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


_SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's, when PyYAML has it: ~10x faster


def _dump_yaml(data: Mapping[str, Any]) -> str:
    return yaml.dump(dict(data), Dumper=_SafeDumper, sort_keys=False, allow_unicode=True, width=100)


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


__all__ = ["staged_dir", "validated", "write_suite_files"]
