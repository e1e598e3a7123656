"""The event model: every fact the engine records is one of these, appended to the store.

A tagged union (``kind`` is the tag) so readers can dispatch without guessing and so the
store can keep one table for all of them. Events carry only plain data; API keys never
appear in them.

They live in the store package because the store, the engine and the console all speak them,
and the store must not depend on the engine.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from proctor.store.scores import D, ScoreDetails, ScoreName, dump_details, parse_details

Phase = Literal["reasoning", "tool_io", "judge"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(BaseModel):
    """Token counts of one model call; ``estimated`` marks counts we computed, not the API."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False
    reasoning_tokens: int = Field(0, exclude_if=lambda v: v == 0)
    """Of ``output_tokens``, those the model spent reasoning (as the API reported them); left
    out of the stored JSON at 0, so usage recorded before it reads the same."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class ToolCallRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    call_id: str
    name: str
    arguments: dict[str, Any]


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    run_id: str
    suite: str
    config: dict[str, Any]
    trials: int
    resumed: bool = False


class ServersStarting(_Event):
    """Startup before the first trial: the run's shared MCP servers being started, one event
    when it begins and one as each comes up or fails, so a reader can say "2 of 5 ready"."""

    kind: Literal["servers_starting"] = "servers_starting"
    total: int = Field(description="shared servers the run's arms use")
    ready: int = Field(0, description="started and listed their tools")
    failed: int = Field(0, description="could not start (the trials that need them will say why)")
    waiting: list[str] = Field(default_factory=list, description="names of those still starting")


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    run_id: str
    status: Literal["finished", "interrupted", "cancelled", "error"]
    message: str = ""


class TrialStarted(_Event):
    kind: Literal["trial_started"] = "trial_started"
    scenario: str
    arm: str
    model: str
    epoch: int
    seed: int
    attempt: int


class ListedTool(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    server: str
    description: str
    input_schema: dict[str, Any]
    # The rest of the server's definition, pinned by a tool lock; left out of the stored JSON when
    # the server did not send it, so tool lists recorded before these fields read the same.
    title: str | None = Field(default=None, exclude_if=lambda v: v is None)
    output_schema: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    annotations: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    # The definition's tokens as the run counted them (engine/tools/definition_tokens.py), so a
    # report or the console need not load the tokenizer; absent from older runs and imports.
    definition_tokens: int | None = Field(default=None, exclude_if=lambda v: v is None)
    builtin: bool | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="built-in (the agent's own tool or proctor's), not an MCP server's; None in events "
        "written before the marker (read them with store.tool_origin.is_builtin)",
    )
    # The name the model API was sent instead, when it refuses this one (engine/providers/
    # tool_rules.py); every other event and report keeps ``name``.
    sent_as: str | None = Field(default=None, exclude_if=lambda v: v is None)


class ToolsListed(_Event):
    """The tools the model was offered in this trial (scoring checks calls against their schemas)."""

    kind: Literal["tools_listed"] = "tools_listed"
    tools: list[ListedTool]


class AgentBrief(_Event):
    """What the agent was given before its first turn. The system prompt is the same for many
    trials, so it is stored once per run in the ``blobs`` table under its hash."""

    kind: Literal["agent_brief"] = "agent_brief"
    model: str
    system_prompt_sha256: str
    system_prompt_chars: int
    prompts: list[str]
    parameters: dict[str, Any] = {}


class ModelRequest(_Event):
    kind: Literal["model_request"] = "model_request"
    turn: int
    messages: int
    tools: int


class AnswerCitation(BaseModel):
    """A source the model's API attached to a span of its answer (Anthropic text-block citations)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str = Field(description="the API's citation type: web_search_result_location, char_location, ...")
    cited_text: str = ""
    title: str = ""
    url: str = ""
    supports: str = Field("", description="the answer's text the citation is attached to")


class ModelReasoning(_Event):
    """What a model reasoned before its reply (thinking blocks, reasoning_content, <think>, a
    summary): stored apart from the answer, shown folded, counted, never judged."""

    kind: Literal["reasoning"] = "reasoning"
    turn: int
    model: str
    text: str = Field(description="as the model wrote it; empty when redacted")
    redacted: bool = Field(
        False, description="the API sent it encrypted (redacted_thinking, encrypted_content)"
    )
    source: str = Field(description="thinking, reasoning_content, think_tag or summary")
    tokens: int | None = Field(None, description="reasoning tokens of the turn, when the API reported them")


class ModelResponse(_Event):
    kind: Literal["model_response"] = "model_response"
    turn: int
    model: str
    text: str
    tool_calls: list[ToolCallRequest]
    stop_reason: str
    usage: Usage
    tool_io_tokens: int = Field(0, description="input tokens of this call that were tool results fed back")
    cost_usd: float | None = Field(
        description="None when the model has no price (unpriced), never a guessed 0"
    )
    latency_s: float
    retries: int = 0
    citations: list[AnswerCitation] = Field(default_factory=list, exclude_if=lambda v: not v)
    cost_reported: bool = Field(False, exclude_if=lambda v: not v)
    """``cost_usd`` is what the provider's response said it cost (OpenRouter, xAI), not a price lookup."""


class ToolCall(_Event):
    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    builtin: bool | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="built-in (the agent's own tool or proctor's), not an MCP server's; None in events "
        "written before the marker (read them with store.tool_origin.is_builtin)",
    )


