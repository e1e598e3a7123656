"""Reading a few fields of many events without parsing each event into its model.

A report needs a handful of numbers from each of many events; parsing every payload into its
pydantic model costs several times more than decoding it as plain JSON. The decoded payload is
used only when its shape is one the kind's model takes unchanged (``SHAPES``: every key a
field, every value already of its field's type, nested models alike); anything else is parsed
the ordinary way, so the values read are always the event's own. ``loads_details`` reads score
details and verdicts (``store.queries``) with pydantic's JSON parser, the same values as
``json.loads`` faster.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from functools import cache
from types import UnionType
from typing import Any, Final, Literal, Union, cast, get_args, get_origin

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
_MISSING: Final = object()
_SIMPLE: Final[dict[Any, frozenset[type]]] = {
    Any: frozenset({dict, list, str, int, float, bool, type(None)}),  # all JSON decodes to
    type(None): frozenset({type(None)}),
    bool: frozenset({bool}),
    int: frozenset({int}),
    float: frozenset({float, int}),
    str: frozenset({str}),
}


class _ShapeTests:
    """Writes the test that a decoded JSON value is one pydantic takes for an annotation
    unchanged. It is stricter than pydantic's lax mode: a value pydantic would coerce (``"12"``
    for an int, 5.0 for an int, 1 for a bool) fails, and its row is parsed the ordinary way.

    Each model's test is a function of its own with every field's test spelled out (compiled
    once, at import, as dataclasses writes its ``__init__``): a loop over a payload's keys that
    looked each one up cost more than decoding the payload."""

    def __init__(self) -> None:
        self._names: dict[str, Any] = {"_MISSING": _MISSING}
        self._source: list[str] = []
        self._models: dict[type[BaseModel], str | None] = {}

    def _const(self, value: object) -> str:
        name = f"_c{len(self._names)}"
        self._names[name] = value
        return name

    def _function(self, body: list[str]) -> str:
        name = f"_f{len(self._source)}"
        self._source.append(f"def {name}(v):\n" + "".join(f"    {line}\n" for line in body))
        return name

    def _types(self, annotation: Any) -> frozenset[type] | None:
        if annotation in _SIMPLE:
            return _SIMPLE[annotation]
        origin, args = get_origin(annotation), get_args(annotation)
        if origin is dict and args == (str, Any):
            return frozenset({dict})  # JSON object keys are strings
        if origin is Union or origin is UnionType:
            types = [self._types(a) for a in args]
            if all(t is not None for t in types):
                return frozenset().union(*(t for t in types if t is not None))
        return None

    def test(self, annotation: Any, var: str) -> str | None:
        """An expression true when ``var`` passes; None for an annotation this does not know (a
        model with validators, constraints, aliases or extra keys allowed)."""
        types = self._types(annotation)
        if types is not None:
            if len(types) == 1:
                return f"type({var}) is {self._const(next(iter(types)))}"
            return f"type({var}) in {self._const(types)}"
        origin, args = get_origin(annotation), get_args(annotation)
        if origin is Union or origin is UnionType:
            tests = [self.test(a, var) for a in args]
            return None if any(t is None for t in tests) else "(" + " or ".join(map(str, tests)) + ")"
        if origin is Literal and all(type(a) is str for a in args):
            return f"(type({var}) is str and {var} in {self._const(frozenset(args))})"
        if origin is dict and len(args) == 2 and args[0] is str:
            value = self.test(args[1], "y")
            if value is None:
                return None
            body = [
                "if type(v) is not dict:",
                "    return False",
                "for y in v.values():",
                f"    if not ({value}):",
            ]
            return f"{self._function([*body, '        return False', 'return True'])}({var})"
        if origin is list and len(args) == 1:
            item = self.test(args[0], "y")
            if item is None:
                return None
            body = ["if type(v) is not list:", "    return False", "for y in v:", f"    if not ({item}):"]
            return f"{self._function([*body, '        return False', 'return True'])}({var})"
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            name = self.model(annotation)
            return None if name is None else f"{name}({var})"
        return None

    def model(self, model: type[BaseModel]) -> str | None:
        """The name of ``model``'s test: a dict whose keys are fields (each once, as in any dict;
        other keys too if the model ignores them, as score details do), every required one
        there, every value passing its field's test."""
        if model in self._models:
            return self._models[model]
        self._models[model] = None  # a model that contains itself is not tested
        fields = model.model_fields
        decorators = model.__pydantic_decorators__
        extra = model.model_config.get("extra")
        if (
            extra not in ("forbid", "ignore")
            or decorators.field_validators
            or decorators.model_validators
            or any(
                f.alias is not None or f.validation_alias is not None or f.metadata for f in fields.values()
            )
        ):
            return None
        body = ["if type(v) is not dict:", "    return False", "n = 0"]
        for name, f in fields.items():
            test = self.test(f.annotation, "x")
            if test is None:
                return None
            body.append(f"x = v.get({name!r}, _MISSING)")
            if f.is_required():
                body += ["if x is _MISSING or not (" + test + "):", "    return False", "n += 1"]
            else:
                body += [
                    "if x is not _MISSING:",
                    f"    if not ({test}):",
                    "        return False",
                    "    n += 1",
                ]
        body.append("return n == len(v)" if extra == "forbid" else "return True")  # no key but the fields
        self._models[model] = name = self._function(body)
        return name

    def compiled(self) -> dict[str, Any]:
        namespace = dict(self._names)
        exec("\n".join(self._source), namespace)  # the source written above, from the models' fields
        return namespace


def _shapes() -> dict[str, Check]:
    tests = _ShapeTests()
    names: dict[str, str] = {}
    for cls in get_args(get_args(Event)[0]):
        name = tests.model(cls)
        if name is not None:
            names[cls.model_fields["kind"].default] = name
    namespace = tests.compiled()
    return {kind: namespace[name] for kind, name in names.items()}


# Per event kind, the test that a decoded payload is one its model takes as it is.
SHAPES = _shapes()


@cache
def model_check(model: type[BaseModel]) -> Check | None:
    """The test for one model (score details use it as events use ``SHAPES``), or None for a
    model it does not know."""
    tests = _ShapeTests()
    name = tests.model(model)
    return None if name is None else cast(Check, tests.compiled()[name])


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
    "model_check",
]
