"""Tool arguments and result values in a canonical, hashable form, so equal values compare equal.

The rules are the tool-call match's (engine/scoring/toolmatch.py): key order is irrelevant; an
argument whose value is null counts as absent; strings are stripped and inner whitespace runs
collapse to one space, case is kept; a string that is a plain decimal number (``"5"``, ``" 5.0 "``)
equals that number; numbers compare by value (5 == 5.0) after rounding to 12 significant digits;
booleans never equal numbers; list order matters; nested objects are normalized the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

Norm = tuple[Any, ...]
_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")


def _number(v: float | int | Decimal) -> Norm:
    if isinstance(v, int):
        return ("n", v)
    f = float(v)
    if not math.isfinite(f):
        return ("s", str(f))
    if f.is_integer() and abs(f) < 2**53:
        return ("n", int(f))
    return ("n", float(f"{f:.12g}"))


def normalize_value(value: Any) -> Norm:
    """A hashable canonical form of one JSON value (rules in the module docstring)."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        s = " ".join(value.split())
        if _DECIMAL.fullmatch(s):
            try:
                d = Decimal(s)
            except InvalidOperation:
                return ("s", s)
            return _number(int(d) if d == d.to_integral_value() else d)
        return ("s", s)
    if isinstance(value, Mapping):
        return ("d", normalize_arguments(value))
    if isinstance(value, list | tuple):
        return ("l", tuple(normalize_value(v) for v in value))
    return ("s", str(value))


def normalize_arguments(arguments: Mapping[str, Any]) -> Norm:
    return tuple(sorted((str(k), normalize_value(v)) for k, v in arguments.items() if v is not None))


__all__ = ["Norm", "normalize_arguments", "normalize_value"]
