"""The stored copy of a tool's output is redacted before the store cap cuts it."""

from __future__ import annotations

import pytest

from proctor.engine.tools.caps import cap_stored, cap_text
from proctor.store.redaction import redact

TOKEN = "ghp_" + "Cut7oken" * 5


@pytest.mark.parametrize("kept_of_token", [4, 10, 20, 30])
def test_a_token_cut_by_the_store_cap_leaves_no_piece_of_it(kept_of_token: int) -> None:
    limit = 1000
    text = "x " * ((limit - kept_of_token) // 2) + " " * ((limit - kept_of_token) % 2) + TOKEN + " tail" * 100
    assert text.index(TOKEN) == limit - kept_of_token
    stored = redact(cap_stored(text, limit))  # as the writer stores it
    assert TOKEN[:kept_of_token] not in stored
    assert f"…[truncated: stored {len(text):,} characters, {limit:,} kept]" in stored, (
        "the size is the original's"
    )


def test_the_plain_cut_would_have_kept_a_piece() -> None:
    """Why: a cut through a token leaves a piece no shape matches, kept by the store's redactor."""
    text = "x" * 980 + " " + TOKEN
    assert TOKEN[:19] in redact(cap_text(text, 1000, what="stored"))


def test_text_within_the_cap_is_returned_as_it_is() -> None:
    text = f"short {TOKEN}"
    assert cap_stored(text, 1000) is text  # whole: redacted by the writer, once
