"""The tool lock file: what it pins, and that a hand-edited one is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.engine.tools.surface import ToolDefinition, surface_of
from proctor.engine.tools.surface_lock import ToolLockError, lock_path, read_lock, write_lock

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def _surface() -> dict[str, dict[str, ToolDefinition]]:
    return surface_of(
        [
            ToolDefinition(
                "fs",
                "search",
                "Search — for “text”.",
                SCHEMA,
                title="Search",
                annotations={"readOnlyHint": True},
            ),
            ToolDefinition(
                "git", "log", "Show the log.", {"type": "object"}, output_schema={"type": "object"}
            ),
        ]
    )


def test_a_lock_reads_back_the_surface_it_was_written_from(tmp_path: Path) -> None:
    path = lock_path(tmp_path)
    assert path == tmp_path / "tools.lock.json" == lock_path(tmp_path / "suite.yaml")
    write_lock(path, _surface())
    assert read_lock(path) == _surface()
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc["servers"]) == {"fs", "git"}
    assert doc["servers"]["fs"]["tools"]["search"]["definition"]["annotations"] == {"readOnlyHint": True}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["servers"]["fs"]["tools"]["search"]["definition"].update(description="Approved."),
            "servers.fs.tools.search.sha256 does not match",
        ),
        (lambda d: d["servers"]["fs"]["tools"].pop("search"), "servers.fs.sha256 does not match its tools"),
        (lambda d: d.update(version=2), "field 'version' must be 1"),
        (
            lambda d: d["servers"]["git"]["tools"]["log"]["definition"].pop("inputSchema"),
            "must hold the tool's name",
        ),
    ],
)
def test_a_hand_edited_lock_is_refused_naming_the_field(tmp_path: Path, edit: object, message: str) -> None:
    path = tmp_path / "tools.lock.json"
    write_lock(path, _surface())
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ToolLockError, match=message) as info:
        read_lock(path)
    assert str(path) in str(info.value)


def test_a_lock_that_is_not_json_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "tools.lock.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ToolLockError, match="not a readable tool lock"):
        read_lock(path)
