from __future__ import annotations

from textual.app import App, ComposeResult

from proctor.widgets.transcript_model import TranscriptEntry
from proctor.widgets.transcript_view import TranscriptView


class ViewApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.tail: list[tuple[bool, int]] = []

    def compose(self) -> ComposeResult:
        yield TranscriptView(id="t")

    def on_transcript_view_tail_changed(self, message: TranscriptView.TailChanged) -> None:
        self.tail.append((message.following, message.unseen))


def entries(n: int) -> list[TranscriptEntry]:
    return [TranscriptEntry("prose", i, f"turn {i}", f"text {i}", uid=i + 1) for i in range(n)]


async def test_follows_new_entries_until_scrolled_up_then_counts_them() -> None:
    app = ViewApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(TranscriptView)
        view.focus()
        items = entries(30)
        view.set_entries(items, new_events=30)
        assert view.following and view.scroll_y == view.max_scroll_y > 0
        await pilot.press("pageup")
        assert not view.following
        items.extend(entries(35)[30:])
        view.set_entries(items, new_events=5)
        assert view.unseen == 5 and view.scroll_y < view.max_scroll_y
        await pilot.press("end")
        assert view.following and view.unseen == 0 and view.scroll_y == view.max_scroll_y
        await pilot.pause()
        assert (False, 5) in app.tail and app.tail[-1] == (True, 0)


async def test_entry_cursor_and_toggle_only_affect_tool_entries() -> None:
    app = ViewApp()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(TranscriptView)
        view.focus()
        body = "\n".join(f"l{i}" for i in range(20))
        view.set_entries(
            [
                TranscriptEntry("prose", 1, "p", "x", uid=1),
                TranscriptEntry("tool_result", 2, "r", body, uid=2),
            ]
        )
        before = len(view.lines)
        await pilot.press("enter")
        assert len(view.lines) == before, "prose does not collapse"
        await pilot.press("j", "enter")
        assert view.cursor_entry == 1 and len(view.lines) == before - 4 + 20
        await pilot.press("k")
        assert view.cursor_entry == 0


async def test_keys_between_new_entries_and_the_next_layout_never_index_past_it() -> None:
    # The trial screen passes its transcript's own list, which grows as events arrive; a key
    # pressed before the next flush used to index the layout with the new length (IndexError).
    app = ViewApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(TranscriptView)
        view.focus()
        items = entries(5)
        view.set_entries(items)
        items.extend(entries(9)[5:])
        await pilot.press("pageup", "end")
        view.select_entry(8)
        assert view.selected() is view.entries[-1] and len(view.entries) == 5
        view.set_entries(items)
        view.follow()
        assert view.selected() is items[-1]
