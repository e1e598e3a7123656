"""The bottom line of keys: the focused screen's bindings as one line of text.

Textual's ``Footer`` recomposes one widget per key on every focus change; on the trial view
(about 20 keys) that cost 40-90 ms per ``/`` or escape, the largest part of a key press's
latency. This bar is one widget that redraws one line, and only when its text changes. Keys
that do not fit are announced (``… ? all keys``) rather than cut off silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import RenderResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

MORE = "… ? all keys"


@dataclass(frozen=True)
class KeyItem:
    key: str
    label: str
    description: str
    enabled: bool


class KeyBar(Widget, can_focus=False):
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        width: 1fr;
        color: $footer-foreground;
        background: $footer-background;
    }
    KeyBar > .key-bar--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    KeyBar > .key-bar--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-bar--key", "key-bar--description"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._items: tuple[KeyItem, ...] = ()
        self._palette: KeyItem | None = None
        self._spans: list[tuple[int, int, KeyItem]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        items, palette = self._collect()
        if (items, palette) != (self._items, self._palette):
            self._items, self._palette = items, palette
            self.refresh()

    def _collect(self) -> tuple[tuple[KeyItem, ...], KeyItem | None]:
        active = self.screen.active_bindings
        seen: set[str] = set()
        items: list[KeyItem] = []
        for _node, binding, enabled, _tooltip in active.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            items.append(self._item(binding, enabled))
        palette: KeyItem | None = None
        if self.app.ENABLE_COMMAND_PALETTE and self.app.COMMAND_PALETTE_BINDING in active:
            _node, binding, enabled, _tooltip = active[self.app.COMMAND_PALETTE_BINDING]
            palette = self._item(binding, enabled)
            items = [item for item in items if item.key != palette.key]
        return tuple(items), palette

    def _item(self, binding: Binding, enabled: bool) -> KeyItem:
        return KeyItem(binding.key, self.app.get_key_display(binding), binding.description, enabled)

    def render(self) -> RenderResult:
        width = self.size.width
        key_style = self.get_component_rich_style("key-bar--key")
        description_style = self.get_component_rich_style("key-bar--description")
        right = self._segment(self._palette, key_style, description_style) if self._palette else Text()
        room = width - right.cell_len - (1 if right else 0)
        line = Text(no_wrap=True, overflow="crop")
        spans: list[tuple[int, int, KeyItem]] = []
        for n, item in enumerate(self._items):
            segment = self._segment(item, key_style, description_style)
            rest = n + 1 < len(self._items)
            if line.cell_len + segment.cell_len + (cell_len(MORE) + 1 if rest else 0) > room:
                line.append(MORE, description_style)
                break
            spans.append((line.cell_len, line.cell_len + segment.cell_len, item))
            line.append_text(segment)
        if right:
            gap = max(1, width - line.cell_len - right.cell_len)
            line.append(" " * gap)
            if self._palette is not None:
                spans.append((line.cell_len, line.cell_len + right.cell_len, self._palette))
            line.append_text(right)
        self._spans = spans
        return line

    @staticmethod
    def _segment(item: KeyItem, key_style: Style, description_style: Style) -> Text:
        dim = Style(dim=True) if not item.enabled else Style()
        text = Text()
        text.append(f" {item.label} ", key_style + dim)
        if item.description:
            text.append(f"{item.description} ", description_style + dim)
        return text

    def on_click(self, event: events.Click) -> None:
        for start, end, item in self._spans:
            if start <= event.x < end:
                if item.enabled:
                    self.app.simulate_key(item.key)
                else:
                    self.app.bell()
                return

    @property
    def items(self) -> tuple[KeyItem, ...]:
        """The keys shown (before any cut for width)."""
        return self._items


__all__ = ["KeyBar", "KeyItem"]
