"""Distractor server: canned weather forecasts.

Plausible tools with nothing to do with code, so an agent (or a tool-retrieval step) that
picks tools by loose word overlap wastes calls here. The data is fixed, so runs are
deterministic and need no network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from proctor.scenarios.demo.servers.launch import parse_options, serve

# city -> (timezone, [(condition, high C, low C, precipitation %), ...])
FORECASTS: dict[str, tuple[str, list[tuple[str, int, int, int]]]] = {
    "berlin": ("Europe/Berlin", [("overcast", 9, 3, 40), ("light rain", 8, 4, 80), ("cloudy", 10, 2, 20)]),
    "lisbon": ("Europe/Lisbon", [("sunny", 19, 12, 0), ("sunny", 20, 13, 5), ("partly cloudy", 18, 12, 10)]),
    "new york": ("America/New_York", [("windy", 12, 5, 10), ("rain", 11, 7, 90), ("clear", 13, 4, 0)]),
    "tokyo": ("Asia/Tokyo", [("clear", 16, 9, 0), ("cloudy", 15, 10, 30), ("showers", 14, 11, 60)]),
    "nairobi": (
        "Africa/Nairobi",
        [("thunderstorms", 24, 15, 70), ("sunny", 26, 14, 10), ("sunny", 27, 15, 5)],
    ),
    "sydney": ("Australia/Sydney", [("sunny", 25, 17, 0), ("humid", 27, 19, 20), ("storms", 23, 18, 75)]),
}

DESCRIPTION = (
    "Weather forecasts for major cities: daily conditions, high and low temperatures and the "
    "chance of precipitation for the next few days."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def get_forecast(
    city: Annotated[str, Field(description="city name, e.g. 'Berlin' or 'New York'")],
    days: Annotated[int, Field(ge=1, le=3, description="number of days, starting today")] = 3,
) -> str:
    entry = FORECASTS.get(city.strip().lower())
    if entry is None:
        raise ToolError(f"no forecast for {city!r}; known cities: {', '.join(sorted(FORECASTS))}")
    tz, daily = entry
    lines = [f"{city.strip().title()} ({tz})"]
    for n, (condition, high, low, rain) in enumerate(daily[:days]):
        lines.append(f"day +{n}: {condition}, high {high} C, low {low} C, precipitation {rain}%")
    return "\n".join(lines)


def list_cities() -> str:
    return "\n".join(sorted(FORECASTS))


def build_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="weather", description=DESCRIPTION, log_level="WARNING")
    server.add_tool(
        get_forecast,
        description="Daily weather forecast for a city: conditions, high/low temperature (Celsius) and "
        "chance of precipitation for up to 3 days.",
        annotations=_READ_ONLY,
        structured_output=False,
    )
    server.add_tool(
        list_cities,
        description="Cities for which a weather forecast is available, one per line.",
        annotations=_READ_ONLY,
        structured_output=False,
    )
    return server


def main(argv: Sequence[str] | None = None) -> None:
    serve(build_server(), parse_options(argv, "Weather forecast MCP server (canned data).", needs_repo=False))


if __name__ == "__main__":
    main()
