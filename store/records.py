"""What a run database holds, as the readers hand it out: runs, trials, events, scores, judgments.

Plain frozen records with no connection attached, so the reports, the console and resume all
work on the same types whether the rows came through sqlite3 or aiosqlite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from types import UnionType
from typing import Any, Final, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from proctor.store.events import Event
from proctor.store.payload_shapes import model_check
from proctor.store.scores import D, ScoreDetails, ScoreName, UnreadableScore, details_model, parse_details


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


@dataclass(frozen=True)
class ScoreRecord:
    """One stored score; ``details`` is the raw JSON, ``parsed`` validates it against its model."""

    trial_id: int
    name: ScoreName
    value: float | None
    details: dict[str, Any]

    @cached_property
    def typed(self) -> ScoreDetails:
        """The details validated by this score's model, once; raises ``UnreadableScore``."""
        try:
            return parse_details(self.name, self.details, ScoreDetails)
        except UnreadableScore as err:
            raise UnreadableScore(f"trial {self.trial_id}: {err}") from err

    def parsed(self, model: type[D]) -> D:
        """The details as ``model``, which must be this score's model or one of its bases."""
        typed = self.typed
        if not isinstance(typed, model):
            raise TypeError(
                f"score {self.name.value} has {type(typed).__name__} details, not {model.__name__}"
            )
        return typed

    def detail(self, model: type[D], *path: str) -> object:
        """``parsed(model)``'s value at ``path`` (field names), read from the details as stored
        when they have a shape the score's model takes as it is (``model_check``): a report reads
        a field or two of most of a large run's scores, and building each model was a tenth of
        its time. Other details are validated, and raise, as ``parsed`` does."""
        own = details_model(self.name)
        if not issubclass(own, model):
            raise TypeError(f"score {self.name.value} has {own.__name__} details, not {model.__name__}")
        read = _path_reader(own, path)
        if read is not None and "typed" not in self.__dict__:
            fits = self.__dict__.get("_fits")
            if fits is None:
                check = model_check(own)
                fits = self.__dict__["_fits"] = check is not None and check(self.details)
            if fits:
                return read(self.details)
        value: object = self.parsed(model)
        for name in path:
            value = getattr(value, name)
        return value


# Values pydantic keeps as JSON has them (it turns an int given for a float field into a float).
_AS_STORED: Final = frozenset({str, int, bool, type(None)})


def _as_stored(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Literal:
        return True
    if origin is Union or origin is UnionType:
        return all(_as_stored(a) for a in get_args(annotation))
    return annotation in _AS_STORED


@cache
def _path_reader(model: type[BaseModel], path: tuple[str, ...]) -> Callable[[dict[str, Any]], object] | None:
    """Reads ``path`` from details that passed ``model_check(model)``: each step a key of a
    nested model (its default where the key is missing) down to a value pydantic keeps as it is.
    None where reading takes the model: a value it converts, or a default that is not a
    constant (a list, say, which each model gets a copy of)."""
    steps: list[tuple[str, object]] = []
    for i, name in enumerate(path):
        field = model.model_fields.get(name)
        if field is None or field.is_required():
            return None
        default = field.get_default(call_default_factory=False)
        annotation = field.annotation
        last = i == len(path) - 1
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and not last:
            if not isinstance(default, BaseModel):
                return None
            steps.append((name, default))
            model = annotation
        elif last and _as_stored(annotation) and isinstance(default, str | int | bool | None):
            steps.append((name, default))
        else:
            return None

    def read(details: dict[str, Any]) -> object:
        value: Any = details
        for name, default in steps:
            # a model is a default's: the rest of the path is read from it
            value = getattr(value, name) if isinstance(value, BaseModel) else value.get(name, default)
        return value

    return read


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
