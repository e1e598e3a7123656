"""An injectable ``sleep`` that records the delays asked for and returns at once."""

from __future__ import annotations

import asyncio


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)
