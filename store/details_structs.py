"""The score details a report reads a field or two of, on every trial, as msgspec Structs.

A report reads the grounding counts, the adoption's ``na`` and call count, the tool match's gold
calls and mode and whether a trial was judged from most of a large run's scores. Validating
those details with their pydantic models (a grounding's every citation) cost over a second on
10,000 trials; ``msgspec.convert`` checks the same details in C, as strictly as their types say
(an ``int`` is an int, not ``"5"`` or ``5.0``). Details it refuses are validated by the model,
which converts what its lax mode takes and raises for the rest, so a field read either way is
the same value (``ScoreRecord.detail``).

The Structs are ``gc=False``: decoded from JSON they cannot hold a cycle, and the collector then
has none of a report's 400,000 citations (10,000 trials) to track.

Each Struct mirrors its model in ``store.scores`` field for field, unknown keys ignored as there
(tests/store/test_details_structs.py checks it); change both together.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec
from pydantic import BaseModel

from proctor.store.scores import (
    AdoptionDetails,
    CitationStatus,
    GroundingDetails,
    PassedDetails,
    ToolMatchDetails,
)


class _Details(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    na: str | None = None


class GroundingCountsStruct(msgspec.Struct, frozen=True, gc=False):
    grounded: int = 0
    unresolved: int = 0
    hallucinated: int = 0


class CitationDetailsStruct(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    raw: str
    path: str
    line: int | None = None
    line_end: int | None = None
    symbol: str | None = None
    status: CitationStatus
    reason: str = ""
    line_text: str | None = None


class GroundingDetailsStruct(_Details, frozen=True, kw_only=True):
    counts: GroundingCountsStruct = GroundingCountsStruct()
    label: str = ""
    commit: str = ""
    repo: str = ""
    tolerance: int = 0
    count_rule: str = ""
    citations: list[CitationDetailsStruct] = []


class ToolMatchDetailsStruct(_Details, frozen=True, kw_only=True):
    gold_calls: int | None = None
    finished: bool | None = None
    efficiently_finished: bool | None = None
    missing: list[str] = []
    unexpected: list[str] = []
    gold_steps: int | None = None
    agent_steps: int | None = None
    mode: str = "strict"
    failed_calls: list[str] = []
    unmet_expectations: list[str] = []
    review: list[str] = []
    disguised_errors: list[str] = []


class AdoptionDetailsStruct(_Details, frozen=True, kw_only=True):
    layer: Literal["fairness", "adoption"] | None = None
    value: float | None = None
    label: str = ""
    components: dict[str, float | None] = {}
    weights: dict[str, float] = {}
    effective_weights: dict[str, float] = {}
    missing: list[str] = []
    structural_na: bool = False
    tool_fluency: float | None = None
    discoverability: float | None = None
    arm_calls: int | None = None
    fluent_calls: int | None = None
    discovered: list[str] = []
    undiscovered: list[str] = []
    told: list[str] = []
    misses: int | None = None
    missed: list[str] = []


class PassedDetailsStruct(_Details, frozen=True, kw_only=True):
    rule: str = ""
    errored: bool = False
    not_judged: bool = False
    votes: dict[str, bool | None] | None = None
    tied: bool | None = None
    abstained: int | None = None
    no_check: bool = False
    no_answer: bool = False
    ungrounded: bool = False
    tools_not_offered: bool = False
    judge_failed: bool = False
    outcome: str = ""


DETAILS_STRUCT: Final[dict[type[BaseModel], type[msgspec.Struct]]] = {
    GroundingDetails: GroundingDetailsStruct,
    ToolMatchDetails: ToolMatchDetailsStruct,
    AdoptionDetails: AdoptionDetailsStruct,
    PassedDetails: PassedDetailsStruct,
}
"""The details models that have a Struct; the others are read through their model only."""


def details_struct(model: type[BaseModel], details: object) -> msgspec.Struct | None:
    """``details`` as ``model``'s Struct, or None where there is none or msgspec refuses them
    (then the model decides)."""
    struct = DETAILS_STRUCT.get(model)
    if struct is None:
        return None
    try:
        return msgspec.convert(details, struct)
    except msgspec.ValidationError:
        return None


_DECODERS: Final[dict[type[BaseModel], msgspec.json.Decoder[msgspec.Struct]]] = {
    model: msgspec.json.Decoder(struct) for model, struct in DETAILS_STRUCT.items()
}


def details_struct_from_json(model: type[BaseModel], text: bytes) -> msgspec.Struct | None:
    """``details_struct`` of the stored JSON text itself, without building its dict first;
    msgspec decodes a text as strictly as it converts the dict ``json.loads`` makes of it."""
    decoder = _DECODERS.get(model)
    if decoder is None:
        return None
    try:
        return decoder.decode(text)
    except msgspec.DecodeError:  # a ValidationError too, or a number a float cannot hold
        return None


__all__ = [
    "DETAILS_STRUCT",
    "AdoptionDetailsStruct",
    "CitationDetailsStruct",
    "GroundingCountsStruct",
    "GroundingDetailsStruct",
    "PassedDetailsStruct",
    "ToolMatchDetailsStruct",
    "details_struct",
    "details_struct_from_json",
]
