"""The two adoption signals of seed 001: tool fluency and discoverability.

Adoption measures how well the agent *used* the tooling under test, separately from whether
the answer got better. Only MCP calls to the arm's servers count: distractor servers do not, and
built-in calls (the agent's own Read or grep, marked ``builtin`` whatever server name they carry)
never do; ``arm_servers`` empty means every MCP call counts.

* tool_fluency = share of those calls that were well-formed and succeeded: a result arrived,
  it is not an error, and (where the tool's schema is known) the arguments pass
  ``toolschema.argument_problems``. No call to the arm's tools gives 0.0: the agent showed no
  fluency with tooling it had.
* discoverability = share of the scenario's relevant tools (e.g. the gold calls' tool names)
  the agent called without being told, where a tool named in the prompt (whole identifier,
  case-insensitive) counts as told and is left out. None when every relevant tool was named.
  Without a relevant-tool list: 1.0 if the agent called any arm tool the prompt does not name,
  0.0 if it called no arm tool, None if it only called tools the prompt names.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from proctor.store.scores import AdoptionDetails, LayerDetails

from .keywords import mentions
from .toolschema import argument_problems
from .trial_digest import ToolCallRecord


@dataclass(frozen=True)
class AdoptionSignals:
    tool_fluency: float
    discoverability: float | None
    arm_calls: int
    fluent_calls: int
    discovered: tuple[str, ...]
    undiscovered: tuple[str, ...]
    told: tuple[str, ...]

    def to_details(self, layer: AdoptionDetails) -> AdoptionDetails:
        """The adoption layer's details with the signals that produced it."""
        return AdoptionDetails(
            **layer.model_dump(include=set(LayerDetails.model_fields)),
            tool_fluency=self.tool_fluency,
            discoverability=self.discoverability,
            arm_calls=self.arm_calls,
            fluent_calls=self.fluent_calls,
            discovered=list(self.discovered),
            undiscovered=list(self.undiscovered),
            told=list(self.told),
        )


def is_fluent(call: ToolCallRecord, schema: Mapping[str, Any] | None) -> bool:
    if not call.succeeded:
        return False
    return schema is None or not argument_problems(call.arguments, schema)


def adoption_signals(
    calls: Sequence[ToolCallRecord],
    *,
    arm_servers: Collection[str],
    relevant_tools: Collection[str] = (),
    prompt: str = "",
    tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> AdoptionSignals:
    schemas = tool_schemas or {}
    arm = [c for c in calls if not c.builtin and (not arm_servers or c.server in arm_servers)]
    fluent = sum(is_fluent(c, schemas.get(c.tool)) for c in arm)
    fluency = fluent / len(arm) if arm else 0.0
    used = list(dict.fromkeys(c.tool for c in arm))

    discoverability: float | None
    if relevant_tools:
        relevant = list(dict.fromkeys(relevant_tools))
        told = [t for t in relevant if mentions(prompt, t)]
        untold = [t for t in relevant if t not in told]
        found = [t for t in untold if t in used]
        missed = [t for t in untold if t not in used]
        discoverability = len(found) / len(untold) if untold else None
    else:
        told = [t for t in used if mentions(prompt, t)]
        found = [t for t in used if t not in told]
        missed = []
        discoverability = 0.0 if not used else (1.0 if found else None)

    return AdoptionSignals(
        tool_fluency=fluency,
        discoverability=discoverability,
        arm_calls=len(arm),
        fluent_calls=fluent,
        discovered=tuple(found),
        undiscovered=tuple(missed),
        told=tuple(told),
    )
