"""One call's drift: classification, the paths of changed JSON leaves, bounded text diffs, masks."""

from __future__ import annotations

import json

from proctor.engine.drift.masks import Masks
from proctor.engine.drift.result_diff import MAX_CHANGES, MAX_DIFF_LINES, RecordedResult, diff_results
from proctor.scenarios.schema import IgnoreRule


def ok(content: str, structured: object = None) -> RecordedResult:
    return RecordedResult(content=content, is_error=False, structured=structured)


def err(content: str) -> RecordedResult:
    return RecordedResult(content=content, is_error=True, error_type="tool_error")


def test_each_class_is_told_apart() -> None:
    assert diff_results(ok("a"), ok("a")).status == "identical"
    assert diff_results(ok("a"), ok("b")).status == "changed"
    assert diff_results(ok("a"), err("boom")).status == "new_error"
    assert diff_results(err("boom"), ok("a")).status == "fixed_error"
    assert diff_results(err("boom"), err("bang")).status == "changed"
    assert diff_results(None, ok("a")).status == "missing"


def test_json_results_are_diffed_by_leaf_path_not_layout() -> None:
    old = json.dumps({"items": [{"id": 1, "name": "a"}, {"id": 2}], "total": 2})
    new = json.dumps({"total": 3, "items": [{"id": 1, "name": "b"}, {"id": 2}, {"id": 3}]}, indent=4)
    d = diff_results(ok(old), ok(new))
    assert d.status == "changed" and not d.text_diff
    assert [(c.path, c.op, c.old, c.new) for c in d.changes] == [
        ("$.items[0].name", "~", '"a"', '"b"'),
        ("$.items[2]", "+", "", '{"id": 3}'),
        ("$.total", "~", "2", "3"),
    ]
    assert diff_results(ok('{"a": 1, "b": 2}'), ok('{"b": 2,\n "a": 1}')).status == "identical"


def test_structured_content_is_diffed_and_types_count() -> None:
    d = diff_results(ok("x", {"n": 1, "odd key": True}), ok("x", {"n": 1.0, "odd key": False}))
    assert [c.path for c in d.changes] == ["structuredContent.n", 'structuredContent["odd key"]']


def test_text_diff_is_unified_and_bounded() -> None:
    old = "\n".join(f"line {i}" for i in range(500))
    new = "\n".join(f"line {i}" if i % 3 else f"LINE {i}" for i in range(500))
    d = diff_results(ok(old), ok(new))
    assert d.status == "changed" and len(d.text_diff) == MAX_DIFF_LINES and d.more_lines > 0
    assert "-line 0" in d.text_diff and "+LINE 0" in d.text_diff
    big_old = json.dumps({f"k{i}": i for i in range(200)})
    big_new = json.dumps({f"k{i}": i + 1 for i in range(200)})
    many = diff_results(ok(big_old), ok(big_new))
    assert len(many.changes) == MAX_CHANGES and many.more_changes == 200 - MAX_CHANGES


def test_masks_hide_volatile_fields_per_server_and_tool() -> None:
    masks = Masks(
        [
            IgnoreRule(server="time", tool="now", paths=["$.at", "events[*].id"]),
            IgnoreRule(server="*", tool="log", patterns=[r"\d\d:\d\d:\d\d"]),
        ]
    )
    old = json.dumps({"at": "10:00", "events": [{"id": "u1", "v": 1}], "zone": "UTC"})
    new = json.dumps({"at": "11:00", "events": [{"id": "u2", "v": 1}], "zone": "UTC"})
    assert diff_results(ok(old), ok(new), masks.for_call("time", "now")).status == "identical"
    assert diff_results(ok(old), ok(new), masks.for_call("time", "other")).status == "changed"
    assert diff_results(ok(old), ok(new), masks.for_call("clock", "now")).status == "changed"
    log = masks.for_call("anything", "log")
    assert diff_results(ok("started 10:00:01 ok"), ok("started 11:02:03 ok"), log).status == "identical"
    still = diff_results(ok("started 10:00:01 ok"), ok("started 11:02:03 FAILED"), log)
    assert still.status == "changed" and still.text_diff[1:] == (
        "-started <ignored> ok",
        "+started <ignored> FAILED",
    )
    masked_json = masks.for_call("x", "log")
    assert (
        diff_results(ok('{"t": "at 10:00:01"}'), ok('{"t": "at 12:00:01"}'), masked_json).status
        == "identical"
    )


def test_a_new_error_says_what_the_error_is() -> None:
    d = diff_results(ok("file body"), err("ENOENT: no such file or directory"))
    assert d.notes[0] == "error: ENOENT: no such file or directory"
    assert d.summary().startswith("new error")
