"""The frozen anchor files and their lock file: layout, hashing, reading back.

Under the anchors folder each held-out scenario gets ``SCENARIO/rubric.json`` (what the judge
was asked to check), ``SCENARIO/gold.json`` (the gold scores per frozen trial) and
``SCENARIO/transcripts/*.json`` (each trial's event log: its agent events; the folder and the
lock's ``transcript`` keys keep their names so existing locks verify). The lock file lists every one of
them with its SHA-256, relative to the lock file's folder, in the format
``{"files": {relpath: sha256}, "schema_version": 1, ...metadata}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.engine.judges.base import rubric_hash
from proctor.scenarios.schema import Scenario
from proctor.store.events import EVENT_ADAPTER, Event

LOCK_SCHEMA = 1
ANCHORS_DIR = "anchors"
LOCK_NAME = "held-out.lock"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_LOCK_LINE = re.compile(r"^anchors_lock:.*$", re.MULTILINE)


class AnchorError(Exception):
    """Anchors cannot be locked or verified; the message says why and what to do."""


@dataclass(frozen=True)
class HashMismatch:
    """A locked file whose bytes changed (``actual`` is None when the file is missing)."""

    path: str
    expected: str
    actual: str | None

    def describe(self) -> str:
        if self.actual is None:
            return f"{self.path}: missing (locked sha256 {self.expected})"
        return f"{self.path}: changed (locked sha256 {self.expected}, now {self.actual})"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def anchor_key(scenario: str, arm: str, model: str, epoch: int) -> str:
    return f"{scenario}/{arm}/{model}/{epoch}"


def safe_name(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("._") or "_"


def scenario_folder(scenario_id: str) -> str:
    if scenario_id in (".", "..") or not scenario_id.strip("."):
        raise AnchorError(f"scenario id {scenario_id!r} cannot name an anchors folder; rename the scenario")
    return scenario_id


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def rubric_document(scenario: Scenario) -> dict[str, Any]:
    return {
        "scenario": scenario.id,
        "rubric": [c.model_dump() for c in scenario.rubric],
        "claims": scenario.claims,
        "key_points": scenario.key_points,
        "keywords": scenario.keywords.model_dump(),
        "rubric_hash": rubric_hash(scenario),
    }


def event_log_document(
    scenario: str, arm: str, model: str, epoch: int, trial_id: int, events: Sequence[Event]
) -> dict[str, Any]:
    """One frozen trial's anchor event log: who played it, and its agent events."""
    return {
        "scenario": scenario,
        "arm": arm,
        "model": model,
        "epoch": epoch,
        "trial_id": trial_id,
        "events": [e.model_dump(mode="json") for e in events],
    }


def read_event_log(path: Path) -> list[Event]:
    """The events of one frozen trial, as ``event_log_document`` wrote them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [EVENT_ADAPTER.validate_python(e) for e in data["events"]]


def read_lock(lock_path: Path) -> dict[str, Any]:
    try:
        data = json.loads(lock_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AnchorError(
            f"{lock_path}: no anchors lock file; create one with `proctor anchors lock --suite DIR --db RUN.db`"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise AnchorError(f"{lock_path}: not a readable lock file ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise AnchorError(f"{lock_path}: not an anchors lock file (no 'files' mapping)")
    if data.get("schema_version") != LOCK_SCHEMA:
        raise AnchorError(
            f"{lock_path}: lock schema {data.get('schema_version')!r}; this proctor reads {LOCK_SCHEMA}"
        )
    return data


def check_hashes(lock_path: Path, files: dict[str, str]) -> list[HashMismatch]:
    """Every locked file re-hashed; paths that would leave the lock's folder count as missing."""
    base = lock_path.parent.resolve()
    out: list[HashMismatch] = []
    for rel, expected in sorted(files.items()):
        target = (base / rel).resolve()
        if not target.is_relative_to(base) or not target.is_file():
            out.append(HashMismatch(rel, expected, None))
            continue
        actual = sha256_file(target)
        if actual != expected:
            out.append(HashMismatch(rel, expected, actual))
    return out


def combined_hash(files: dict[str, str]) -> str:
    """One SHA-256 over a scenario's locked files (path and hash of each), for the store's anchors table."""
    lines = "".join(f"{rel}\x00{sha}\n" for rel, sha in sorted(files.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def suite_relative(path: Path, suite_dir: Path) -> str:
    resolved, root = path.resolve(), suite_dir.resolve()
    return os.path.relpath(resolved, root) if resolved.is_relative_to(root) else str(resolved)


def set_anchors_lock(suite_file: Path, value: str) -> None:
    """Point ``anchors_lock`` in suite.yaml at the lock file, keeping the rest of the file as written."""
    text = suite_file.read_text(encoding="utf-8")
    line = f"anchors_lock: {json.dumps(value)}"
    if _LOCK_LINE.search(text):
        text = _LOCK_LINE.sub(line, text, count=1)
    else:
        text = (text if text.endswith("\n") or not text else text + "\n") + line + "\n"
    suite_file.write_text(text, encoding="utf-8")


__all__ = [
    "ANCHORS_DIR",
    "LOCK_NAME",
    "LOCK_SCHEMA",
    "AnchorError",
    "HashMismatch",
    "anchor_key",
    "check_hashes",
    "combined_hash",
    "event_log_document",
    "read_event_log",
    "read_lock",
    "rubric_document",
    "safe_name",
    "scenario_folder",
    "set_anchors_lock",
    "sha256_file",
    "suite_relative",
    "write_json",
]
