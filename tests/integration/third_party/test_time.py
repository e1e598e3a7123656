"""mcp-server-time (PyPI) answers its suite's gold calls as observed, through proctor's connection.

Observed with ``python -m tests.integration.third_party.observe time`` (mcp-server-time
2026.10.19 on mcp 2.3.0, tests/reference_servers/requirements-official.txt), 2026-11-27. The
server converts a time of *today*: the dates and weekdays are holes in the expectations, the
zones were chosen without daylight saving so the offsets never move.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.integration.third_party.servers import (
    Expect,
    Played,
    assert_scenario,
    json_text,
    played_suite,
    with_holes,
)

pytestmark = pytest.mark.slow

DATE = r"\d{4}-\d{2}-\d{2}"
DAY = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
TIME_NOW = r"\d{2}:\d{2}:\d{2}"


def _conversion(source: tuple[str, str], target: tuple[str, str], difference: str) -> dict[str, object]:
    return {
        "source": {"timezone": source[0], "datetime": source[1], "day_of_week": "<DAY>", "is_dst": False},
        "target": {"timezone": target[0], "datetime": target[1], "day_of_week": "<DAY>", "is_dst": False},
        "time_difference": difference,
    }


def _expect_json(tool: str, value: dict[str, object]) -> Expect:
    """The server prints its result as indented JSON and sends it as structuredContent too."""
    holes = {"DATE": DATE, "DAY": DAY, "NOW": TIME_NOW}

    def holed(v: object) -> object:
        if isinstance(v, dict):
            return {k: holed(x) for k, x in v.items()}
        return with_holes(v, **holes) if isinstance(v, str) else v

    return Expect(tool, with_holes(json_text(value), **holes), structured=holed(value))  # type: ignore[arg-type]


KOLKATA_TO_TOKYO = _conversion(
    ("Asia/Kolkata", "<DATE>T09:00:00+05:30"), ("Asia/Tokyo", "<DATE>T12:30:00+09:00"), "+3.5h"
)
LATE_UTC_TO_TOKYO = _conversion(
    ("UTC", "<DATE>T23:30:00+00:00"), ("Asia/Tokyo", "<DATE>T08:30:00+09:00"), "+9.0h"
)
NOW_IN_TOKYO = {
    "timezone": "Asia/Tokyo",
    "datetime": "<DATE>T<NOW>+09:00",
    "day_of_week": "<DAY>",
    "is_dst": False,
}

EXPECTED = {
    "kolkata-to-tokyo": [_expect_json("convert_time", KOLKATA_TO_TOKYO)],
    "late-utc-and-now": [
        _expect_json("convert_time", LATE_UTC_TO_TOKYO),
        _expect_json("get_current_time", NOW_IN_TOKYO),
    ],
    "bad-input": [
        Expect(
            "get_current_time",
            "Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Mars/Olympus_Mons'",
            is_error=True,
        ),
        Expect(
            "convert_time",
            "Error executing tool convert_time: Invalid time format. Expected HH:MM [24-hour format]",
            is_error=True,
        ),
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("time", tmp_path_factory)


def test_time_server_introduces_itself_and_lists_two_tools(played: Played) -> None:
    server = played.connected["time"]
    assert (server.name, server.version, server.protocol_version) == ("mcp-time", "2026.10.19", "2026-07-28")
    assert played.tools == {"time": ["convert_time", "get_current_time"]}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_time_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)


def test_a_conversion_past_midnight_lands_on_the_next_day_and_now_is_now(played: Played) -> None:
    late, now = (c.outcome.structured for c in played.calls["late-utc-and-now"])
    assert late is not None and now is not None
    source = datetime.fromisoformat(late["source"]["datetime"])
    target = datetime.fromisoformat(late["target"]["datetime"])
    assert target == source and target.date() == source.date() + timedelta(days=1)
    assert source.date() in {date.today(), date.today() - timedelta(days=1), date.today() + timedelta(days=1)}
    told = datetime.fromisoformat(now["datetime"])
    assert abs((datetime.now(ZoneInfo("Asia/Tokyo")) - told).total_seconds()) < 120
