"""What the Struct twins of pydantic models are tested with (store/details_structs.py,
store/event_structs.py): the field-for-field mirror check, and values mutated at any depth that
msgspec and the model must read alike."""

from __future__ import annotations

import copy
import random
import typing
from collections.abc import Mapping
from typing import Any

import msgspec
from pydantic import BaseModel

ODD_VALUES: list[Any] = [None, True, 0, 1, 2**70, 1.5, "", "x", "tool_result", [], [1], {}, {"a": 1}]


def mutants(obj: Any, rng: random.Random, n: int, values: list[Any] = ODD_VALUES) -> list[Any]:
    """``obj`` with keys dropped, added or set to one of ``values``, at any depth."""
    out = []
    for _ in range(n):
        m = copy.deepcopy(obj)
        for _ in range(rng.randint(1, 3)):
            node = m
            while isinstance(node, dict | list) and node and rng.random() < 0.5:
                child = node[rng.choice(list(node))] if isinstance(node, dict) else rng.choice(node)
                if not isinstance(child, dict | list) or not child:
                    break
                node = child
            if isinstance(node, dict) and node:
                key = rng.choice(list(node))
                r = rng.random()
                if r < 0.3:
                    node.pop(key)
                elif r < 0.5:
                    node["unknown"] = rng.choice(values)
                else:
                    node[key] = copy.deepcopy(rng.choice(values))
            elif isinstance(node, list) and node:
                node[rng.randrange(len(node))] = copy.deepcopy(rng.choice(values))
        out.append(m)
    return out


def _mirrored(annotation: Any, struct_of: Mapping[type[BaseModel], type[msgspec.Struct]]) -> Any:
    """A model's annotation with each nested model replaced by its Struct."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return struct_of[annotation]
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if not args or origin is typing.Literal:
        return annotation
    mirrored = tuple(_mirrored(a, struct_of) for a in args)
    if origin in (typing.Union, type(int | None)):
        out = mirrored[0]
        for a in mirrored[1:]:
            out = out | a
        return out
    return origin[mirrored]


def _plain(value: object) -> object:
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    return value.model_dump() if isinstance(value, BaseModel) else value


def assert_mirrors(
    model: type[BaseModel],
    struct: type[msgspec.Struct],
    struct_of: Mapping[type[BaseModel], type[msgspec.Struct]],
    *,
    leave_out: frozenset[str] = frozenset(),
    types: Mapping[str, Any] | None = None,
) -> None:
    """``struct`` has ``model``'s fields (but ``leave_out``), in its order, each with the same type
    (nested models as their Structs; ``types`` gives the Struct's where it carries the model's
    constraints), the same key, and the same default or none."""
    fields = {f.name: f for f in msgspec.structs.fields(struct)}
    expected = {name: f for name, f in model.model_fields.items() if name not in leave_out}
    assert list(fields) == list(expected)
    for name, f in expected.items():
        assert f.alias is None and f.validation_alias is None, name  # a Struct reads keys by name
        assert fields[name].type == (types or {}).get(name, _mirrored(f.annotation, struct_of)), name
        assert fields[name].required == f.is_required(), name
        if not f.is_required():
            mine = fields[name].default
            mine = fields[name].default_factory() if mine is msgspec.NODEFAULT else mine
            assert _plain(mine) == _plain(f.get_default(call_default_factory=True)), name
