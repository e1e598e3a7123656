"""The suite and scenario file formats, as pydantic models.

Every model forbids unknown fields so that a typo in a YAML file is an error that names the
field instead of a silently ignored setting.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import re2
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)

from proctor.scenarios.json_paths import parse_path
from proctor.scenarios.model_ids import (
    AGENT_FORMS_TEXT,
    AGENT_PROVIDERS,
    API_FORMS,
    API_PROVIDERS,
    OFFLINE_JUDGE_FORM,
    one_of,
    split_model_id,
)

Complexity = Literal["single", "dual-serial", "dual-parallel", "multi"]
ToolMatchMode = Literal["strict", "lenient", "mcpagentbench"]
CitationCount = Literal["file_line", "mention"]
KeywordKind = Literal["word", "contains", "exact", "starts_with"]
KEYWORD_KINDS: tuple[KeywordKind, ...] = ("word", "contains", "exact", "starts_with")
KeywordCount = Literal["once", "per_occurrence"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RepoSpec(_Strict):
    """A repository pinned at one commit.

    ``path`` names an existing git repository; ``source`` names a folder of plain files that
    proctor turns into a git repository deterministically (fixed author and dates), so the
    commit is the same on every machine. ``commit`` is always required: it is what citations
    are checked against.
    """

    path: str | None = None
    source: str | None = None
    commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")

    @model_validator(mode="after")
    def _one_location(self) -> RepoSpec:
        if (self.path is None) == (self.source is None):
            raise ValueError("give exactly one of 'path' (a git repository) or 'source' (a folder of files)")
        return self


HTTP_TYPES = ("http", "streamable-http", "streamableHttp", "sse")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")


def _env_name(name: str) -> str:
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(
            f"{name!r} is not a variable name; write NAME or a prefix such as MYTOOL_* (letters, digits, _)"
        )
    return name


# A variable's name, or a prefix of names ending in * (MYTOOL_*), for env_passthrough.
EnvName = Annotated[str, AfterValidator(_env_name)]
ToolNames = Annotated[list[str], Field(description="tool names or globs (git_*)")]


class StdioServer(_Strict):
    # VS Code and Cursor write the transport explicitly; proctor infers it from url/command.
    type: Literal["stdio"] | None = None
    command: str
    args: list[str] = []
    env: dict[str, str] = {}
    # A dotenv file (VS Code's ``envFile``), read when the server starts; ``env`` wins over it.
    env_file: str | None = None
    cwd: str | None = None
    description: str = ""
    lifecycle: Literal["shared", "per_trial"] = "shared"
    timeout_s: float = 30.0
    disabled: bool = False
    # Directories declared to the server as MCP roots; empty: the pinned repository, if any.
    roots: list[str] = []
    # A server's sampling requests: declined (recorded), or answered by the calling trial's model.
    sampling: Literal["decline", "model"] = "decline"
    # The tools the model is offered: only these (empty: all), then without these.
    include_tools: ToolNames = []
    exclude_tools: ToolNames = []
    # More of proctor's environment the server receives (names or PREFIX_*); secret-looking
    # names are still withheld: hand a credential with env: {NAME: ${NAME}}.
    env_passthrough: list[EnvName] = []


class HttpServer(_Strict):
    # ``sse``: the legacy HTTP+SSE transport (GET an event stream, POST to the endpoint it names).
    type: Literal["http", "streamable-http", "streamableHttp", "sse"] | None = None
    url: str
    headers: dict[str, str] = {}
    description: str = ""
    lifecycle: Literal["shared", "per_trial"] = "shared"
    timeout_s: float = 30.0
    disabled: bool = False
    # Directories declared to the server as MCP roots; empty: the pinned repository, if any.
    roots: list[str] = []
    # A server's sampling requests: declined (recorded), or answered by the calling trial's model.
    sampling: Literal["decline", "model"] = "decline"
    # A command that serves ``url``; proctor starts it, waits for the port, and stops it.
    launch: StdioServer | None = None
    # The tools the model is offered: only these (empty: all), then without these.
    include_tools: ToolNames = []
    exclude_tools: ToolNames = []

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v


ServerConfig = StdioServer | HttpServer


def _transport(value: Any) -> str:
    if isinstance(value, HttpServer):
        return "http"
    if isinstance(value, dict) and ("url" in value or value.get("type") in HTTP_TYPES):
        return "http"
    return "stdio"


# A server with a ``url`` is streamable HTTP, anything else stdio; errors then name one shape only.
ServerEntry = Annotated[
    Annotated[StdioServer, Tag("stdio")] | Annotated[HttpServer, Tag("http")],
    Discriminator(_transport),
]


class McpServersFile(BaseModel):
    """The Claude Desktop / Cursor ``mcpServers`` format (other top-level keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    mcpServers: dict[str, ServerEntry]


class ToolRetrieval(_Strict):
    top_k: int = Field(8, ge=1)


class ReplaySource(_Strict):
    """A recorded run whose tools and results a mock MCP server serves back (``replay:`` arms)."""

    db: str = Field(min_length=1, description="the run database, relative to the suite folder")
    run: str = Field(min_length=1, description="the run's id, as `proctor report` and the console show it")
    arm: str | None = Field(None, description="the recorded arm to serve; needed when the run has several")


class ArmSpec(_Strict):
    """Tooling under test: ``baseline: true`` (built-in repo tools only), MCP servers, or a
    recorded run served back (``replay: {db, run}``)."""

    baseline: bool = False
    servers: list[str] = []
    distractors: list[str] = []
    tool_retrieval: ToolRetrieval | None = None
    replay: ReplaySource | None = None
    description: str = ""

    @model_validator(mode="after")
    def _baseline_or_servers(self) -> ArmSpec:
        if self.baseline and (self.servers or self.distractors or self.replay):
            raise ValueError(
                "a baseline arm has no MCP servers: drop 'servers'/'distractors'/'replay' or 'baseline'"
            )
        if self.replay is not None and self.servers and self.servers != [replay_server_name(self.replay)]:
            raise ValueError("a replay arm serves the recorded tools: drop 'servers' (distractors may stay)")
        if not self.baseline and not self.servers and self.replay is None:
            raise ValueError("an arm needs 'servers: [name, ...]', 'replay: {db, run}' or 'baseline: true'")
        return self


def replay_server_name(source: ReplaySource) -> str:
    """The server a replay arm's recordings are served by, named after what it serves."""
    return f"replay-{source.run}" + (f"-{source.arm}" if source.arm else "")


class Limits(_Strict):
    max_turns: int = Field(12, ge=1)
    max_tool_calls: int = Field(24, ge=0)
    trial_timeout_s: float = Field(300.0, gt=0)
    tool_timeout_s: float | None = Field(None, gt=0, description="overrides each server's timeout_s")
    tool_result_store_chars: int = Field(200_000, ge=1000, description="tool output kept in the run database")
    tool_result_model_chars: int = Field(50_000, ge=1000, description="tool output sent back to the model")
    server_log_bytes: int = Field(1_000_000, ge=10_000, description="stderr log per server, rotated once")
    max_trials: int = Field(1_000_000, ge=1, description="largest trial matrix a run may build")


class Concurrency(_Strict):
    global_: int = Field(8, ge=1, alias="global")
    per_provider: dict[str, Annotated[int, Field(ge=1)]] = {}

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class FairnessWeights(_Strict):
    keyword_coverage: float = Field(0.10, ge=0)
    llm_quality: float = Field(0.55, ge=0)
    citation_grounding: float = Field(0.15, ge=0)
    efficiency: float = Field(0.20, ge=0)


class AdoptionWeights(_Strict):
    tool_fluency: float = Field(0.60, ge=0)
    discoverability: float = Field(0.40, ge=0)


class Scoring(_Strict):
    fairness: FairnessWeights = FairnessWeights()
    adoption: AdoptionWeights = AdoptionWeights()
    claims_pass_threshold: float = Field(0.75, ge=0, le=1)
    pass_requires_grounding: float | None = Field(None, ge=0, le=1)
    """With a pinned repo: a trial whose citations are grounded at less than this rate fails,
    whatever its judges said (None, the default: grounding only weighs in fairness)."""
    variance_floor: float = Field(0.05, ge=0)
    token_ceiling: int = Field(50_000, gt=0)
    time_ceiling_s: float = Field(120.0, gt=0)
    symbol_tolerance_lines: int = Field(5, ge=0)
    citation_count: CitationCount = "file_line"
    """How grounding counts citations: each (file, line range) once (``file_line``, as published
    scorers count) or every mention (``mention``)."""
    tool_match: ToolMatchMode = "strict"
    names_only_tools: list[str] = []
    keyword_count: KeywordCount = "once"
    """``once``: a keyword listed twice (or required and bonus) counts once; ``per_occurrence``:
    each listing counts, as harnesses that sum their checks over steps do."""


class JudgeSpec(_Strict):
    model: str = OFFLINE_JUDGE_FORM
    passes: int = Field(2, ge=1)
    temperature: float | None = Field(0.0, ge=0, le=2)
    """null: none is sent. A model that refuses temperature (model_rules.py) is sent none either way."""
    panel: list[str] = []
    sd: Literal["sample", "population"] = "sample"
    """σ across passes: the sample SD (n − 1), as the first source's reference values, or the
    population SD (n); ``scoring.variance_floor`` is compared with σ in this convention."""


class Price(_Strict):
    """US dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float = Field(0.0, ge=0)
    cache_write: float = Field(0.0, ge=0)


class ProviderSpec(_Strict):
    base_url: str | None = None
    api_key_env: str | None = None


ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]


class ModelSettings(_Strict):
    """What one model is sent, where the rules for it (engine/providers/model_rules.py) do not fit.

    A field left out takes the model's rule; ``temperature: null`` sends none.
    """

    temperature: float | None = Field(None, ge=0, le=2)
    max_output_tokens: int | None = Field(
        None, ge=1, description="the reply's token limit, reasoning included"
    )
    token_limit_param: Literal["max_tokens", "max_completion_tokens"] | None = Field(
        None, description="the Chat Completions field the limit is sent in (a gateway may want the other)"
    )
    reasoning_effort: ReasoningEffort | None = None
    thinking_budget: int | None = Field(None, ge=1024, description="Anthropic extended thinking, in tokens")
    api: Literal["chat", "responses"] | None = Field(
        None, description="openai: Chat Completions or Responses"
    )

    @model_validator(mode="after")
    def _budget_under_limit(self) -> ModelSettings:
        if (
            self.thinking_budget is not None
            and self.max_output_tokens is not None
            and self.thinking_budget >= self.max_output_tokens
        ):
            raise ValueError(
                "thinking_budget must be less than max_output_tokens (the thinking is part of the reply):"
                f" raise max_output_tokens above {self.thinking_budget}"
            )
        return self


def mask_pattern(text: str) -> Any:
    """``text`` compiled by RE2 (linear time: results may be megabytes), or a ValueError that says
    why and how to write it."""
    if not text:
        raise ValueError("an empty pattern would match everywhere; write what to mask, e.g. '\\d{4}-\\d\\d'")
    options = re2.Options()
    options.log_errors = False  # the error is ours to report, not RE2's log line on stderr
    try:
        return re2.compile(text, options=options)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(
            f"{text!r} is not a regular expression RE2 accepts ({detail}); no lookaround or "
            "backreferences, and in YAML write '\\d' in single quotes"
        ) from exc


class IgnoreRule(_Strict):
    """What a replay's diff leaves out of one server's (or tool's) results: volatile fields.

    ``server`` and ``tool`` are names or globs (``*``, ``git_*``); ``paths`` are JSON paths into
    the result's JSON (its structuredContent, and its text when that is a JSON document);
    ``patterns`` are regular expressions (RE2 syntax) masked wherever they match in the text.
    """

    server: str = "*"
    tool: str = "*"
    paths: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)

    @field_validator("paths")
    @classmethod
    def _paths_parse(cls, v: list[str]) -> list[str]:
        for text in v:
            parse_path(text)  # a JsonPathError (a ValueError) names the path and the fix
        return v

    @field_validator("patterns")
    @classmethod
    def _patterns_compile(cls, v: list[str]) -> list[str]:
        for text in v:
            mask_pattern(text)  # a ValueError that names the pattern and the fix
        return v

    @model_validator(mode="after")
    def _masks_something(self) -> IgnoreRule:
        if not self.paths and not self.patterns:
            raise ValueError("give 'paths' (JSON paths, e.g. [$.timestamp]) or 'patterns' (regexes), or both")
        return self


class ReplaySpec(_Strict):
    """``proctor replay``'s settings: the fields its diff ignores, per server and tool."""

    ignore: list[IgnoreRule] = Field(default_factory=list)


class Suite(_Strict):
    name: str
    description: str = ""
    repo: RepoSpec | None = None
    mcpServers: dict[str, ServerEntry] = {}
    servers_file: str | None = None
    arms: dict[str, ArmSpec]
    models: list[str] = ["offline:default"]
    epochs: int = Field(1, ge=1)
    limits: Limits = Limits()
    concurrency: Concurrency = Concurrency()
    scoring: Scoring = Scoring()
    judge: JudgeSpec = JudgeSpec()
    prices: dict[str, Price] = {}
    providers: dict[str, ProviderSpec] = {}
    model_settings: dict[str, ModelSettings] = {}
    """Per model id (``anthropic:claude-…``, ``openai:gpt-…``): temperature, output limit, reasoning, API."""
    anchors_lock: str | None = None
    system_prompt: str | None = None
    replay: ReplaySpec = Field(default_factory=ReplaySpec)
    # Names (or PREFIX_*) of more variables every stdio server receives from proctor's environment.
    env_passthrough: list[EnvName] = []

    @field_validator("models")
    @classmethod
    def _provider_prefix(cls, v: list[str]) -> list[str]:
        for m in v:
            provider, name = split_model_id(m)
            if provider not in AGENT_PROVIDERS or not name:
                raise ValueError(f"{m!r}: use {AGENT_FORMS_TEXT}")
        return v

    @field_validator("model_settings")
    @classmethod
    def _settings_for_api_models(cls, v: dict[str, ModelSettings]) -> dict[str, ModelSettings]:
        for model_id, settings in v.items():
            provider, name = split_model_id(model_id)
            if provider not in API_PROVIDERS or not name:
                raise ValueError(
                    f"{model_id!r}: key the settings by a model id, {one_of(API_FORMS)} (offline models take none)"
                )
            if settings.api is not None and provider != "openai":
                raise ValueError(f"{model_id!r}: 'api' chooses between OpenAI's APIs; drop it for {provider}")
            if settings.thinking_budget is not None and provider != "anthropic":
                raise ValueError(
                    f"{model_id!r}: 'thinking_budget' is Anthropic's; for {provider} use 'reasoning_effort'"
                )
        return v


class KeywordCheck(_Strict):
    """A keyword matched by another rule than the default whole word: ``{contains: test_}``.

    The kinds are the text checks of published harnesses (luuuc/sense's ``bench/SCORING.md``):
    ``word`` (the default, a plain string), ``contains`` (a substring, case-insensitive, inside
    identifiers too), ``exact`` (a verbatim, case-sensitive substring), ``starts_with`` (a line
    of the answer starts with it, case-insensitive).
    """

    word: str | None = None
    contains: str | None = None
    exact: str | None = None
    starts_with: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> KeywordCheck:
        given = [k for k in KEYWORD_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of {', '.join(KEYWORD_KINDS)} (e.g. {{contains: test_}}), got "
                + (", ".join(given) or "none")
            )
        return self

    @property
    def kind(self) -> KeywordKind:
        return next(k for k in KEYWORD_KINDS if getattr(self, k) is not None)

    @property
    def value(self) -> str:
        return str(getattr(self, self.kind))

    @model_serializer
    def _as_written(self) -> dict[str, str]:
        return {self.kind: self.value}


def _keyword_shape(value: Any) -> str:
    return "check" if isinstance(value, dict | KeywordCheck) else "word"


# A plain string is a whole word; a mapping names its kind. Errors then name one shape only.
Keyword = Annotated[
    Annotated[str, Tag("word")] | Annotated[KeywordCheck, Tag("check")],
    Discriminator(_keyword_shape),
]


def keyword_kind(keyword: str | KeywordCheck) -> tuple[KeywordKind, str]:
    """(kind, value) of a scenario's keyword: a plain string is a whole word."""
    return ("word", keyword) if isinstance(keyword, str) else (keyword.kind, keyword.value)


class Keywords(_Strict):
    required: list[Keyword] = Field(default_factory=list)
    bonus: list[Keyword] = Field(default_factory=list)


class ResultExpectation(_Strict):
    """What a gold call's result must hold: texts it contains and does not contain (each exact,
    case-sensitive), and values at JSON paths of its JSON (structuredContent, else the text read as
    JSON). ``review`` is a note for a person (``proctor init`` leaves one where it could not draft
    an expectation): the run reports it until someone writes what the result must hold."""

    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    json_: dict[str, Any] = Field(default_factory=dict, alias="json")
    review: str | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("contains", "not_contains", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @field_validator("contains", "not_contains")
    @classmethod
    def _not_empty(cls, v: list[str]) -> list[str]:
        if any(not text for text in v):
            raise ValueError("an empty text is in every result; write the text the result must (not) hold")
        return v

    @field_validator("json_")
    @classmethod
    def _paths_parse(cls, v: dict[str, Any]) -> dict[str, Any]:
        for text in v:
            parse_path(text)  # a JsonPathError (a ValueError) names the path and the fix
        return v

    @model_validator(mode="after")
    def _says_something(self) -> ResultExpectation:
        if not (self.contains or self.not_contains or self.json_ or self.review):
            raise ValueError(
                "say what the result must hold: contains, not_contains or json ({$.path: value}), "
                "or leave a review note"
            )
        return self

    @property
    def checks(self) -> bool:
        """Whether it checks anything (a review note alone checks nothing)."""
        return bool(self.contains or self.not_contains or self.json_)


class GoldCall(_Strict):
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    server: str | None = None
    expect_error: bool = False
    """The server must answer this call with an error (e.g. refuse a path outside its root)."""
    expect: ResultExpectation | None = None
    """What the call's result must hold; a call whose result does not is no match."""


class Criterion(_Strict):
    name: str
    question: str
    weight: float = Field(1.0, ge=0)


class Step(_Strict):
    name: str = ""
    prompt: str = Field(min_length=1, pattern=r"\S")


class Scenario(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    title: str = ""
    prompt: str | None = Field(None, min_length=1, pattern=r"\S")
    steps: list[Step] = Field(default_factory=list)
    repo: RepoSpec | None = None
    claims: list[str] = Field(default_factory=list)
    key_points: list[str] = Field(default_factory=list)
    keywords: Keywords = Field(default_factory=Keywords)
    gold_tool_calls: list[list[GoldCall]] = Field(
        default_factory=list, description="steps in order; the calls inside one step may run in parallel"
    )
    rubric: list[Criterion] = Field(default_factory=list)
    category: str = ""
    complexity: Complexity = "single"
    held_out: bool = False
    human_labels: dict[str, bool] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _prompt_or_steps(self) -> Scenario:
        if (self.prompt is None) == (not self.steps):
            raise ValueError("give exactly one of 'prompt' or 'steps'")
        return self

    @property
    def has_checks(self) -> bool:
        """Whether anything is defined to judge an answer against; without, trials are "not judged"."""
        return bool(
            self.claims or self.key_points or self.keywords.required or self.rubric or self.gold_tool_calls
        )

    def prompts(self) -> list[str]:
        return [self.prompt] if self.prompt is not None else [s.prompt for s in self.steps]
