"""Reading a few fields of many events without parsing each event into its model.

A report needs a handful of numbers from each of many events; parsing every payload into its
pydantic model costs several times more than decoding it as plain JSON. The decoded payload is
used only when its shape is one the kind's model takes unchanged (``payload_shape``: every key a
field, every value already of its field's type, nested models alike); anything else is parsed
the ordinary way, so the values read are always the event's own. ``loads_details`` reads score
details and verdicts (``store.queries``) with pydantic's JSON parser, the same values as
``json.loads`` faster.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from types import UnionType
from typing import Any, Final, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import from_json

from proctor.store.events import Event, Judged, ModelResponse


def loads_details(text: Any) -> dict[str, Any] | None:
    """``json.loads(text)`` for a details text that decodes to an object, else None (then the
    ordinary decoding reads the row). pydantic's JSON parser returns the same values (big
    integers, NaN and Infinity included) in half the time; what it refuses (a lone surrogate
    escape) goes to ``json.loads``."""
    if type(text) is not str:
        return None
    try:
        value = from_json(text)
    except ValueError:
        try:
            value = json.loads(text)
        except ValueError:
            return None
    return value if type(value) is dict else None


class Skip(Enum):
    SKIP = "skip"


SKIP: Final = Skip.SKIP
ModelCallUsage = tuple[int, int, int]
JudgeUsage = tuple[int, int, float | None]


Check = Callable[[Any], bool]
# A shape test: the types a value may have, or a function for the others (lists, models, literals).
Shape = frozenset[type] | Check
_ANY: Final[frozenset[type]] = frozenset(
    {dict, list, str, int, float, bool, type(None)}
)  # all JSON decodes to
_SIMPLE: Final[dict[Any, frozenset[type]]] = {
    Any: _ANY,
    type(None): frozenset({type(None)}),
    bool: frozenset({bool}),
    int: frozenset({int}),
    float: frozenset({float, int}),
    str: frozenset({str}),
}


def _shape(annotation: Any) -> Shape | None:
    """A test that a decoded JSON value is one pydantic takes for ``annotation`` unchanged. It is
    stricter than pydantic's lax mode: a value pydantic would coerce (``"12"`` for an int, 5.0 for
    an int, 1 for a bool) fails, and its row is parsed the ordinary way. None for an annotation
    this does not know (a model with validators, constraints, aliases or extra keys allowed)."""
    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is dict and args == (str, Any):
        return frozenset({dict})  # JSON object keys are strings
    if origin is Union or origin is UnionType:
        shapes = [_shape(a) for a in args]
        if all(isinstance(x, frozenset) for x in shapes):
            return frozenset().union(*(x for x in shapes if isinstance(x, frozenset)))
        if any(x is None for x in shapes):
            return None
        tests = [_as_check(x) for x in shapes if x is not None]
        return lambda v: any(t(v) for t in tests)
    if origin is Literal and all(type(a) is str for a in args):
        allowed = frozenset(args)
        return lambda v: type(v) is str and v in allowed
    if origin is list and len(args) == 1:
        item = _shape(args[0])
        return None if item is None else _list_check(item)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model_check(annotation)
    return None


def _as_check(shape: Shape) -> Check:
    if isinstance(shape, frozenset):
        return lambda v: type(v) in shape
    return shape


def _list_check(item: Shape) -> Check:
    test = _as_check(item)

    def items(v: Any) -> bool:
        if type(v) is not list:
            return False
        for x in v:  # noqa: SIM110 - a loop, not all() over a generator: this runs per event
            if not test(x):
                return False
        return True

    return items


def _model_check(model: type[BaseModel]) -> Check | None:
    fields = model.model_fields
    decorators = model.__pydantic_decorators__
    if (
        model.model_config.get("extra") != "forbid"
        or decorators.field_validators
        or decorators.model_validators
        or any(f.alias is not None or f.validation_alias is not None or f.metadata for f in fields.values())
    ):
        return None
    simple: dict[str, frozenset[type]] = {}
    tests: dict[str, Check] = {}
    for name, f in fields.items():
        shape = _shape(f.annotation)
        if shape is None:
            return None
        if isinstance(shape, frozenset):
            simple[name] = shape
        else:
            tests[name] = shape
    allowed = frozenset(fields)
    required = frozenset(name for name, f in fields.items() if f.is_required())

    def test(v: Any) -> bool:
        if type(v) is not dict:
            return False
        keys = v.keys()
        if not (keys <= allowed and required <= keys):
            return False
        for k, x in v.items():
            types = simple.get(k)
            if types is not None:
                if type(x) not in types:
                    return False
            elif not tests[k](x):
                return False
        return True

    return test


def _shapes() -> dict[str, Check]:
    out: dict[str, Check] = {}
    for cls in get_args(get_args(Event)[0]):
        check = _model_check(cls)
        if check is not None:
            out[cls.model_fields["kind"].default] = check
    return out


# Per event kind, the test that a decoded payload is one its model takes as it is.
SHAPES = _shapes()


def fast_model_call(_kind: str, obj: dict[str, Any]) -> ModelCallUsage:
    usage = obj["usage"]
    return usage.get("input_tokens", 0), obj.get("tool_io_tokens", 0), usage.get("output_tokens", 0)


def model_call(event: Event) -> ModelCallUsage | None:
    if not isinstance(event, ModelResponse):
        return None
    return event.usage.input_tokens, event.tool_io_tokens, event.usage.output_tokens


def fast_judge_call(_kind: str, obj: dict[str, Any]) -> JudgeUsage | Skip:
    usage, cost = obj.get("usage"), obj.get("cost_usd")
    if usage is None:
        return SKIP
    return usage.get("input_tokens", 0), usage.get("output_tokens", 0), None if cost is None else float(cost)


def judge_call(event: Event) -> JudgeUsage | None:
    if not isinstance(event, Judged) or event.usage is None:
        return None
    return event.usage.input_tokens, event.usage.output_tokens, event.cost_usd


__all__ = [
    "SHAPES",
    "SKIP",
    "JudgeUsage",
    "ModelCallUsage",
    "Skip",
    "fast_judge_call",
    "fast_model_call",
    "judge_call",
    "loads_details",
    "model_call",
]
