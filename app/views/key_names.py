"""Keys as people type them, grouped by what they do: what the help page lists.

Textual names keys after their Unicode names (``exclamation_mark``, ``left_square_bracket``)
and a binding with several keys is one entry per key; the help page shows ``!`` and ``[``,
and one line per action with all of its keys.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

_NAMED = {
    "slash": "/",
    "backslash": "\\",
    "pageup": "page up",
    "pagedown": "page down",
    "space": "space",
    "enter": "enter",
    "escape": "escape",
    "tab": "tab",
    "backspace": "backspace",
    "delete": "delete",
    "home": "home",
    "end": "end",
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
}

# Groups in the order the help page lists them; an action not named here goes under "other".
GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "move",
        frozenset(
            {
                "move", "page", "edge", "entry", "cursor_up", "cursor_down", "page_up", "page_down",
                "first", "last", "scroll_left", "scroll_right", "goto_line", "failure", "citation",
                "difference", "next_match", "match", "first_failing", "follow",
            }
        ),
    ),
    (
        "open and show",
        frozenset(
            {
                "open_selected", "open", "compare", "checks", "open_citation", "page_output",
                "toggle_entry", "toggle_all", "expand", "workbench", "cycle", "swap",
            }
        ),
    ),
    (
        "find and filter",
        frozenset(
            {
                "filter_status", "filter_arm", "filter_model", "filter_scenario", "clear_filters",
                "failures_only", "toggle_epochs", "search", "ask",
            }
        ),
    ),
    (
        "act on the run",
        frozenset(
            {
                "rerun", "rejudge", "mark", "passes", "lock", "verify", "call", "copy", "copy_entry",
                "reset", "refresh", "answer",
            }
        ),
    ),
    (
        "screens",
        frozenset({"dashboard", "judge", "anchors", "tools", "help", "back", "close", "cancel", "quit",
                   "command_palette"}),
    ),
)  # fmt: skip
OTHER = "other"


def key_label(key: str) -> str:
    """``exclamation_mark`` -> ``!``, ``ctrl+d`` -> ``ctrl+d``, ``pageup`` -> ``page up``."""
    *modifiers, last = key.split("+") if key != "+" else [key]
    if last in _NAMED:
        shown = _NAMED[last]
    elif len(last) == 1:
        shown = last
    else:
        try:
            shown = unicodedata.lookup(last.replace("_", " ").upper())
        except KeyError:
            shown = last.replace("_", " ")
    return "+".join([*modifiers, shown])


def action_name(action: str) -> str:
    """The action without its arguments: ``failure(1)`` -> ``failure``. A bare ``page`` (no
    arguments) is the trial view's pager, not paging a list."""
    name = re.sub(r"\(.*\)$", "", action.removeprefix("app.").removeprefix("screen."))
    return "page_output" if action == "page" else name


def group_of(action: str) -> str:
    name = action_name(action)
    return next((group for group, names in GROUPS if name in names), OTHER)


@dataclass(frozen=True)
class KeyRow:
    """One thing the screen does, every key that does it, and the group it is listed under."""

    keys: tuple[str, ...]
    description: str
    group: str


def key_rows(bindings: Iterable[tuple[str, str, str]]) -> list[KeyRow]:
    """(key, action, description) per active key -> one row per action, keys in binding order,
    rows in group order."""
    merged: dict[tuple[str, str], list[str]] = {}
    for key, action, description in bindings:
        labels = merged.setdefault((action, description), [])
        label = key_label(key)
        if label not in labels:
            labels.append(label)
    order = [g for g, _ in GROUPS] + [OTHER]
    rows = [
        KeyRow(tuple(keys), description, group_of(action)) for (action, description), keys in merged.items()
    ]
    return sorted(rows, key=lambda r: order.index(r.group))


__all__ = ["GROUPS", "KeyRow", "action_name", "group_of", "key_label", "key_rows"]
