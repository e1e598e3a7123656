"""What a run database holds, as the readers hand it out: runs, trials, events, scores, judgments.

Plain frozen records with no connection attached, so the reports, the console and resume all
work on the same types whether the rows came through sqlite3 or aiosqlite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from proctor.store.details_structs import details_struct, details_struct_from_json
from proctor.store.events import Event
from proctor.store.scores import D, ScoreDetails, ScoreName, UnreadableScore, details_model, parse_details
from proctor.store.stored_json import StoredJson


@dataclass(frozen=True)
class RunRecord:
    id: str
    suite: str
    config: dict[str, Any]
    created_at: float
    started_at: float | None
    finished_at: float | None
    status: str


@dataclass(frozen=True)
class TrialRecord:
    id: int
    scenario: str
    arm: str
    model: str
    epoch: int
    seed: int
    status: str
    attempt: int
    started_at: float | None
    finished_at: float | None
    stop: str | None
    final_answer: str | None
    error: str | None
    tool_calls: int | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    tokens_estimated: bool
    cost_usd: float | None
    wall_s: float | None
    passed: bool | None

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.scenario, self.arm, self.model, self.epoch)


@dataclass(frozen=True)
class StoredEvent:
    id: int
    trial_id: int | None
    attempt: int
    ts: float
    kind: str
    abandoned: bool
    event: Event


@dataclass(frozen=True)
class JudgmentRecord:
    id: int
    trial_id: int
    pass_no: int
    judge: str
    source: str
    prompt_version: str
    prompt_hash: str
    rubric_hash: str
    temperature: float | None
    verdict: dict[str, Any] | None
    error: str
    created_at: float


@dataclass(frozen=True)
class AnchorRecord:
    scenario: str
    lock_file: str
    sha256: str
    source_run: str | None
    locked_at: float


# ``details_model`` of every score as a lookup: a report reads a detail of most scores of a run.
_DETAILS_MODEL: dict[ScoreName, type[ScoreDetails]] = {n: details_model(n) for n in ScoreName}


class ScoreRecord:
    """One stored score. ``details`` is its JSON object; read from a store, ``stored`` is the text
    it came from, parsed only when a field is wanted (a report writes every score's details and
    reads a field of few). ``parsed`` validates the details against their model."""

    __slots__ = ("_details", "_struct", "_typed", "name", "stored", "trial_id", "value")

    def __init__(
        self, trial_id: int, name: ScoreName, value: float | None, details: dict[str, Any] | StoredJson
    ) -> None:
        self.trial_id = trial_id
        self.name = name
        self.value = value
        self.stored: StoredJson | None = details if isinstance(details, StoredJson) else None
        self._details: dict[str, Any] | None = None if isinstance(details, StoredJson) else details
        self._struct: msgspec.Struct | None = None
        self._typed: ScoreDetails | None = None

    @property
    def details(self) -> dict[str, Any]:
        if self._details is None and self.stored is not None:
            self._details = self.stored.value()
        return self._details  # type: ignore[return-value]  # a NULL column stays None, as ever

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScoreRecord):
            return NotImplemented
        return (self.trial_id, self.name, self.value, self.details) == (
            other.trial_id,
            other.name,
            other.value,
            other.details,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ScoreRecord({self.trial_id!r}, {self.name!r}, {self.value!r}, {self.details!r})"

    @property
    def typed(self) -> ScoreDetails:
        """The details validated by this score's model, once; raises ``UnreadableScore``."""
        if self._typed is None:
            try:
                self._typed = parse_details(self.name, self.details, ScoreDetails)
            except UnreadableScore as err:
                raise UnreadableScore(f"trial {self.trial_id}: {err}") from err
        return self._typed

    def parsed(self, model: type[D]) -> D:
        """The details as ``model``, which must be this score's model or one of its bases."""
        typed = self.typed
        if not isinstance(typed, model):
            raise TypeError(
                f"score {self.name.value} has {type(typed).__name__} details, not {model.__name__}"
            )
        return typed

    def detail(self, model: type[D], *path: str) -> object:
        """``parsed(model)``'s value at ``path`` (field names). A report reads a field or two of
        most of a large run's scores: details msgspec takes as its Struct's types say are read
        from the Struct (``store.details_structs``, from the stored text when there is one), once
        per record; others are validated, and raise, as ``parsed`` does."""
        own = _DETAILS_MODEL[self.name]
        if own is not model and not issubclass(own, model):
            raise TypeError(f"score {self.name.value} has {own.__name__} details, not {model.__name__}")
        value: object = self._struct
        if value is None and self._typed is None:
            if self.stored is not None and self._details is None:
                value = self._struct = details_struct_from_json(own, self.stored.text)
            else:
                value = self._struct = details_struct(own, self.details)
        if value is None:
            value = self.parsed(model)
        for name in path:
            value = getattr(value, name)
        return value


@dataclass(frozen=True)
class UnreadableScoreRow:
    """A scores row this proctor cannot read (a name it does not know, details that are not
    JSON); the console shows it as unreadable instead of failing or hiding it."""

    trial_id: int
    name: str
    problem: str


@dataclass(frozen=True)
class JudgmentMeta:
    """What a judgment row records besides the verdict (why and by whom it was judged)."""

    prompt_version: str = ""
    prompt_hash: str = ""
    rubric_hash: str = ""
    temperature: float | None = None
    source: str = "proctor"


__all__ = [
    "AnchorRecord",
    "JudgmentMeta",
    "JudgmentRecord",
    "RunRecord",
    "ScoreRecord",
    "StoredEvent",
    "TrialRecord",
    "UnreadableScoreRow",
]
