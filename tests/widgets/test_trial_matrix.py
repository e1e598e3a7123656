from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from proctor.widgets.trial_matrix import MatrixCell, MatrixModel, TrialMatrix
from tests.app.helpers import screen_text

ROWS = 10_000


def big_model() -> MatrixModel:
    model = MatrixModel(
        rows=[(f"scenario-{i:05d}", 0) for i in range(ROWS)], columns=[("baseline", "m"), ("mcp", "m")]
    )
    for i in range(ROWS):
        model.cells[(i, 0)] = MatrixCell(2 * i + 1, "passed", "0.90")
        model.cells[(i, 1)] = MatrixCell(2 * i + 2, "failed" if i % 2 else "queued")
    return model


class MatrixApp(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select", "Open trial")]

    def __init__(self) -> None:
        super().__init__()
        self.selected: list[int] = []
        self.rendered: list[int] = []

    def compose(self) -> ComposeResult:
        yield TrialMatrix(id="m")

    def action_select(self) -> None:
        trial = self.query_one(TrialMatrix).selected_trial()
        if trial is not None:
            self.selected.append(trial)


async def test_ten_thousand_rows_paint_only_what_is_visible() -> None:
    app = MatrixApp()
    async with app.run_test(size=(80, 24)) as pilot:
        matrix = app.query_one(TrialMatrix)
        original = matrix.render_line
        calls: list[int] = []

        def counting(y: int):  # type: ignore[no-untyped-def]
            calls.append(y)
            return original(y)

        matrix.render_line = counting  # type: ignore[method-assign]
        matrix.set_model(big_model())
        await pilot.pause()
        assert 0 < len(calls) <= 3 * 24, "only the visible lines are rendered"
        assert "scenario-00000" in screen_text(app) and "scenario-09999" not in screen_text(app)
        calls.clear()
        await pilot.press("G")
        assert matrix.cursor == (ROWS - 1, 0)
        assert "scenario-09999" in screen_text(app)
        assert len(calls) <= 3 * 24


async def test_cursor_keys_selection_and_cell_updates() -> None:
    app = MatrixApp()
    async with app.run_test(size=(80, 24)) as pilot:
        matrix = app.query_one(TrialMatrix)
        matrix.set_model(big_model())
        matrix.focus()
        await pilot.press("l", "j", "enter")
        assert app.selected == [4]
        await pilot.press("pagedown")
        assert matrix.cursor[0] > 10
        await pilot.press("g", "h", "enter")
        assert app.selected == [4, 1]
        matrix.update_cells({(0, 0): MatrixCell(1, "error")})
        await pilot.pause()
        assert "! error" in screen_text(app).splitlines()[2]


async def test_set_model_keeps_the_cursor_on_the_same_trial() -> None:
    app = MatrixApp()
    async with app.run_test(size=(80, 24)):
        matrix = app.query_one(TrialMatrix)
        matrix.set_model(big_model())
        matrix.move_to(50, 1)
        assert matrix.selected_trial() == 102
        smaller = MatrixModel(rows=[("scenario-00050", 0)], columns=[("baseline", "m"), ("mcp", "m")])
        smaller.cells[(0, 1)] = MatrixCell(102, "failed")
        matrix.set_model(smaller, keep_trial=102)
        assert matrix.cursor == (0, 1)


async def test_next_and_previous_failure_wrap_around_and_hidden_arms_are_announced() -> None:
    app = MatrixApp()
    async with app.run_test(size=(60, 12)) as pilot:
        matrix = app.query_one(TrialMatrix)
        model = MatrixModel(
            rows=[(f"s{i}", 0) for i in range(4)], columns=[(f"arm{c}", "m") for c in range(12)]
        )
        for r in range(4):
            for c in range(12):
                model.cells[(r, c)] = MatrixCell(r * 12 + c, "passed")
        model.cells[(1, 3)] = MatrixCell(8, "failed")
        model.cells[(3, 0)] = MatrixCell(15, "error")
        matrix.set_model(model)
        await pilot.pause()
        assert matrix.jump_to_status({"failed", "error"}, 1) and matrix.cursor == (1, 3)
        assert matrix.jump_to_status({"failed", "error"}, 1) and matrix.cursor == (3, 0)
        assert matrix.jump_to_status({"failed", "error"}, 1) and matrix.cursor == (1, 3), "wraps around"
        assert matrix.jump_to_status({"failed", "error"}, -1) and matrix.cursor == (3, 0), "wraps back"
        assert not matrix.jump_to_status({"not judged"}, 1)
        matrix.move_to(0, 0)
        await pilot.pause()
        left, right = matrix.hidden_columns()
        assert left == 0 and 0 < right < 12  # whole columns only: the rest are counted, not cut
        assert f"{right}▶ more" in screen_text(app)
        matrix.move_to(0, 11)
        await pilot.pause()
        assert matrix.hidden_columns()[1] == 0 and "◀" in screen_text(app)
