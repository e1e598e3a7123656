"""Rows derived from events: how a score's details and a verdict are stored."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.store.payload_codec import loads_details
from proctor.store.write.derived_rows import dumps_sorted

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6))
def test_details_read_back_as_they_did_when_stored_by_json_dumps(details: dict[str, object]) -> None:
    stored = dumps_sorted(details)
    assert loads_details(stored) == json.loads(json.dumps(details, sort_keys=True))
    assert list(json.loads(stored)) == sorted(details)


@pytest.mark.parametrize(
    "value",
    [{"big": 2**70}, {"n": {1: "int key"}}, {"s": "lone \ud800 surrogate"}, {"b": 2**64, "a": [1.5]}],
)
def test_what_orjson_refuses_is_stored_by_the_standard_encoder(value: dict[str, object]) -> None:
    assert dumps_sorted(value) == json.dumps(value, sort_keys=True)


def test_not_a_number_is_stored_as_null_as_in_the_events_payload() -> None:
    assert dumps_sorted({"x": math.nan, "y": math.inf}) == '{"x":null,"y":null}'