class ContentBlock(BaseModel):
    """One block of an MCP tool result, as the server typed it. Binary data (images, audio, blob
    resources) is stored once in the ``blobs`` table under ``sha256``; the event keeps its label."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["text", "image", "audio", "resource_link", "resource"]
    text: str | None = None
    mime_type: str = ""
    size_bytes: int | None = None
    sha256: str = ""
    uri: str = ""
    name: str = ""
    description: str = ""
    annotations: dict[str, Any] = {}


class ToolResult(_Event):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    server: str
    tool: str
    content: str = Field(description="every block as text: what the model was sent, before capping")
    is_error: bool
    error_type: str = ""
    latency_s: float
    structured: dict[str, Any] | None = None
    blocks: list[ContentBlock] = []
    builtin: bool | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="built-in (the agent's own tool or proctor's), not an MCP server's; None in events "
        "written before the marker (read them with store.tool_origin.is_builtin)",
    )


class McpNotice(_Event):
    """What a server said or asked besides a tool's result: progress, a log message, or a request
    to the client (roots, sampling, elicitation) and how proctor answered it.

    Connections can be shared by trials; a notice is filed under the call in flight when it
    arrived, and ``shared`` says that more than one call was in flight (the filing is a guess).
    """

    kind: Literal["mcp_notice"] = "mcp_notice"
    server: str
    method: str
    call_id: str = ""
    level: str = ""
    message: str = ""
    progress: float | None = None
    total: float | None = None
    answer: str = ""
    shared: bool = False


class ServerConnected(_Event):
    """Who answered: the server's own name, version, protocol, capabilities and instructions."""

    kind: Literal["server_connected"] = "server_connected"
    server: str
    name: str = ""
    version: str = ""
    protocol_version: str = ""
    capabilities: dict[str, Any] = {}
    instructions: str = ""


class AssistantMessage(_Event):
    kind: Literal["assistant_message"] = "assistant_message"
    turn: int
    text: str


class FinalAnswer(_Event):
    kind: Literal["final_answer"] = "final_answer"
    text: str


class ErrorEvent(_Event):
    kind: Literal["error"] = "error"
    where: str
    error_type: str
    message: str
    fatal: bool = False
    infrastructure: bool = False
    """Where the trial ran failed it (a Ray worker or node lost), not the agent: retried, and rerun by --resume."""


class ServerLog(_Event):
    kind: Literal["server_log"] = "server_log"
    server: str
    line: str


class TrialFinished(_Event):
    kind: Literal["trial_finished"] = "trial_finished"
    status: Literal["finished", "error"]
    stop: str = Field(
        description="why the loop ended: answer, max_turns, max_tool_calls, timeout, error; truncated "
        "(the answer hit the output limit) or refused (the model declined): never judged "
        "(store/outcomes.py); no_answer for an imported trial that ends without a final answer"
    )
    final_answer: str
    tool_calls: int
    usage: Usage
    cost_usd: float | None = Field(description="None when any model call was unpriced")
    wall_s: float
    error: str = ""
    host: str = ""
    """``host:pid`` of the Ray worker that played the trial ("" for the engine's own process)."""


class OperatorCommand(_Event):
    kind: Literal["operator_command"] = "operator_command"
    command: str
    args: dict[str, Any]
    status: Literal["received", "done", "failed"]
    message: str = ""


class ToolRecall(_Event):
    """An operator called a tool by hand (the console's workbench): a run-level event, never
    part of a trial's transcript or scores. ``raw`` is the JSON-RPC result as the server sent it."""

    kind: Literal["tool_recall"] = "tool_recall"
    request_id: str
    trial_id: int
    result: ToolResult
    raw: dict[str, Any] | None = None
    notices: list[McpNotice] = []


class Scored(_Event):
    """A score computed for a trial; ``details`` is the JSON form of its ``details_model``.

    Build one with ``Scored.of`` so that the details are checked against the score's model.
    """

    kind: Literal["score"] = "score"
    name: ScoreName
    value: float | None
    details: dict[str, Any]

    @classmethod
    def of(cls, name: ScoreName, value: float | None, details: ScoreDetails) -> Scored:
        return cls(name=name, value=value, details=dump_details(name, details))

    def parsed(self, model: type[D]) -> D:
        return parse_details(self.name, self.details, model)


class Judged(_Event):
    """One judge pass over one trial (the row in ``judgments`` holds the same data)."""

    kind: Literal["judgment"] = "judgment"
    pass_no: int
    judge: str
    verdict: dict[str, Any] | None
    error: str = ""
    usage: Usage | None = Field(None, description="the judge's own model calls: token phase 'judge'")
    cost_usd: float | None = None


Event = Annotated[
    RunStarted
    | ServersStarting
    | RunFinished
    | TrialStarted
    | ToolsListed
    | AgentBrief
    | ModelRequest
    | ModelResponse
    | ModelReasoning
    | ToolCall
    | ToolResult
    | AssistantMessage
    | FinalAnswer
    | ErrorEvent
    | ServerLog
    | McpNotice
    | ServerConnected
    | TrialFinished
    | OperatorCommand
    | ToolRecall
    | Scored
    | Judged,
    Field(discriminator="kind"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(payload: str | bytes) -> Event:
    """Decode a stored payload back into its event class."""
    return EVENT_ADAPTER.validate_json(payload)


__all__ = [
    "EVENT_ADAPTER",
    "AgentBrief",
    "AnswerCitation",
    "AssistantMessage",
    "ContentBlock",
    "ErrorEvent",
    "Event",
    "FinalAnswer",
    "Judged",
    "ListedTool",
    "McpNotice",
    "ModelReasoning",
    "ModelRequest",
    "ModelResponse",
    "OperatorCommand",
    "Phase",
    "RunFinished",
    "RunStarted",
    "Scored",
    "ServerConnected",
    "ServerLog",
    "ServersStarting",
    "ToolCall",
    "ToolCallRequest",
    "ToolRecall",
    "ToolResult",
    "ToolsListed",
    "TrialFinished",
    "TrialStarted",
    "Usage",
    "parse_event",
]
