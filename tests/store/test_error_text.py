"""An exception's text is redacted before anything cuts it, pydantic's own quoting included."""

from __future__ import annotations

import json

import mcp.types as mtypes
from pydantic import ValidationError

from proctor.store.error_text import INPUT_CHARS, error_text

TOKEN = "ghp_" + "V4lidT0ken" * 4
TAIL = "sk-proj-" + "t" * 40


def _rejected(line: str) -> ValidationError:
    try:
        mtypes.jsonrpc_message_adapter.validate_json(line)
    except ValidationError as exc:
        return exc
    raise AssertionError("the SDK accepted the line")


def test_a_rejected_line_is_described_without_pieces_of_its_tokens() -> None:
    exc = _rejected(f"{TOKEN} {'filler ' * 20}{TAIL}")
    assert TOKEN[:10] in str(exc), "pydantic's own text keeps a piece no shape matches"
    text = error_text(exc)
    assert text.startswith("ValidationError: value: Invalid JSON")
    assert "[redacted: github-token]" in text and TOKEN[:10] not in text and "tttttttt" not in text


def test_a_json_object_that_is_not_json_rpc_names_the_missing_fields() -> None:
    exc = _rejected(json.dumps({"jsonrpc": "2.0", "id": 1, "leak": TOKEN, "pad": "p" * 1000}))
    text = error_text(exc)
    assert "method: Field required" in text and '"leak": "[redacted: github-token]"' in text
    assert text.endswith("characters]") and len(text) < INPUT_CHARS + 400


def test_other_errors_are_their_redacted_text() -> None:
    assert (
        error_text(RuntimeError(f"failed with {TOKEN}"))
        == "RuntimeError: failed with [redacted: github-token]"
    )
    assert error_text(RuntimeError()) == "RuntimeError"
