"""A score's details and a verdict read back exactly as ``json.loads`` reads them, whichever
parser takes the text (msgspec's strict one for details, pydantic's for verdicts and for NaN
and Infinity, json's last)."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.store.payload_codec import loads_details, loads_verdict

LOADERS = pytest.mark.parametrize("loads", [loads_details, loads_verdict])
Loads = Callable[[Any], dict[str, Any] | None]


def _same(a: object, b: object) -> bool:
    """Equal, of the same types, floats to the bit (NaN included), dict keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        assert isinstance(b, float)
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize(
    "text",
    [
        '{"big": 123456789012345678901234567890, "neg": -9223372036854775809}',
        '{"n": NaN, "i": Infinity, "m": -Infinity}',
        '{"overflow": 1e400, "under": 1e-400, "max": 1.7976931348623159e308}',
        '{"zero": -0, "negzero": -0.0, "e": 1E5, "tiny": 5e-324, "long": 0.30000000000000004}',
        '{"a": 1, "b": 2, "a": 3}',
        '{"lone": "\\ud800", "pair": "\\ud83d\\ude00", "nul": "\\u0000", "e": "\\u00e9"}',
        '{"nested": {"list": [1, 2.5, null, true, "x"], "empty": {}}}',
        ' {"spaced": 1}\n',
    ],
)
@LOADERS
def test_details_read_as_json_loads_reads_them(loads: Loads, text: str) -> None:
    assert _same(loads(text), json.loads(text))


@pytest.mark.parametrize("text", ["[1, 2]", '"text"', "3", "null", '{"a": 1', '{"a": "x\ty"}', ""])
@LOADERS
def test_what_is_not_a_json_object_reads_as_none(loads: Loads, text: str) -> None:
    assert loads(text) is None


@LOADERS
def test_a_value_that_is_not_text_reads_as_none(loads: Loads) -> None:
    assert loads(b'{"a": 1}') is None


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
            lambda inner: (
                st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
            ),
            max_leaves=20,
        ),
        max_size=6,
    )
)
def test_any_stored_object_reads_back_as_json_loads_reads_it(details: dict[str, object]) -> None:
    text = json.dumps(details)  # NaN and Infinity written as json.dumps writes them
    expected = json.loads(text)
    assert _same(loads_details(text), expected)
    assert _same(loads_verdict(text), expected)
